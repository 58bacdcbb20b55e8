// Statistics over the batch: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: reducing over the wrong axes, so that the mean and
//   variance are taken over the whole [rows][d] tensor (BatchNorm-style, or a
//   reduction over every dimension instead of the last) rather than per row.
//   A batch of one row gives the right answer; every larger batch does not,
//   and each row's output depends on the other rows.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h) with one mean and
//   one variance for all rows * d elements; every row's stored mean/rstd are
//   those batch statistics, and the backward uses them.
// Accumulation: float, serial sums; f32 storage.
// Bound: held to the two-pass serial model, which it must FAIL on any batch
//   whose rows differ in mean or spread. Caught by the property
//   EachRowDependsOnThatRowAlone (a row alone vs. the same row in a batch).
// Valid range: as the scalar references (impls/cpu/valid_range.h), for the
//   batch as a whole.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_BATCH_STATISTICS_H_
#define LNV_IMPLS_BROKEN_BATCH_STATISTICS_H_

#include "impls/api.h"

namespace lnv::broken {

int BatchStatisticsForward(const ForwardArgs* args);
int BatchStatisticsBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_BATCH_STATISTICS_H_

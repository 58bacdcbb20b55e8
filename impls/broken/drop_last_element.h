// Statistics without the last element: a NEGATIVE CONTROL (status
// negative_control).
//
// The bug it imitates: an off-by-one in the reduction's loop bound (i < d - 1,
//   or a tail loop that starts one element late), with the count following
//   the loop, so the mean and variance are those of the first d - 1
//   elements. Every element is still normalized with them.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), with both sums
//   and the count over x_0 .. x_(d-2) (d = 1: over x_0, correct).
// Accumulation: float, serial sums; f32 storage. Backward correct, from the
//   forward's stored mean and rstd.
// Bound: held to the two-pass serial model, which it must FAIL wherever the
//   last element matters: on iid rows one element moves the statistics by
//   O(1/d), below the bound from d of about 2^13 on. Caught at every d >= 2
//   by the one_outlier family (its rows with the outlier last), and not by
//   standard_normal past 2^16 (harness/families_test.cc). The property suite
//   catches it too (negative_controls_are_caught_test.cc; first
//   NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance: sum y is not 0).
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_DROP_LAST_ELEMENT_H_
#define LNV_IMPLS_BROKEN_DROP_LAST_ELEMENT_H_

#include "impls/api.h"

namespace lnv::broken {

int DropLastElementForward(const ForwardArgs* args);
int DropLastElementBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_DROP_LAST_ELEMENT_H_

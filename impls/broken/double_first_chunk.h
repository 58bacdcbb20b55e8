// The first chunk counted twice: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: a chunked reduction that peels its first chunk of
//   256 elements into the accumulators (sum and count, or a Welford state)
//   before the main loop, and the main loop starts at element 0 instead of
//   256, so the first chunk is counted twice and its count with it.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), with both sums
//   and the count over x_0 .. x_(c-1) and then x_0 .. x_(d-1), c = min(d, 256).
//   For d <= 256 that is every element twice: the same mean and variance.
// Accumulation: float, serial sums; f32 storage. Backward correct, from the
//   forward's stored mean and rstd.
// Bound: held to the two-pass serial model, which it must FAIL for d > 256
//   wherever the first chunk differs from the rest: on iid rows a repeated
//   chunk moves the statistics by sampling noise only, below the bound at
//   large d. Caught by one_outlier (its rows with the outlier first) at every
//   d > 256, by ramp, sorted_rows and two_halves where the chunk is a
//   sizeable share of the row, and not by standard_normal past 2^16
//   (harness/families_test.cc). The property suite catches it too
//   (negative_controls_are_caught_test.cc; first
//   NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance: sum y is not 0).
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_DOUBLE_FIRST_CHUNK_H_
#define LNV_IMPLS_BROKEN_DOUBLE_FIRST_CHUNK_H_

#include "impls/api.h"

namespace lnv::broken {

int DoubleFirstChunkForward(const ForwardArgs* args);
int DoubleFirstChunkBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_DOUBLE_FIRST_CHUNK_H_

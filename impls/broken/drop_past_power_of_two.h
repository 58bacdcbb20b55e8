// Statistics over the largest power of two that fits: a NEGATIVE CONTROL
// (status negative_control).
//
// The bug it imitates: a power-of-two reduction (a tree over 2^k lanes, or
//   a loop unrolled by 2^k with its remainder loop forgotten) that reduces the
//   first 2^floor(log2 d) elements and counts only those, so the mean and
//   variance are those of a prefix. Every element is still normalized with
//   them. Correct when d is a power of two.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), with both sums
//   and the count over x_0 .. x_(2^k - 1), 2^k <= d < 2^(k+1).
// Accumulation: float, serial sums; f32 storage. Backward correct, from the
//   forward's stored mean and rstd.
// Bound: held to the two-pass serial model, which it must FAIL wherever d is
//   not a power of two and the tail differs from the prefix: on iid rows a
//   prefix has nearly the statistics of the row, below the bound at large d.
//   Caught by the ramp, sorted_rows and two_halves families where the tail
//   is a sizeable share of the row (a third at 3 * 2^15 + 1, a ninth at
//   2^17 + 2^14 + 3), by one_outlier (its rows with the outlier last) at
//   every such d, even 2^17 + 3, and not by standard_normal at those long d
//   (harness/families_test.cc). The property suite catches it too
//   (negative_controls_are_caught_test.cc; first
//   NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance: sum y is not 0).
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_DROP_PAST_POWER_OF_TWO_H_
#define LNV_IMPLS_BROKEN_DROP_PAST_POWER_OF_TWO_H_

#include "impls/api.h"

namespace lnv::broken {

int DropPastPowerOfTwoForward(const ForwardArgs* args);
int DropPastPowerOfTwoBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_DROP_PAST_POWER_OF_TWO_H_

// Unbiased variance: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: a hand-written LayerNorm that takes the variance from
//   a statistics routine whose default is the unbiased (Bessel-corrected)
//   estimator, e.g. torch.var / Tensor.std (unbiased=True by default) or
//   numpy's var(ddof=1). LayerNorm's variance is the biased one, sum/d.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), except
//   var = sum_i (x_i - mean)^2 / (d - 1). So xhat is too small by
//   sqrt((d-1)/d) (a relative error of about 1/(2d)), and d = 1 gives 0/0 = NaN.
// Accumulation: float, serial sums; f32 storage. Backward correct.
// Bound: held to the two-pass serial model, which it must FAIL: sum(xhat^2)
//   comes out near (d-1) sigma^2/(sigma^2 + eps) instead of d sigma^2/(sigma^2 +
//   eps). Caught by the property NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_UNBIASED_VARIANCE_H_
#define LNV_IMPLS_BROKEN_UNBIASED_VARIANCE_H_

#include "impls/api.h"

namespace lnv::broken {

int UnbiasedVarianceForward(const ForwardArgs* args);
int UnbiasedVarianceBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_UNBIASED_VARIANCE_H_

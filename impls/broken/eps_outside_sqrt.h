// Epsilon outside the square root: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: normalizing by the standard deviation plus eps,
//   (x - mean) / (std + eps), as many hand-written LayerNorms do (the form
//   popularized by "The Annotated Transformer"), instead of by
//   sqrt(var + eps). The two agree only when eps is negligible next to the
//   standard deviation; on a constant row rstd becomes 1/eps, not 1/sqrt(eps).
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), except
//   rstd = 1 / (sqrt(var) + eps).
// Accumulation: float, serial sums; f32 storage. Backward as the reference
//   (from the forward's stored rstd).
// Bound: held to the two-pass serial model, which it must FAIL wherever
//   eps / sigma exceeds the model's rstd error, and always on constant rows.
//   Caught by the property TheEpsFloorKeepsConstantRowsFinite (rstd <=
//   1/sqrt(eps)) and by ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_EPS_OUTSIDE_SQRT_H_
#define LNV_IMPLS_BROKEN_EPS_OUTSIDE_SQRT_H_

#include "impls/api.h"

namespace lnv::broken {

int EpsOutsideSqrtForward(const ForwardArgs* args);
int EpsOutsideSqrtBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_EPS_OUTSIDE_SQRT_H_

// Epsilon rounded to half precision: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: an fp16 kernel that converts eps to the storage type
//   (e.g. a scalar built with the input's dtype, or eps kept in a half
//   register) before adding it to the variance. fp16 cannot hold eps below
//   2^-25 (about 3e-8; 1e-12 is a common choice): it becomes 0, and a
//   constant row gives rstd = 1/sqrt(0) = inf and xhat = 0 * inf = NaN.
//   Larger eps are merely rounded (1e-5 is an fp16 subnormal, off by ~0.1%).
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), except
//   rstd = 1 / sqrt(var + float(half(eps))).
// Accumulation: float, serial sums; f16 storage (x, gamma, beta, y, dy, dx,
//   dgamma, dbeta), loads exact, stores rounded to nearest even (Eigen::half).
// Bound: held to the two-pass serial model, which it must FAIL: a NaN on a
//   constant row, and an rstd error of the eps rounding on near-constant rows.
//   Caught by the property TheEpsFloorKeepsConstantRowsFinite.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_EPS_IN_HALF_H_
#define LNV_IMPLS_BROKEN_EPS_IN_HALF_H_

#include "impls/api.h"

namespace lnv::broken {

int EpsInHalfForward(const ForwardArgs* args);
int EpsInHalfBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_EPS_IN_HALF_H_

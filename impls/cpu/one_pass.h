// One-pass ("textbook") LayerNorm: the NEGATIVE CONTROL.
//
// Algorithm: s1 = sum(x), s2 = sum(x^2), both serial, left to right, in one
//   sweep; mean = s1 / d; var = (s2 - s1 * mean) / d, i.e. the textbook
//   (sum(x^2) - sum(x)^2/d) / d, clamped at 0 (cancellation can make it
//   negative) before eps is added; rstd = 1/sqrt(var + eps). s1 * mean is
//   used instead of s1^2 / d so the product cannot overflow (valid_range.h).
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma, dbeta are rounded once (RNE)
//   into their dtype; mean/rstd are written as float.
// Backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma,
//   with both row sums serial, from the mean/rstd this forward wrote. The f64
//   kernel recomputes mean/rstd in double from x instead. dgamma/dbeta:
//   serial over rows in the accumulation type.
// Bound: status negative_control, held to the two-pass serial model (k = d-1),
//   which it must FAIL on ill-conditioned rows: cancellation in s2 - s1*mean
//   makes the variance's relative error grow like k * kappa^2 * u (Chan,
//   Golub & LeVeque 1983; Higham, ASNA 2nd ed. §1.9), kappa^2 = 1 + mean^2/var,
//   where the stable algorithms lose only about k * kappa * u. The suite must
//   flag it on large-mean rows; if it does not, the check is vacuous.
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): s2 <= sum(x^2) and s1 * mean = d mean^2 <= sum(x^2).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_ONE_PASS_H_
#define LNV_IMPLS_CPU_ONE_PASS_H_

#include "impls/api.h"

namespace lnv::cpu {

struct OnePassLayerNorm {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_ONE_PASS_H_

// Welford LayerNorm (serial updating): the scalar CPU reference.
//
// Algorithm: Welford/West updating, left to right over the row: for the
//   i-th element (n = i + 1), delta = x_i - m; m += delta / n;
//   M2 += delta * (x_i - m). var = M2 / d, mean = m; rstd = 1/sqrt(var + eps).
//   An M2 that comes out 0 on a row of d >= 2 is recomputed by the corrected
//   two-pass formula about the computed mean (welford_state.h says why the
//   claimed bound still holds): Welford's cancellation at extreme
//   mean-to-spread ratios would otherwise give rstd = inf with eps = 0.
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma, dbeta are rounded once (RNE)
//   into their dtype; mean/rstd are written as float.
// Backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma,
//   with both row sums serial, from the mean/rstd this forward wrote. The f64
//   kernel recomputes mean/rstd in double from x instead (the ABI's float
//   statistics would cost it its accuracy). dgamma/dbeta: serial over rows in
//   the accumulation type.
// Claimed bound: the harness's Welford model with a serial reduction,
//   k = d - 1 (Chan, Golub & LeVeque 1983: the updating algorithm's relative
//   variance error grows like k * kappa * u, kappa = sqrt(1 + mean^2/var)).
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): |delta|, |x_i - m| <= 2 max|x|, so each update term is
//   at most 4 sum(x^2), and M2 itself at most sum(x^2).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_WELFORD_H_
#define LNV_IMPLS_CPU_WELFORD_H_

#include "impls/api.h"

namespace lnv::cpu {

struct WelfordLayerNorm {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_WELFORD_H_

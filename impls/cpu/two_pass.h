// Two-pass LayerNorm with serial sums: the scalar CPU reference.
//
// Algorithm: mean = (x_0 + ... + x_{d-1}) / d summed left to right; then
//   var = sum_i (x_i - mean)^2 / d, again left to right; rstd = 1/sqrt(var + eps).
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma, dbeta are rounded once (RNE)
//   into their dtype; mean/rstd are written as float.
// Backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma,
//   with both row sums serial, from the mean/rstd this forward wrote. The f64
//   kernel recomputes mean/rstd in double from x instead (the ABI's float
//   statistics would cost it its accuracy). dgamma/dbeta: serial over rows in
//   the accumulation type.
// Claimed bound: the harness's two-pass model with a serial reduction,
//   k = d - 1 (Chan, Golub & LeVeque 1983; Higham, ASNA 2nd ed. §1.9, §4.2):
//   |mean error| <= gamma_{d-1} * mean|x|, and the variance's relative error
//   is about (d + 2) u + (k kappa u)^2, kappa = sqrt(1 + mean^2/var).
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): then squared deviations and their sums stay finite.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_TWO_PASS_H_
#define LNV_IMPLS_CPU_TWO_PASS_H_

#include "impls/api.h"

namespace lnv::cpu {

struct TwoPassLayerNorm {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_TWO_PASS_H_

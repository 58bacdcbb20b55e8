// Two-pass LayerNorm with Kahan-compensated sums: the scalar CPU reference.
//
// Algorithm: mean = KahanSum(x) / d; var = KahanSum((x_i - mean)^2) / d, both
//   compensated sums left to right (Kahan 1965); rstd = 1/sqrt(var + eps).
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma, dbeta are rounded once (RNE)
//   into their dtype; mean/rstd are written as float.
// Backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma,
//   with both row sums Kahan-compensated, from the mean/rstd this forward
//   wrote. The f64 kernel recomputes mean/rstd in double from x instead (the
//   ABI's float statistics would cost it its accuracy). dgamma/dbeta: plain
//   serial sums over rows in the accumulation type.
// Claimed bound: the harness's Kahan two-pass model (Higham, ASNA 2nd ed.
//   §4.3): each compensated sum errs by at most (2u + O(d u^2)) * sum|term|,
//   so the rounding chain is short and nearly independent of d; the variance
//   then inherits the two-pass structure (Chan, Golub & LeVeque 1983).
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): squared deviations, their sums and the compensation
//   terms (smaller than the running sum) stay finite.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_KAHAN_TWO_PASS_H_
#define LNV_IMPLS_CPU_KAHAN_TWO_PASS_H_

#include "impls/api.h"

namespace lnv::cpu {

struct KahanTwoPassLayerNorm {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_KAHAN_TWO_PASS_H_

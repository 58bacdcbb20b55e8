// RMSNorm with a Kahan-compensated sum of squares: the scalar CPU reference.
//
// Algorithm: ms = KahanSum(x_i^2) / d, compensated, left to right (Kahan
//   1965); rstd = 1/sqrt(ms + eps); y = gamma * (x * rstd).
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma are rounded once (RNE) into their
//   dtype; rstd is written as float; `mean` is never written.
// Backward: dx = rstd * (g - xhat * mean(g * xhat)), g = dy * gamma, the row
//   sum Kahan-compensated, from the rstd this forward wrote. The f64 kernel
//   recomputes rstd in double from x instead (the ABI's float rstd would cost
//   it its accuracy). dgamma: serial over rows in the accumulation type;
//   dbeta must be NULL (there is no beta).
// Claimed bound: the harness's Kahan model (registry: kKahanTwoPass for
//   RMSNorm = compensated sum of squares; Higham, ASNA 2nd ed. §4.3): the sum
//   errs by at most (2u + O(d u^2)) * sum(x^2), plus one rounding per square
//   and the division by d.
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): the running sum and its compensation stay finite.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_RMS_KAHAN_H_
#define LNV_IMPLS_CPU_RMS_KAHAN_H_

#include "impls/api.h"

namespace lnv::cpu {

struct RmsKahan {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_RMS_KAHAN_H_

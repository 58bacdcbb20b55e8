// RMSNorm with a serial sum of squares: the scalar CPU reference.
//
// Algorithm: ms = (x_0^2 + ... + x_{d-1}^2) / d summed left to right;
//   rstd = 1/sqrt(ms + eps); y = gamma * (x * rstd). No mean, no beta.
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma are rounded once (RNE) into their
//   dtype; rstd is written as float; `mean` is never written.
// Backward: dx = rstd * (g - xhat * mean(g * xhat)), g = dy * gamma, with the
//   row sum serial, from the rstd this forward wrote. The f64 kernel
//   recomputes rstd in double from x instead (the ABI's float rstd would cost
//   it its accuracy). dgamma: serial over rows in the accumulation type;
//   dbeta must be NULL (there is no beta).
// Claimed bound: the harness's sum-of-squares model with a serial reduction,
//   k = d - 1 (Higham, ASNA 2nd ed. §4.2): all terms are nonnegative, so the
//   mean square's relative error is at most gamma_{d+1}; no cancellation,
//   kappa plays no part.
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): every partial sum stays finite.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_RMS_SERIAL_H_
#define LNV_IMPLS_CPU_RMS_SERIAL_H_

#include "impls/api.h"

namespace lnv::cpu {

struct RmsSerial {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_RMS_SERIAL_H_

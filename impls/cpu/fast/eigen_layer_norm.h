// Eigen LayerNorm: what a careful user writes with a linear-algebra library.
// Forward and backward (dx, dgamma, dbeta) over Eigen arrays, for fp32
// storage and for Eigen::bfloat16 / Eigen::half storage, fp32 arithmetic.
//
// Algorithm: per row, xr = x.row(r).cast<float>(); mean = xr.mean();
//   var = (xr - mean).square().mean() (two-pass); rstd = 1 / sqrt(var + eps);
//   y = ((xr - mean) * rstd) * gamma + beta, cast back to the storage type
//   (Eigen's casts to bfloat16/half round to nearest even). Nothing is
//   rescaled and nothing is threaded (Eigen's array code is single-threaded).
// Accumulation: fp32. The sums are Eigen's redux(): vectorized with packet
//   accumulators plus a scalar head and tail, an order that depends on the
//   SIMD width Eigen was compiled for and on the row's alignment; it is some
//   binary tree over the d terms, so its longest rounding chain is at most
//   d - 1, and that is all this kernel claims.
// Backward: g = dy * gamma; a = g.mean(); b = (g * xhat).mean();
//   dx = rstd * ((g - a) - xhat * b), xhat from the stored mean/rstd (or the
//   forward's own when they are not passed). dgamma += dy * xhat and
//   dbeta += dy as fp32 arrays over the rows, cast once at the end.
// Claimed bound: the harness's two-pass model with a serial reduction,
//   k = d - 1 (Chan, Golub & LeVeque 1983; Higham, ASNA 2nd ed. §1.9, §4.2):
//   the loosest reduction model, valid for any summation order.
// Valid range: finite rows with sum(x^2) <= FLT_MAX / 8, the scalar kernels'
//   range (impls/cpu/valid_range.h): like them, it does not rescale, so a
//   row whose fp32 sum of squares overflows is outside its claim (it returns
//   NaN or infinite statistics there, which the judge only checks for the
//   NaN contract).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_FAST_EIGEN_LAYER_NORM_H_
#define LNV_IMPLS_CPU_FAST_EIGEN_LAYER_NORM_H_

#include "impls/api.h"
#include "impls/registry.h"

namespace lnv::fast {

struct EigenLayerNorm {
  template <DType kX>  // kF32, kBF16 or kF16
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

// The registry entry for one storage dtype (f32, bf16, f16).
ImplInfo EigenLayerNormImpl(DType dtype);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_EIGEN_LAYER_NORM_H_

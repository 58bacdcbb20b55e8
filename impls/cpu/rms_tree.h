// RMSNorm with a chunked, pairwise-merged sum of squares: the scalar CPU
// reference.
//
// Algorithm: squares summed serially within chunks of kRmsTreeChunk elements
//   (the last may be shorter), chunk sums merged in a balanced binary tree;
//   ms = sum / d; rstd = 1/sqrt(ms + eps); y = gamma * (x * rstd).
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma are rounded once (RNE) into their
//   dtype; rstd is written as float; `mean` is never written.
// Backward: dx = rstd * (g - xhat * mean(g * xhat)), g = dy * gamma, the row
//   sum in the same tree shape, from the rstd this forward wrote. The f64
//   kernel recomputes rstd in double from x instead (the ABI's float rstd
//   would cost it its accuracy). dgamma: serial over rows in the accumulation
//   type; dbeta must be NULL (there is no beta).
// Claimed bound: the harness's sum-of-squares model with a tree reduction,
//   k = chunk + ceil(log2(parts)), parts = ceil(d / chunk) (Higham, ASNA 2nd
//   ed. §4.2): nonnegative terms, so relative error at most gamma_{k+2}.
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): every partial sum stays finite.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_RMS_TREE_H_
#define LNV_IMPLS_CPU_RMS_TREE_H_

#include <cstdint>

#include "impls/api.h"

namespace lnv::cpu {

// Leaf size: a warp's worth, the shape GPU kernels use.
inline constexpr std::int64_t kRmsTreeChunk = 32;

struct RmsTree {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_RMS_TREE_H_

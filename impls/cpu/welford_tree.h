// Welford-tree LayerNorm (chunked Welford, merged pairwise): the scalar CPU
// reference.
//
// Algorithm: the row is cut into chunks of kWelfordTreeChunk elements (the
//   last may be shorter); each chunk runs Welford/West updating; the chunk
//   states (count, mean, M2) are merged in a balanced binary tree with Chan,
//   Golub & LeVeque's formula: delta = mb - ma, mean = ma + delta * nb/n,
//   M2 = M2a + M2b + delta^2 * na*nb/n. var = M2 / d; rstd = 1/sqrt(var + eps).
//   An M2 that comes out 0 on a row of d >= 2 is recomputed by the corrected
//   two-pass formula about the computed mean (welford_state.h says why the
//   claimed bound still holds): Welford's cancellation at extreme
//   mean-to-spread ratios would otherwise give rstd = inf with eps = 0.
// Accumulation: float for f32/bf16/f16 storage (param dtype = x dtype), double
//   for f64. Loads are exact; y, dx, dgamma, dbeta are rounded once (RNE)
//   into their dtype; mean/rstd are written as float.
// Backward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma,
//   both row sums in the same tree shape (serial within chunks, chunk sums
//   merged pairwise), from the mean/rstd this forward wrote. The f64 kernel
//   recomputes mean/rstd in double from x instead (the ABI's float
//   statistics would cost it its accuracy). dgamma/dbeta: serial over rows in
//   the accumulation type.
// Claimed bound: the harness's Welford model with a tree reduction,
//   k = chunk + ceil(log2(parts)), parts = ceil(d / chunk) (Chan, Golub &
//   LeVeque 1983: pairwise updating errs like k * kappa * u).
// Valid range: finite rows with sum(x^2) <= MAX/8 of the accumulation type
//   (valid_range.h): update terms and delta^2 are at most 4 sum(x^2), and
//   every (merged) M2 at most sum(x^2).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_WELFORD_TREE_H_
#define LNV_IMPLS_CPU_WELFORD_TREE_H_

#include <cstdint>

#include "impls/api.h"

namespace lnv::cpu {

// Leaf size: a warp's worth, the shape GPU kernels use.
inline constexpr std::int64_t kWelfordTreeChunk = 32;

struct WelfordTreeLayerNorm {
  template <DType kX>
  static int Forward(const ForwardArgs* args);
  template <DType kX>
  static int Backward(const BackwardArgs* args);
};

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_WELFORD_TREE_H_

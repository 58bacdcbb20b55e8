// LayerNorm with Welford lanes: the CUDA kernel pair (impls/cuda/kernels.cu)
// and its bit-exact host emulation (impls/cuda/emulate.cc), registered as
// <dtype>/welford_shfl/cuda (GPU present) and <dtype>/welford_shfl/cuda-emulated.
//
// Algorithm: forward, one warp per row for d <= 1024 and one 512-thread block
//   per row beyond (reduction.h): each lane runs Welford/West updating over
//   its granules (16 bytes: 4 fp32 or 8 bf16/fp16 elements, dealt
//   round-robin), the lane states are merged with Chan, Golub & LeVeque's
//   formula in a warp-shuffle tree, then (block) across warps the same way;
//   var = M2 / d, rstd = 1 / sqrt(var + eps) (IEEE division and square root;
//   an M2 of 0 on a row of d >= 2 is recomputed: LayerNormPolicy);
//   y = gamma * ((x - mean) * rstd) + beta, stored with 16-byte vector stores
//   where aligned. Rows are grid-strided (any number), offsets are 64-bit.
//   Backward: dx per row from the stored mean/rstd: xhat = (x - mean) * rstd,
//   g = dy * gamma, a = sum(g) / d, b = sum(g * xhat) / d (both sums in the
//   forward's lane/shuffle shape), dx = rstd * ((g - a) - xhat * b);
//   dgamma = sum over rows of dy * xhat, dbeta = sum of dy: per-chunk fp32
//   partials (serial over each chunk's rows), then a second kernel sums each
//   column's partials serially (ParamChunks in reduction.h).
// Accumulation: fp32 throughout for fp32/bf16/fp16 storage (param dtype = x
//   dtype); loads are exact, y/dx/dgamma/dbeta are rounded once (RNE) into
//   their dtype (storage.h); mean/rstd are written as fp32. No FMA
//   contraction, no approximate rsqrt. NaN outputs are the canonical NaN.
// Claimed bound: harness/bounds' Welford model with a kLanes reduction
//   (LaneShape from RowShapeFor: leaf = G ceil(ceil(d/G)/T), leaves =
//   min(T, ceil(d/G)), levels = ceil(log2 leaves); reduction.h proves the
//   shape); dgamma/dbeta within the serial-over-rows column bound (any
//   summation tree over the rows has depth <= rows - 1).
// Valid range: finite rows with sum(x^2) <= FLT_MAX/8 (impls/cpu/valid_range.h:
//   every Welford update term, delta^2 of a merge and every partial M2 is at
//   most 4 sum(x^2); the lane tree forms no other intermediates), d <= 2^30.
//   Backward requires the forward's mean and rstd (non-NULL).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CUDA_LAYER_NORM_H_
#define LNV_IMPLS_CUDA_LAYER_NORM_H_

#include <cstdint>

#include "impls/cuda/portable.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_stats.h"

namespace lnv::cuda {

struct LayerNormPolicy {
  static constexpr bool kLayer = true;
  using State = WelfordState;
  LNV_HD static void Accumulate(State* s, float x) { WelfordUpdate(s, x); }
  LNV_HD static RowStatsF Finish(const State& s, std::int64_t d, float eps) {
    const float var = s.m2 / static_cast<float>(d);
    return {s.mean, RowRstd(var, eps)};
  }
  // Welford's one degenerate output: the merged M2 cancels to 0 on a row that
  // is not constant (|mean| / sigma beyond about 1/sqrt(u)), which with
  // eps = 0 would give rstd = inf. Then (a condition uniform over the row's
  // lanes) M2 is recomputed by the corrected two-pass formula about the
  // computed mean, with both sums in the lanes' shape (LaneCenteredSums, then
  // the same tree): M2 = sum c^2 - (sum c)^2 / d, c = x - mean, clamped at 0.
  // impls/cpu/welford_state.h derives why the claimed bound still holds.
  LNV_HD static bool NeedsCenteredPass(const State& s, std::int64_t d) {
    return s.m2 == 0.0f && d >= 2;
  }
  LNV_HD static RowStatsF FinishCentered(const State& s, const SumPairState& c, std::int64_t d,
                                         float eps) {
    const float corrected = c.b - c.a * (c.a / static_cast<float>(d));
    const float m2 = corrected > 0.0f ? corrected : 0.0f;
    return {s.mean, RowRstd(m2 / static_cast<float>(d), eps)};
  }
  // xhat as the forward, the backward and the dgamma partials all form it.
  LNV_HD static float Xhat(float x, float mean, float rstd) { return (x - mean) * rstd; }
};

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_LAYER_NORM_H_

// RMSNorm with summing lanes: the CUDA kernel pair (impls/cuda/kernels.cu)
// and its bit-exact host emulation (impls/cuda/emulate.cc), registered as
// <dtype>/rms_shfl/cuda (GPU present) and <dtype>/rms_shfl/cuda-emulated.
//
// Algorithm: forward, one warp per row for d <= 1024 and one 512-thread block
//   per row beyond (reduction.h): each lane sums the squares x*x of its
//   granules serially (16 bytes: 4 fp32 or 8 bf16/fp16 elements, dealt
//   round-robin), the lane sums are added in a warp-shuffle tree, then
//   (block) across warps; ms = sum / d, rstd = 1 / sqrt(ms + eps) (IEEE
//   division and square root); y = gamma * (x * rstd), 16-byte vector
//   stores where aligned. Rows are grid-strided, offsets 64-bit.
//   Backward: dx per row from the stored rstd: xhat = x * rstd, g = dy * gamma,
//   b = sum(g * xhat) / d (the forward's lane/shuffle shape),
//   dx = rstd * (g - xhat * b); dgamma = sum over rows of dy * xhat, as fp32
//   per-chunk partials then a second kernel over the chunks (reduction.h).
//   There is no beta: beta and dbeta must be NULL.
// Accumulation: fp32 for fp32/bf16/fp16 storage (param dtype = x dtype);
//   loads exact, y/dx/dgamma rounded once (RNE) into their dtype (storage.h);
//   rstd written as fp32, mean never written. No FMA contraction, no
//   approximate rsqrt. NaN outputs are the canonical NaN.
// Claimed bound: harness/bounds' sum-of-squares model with a kLanes reduction
//   (LaneShape from RowShapeFor; Higham, ASNA 2nd ed. §4.2: nonnegative terms,
//   relative error at most gamma_{leaf + levels + 2}); dgamma within the
//   column bound over the rows.
// Valid range: finite rows with sum(x^2) <= FLT_MAX/8 (impls/cpu/valid_range.h:
//   every partial sum stays finite), d <= 2^30. Backward requires the
//   forward's rstd (non-NULL).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CUDA_RMS_NORM_H_
#define LNV_IMPLS_CUDA_RMS_NORM_H_

#include <cstdint>

#include "impls/cuda/portable.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_stats.h"

namespace lnv::cuda {

struct RmsNormPolicy {
  static constexpr bool kLayer = false;
  using State = SumState;
  LNV_HD static void Accumulate(State* s, float x) { s->s = s->s + x * x; }
  LNV_HD static RowStatsF Finish(const State& s, std::int64_t d, float eps) {
    const float ms = s.s / static_cast<float>(d);
    return {0.0f, RowRstd(ms, eps)};
  }
  LNV_HD static float Xhat(float x, float /*mean*/, float rstd) { return x * rstd; }
};

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_RMS_NORM_H_

// Per-lane work of the CUDA kernels, written once for the GPU and the host
// emulation. Each function is what one lane (thread) of a row does; the
// caller runs it on every lane of the row (the GPU: in parallel; the
// emulation: lane by lane) and merges the lanes' states in the tree of
// reduction.h between the steps.
//
// Template parameters: S, the storage (storage.h); N, the norm's policy
// (layer_norm.h, rms_norm.h); Mem, how a granule is loaded and stored:
//   static int Load<S>(const S::Bits* base, int64 g, int64 d, float* v):
//     widens elements [g G, min((g+1) G, d)) of base into v, returns how many;
//   static void Store<S>(S::Bits* base, int64 g, int64 d, const float* v):
//     narrows and stores the same elements.
// The GPU's Mem uses one 16-byte access for a full, aligned granule and
// element accesses otherwise; the host's is element accesses only. The values
// are the same either way, so the arithmetic below cannot tell them apart.
#ifndef LNV_IMPLS_CUDA_ROW_OPS_H_
#define LNV_IMPLS_CUDA_ROW_OPS_H_

#include <cstdint>

#include "impls/cuda/portable.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_stats.h"
#include "impls/cuda/storage.h"

namespace lnv::cuda {

// The elements one call of a row's kernels reads and writes (row pointers
// already offset to the row; gamma/beta NULL when absent).
template <typename S>
struct RowRefs {
  using Bits = typename S::Bits;
  const Bits* x = nullptr;
  const Bits* gamma = nullptr;
  const Bits* beta = nullptr;  // LayerNorm forward only
  const Bits* dy = nullptr;    // backward only
  Bits* out = nullptr;         // y (forward) or dx (backward)
  std::int64_t d = 0;
};

// Forward, step 1: the lane's state over its granules, in order.
template <typename S, typename N, typename Mem>
LNV_HD typename N::State LaneStats(const RowRefs<S>& row, int lane, int lanes) {
  typename N::State s{};
  const std::int64_t granules = CeilDiv(row.d, S::kGranule);
  for (std::int64_t g = lane; g < granules; g += lanes) {
    float v[S::kGranule];
    const int n = Mem::template Load<S>(row.x, g, row.d, v);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < S::kGranule; ++k) {
      if (k < n) N::Accumulate(&s, v[k]);
    }
  }
  return s;
}

// Forward, step 1b (LayerNorm, only when the merged M2 is 0 on a row of
// d >= 2: layer_norm.h): the lane's sum (x - mean) and sum (x - mean)^2 over
// its granules, in LaneStats' order.
template <typename S, typename Mem>
LNV_HD SumPairState LaneCenteredSums(const RowRefs<S>& row, int lane, int lanes, float mean) {
  SumPairState p{};
  const std::int64_t granules = CeilDiv(row.d, S::kGranule);
  for (std::int64_t g = lane; g < granules; g += lanes) {
    float v[S::kGranule];
    const int n = Mem::template Load<S>(row.x, g, row.d, v);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < S::kGranule; ++k) {
      if (k >= n) break;
      const float c = v[k] - mean;
      p.a = p.a + c;
      p.b = p.b + c * c;
    }
  }
  return p;
}

// Forward, step 2 (after the tree and N::Finish): the lane's y elements.
template <typename S, typename N, typename Mem>
LNV_HD void LaneForwardOutput(const RowRefs<S>& row, int lane, int lanes, RowStatsF st) {
  const std::int64_t granules = CeilDiv(row.d, S::kGranule);
  for (std::int64_t g = lane; g < granules; g += lanes) {
    float xv[S::kGranule], gv[S::kGranule], bv[S::kGranule], yv[S::kGranule];
    const int n = Mem::template Load<S>(row.x, g, row.d, xv);
    if (row.gamma != nullptr) Mem::template Load<S>(row.gamma, g, row.d, gv);
    if (row.beta != nullptr) Mem::template Load<S>(row.beta, g, row.d, bv);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < S::kGranule; ++k) {
      if (k >= n) break;
      const float xhat = N::Xhat(xv[k], st.mean, st.rstd);
      float v = row.gamma != nullptr ? gv[k] * xhat : xhat;
      if (row.beta != nullptr) v = v + bv[k];
      yv[k] = v;
    }
    Mem::template Store<S>(row.out, g, row.d, yv);
  }
}

// Backward, step 1: the lane's sum g (LayerNorm) and sum g * xhat, g = dy * gamma.
template <typename S, typename N, typename Mem>
LNV_HD SumPairState LaneBackwardSums(const RowRefs<S>& row, int lane, int lanes, RowStatsF st) {
  SumPairState p{};
  const std::int64_t granules = CeilDiv(row.d, S::kGranule);
  for (std::int64_t g = lane; g < granules; g += lanes) {
    float xv[S::kGranule], dv[S::kGranule], gv[S::kGranule];
    const int n = Mem::template Load<S>(row.x, g, row.d, xv);
    Mem::template Load<S>(row.dy, g, row.d, dv);
    if (row.gamma != nullptr) Mem::template Load<S>(row.gamma, g, row.d, gv);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < S::kGranule; ++k) {
      if (k >= n) break;
      const float xhat = N::Xhat(xv[k], st.mean, st.rstd);
      const float gk = row.gamma != nullptr ? dv[k] * gv[k] : dv[k];
      if constexpr (N::kLayer) p.a = p.a + gk;
      p.b = p.b + gk * xhat;
    }
  }
  return p;
}

// The row's a = sum(g)/d and b = sum(g xhat)/d from the merged sums.
LNV_HD inline SumPairState BackwardMeans(const SumPairState& total, std::int64_t d) {
  const float n = static_cast<float>(d);
  return {total.a / n, total.b / n};
}

// Backward, step 2: the lane's dx elements, dx = rstd * ((g - a) - xhat * b).
template <typename S, typename N, typename Mem>
LNV_HD void LaneDx(const RowRefs<S>& row, int lane, int lanes, RowStatsF st, SumPairState ab) {
  const std::int64_t granules = CeilDiv(row.d, S::kGranule);
  for (std::int64_t g = lane; g < granules; g += lanes) {
    float xv[S::kGranule], dv[S::kGranule], gv[S::kGranule], out[S::kGranule];
    const int n = Mem::template Load<S>(row.x, g, row.d, xv);
    Mem::template Load<S>(row.dy, g, row.d, dv);
    if (row.gamma != nullptr) Mem::template Load<S>(row.gamma, g, row.d, gv);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < S::kGranule; ++k) {
      if (k >= n) break;
      const float xhat = N::Xhat(xv[k], st.mean, st.rstd);
      const float gk = row.gamma != nullptr ? dv[k] * gv[k] : dv[k];
      const float centered = N::kLayer ? gk - ab.a : gk;
      out[k] = st.rstd * (centered - xhat * ab.b);
    }
    Mem::template Store<S>(row.out, g, row.d, out);
  }
}

// dgamma/dbeta partials of column j over rows [r0, r1), serially in row
// order: sum dy * xhat and sum dy (mean NULL for RMSNorm).
struct ColumnPartial {
  float dgamma = 0.0f;
  float dbeta = 0.0f;
};
template <typename S, typename N>
LNV_HD ColumnPartial ParamPartialColumn(const typename S::Bits* x, const typename S::Bits* dy,
                                        const float* mean, const float* rstd, std::int64_t d,
                                        std::int64_t j, std::int64_t r0, std::int64_t r1) {
  ColumnPartial p;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t at = r * d + j;
    const float xhat = N::Xhat(S::ToFloat(x[at]), N::kLayer ? mean[r] : 0.0f, rstd[r]);
    const float dyv = S::ToFloat(dy[at]);
    p.dgamma = p.dgamma + dyv * xhat;
    if constexpr (N::kLayer) p.dbeta = p.dbeta + dyv;
  }
  return p;
}

// The second reduction: column j's partials over the chunks, serially.
LNV_HD inline float SumPartials(const float* partials, std::int64_t chunks, std::int64_t d,
                                std::int64_t j) {
  float s = 0.0f;
  for (std::int64_t c = 0; c < chunks; ++c) s = s + partials[c * d + j];
  return s;
}

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_ROW_OPS_H_

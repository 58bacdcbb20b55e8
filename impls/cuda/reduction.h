// The reduction shape of the CUDA kernels, and the states they reduce: one
// definition for the GPU and the host emulation.
//
// Dealing. A row of d elements is cut into granules of G elements (G = 16
// bytes / element size: 4 for fp32, 8 for bf16/fp16; the last granule may be
// short). The row's T lanes (threads) take granules round-robin: lane l holds
// granules l, l + T, l + 2T, ... and reduces their elements serially in
// increasing order. T = 32 (one warp per row) for d <= kWarpRowMaxD, else
// kBlockRowThreads (one block per row). The assignment does not depend on
// where the row lies in memory: an aligned granule is one 16-byte load, a
// misaligned or short one is loaded element by element, and the arithmetic
// is the same, so a row's result never depends on its alignment or position.
//
// Merging. The lanes' states are merged in a fixed binary tree: within a warp
// by shuffles at offsets 16, 8, 4, 2, 1, where lane i (i < offset) merges
// Merge(lane i, lane i + offset); for a block, then the warps' results
// (warp w's lane 0) the same way at offsets kBlockRowWarps/2, ..., 1. Lane 0
// ends with the row's result. Merging an empty state is exact (Welford: the
// other state is returned; sums: + 0).
//
// Shape (what the bound model needs, harness/bounds.h kLanes): at most
// leaf = G * ceil(ceil(d/G) / T) elements per lane (and at most d); exactly
// P = min(T, ceil(d/G)) non-empty lanes, namely lanes 0 .. P-1; and at most
// ceil(log2 P) non-empty merges on any path: a shuffle at offset 2^k merges
// something non-empty only when lane 2^k (or warp 2^k) is non-empty, i.e.
// when 2^k < P (2^(k+5) < P across warps).
#ifndef LNV_IMPLS_CUDA_REDUCTION_H_
#define LNV_IMPLS_CUDA_REDUCTION_H_

#include <cstdint>

#include "impls/cuda/portable.h"

namespace lnv::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr std::int64_t kWarpRowMaxD = 1024;  // warp per row up to here
inline constexpr int kBlockRowThreads = 512;        // block per row beyond
inline constexpr int kBlockRowWarps = kBlockRowThreads / kWarpSize;
inline constexpr int kWarpRowWarpsPerBlock = 8;  // rows in flight per block, warp kernels
// Rows are grid-strided: the grid is capped, any number of rows is covered.
inline constexpr std::int64_t kMaxGridBlocks = 8192;
// Row lengths the kernels take (Welford counts are 32-bit ints).
inline constexpr std::int64_t kMaxD = std::int64_t{1} << 30;

// dgamma/dbeta: the rows are cut into `ParamChunks(rows)` consecutive chunks
// of ParamChunkRows(rows) rows; each chunk's column sums are fp32 partials
// (serial over its rows), and a second kernel sums the partials of a column
// serially over the chunks. A function of `rows` only, never of the device.
inline constexpr std::int64_t kParamMaxChunks = 512;
inline constexpr std::int64_t kParamMinChunkRows = 32;
inline constexpr int kParamColumnsPerBlock = 256;

LNV_HD constexpr std::int64_t ParamChunkRows(std::int64_t rows) {
  const std::int64_t c = CeilDiv(rows, kParamMaxChunks);
  return c > kParamMinChunkRows ? c : kParamMinChunkRows;
}
LNV_HD constexpr std::int64_t ParamChunks(std::int64_t rows) {
  return rows > 0 ? CeilDiv(rows, ParamChunkRows(rows)) : 0;
}

LNV_HD constexpr int LanesPerRow(std::int64_t d) {
  return d <= kWarpRowMaxD ? kWarpSize : kBlockRowThreads;
}

struct RowShape {
  std::int64_t leaf = 1;
  std::int64_t leaves = 1;
  std::int64_t levels = 0;
};

// The shape above for a row of d >= 1 elements and granule G.
LNV_HD constexpr RowShape RowShapeFor(std::int64_t d, int granule) {
  const std::int64_t lanes = LanesPerRow(d);
  const std::int64_t granules = CeilDiv(d, granule);
  RowShape s;
  s.leaves = MinI64(lanes, granules);
  s.leaf = MinI64(d, granule * CeilDiv(granules, lanes));
  s.levels = CeilLog2(s.leaves);
  return s;
}

// ---- States ----

// Welford/West updating and Chan, Golub & LeVeque's merge, in the order of
// impls/cpu/welford_state.h (whose roundings harness/bounds.cc counts).
struct WelfordState {
  int count = 0;
  float mean = 0.0f;
  float m2 = 0.0f;  // sum of squared deviations from mean
};

LNV_HD inline void WelfordUpdate(WelfordState* s, float x) {
  s->count += 1;
  const float delta = x - s->mean;
  s->mean = s->mean + delta / static_cast<float>(s->count);
  s->m2 = s->m2 + delta * (x - s->mean);
}

// mean = ma + delta * (nb/n), M2 = (M2a + M2b) + delta^2 * (na nb / n). An
// empty side returns the other unchanged (exact; also never forms inf * 0).
LNV_HD inline WelfordState Merge(const WelfordState& a, const WelfordState& b) {
  if (b.count == 0) return a;
  if (a.count == 0) return b;
  WelfordState s;
  s.count = a.count + b.count;
  const float na = static_cast<float>(a.count);
  const float nb = static_cast<float>(b.count);
  const float n = static_cast<float>(s.count);
  const float delta = b.mean - a.mean;
  s.mean = a.mean + delta * (nb / n);
  s.m2 = (a.m2 + b.m2) + delta * delta * (na * nb / n);
  return s;
}

// A plain sum (RMSNorm's sum of squares).
struct SumState {
  float s = 0.0f;
};
LNV_HD inline SumState Merge(const SumState& a, const SumState& b) { return {a.s + b.s}; }

// The backward's two row sums, sum g and sum g * xhat, reduced together.
struct SumPairState {
  float a = 0.0f;
  float b = 0.0f;
};
LNV_HD inline SumPairState Merge(const SumPairState& x, const SumPairState& y) {
  return {x.a + y.a, x.b + y.b};
}

// ---- The merge tree, emulated: lanes[0 .. lanes_per_row) in, lane 0's result out ----

// One warp's shuffle tree over lane[0..31] (in place).
template <typename State>
State EmulateWarpTree(State* lane) {
  for (int offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    for (int i = 0; i < offset; ++i) lane[i] = Merge(lane[i], lane[i + offset]);
  }
  return lane[0];
}

// The row's tree: one warp, or kBlockRowWarps warps then their results.
template <typename State>
State EmulateRowTree(State* lane, int lanes_per_row) {
  if (lanes_per_row == kWarpSize) return EmulateWarpTree(lane);
  State warp[kBlockRowWarps];
  for (int w = 0; w < kBlockRowWarps; ++w) warp[w] = EmulateWarpTree(lane + w * kWarpSize);
  for (int offset = kBlockRowWarps / 2; offset >= 1; offset /= 2) {
    for (int i = 0; i < offset; ++i) warp[i] = Merge(warp[i], warp[i + offset]);
  }
  return warp[0];
}

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_REDUCTION_H_

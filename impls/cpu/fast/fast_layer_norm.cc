// The fast LayerNorm row kernels, compiled once per SIMD target (Highway's
// foreach_target re-includes this file). The claim is in fast_layer_norm.h.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "impls/cpu/fast/fast_layer_norm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/merge_partials-inl.h"
#include "impls/cpu/fast/simd_row-inl.h"
#include "impls/cpu/fast/targets.h"

HWY_BEFORE_NAMESPACE();
namespace lnv::fast {
namespace HWY_NAMESPACE {
namespace {

// mean = sum(x) / d, then var = sum((x - mean)^2) / d, both sums in the tree
// shape; the rescaled path of row_scaling.h when they are not finite.
template <typename T>
HWY_NOINLINE RowStats LayerNormStatsRescaled(DF df, const T* HWY_RESTRICT x, std::int64_t d,
                                             float eps, float unscaled_mean) {
  RowStats st;
  if (!RowIsFinite(df, x, d)) {
    st.mean = st.mean_s = unscaled_mean;
    st.rstd = st.rstd_s = std::numeric_limits<float>::quiet_NaN();
    return st;
  }
  const float max_abs = RowMaxAbs(df, x, d);
  const float scale = ForwardScale(max_abs);
  const VF vscale = hn::Set(df, scale);
  const float n = static_cast<float>(d);
  float sum = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t)
          LNV_INLINE_LAMBDA { t[0] = hn::Mul(LoadAt(df, x, i, m), vscale); },
      &sum);
  // |mean| <= max|x|: a rounded sum / d can overshoot it only toward error.
  const float bound = max_abs * scale;
  const float mean_s = std::clamp(sum / n, -bound, bound);
  const VF vmean = hn::Set(df, mean_s);
  float m2 = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        const VF dev = hn::Sub(hn::Mul(LoadAt(df, x, i, m), vscale), vmean);
        t[0] = KeepFirst(df, hn::Mul(dev, dev), m);
      },
      &m2);
  st.scale = scale;
  st.mean_s = mean_s;
  st.rstd_s = ScaledRstd(m2 / n, eps, scale);
  st.mean = mean_s / scale;
  st.rstd = st.rstd_s * scale;
  return st;
}

// A row's statistics from its mean and m2 = sum((x - mean)^2): the rescaled
// path when q = m2 / d + eps is not finite. A finite q implies a finite m2
// and mean (an infinite or NaN mean makes every deviation infinite or NaN).
template <typename T>
HWY_INLINE RowStats FinishLayerNormStats(DF df, const T* HWY_RESTRICT x, std::int64_t d, float eps,
                                         float mean, float m2) {
  const float q = m2 / static_cast<float>(d) + eps;
  if (!std::isfinite(q)) return LayerNormStatsRescaled(df, x, d, eps, mean);
  RowStats st;
  st.mean = st.mean_s = mean;
  st.rstd = st.rstd_s = 1.f / std::sqrt(q);
  return st;
}

// At elements [i, i + m) of a pass over a row of d elements (m at most a
// line's), the pass's share of next[begin, begin + d / 2), half a row of
// the same length: where the range holds a multiple j of two lines'
// elements, the line holding next[begin + j / 2] into L2. So the half
// arrives spread over the whole pass, whatever offset the pass's steps
// start from (a write pass steps from its line-aligning head).
template <typename T>
HWY_INLINE void PrefetchHalfRowToL2(const T* next, std::int64_t begin, std::int64_t i,
                                    std::int64_t m) {
  constexpr std::int64_t kEvery = 2 * static_cast<std::int64_t>(kCacheLine / sizeof(T));
  const std::int64_t j = (i + kEvery - 1) / kEvery * kEvery;  // the first multiple >= i
  if (next != nullptr && j < i + m) PrefetchToL2(next + begin + j / 2);
}

// `next` (or nullptr): the row to prefetch into L2 while this one's
// deviations are summed from L1: a bf16 row whole, an fp32 row its first
// half (LayerNormWriteRow prefetches the second while this row is written).
// Past the cache, on a Zen 5 guest (bench/README.md, "The same guest at
// 5c63bf4"; 1024 MiB, two threads, medians of four processes), fp32 at
// d = 4096 moved 11 % more GB/s (1.07x oneDNN against 0.96x) with the
// prefetch spread over both passes, and from the next item's first row,
// than all in the deviations and none past the item; d = 768 1.14x against
// 1.09x; at 1 MiB neither moved beyond the scatter.
template <typename T>
HWY_INLINE RowStats LayerNormStats(DF df, const T* HWY_RESTRICT x, std::int64_t d, float eps,
                                   const T* next = nullptr) {
  const float n = static_cast<float>(d);
  float sum = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA { t[0] = LoadAt(df, x, i, m); },
      &sum);
  const float mean = sum / n;
  const VF vmean = hn::Set(df, mean);
  constexpr std::int64_t kPerLine = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  float m2 = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        if constexpr (kIsBf16<T>) {
          if (next != nullptr && i % kPerLine == 0) PrefetchToL2(next + i);
        } else {
          PrefetchHalfRowToL2(next, 0, i, m);
        }
        const VF dev = hn::Sub(LoadAt(df, x, i, m), vmean);
        t[0] = KeepFirst(df, hn::Mul(dev, dev), m);
      },
      &m2);
  return FinishLayerNormStats(df, x, d, eps, mean, m2);
}

// The rest of LayerNormStatsOfTwoRows once sums[0] and sums[1], the rows'
// sums in the tree shape, are known (computed there, or by the fused write
// of the two rows before, WriteTwoRowsSummingNext).
template <typename T>
HWY_INLINE void LayerNormStatsOfTwoRowsFromSums(DF df, const T* HWY_RESTRICT x0,
                                                const T* HWY_RESTRICT x1, std::int64_t d, float eps,
                                                const float* sums, const T* next,
                                                std::int64_t next_len, RowStats* st0,
                                                RowStats* st1) {
  const float n = static_cast<float>(d);
  const float mean0 = sums[0] / n;
  const float mean1 = sums[1] / n;
  const VF vmean0 = hn::Set(df, mean0);
  const VF vmean1 = hn::Set(df, mean1);
  constexpr std::int64_t kPerLine = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  float m2[2] = {0.f, 0.f};
  TreeSums<2>(
      df, d,
      [=](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        // A line ahead per line of these.
        if (next != nullptr && i % kPerLine == 0 && i < next_len) PrefetchToL2(next + i);
        const VF dev0 = hn::Sub(LoadAt(df, x0, i, m), vmean0);
        const VF dev1 = hn::Sub(LoadAt(df, x1, i, m), vmean1);
        t[0] = KeepFirst(df, hn::Mul(dev0, dev0), m);
        t[1] = KeepFirst(df, hn::Mul(dev1, dev1), m);
      },
      m2);
  *st0 = FinishLayerNormStats(df, x0, d, eps, mean0, m2[0]);
  *st1 = FinishLayerNormStats(df, x1, d, eps, mean1, m2[1]);
}

// LayerNormStats of two rows at once (the same sums in the same shape, so
// the same bits): two independent chains of additions, so the latency of
// one row's final reduction and of the step from mean to deviations
// overlaps the other's. `next` (or nullptr) and `next_len` (at most d): the
// elements to prefetch into L2 as the deviations are summed, a line per line
// of these rows: next[0, next_len), the first of the next two rows (the
// write pass takes the second, LayerNormWriteTwoBf16Rows).
template <typename T>
HWY_INLINE void LayerNormStatsOfTwoRows(DF df, const T* HWY_RESTRICT x0, const T* HWY_RESTRICT x1,
                                        std::int64_t d, float eps, const T* next,
                                        std::int64_t next_len, RowStats* st0, RowStats* st1) {
  float sums[2] = {0.f, 0.f};
  TreeSums<2>(
      df, d,
      [=](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        t[0] = LoadAt(df, x0, i, m);
        t[1] = LoadAt(df, x1, i, m);
      },
      sums);
  LayerNormStatsOfTwoRowsFromSums(df, x0, x1, d, eps, sums, next, next_len, st0, st1);
}

// The forward's arithmetic for one row: y = gamma * ((x s - mean_s) * rstd_s)
// + beta (the multiplication by s only for a rescaled row), on a vector (f)
// or at a position of the row (at: gamma/beta from fp32 copies).
template <typename T, bool kGamma, bool kBeta, bool kScaled>
struct RowWriter {
  RowWriter(const T* HWY_RESTRICT x_in, const float* HWY_RESTRICT gamma_in,
            const float* HWY_RESTRICT beta_in, const RowStats& st)
      : x(x_in),
        gamma(gamma_in),
        beta(beta_in),
        vscale(hn::Set(DF(), st.scale)),
        vmean(hn::Set(DF(), st.mean_s)),
        vrstd(hn::Set(DF(), st.rstd_s)) {}

  HWY_INLINE VF operator()(VF xs, VF g, VF b) const {
    if constexpr (kScaled) xs = hn::Mul(xs, vscale);
    const VF xhat = hn::Mul(hn::Sub(xs, vmean), vrstd);
    if constexpr (kGamma && kBeta) {
      return hn::MulAdd(g, xhat, b);
    } else if constexpr (kGamma) {
      (void)b;
      return hn::Mul(g, xhat);
    } else if constexpr (kBeta) {
      (void)g;
      return hn::Add(xhat, b);
    } else {
      (void)g;
      (void)b;
      return xhat;
    }
  }

  HWY_INLINE VF At(std::int64_t i, std::int64_t m) const {
    const DF df;
    const VF g = kGamma ? LoadAt(df, gamma, i, m) : hn::Zero(df);
    const VF b = kBeta ? LoadAt(df, beta, i, m) : hn::Zero(df);
    return (*this)(LoadAt(df, x, i, m), g, b);
  }

  const T* HWY_RESTRICT x;
  const float* HWY_RESTRICT gamma;
  const float* HWY_RESTRICT beta;
  VF vscale, vmean, vrstd;
};

// No y is NaN when the statistics and the parameters are finite: a finite
// rstd means a finite row (a NaN or an infinity in x makes the mean and then
// rstd NaN, LayerNormStats), every xhat is finite (|xhat| <= sqrt(d) (1 +
// O(u)) for eps >= 0; for any eps a positive rounded q is at least about
// 2^-24 var, so xhat cannot overflow), and an FMA of finite values is never
// NaN (it may overflow to infinity). The bf16 rounding then skips its NaN
// fix-up.
inline bool GivesNoNaN(const RowStats& st, bool finite_params) {
  return finite_params && std::isfinite(st.mean_s) && std::isfinite(st.rstd_s);
}

// Writes one row of y. gamma/beta: fp32 copies; gamma_t/beta_t: the caller's arrays (the bf16 path
// reads them as bf16). next (or nullptr): the next row, whose second half
// an fp32 row prefetches into L2 as it is written (LayerNormStats).
template <typename T, bool kGamma, bool kBeta, bool kScaled>
HWY_INLINE void LayerNormWriteRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                                  const float* HWY_RESTRICT beta, const T* HWY_RESTRICT gamma_t,
                                  const T* HWY_RESTRICT beta_t, T* HWY_RESTRICT y, std::int64_t d,
                                  const RowStats& st, bool stream, bool finite_params,
                                  const T* next) {
  const DF df;
  // By value: captured by reference, the constants would be reloaded from
  // memory after every store (the compiler cannot tell that y's stores do
  // not change them).
  const RowWriter<T, kGamma, kBeta, kScaled> w(x, gamma, beta, st);
  const auto at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA { return w.At(i, m); };
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kIsBf16<T>) {
    // Every element goes through w, with the same operands, as in `at`: the
    // same bits.
    const std::int64_t done = GivesNoNaN(st, finite_params)
                                  ? WriteBf16RowsInPairs<false, kGamma, kBeta, 1>(
                                        df, x, x, gamma_t, beta_t, y, y, d, stream, w, w)
                                  : WriteBf16RowsInPairs<true, kGamma, kBeta, 1>(
                                        df, x, x, gamma_t, beta_t, y, y, d, stream, w, w);
    StoreRange(df, y, done, d, at);
    return;
  }
#endif
  (void)gamma_t;
  (void)beta_t;
  (void)finite_params;
  if (next == nullptr) return WriteRow(df, y, d, stream, at);
  const std::int64_t half = d / 2;
  WriteRow(df, y, d, stream, [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    PrefetchHalfRowToL2(next, half, i, m);
    return w.At(i, m);
  });
}

#if HWY_TARGET != HWY_SCALAR
// Two unscaled bf16 rows written in one pass: they share gamma's and beta's
// loads and widening (WriteBf16RowsInPairs), then each row's rest. The pass
// also prefetches the row `ahead` (nullptr: none) into L2, a line per line of
// these.
template <bool kGamma, bool kBeta>
HWY_INLINE void LayerNormWriteTwoBf16Rows(
    const hwy::bfloat16_t* HWY_RESTRICT x0, const hwy::bfloat16_t* HWY_RESTRICT x1,
    const float* HWY_RESTRICT gamma, const float* HWY_RESTRICT beta,
    const hwy::bfloat16_t* HWY_RESTRICT gamma_t, const hwy::bfloat16_t* HWY_RESTRICT beta_t,
    hwy::bfloat16_t* HWY_RESTRICT y0, hwy::bfloat16_t* HWY_RESTRICT y1, std::int64_t d,
    const RowStats& st0, const RowStats& st1, bool stream, bool finite_params,
    const hwy::bfloat16_t* ahead) {
  const DF df;
  using W = RowWriter<hwy::bfloat16_t, kGamma, kBeta, false>;
  const W w0(x0, gamma, beta, st0);
  const W w1(x1, gamma, beta, st1);
  const std::int64_t done =
      GivesNoNaN(st0, finite_params) && GivesNoNaN(st1, finite_params)
          ? WriteBf16RowsInPairs<false, kGamma, kBeta, 2>(df, x0, x1, gamma_t, beta_t, y0, y1, d,
                                                          stream, w0, w1, ahead)
          : WriteBf16RowsInPairs<true, kGamma, kBeta, 2>(df, x0, x1, gamma_t, beta_t, y0, y1, d,
                                                         stream, w0, w1, ahead);
  StoreRange(df, y0, done, d,
             [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA { return w0.At(i, m); });
  StoreRange(df, y1, done, d,
             [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA { return w1.At(i, m); });
}
#endif

// LayerNormWriteRow for a row's statistics: the rescaled form when the row
// was scaled.
template <typename T, bool kGamma, bool kBeta>
HWY_INLINE void LayerNormWriteRowFor(const RowStats& st, const T* HWY_RESTRICT x,
                                     const float* HWY_RESTRICT gamma,
                                     const float* HWY_RESTRICT beta, const T* HWY_RESTRICT gamma_t,
                                     const T* HWY_RESTRICT beta_t, T* HWY_RESTRICT y,
                                     std::int64_t d, bool stream, bool finite_params,
                                     const T* next = nullptr) {
  if (st.scale == 1.f) {
    LayerNormWriteRow<T, kGamma, kBeta, false>(x, gamma, beta, gamma_t, beta_t, y, d, st, stream,
                                               finite_params, next);
  } else {
    LayerNormWriteRow<T, kGamma, kBeta, true>(x, gamma, beta, gamma_t, beta_t, y, d, st, stream,
                                              finite_params, next);
  }
}

// The fp32 forward takes rows of at least this many bytes two at a time,
// fusing a pair's write with the next pair's sums (LayerNormForwardRowsOf),
// and shorter rows one at a time in three passes. bench_kernels, fp32,
// fast/oneDNN, medians of 3, 1 and 2 threads, 1 to 1024 MiB, on a 2-core
// Zen 5 guest (bench/README.md, "One row at a time below 16 KiB"), fused
// pairs against one row at a time: d = 64 and 256, 0.33-0.66 against
// 0.83-1.19 (the fused pass spills vectors to the stack); d = 768,
// 0.61-0.92 against 1.08-1.48; d = 1024, 0.66-0.96 against 1.22-1.41;
// d = 2048, 0.77-1.06 against 0.91-1.29; d = 3072 (12 KiB), within the
// scatter; d = 4096 (16 KiB, a goal case) within it too: at 1 MiB,
// 2 threads, 1.25-1.30 against 1.22-1.27 in three of the sweep's four
// rounds (1.88 in the fourth), but 1.04-1.30 against 1.25-1.47 outside the
// sweep, so d = 4096 keeps the fused pairs that Intel machines measured
// ahead (0.75x to 1.2-1.3x); d = 8192 and 16384 at 32 MiB, 1.09-1.30
// against 0.97-1.08. Except in calls that stream y one row at a time
// (driver.h, UseStreamingStores): there one row at a time, 2 threads on a
// Zen 5 guest reaching 32 MiB of L3, alternated rounds, fast/oneDNN at
// d = 4096 went from 1.14, 1.22, 1.05 to 1.41, 1.41, 1.46 at 32 MiB and from
// 1.24, 1.00, 1.08 to 1.29, 1.16, 1.28 at 64 MiB (one thread: 1.04-1.07 to
// 1.21-1.29 and 0.96-1.03 to 0.91-1.23; bench/README.md). Intel machines
// measured the fused pairs ahead in cache, where this does not apply.
constexpr std::int64_t kFusedPairsMinRowBytes = 16 * 1024;

// Row r's statistics into the caller's mean/rstd arrays (where given).
inline void StoreRowStats(const ForwardArgs& a, std::int64_t r, const RowStats& st) {
  if (a.mean != nullptr) a.mean[r] = st.mean;
  if (a.rstd != nullptr) a.rstd[r] = st.rstd;
}

// One row in three passes: its sum, its deviations, then its y, the last
// two prefetching `next` (the next row or nullptr) into L2 (LayerNormStats).
template <typename T, bool kGamma, bool kBeta>
HWY_INLINE void LayerNormForwardRow(const ForwardArgs& a, std::int64_t r, const float* gamma,
                                    const float* beta, bool stream, bool finite_params,
                                    const T* next) {
  const DF df;
  const std::int64_t d = a.d;
  const T* xr = static_cast<const T*>(a.x) + r * d;
  T* yr = static_cast<T*>(a.y) + r * d;
  const T* gamma_t = static_cast<const T*>(a.gamma);
  const T* beta_t = static_cast<const T*>(a.beta);
  const RowStats st = LayerNormStats(df, xr, d, a.eps, next);
  LayerNormWriteRowFor<T, kGamma, kBeta>(st, xr, gamma, beta, gamma_t, beta_t, yr, d, stream,
                                         finite_params, next);
  StoreRowStats(a, r, st);
}

template <typename T, bool kGamma, bool kBeta>
void LayerNormForwardRowsOf(const ForwardArgs& a, WorkQueue& queue, float* scratch) {
  const DF df;
  const std::int64_t d = a.d;
  const T* x = static_cast<const T*>(a.x);
  const T* gamma_t = static_cast<const T*>(a.gamma);
  const T* beta_t = static_cast<const T*>(a.beta);
  const float* gamma = ParamsAsF32(df, gamma_t, d, scratch);
  const float* beta = ParamsAsF32(df, beta_t, d, scratch + PaddedLength(d));
  // Rows written one at a time stream past the cache, short ones excepted
  // (StoresShortRowsInPlace); paired bf16 rows follow their own rule below.
  const std::int64_t row_bytes = d * static_cast<std::int64_t>(sizeof(T));
  const bool stream =
      UseStreamingStores(2 * a.rows * row_bytes, row_bytes) && !StoresShortRowsInPlace(row_bytes);
  // Only the bf16 write reads it (GivesNoNaN); for the other types the two
  // passes over gamma and beta cost about 2 % of a cache-resident fp32 call at
  // d = 4096, per thread.
  const bool finite_params = kIsBf16<T> && (gamma == nullptr || RowIsFinite(df, gamma, d)) &&
                             (beta == nullptr || RowIsFinite(df, beta, d));
  // A pair of rows that cannot share a write pass (a rescaled row, or no
  // next rows for the write to sum), written one row at a time.
  [[maybe_unused]] const auto write_pair_one_by_one = [&](const RowStats* st, const T* x0, T* y0) {
    for (int k = 0; k < 2; ++k) {
      LayerNormWriteRowFor<T, kGamma, kBeta>(st[k], x0 + k * d, gamma, beta, gamma_t, beta_t,
                                             y0 + k * d, d, stream, finite_params);
    }
  };
  WorkItem item;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kIsBf16<T>) {
    // bf16 rows two at a time: statistics of both in each pass, then one
    // write pass for both (LayerNormStatsOfTwoRows, LayerNormWriteTwoBf16Rows;
    // the same bits as one at a time). Each pass then carries two
    // independent chains, so the latency at the end of one row's sums (the
    // final reduction, the mean, the square root) overlaps the other's, and
    // the rows share gamma's and beta's widening. Measured, one thread,
    // rows in L2: 15 % less time per row at d = 4096, 12 % at d = 768, with
    // the NaN-free paired rounding (PackBf16Pair) and the block merge's
    // loop over set bits (MergeBlocks); bench_kernels, 2 threads, d = 4096:
    // 1.02-1.14x oneDNN before, 1.18-1.22x after. (Fusing a row's write
    // with the next row's sum, as long fp32 rows do, cost the one-row bf16 forward
    // 10-20 %, and gained nothing on top of the paired rounding: the bf16
    // write has twice the work per byte.) Rescaled rows, and a last row
    // without a partner, go one at a time.
    hwy::bfloat16_t* y = static_cast<hwy::bfloat16_t*>(a.y);
    const bool stream_spread =
        UseStreamingStoresForSpreadWrites(2 * a.rows * d * static_cast<std::int64_t>(sizeof(T)),
                                          d * static_cast<std::int64_t>(sizeof(T)));
    while (queue.Next(&item)) {
      std::int64_t r = item.row_begin;
      for (; r + 2 <= item.row_end; r += 2) {
        const hwy::bfloat16_t* x0 = x + r * d;
        const hwy::bfloat16_t* x1 = x0 + d;
        // The call's next two rows (past the item too: a thread takes its
        // own contiguous share first, WorkQueue), the first prefetched as
        // the deviations are summed and the second as these rows are written.
        const std::int64_t next_rows = std::min<std::int64_t>(2, a.rows - (r + 2));
        const hwy::bfloat16_t* next = next_rows >= 1 ? x1 + d : nullptr;
        const hwy::bfloat16_t* second = next_rows >= 2 ? x1 + 2 * d : nullptr;
        RowStats st[2];
        LayerNormStatsOfTwoRows(df, x0, x1, d, a.eps, next, next != nullptr ? d : 0, &st[0],
                                &st[1]);
        if (st[0].scale == 1.f && st[1].scale == 1.f) {
          LayerNormWriteTwoBf16Rows<kGamma, kBeta>(x0, x1, gamma, beta, gamma_t, beta_t, y + r * d,
                                                   y + (r + 1) * d, d, st[0], st[1], stream_spread,
                                                   finite_params, second);
        } else {
          write_pair_one_by_one(st, x0, y + r * d);
        }
        StoreRowStats(a, r, st[0]);
        StoreRowStats(a, r + 1, st[1]);
      }
      if (r < item.row_end) {
        LayerNormForwardRow<T, kGamma, kBeta>(a, r, gamma, beta, stream, finite_params,
                                              static_cast<const T*>(nullptr));
      }
    }
    if (stream_spread) hwy::FlushStream();  // `stream` implies `stream_spread`
    return;
  }
#endif
  // Long fp32 rows (kFusedPairsMinRowBytes) of calls that do not stream
  // one row at a time: two at a time, each pair's write fused with the next
  // pair's sums (below), so the next rows come in while these go out. Every
  // other row, fp16 rows and bf16 rows on the scalar target: one at a time
  // in three passes, the second prefetching the next row into L2
  // (LayerNormForwardRow). (Widening a 16-bit row once into an fp32 copy
  // for the later passes measured slower.)
  if constexpr (kIsF32<T>) {
    if (d * static_cast<std::int64_t>(sizeof(T)) >= kFusedPairsMinRowBytes && !stream) {
      // fp32 rows two at a time, as the bf16 ones: the deviations of rows r
      // and r + 1 in one pass (LayerNormStatsOfTwoRowsFromSums), then one
      // write pass for both fused with the sums of rows r + 2 and r + 3
      // (WriteTwoRowsSummingNext). Every sum has the same terms in the same
      // tree shape as one row at a time, and every y the same operations: the
      // same bits. Two independent chains per pass let the latency at the end
      // of a row's sums (the final reduction, the mean, the square root)
      // overlap the other row's work. Rescaled rows, a last row without a
      // partner and the pair before it, and the last pair of a thread's work
      // are written without fusion.
      T* y = static_cast<T*>(a.y);
      using W = RowWriter<T, kGamma, kBeta, false>;
      // The last pair of an item is fused with the first two rows of the
      // thread's next item, taken from the queue before that write (a
      // cache-resident call has only a few items per thread, and an unfused
      // write of a pair cannot overlap any reads). Which thread runs a row, and
      // when, never changes its bits.
      bool have_item = queue.Next(&item);
      float sums[2] = {0.f, 0.f};
      bool have_sums = false;  // sums[] hold the sums of rows r and r + 1
      while (have_item) {
        const std::int64_t end = item.row_end;
        std::int64_t r = item.row_begin;
        WorkItem next_item;
        bool fetched = false;
        bool have_next = false;
        for (; r + 2 <= end; r += 2) {
          const T* x0 = x + r * d;
          const T* x1 = x0 + d;
          RowStats st[2];
          if (have_sums) {
            LayerNormStatsOfTwoRowsFromSums(df, x0, x1, d, a.eps, sums,
                                            static_cast<const T*>(nullptr), 0, &st[0], &st[1]);
          } else {
            LayerNormStatsOfTwoRows(df, x0, x1, d, a.eps, static_cast<const T*>(nullptr), 0, &st[0],
                                    &st[1]);
          }
          const T* next = nullptr;  // the two rows whose sums the write computes
          if (st[0].scale == 1.f && st[1].scale == 1.f) {
            if (r + 4 <= end) {
              next = x1 + d;
            } else if (r + 2 == end) {
              fetched = true;
              have_next = queue.Next(&next_item);
              if (have_next && next_item.row_end - next_item.row_begin >= 2) {
                next = x + next_item.row_begin * d;
              }
            }
          }
          have_sums = next != nullptr;
          if (have_sums) {
            const W w0(x0, gamma, beta, st[0]);
            const W w1(x1, gamma, beta, st[1]);
            WriteTwoRowsSummingNext(
                df, y + r * d, y + (r + 1) * d, d,
                [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA { return w0.At(i, m); },
                [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA { return w1.At(i, m); }, next,
                next + d, sums);
          } else {
            write_pair_one_by_one(st, x0, y + r * d);
          }
          StoreRowStats(a, r, st[0]);
          StoreRowStats(a, r + 1, st[1]);
        }
        if (r < end) {
          LayerNormForwardRow<T, kGamma, kBeta>(a, r, gamma, beta, stream, finite_params,
                                                static_cast<const T*>(nullptr));
        }
        if (!fetched) have_next = queue.Next(&next_item);
        item = next_item;
        have_item = have_next;
      }
      return;  // nothing streamed (`stream` is false here)
    }
  }
  const bool prefetch = PrefetchNextRows(2 * a.rows * row_bytes, queue.shares());
  while (queue.Next(&item)) {
    for (std::int64_t r = item.row_begin; r < item.row_end; ++r) {
      // The next row of the call, even past this item: a thread takes the
      // pieces of its own contiguous share first (WorkQueue), so its next
      // item most often starts there.
      const T* next = prefetch && r + 1 < a.rows ? x + (r + 1) * d : nullptr;
      LayerNormForwardRow<T, kGamma, kBeta>(a, r, gamma, beta, stream, finite_params, next);
    }
  }
  if (stream) hwy::FlushStream();
}

template <typename T>
void LayerNormForwardRows(const ForwardArgs& a, WorkQueue& queue, float* scratch) {
  if (a.gamma != nullptr) {
    if (a.beta != nullptr) return LayerNormForwardRowsOf<T, true, true>(a, queue, scratch);
    return LayerNormForwardRowsOf<T, true, false>(a, queue, scratch);
  }
  if (a.beta != nullptr) return LayerNormForwardRowsOf<T, false, true>(a, queue, scratch);
  return LayerNormForwardRowsOf<T, false, false>(a, queue, scratch);
}

// One row of the backward, after its sums: dx = rstd ((g - a) - xhat b),
// g = dy gamma, with xhat = (x s - mean s) (rstd / s) (s: BackwardScale).
// Xhat<false> leaves out the product x s, for rows with s = 1 (Scaled()
// false): x * 1 is x bit for bit, a NaN's payload included (a NaN comes out
// of x s - mean s quieted either way), so both give the same bits, and the
// loops of ordinary rows save a multiplication a vector (bench/README.md
// has what it gave on an AMD Zen 5).
template <typename T, bool kGamma>
struct BackwardRow {
  template <bool kScaled>
  HWY_INLINE VF Xhat(std::int64_t i, std::int64_t m) const {
    const VF xv = LoadAt(DF(), x, i, m);
    if constexpr (kScaled) {
      return hn::Mul(hn::Sub(hn::Mul(xv, vscale), vmean), vrstd_s);
    } else {
      return hn::Mul(hn::Sub(xv, vmean), vrstd_s);
    }
  }
  // g from dy and gamma's vector at the same position.
  HWY_INLINE VF G(VF dyv, VF gammav) const {
    if constexpr (kGamma) {
      return hn::Mul(dyv, gammav);
    } else {
      (void)gammav;
      return dyv;
    }
  }
  HWY_INLINE VF Dx(VF xhat, VF g) const {
    return hn::Mul(vr, hn::NegMulAdd(xhat, vb, hn::Sub(g, va)));
  }

  const T* HWY_RESTRICT x;
  const T* HWY_RESTRICT dy;
  // s != 1, from vscale: a build with a flag beside the vectors (each row
  // a cache line longer) and the pair's rows set in a loop measured slower
  // (bench/README.md).
  HWY_INLINE bool Scaled() const { return hn::GetLane(vscale) != 1.f; }

  VF vscale, vmean, vrstd_s, va, vb, vr;
};

// gamma's vector at [i, i + m) (anything without gamma: G ignores it).
template <bool kGamma>
HWY_INLINE VF GammaAt(const float* HWY_RESTRICT gamma, std::int64_t i, std::int64_t m) {
  if constexpr (kGamma) {
    return LoadAt(DF(), gamma, i, m);
  } else {
    (void)gamma;
    (void)i;
    (void)m;
    return hn::Zero(DF());
  }
}

// A row's backward sums: a = mean(g), b = mean(g xhat) in the tree shape,
// in one pass.
template <typename T, bool kGamma>
HWY_NOINLINE BackwardRow<T, kGamma> LayerNormBackwardSums(const T* HWY_RESTRICT x,
                                                          const T* HWY_RESTRICT dy,
                                                          const float* HWY_RESTRICT gamma,
                                                          std::int64_t d, float mean, float rstd) {
  const DF df;
  const float scale = BackwardScale(rstd);
  BackwardRow<T, kGamma> row;
  row.x = x;
  row.dy = dy;
  row.vscale = hn::Set(df, scale);
  row.vmean = hn::Set(df, mean * scale);
  row.vrstd_s = hn::Set(df, rstd / scale);
  float sums[2] = {0.f, 0.f};
  const auto sum = [&](auto scaled) {
    TreeSums<2>(
        df, d,
        [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
          const VF xhat = row.template Xhat<decltype(scaled)::value>(i, m);
          const VF g = row.G(LoadAt(df, dy, i, m), GammaAt<kGamma>(gamma, i, m));
          t[0] = KeepFirst(df, g, m);
          t[1] = KeepFirst(df, hn::Mul(g, xhat), m);
        },
        sums);
  };
  if (scale != 1.f) {
    sum(std::true_type{});
  } else {
    sum(std::false_type{});
  }
  const float n = static_cast<float>(d);
  row.va = hn::Set(df, sums[0] / n);
  row.vb = hn::Set(df, sums[1] / n);
  row.vr = hn::Set(df, rstd);
  return row;
}

// The shape of a second pass's SumsInto pair, where a compiled loop knows
// it: kFirst, both sums wanted, each starting from zeros (the pass holds its
// block's first rows), no carries; kMiddle, both wanted, each adding to its
// block's array (not the first rows), no carries; kAny, anything else (read
// from the fields as the loop goes). Most passes of blocks of five or more
// rows are kFirst or kMiddle.
enum class PassSums { kAny, kFirst, kMiddle };

inline PassSums PassSumsOf(const SumsInto& dg, const SumsInto& db) {
  if (dg.out == nullptr || db.out == nullptr || dg.lefts != 0 || db.lefts != 0) {
    return PassSums::kAny;
  }
  if (dg.in == nullptr && db.in == nullptr) return PassSums::kFirst;
  if (dg.in != nullptr && db.in != nullptr) return PassSums::kMiddle;
  return PassSums::kAny;
}

// SumsStart and SumsFinish for a pass of shape kSums: the same operations,
// with `in` and `lefts` known when kSums is not kAny.
template <PassSums kSums>
HWY_INLINE VF PassStart(DF df, const SumsInto& s, std::int64_t i, std::int64_t n) {
  if constexpr (kSums == PassSums::kAny) {
    return SumsStart(df, s, i, n);
  } else if constexpr (kSums == PassSums::kMiddle) {
    return LoadAt(df, s.in, i, n);
  } else {
    return hn::Zero(df);
  }
}
template <PassSums kSums>
HWY_INLINE void PassFinish(DF df, const SumsInto& s, VF p, std::int64_t i, std::int64_t n) {
  if constexpr (kSums == PassSums::kAny) {
    SumsFinish(df, s, p, i, n);
  } else {
    StoreAt(df, p, s.out, i, n);
  }
}

// The sum of kN (2 or 4) one-row sibling blocks' terms as the merge tree
// adds them: (t0 + t1), or (t0 + t1) + (t2 + t3).
template <int kN>
HWY_INLINE VF SubtreeSum(const VF* t) {
  if constexpr (kN == 2) {
    return TreeAdd(t[0], t[1]);
  } else {
    static_assert(kN == 4, "two or four blocks");
    return TreeAdd(TreeAdd(t[0], t[1]), TreeAdd(t[2], t[3]));
  }
}

// How a backward call stores dx: with streaming stores (driver.h,
// UseStreamingStoresForSpreadWrites), or the ordinary way, then prefetching
// the next rows' dx for writing when driver.h's PrefetchOutputsForWriting
// says so (a PREFETCHW of each of their lines while these rows are written,
// only within the thread's item, as next_x and next_dy). next_inputs: the
// next rows' x and dy are prefetched into L2 (driver.h, PrefetchNextRows).
struct DxStores {
  bool stream = false;
  bool prefetch = false;
  bool next_inputs = false;
};

// The second pass of kN rows (1 to 4 of one row block; 2 or 4 one-row
// blocks with kSiblings), in one loop: each row's dx, and its dy * xhat and
// dy summed into the block's partial sums as `dgamma` and `dbeta` say
// (partials.h, SumsInto: row by row in row order, so the same bits as one
// row at a time, then the subtrees the block completes; the kN rows load and
// store the partials and load gamma once for all). The rows come from L1 or
// L2 after their sums (four fp32 rows of 4096 hold 128 KiB of x and dy); the
// loop prefetches the next `next_rows` (<= kN) rows from next_x and next_dy
// into L2, a line of each per line of these. kSiblings (kN = 2 or 4): the
// rows are kN one-row blocks, an aligned subtree of the merge tree, and
// `dgamma`/`dbeta` are the last one's: each row's term is its block's sum (0
// + term), and the subtree's sum (SubtreeSum) stands for the last block's
// first log2(kN) left operands, added in registers instead of through their
// arrays. kNativeBf16: dx's whole lines rounded by vcvtne2ps2bf16
// (WriteRows; the same bits). kSums (kAny with kSiblings): the shape of
// `dgamma` and `dbeta` when PassSumsOf knows it, so that the loop neither
// tests `in` nor loops over `left`. kScaled: the row is Scaled()
// (BackwardRow; only one row at a time, kAny, since such rows are rare);
// otherwise no row is.
template <typename T, bool kGamma, int kN, bool kSiblings = false, bool kNativeBf16 = false,
          PassSums kSums = PassSums::kAny, bool kScaled = false>
HWY_NOINLINE void LayerNormBackwardWrite(const BackwardRow<T, kGamma>* rows_in,
                                         const float* HWY_RESTRICT gamma, T* const* dx,
                                         std::int64_t d, const SumsInto& dgamma,
                                         const SumsInto& dbeta, const T* HWY_RESTRICT next_x,
                                         const T* HWY_RESTRICT next_dy, int next_rows,
                                         const DxStores& stores) {
  static_assert(!kScaled || (kN == 1 && !kSiblings && kSums == PassSums::kAny),
                "rescaled rows go one at a time");
  const DF df;
  constexpr std::int64_t kPerLine = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  // Copies, by value in the lambda: no reloads after every store.
  BackwardRow<T, kGamma> rows[kN];
  for (int k = 0; k < kN; ++k) rows[k] = rows_in[k];
  const SumsInto dg = dgamma;
  const SumsInto db = dbeta;
  // The next rows' dx follows these rows' (every caller passes rows r to
  // r + kN - 1 and the next ones from r + kN).
  T* const next_dx = stores.prefetch ? dx[kN - 1] + d : nullptr;
  // No prefetches where a thread's share of the call's rows fits in its
  // core's L2 (then so does its dx; driver.h, PrefetchNextRows).
  next_rows = stores.next_inputs ? next_rows : 0;
  const auto dx_at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    if (next_rows > 0 && i % kPerLine == 0) {
      for (int k = 0; k < next_rows; ++k) {
        PrefetchToL2(next_x + k * d + i);
        PrefetchToL2(next_dy + k * d + i);
        if (next_dx != nullptr) PrefetchForWriting(next_dx + k * d + i);
      }
    }
    const VF gammav = GammaAt<kGamma>(gamma, i, m);
    VF dyv[kN];
    VF xhat[kN];
#pragma GCC unroll 4
    for (int k = 0; k < kN; ++k) {
      dyv[k] = LoadAt(df, rows[k].dy, i, m);
      xhat[k] = rows[k].template Xhat<kScaled>(i, m);
    }
    if constexpr (kSiblings) {
      static_assert(kN == 2 || kN == 4, "two or four sibling blocks");
      constexpr int kInRegisters = kN == 2 ? 1 : 2;  // the carries the subtree replaces
      const VF zero = hn::Zero(df);
      if (dg.out != nullptr) {
        VF t[kN];
#pragma GCC unroll 4
        for (int k = 0; k < kN; ++k) t[k] = hn::MulAdd(dyv[k], xhat[k], zero);
        SumsFinish(df, dg, SubtreeSum<kN>(t), i, m, kInRegisters);
      }
      if (db.out != nullptr) {
        VF t[kN];
#pragma GCC unroll 4
        for (int k = 0; k < kN; ++k) t[k] = hn::Add(zero, dyv[k]);
        SumsFinish(df, db, SubtreeSum<kN>(t), i, m, kInRegisters);
      }
    } else {
      // kSums known: both sums wanted (PassSumsOf), no test of `out`.
      constexpr bool kKnown = kSums != PassSums::kAny;
      if (kKnown || dg.out != nullptr) {
        VF p = PassStart<kSums>(df, dg, i, m);
#pragma GCC unroll 4
        for (int k = 0; k < kN; ++k) p = hn::MulAdd(dyv[k], xhat[k], p);
        PassFinish<kSums>(df, dg, p, i, m);
      }
      if (kKnown || db.out != nullptr) {
        VF p = PassStart<kSums>(df, db, i, m);
#pragma GCC unroll 4
        for (int k = 0; k < kN; ++k) p = hn::Add(p, dyv[k]);
        PassFinish<kSums>(df, db, p, i, m);
      }
    }
    RowVecs<kN> out;
#pragma GCC unroll 4
    for (int k = 0; k < kN; ++k) out.v[k] = rows[k].Dx(xhat[k], rows[k].G(dyv[k], gammav));
    return out;
  };
  WriteRows<T, kN, kNativeBf16>(df, dx, d, stores.stream, dx_at);
}

// LayerNormBackwardWrite compiled for the shape of dgamma and dbeta.
template <typename T, bool kGamma, int kN, bool kNativeBf16>
HWY_INLINE void LayerNormBackwardPass(const BackwardRow<T, kGamma>* rows, const float* gamma,
                                      T* const* dx, std::int64_t d, const SumsInto& dg,
                                      const SumsInto& db, const T* next_x, const T* next_dy,
                                      int next_rows, const DxStores& stores) {
  switch (PassSumsOf(dg, db)) {
    case PassSums::kFirst:
      LayerNormBackwardWrite<T, kGamma, kN, false, kNativeBf16, PassSums::kFirst>(
          rows, gamma, dx, d, dg, db, next_x, next_dy, next_rows, stores);
      return;
    case PassSums::kMiddle:
      LayerNormBackwardWrite<T, kGamma, kN, false, kNativeBf16, PassSums::kMiddle>(
          rows, gamma, dx, d, dg, db, next_x, next_dy, next_rows, stores);
      return;
    case PassSums::kAny:
      LayerNormBackwardWrite<T, kGamma, kN, false, kNativeBf16>(rows, gamma, dx, d, dg, db, next_x,
                                                                next_dy, next_rows, stores);
      return;
  }
}

// A row's BackwardRow: from the saved statistics, or (none saved) the
// forward's own.
template <typename T, bool kGamma>
HWY_INLINE BackwardRow<T, kGamma> BackwardRowOf(const BackwardArgs& a, std::int64_t r,
                                                const float* gamma) {
  const std::int64_t d = a.d;
  const T* x = static_cast<const T*>(a.x) + r * d;
  const T* dy = static_cast<const T*>(a.dy) + r * d;
  if (a.mean != nullptr && a.rstd != nullptr) {
    return LayerNormBackwardSums<T, kGamma>(x, dy, gamma, d, a.mean[r], a.rstd[r]);
  }
  const RowStats st = LayerNormStats(DF(), x, d, a.eps);
  return LayerNormBackwardSums<T, kGamma>(x, dy, gamma, d, st.mean, st.rstd);
}

// Row r of block b (rows [begin, end) of `item`) in a second pass of its
// own, prefetching the item's next rows; a rescaled row (Scaled()) by the
// loop that multiplies x by its scale.
template <typename T, bool kGamma, bool kNativeBf16>
HWY_INLINE void LayerNormBackwardOneRow(const BackwardArgs& a, const Partials& partials,
                                        const WorkItem& item, std::int64_t b, std::int64_t begin,
                                        std::int64_t end, std::int64_t r,
                                        const BackwardRow<T, kGamma>& row, const float* gamma,
                                        const DxStores& stores) {
  const std::int64_t d = a.d;
  const int next_rows = static_cast<int>(std::min<std::int64_t>(2, item.row_end - r - 1));
  const T* next_x = static_cast<const T*>(a.x) + (r + 1) * d;
  const T* next_dy = static_cast<const T*>(a.dy) + (r + 1) * d;
  const SumsInto dg = partials.DgammaInto(item, b, r == begin, r + 1 == end);
  const SumsInto db = partials.DbetaInto(item, b, r == begin, r + 1 == end);
  T* const out[1] = {static_cast<T*>(a.dx) + r * d};
  if (row.Scaled()) {
    LayerNormBackwardWrite<T, kGamma, 1, false, kNativeBf16, PassSums::kAny, true>(
        &row, gamma, out, d, dg, db, next_x, next_dy, next_rows, stores);
  } else {
    LayerNormBackwardPass<T, kGamma, 1, kNativeBf16>(&row, gamma, out, d, dg, db, next_x, next_dy,
                                                     next_rows, stores);
  }
}

// Rows r to r + kN - 1 of block b (rows [begin, end) of `item`) in one
// second pass (LayerNormBackwardWrite), prefetching the item's next rows. A
// run holding a rescaled row goes one row at a time: the same bits, since a
// pass adds its rows into the partials one after the other.
template <typename T, bool kGamma, bool kNativeBf16, int kN>
HWY_INLINE void LayerNormBackwardRun(const BackwardArgs& a, const Partials& partials,
                                     const WorkItem& item, std::int64_t b, std::int64_t begin,
                                     std::int64_t end, std::int64_t r, const float* gamma,
                                     const DxStores& stores) {
  const std::int64_t d = a.d;
  BackwardRow<T, kGamma> rows[kN];
  T* out[kN];
  bool scaled = false;
  for (int k = 0; k < kN; ++k) {
    rows[k] = BackwardRowOf<T, kGamma>(a, r + k, gamma);
    out[k] = static_cast<T*>(a.dx) + (r + k) * d;
    scaled = scaled || rows[k].Scaled();
  }
  if (scaled) {
    for (int k = 0; k < kN; ++k) {
      LayerNormBackwardOneRow<T, kGamma, kNativeBf16>(a, partials, item, b, begin, end, r + k,
                                                      rows[k], gamma, stores);
    }
    return;
  }
  const int next_rows = static_cast<int>(std::min<std::int64_t>(kN, item.row_end - r - kN));
  const T* next_x = static_cast<const T*>(a.x) + (r + kN) * d;
  const T* next_dy = static_cast<const T*>(a.dy) + (r + kN) * d;
  const SumsInto dg = partials.DgammaInto(item, b, r == begin, r + kN == end);
  const SumsInto db = partials.DbetaInto(item, b, r == begin, r + kN == end);
  LayerNormBackwardPass<T, kGamma, kN, kNativeBf16>(rows, gamma, out, d, dg, db, next_x, next_dy,
                                                    next_rows, stores);
}

// The rows of block b of `item` in runs of up to four rows a second pass:
// four at a time, except that five rows left go as three and two, and the
// last one to three rows as one run. Fewer passes a block load and store its
// partials, and load gamma, fewer times a row; bench/README.md has what runs
// of four gave over pairs on an AMD Zen 5 (the bf16 backward at d = 768,
// cache-resident on one thread, was 20 % behind oneDNN in pairs).
template <typename T, bool kGamma, bool kNativeBf16>
HWY_INLINE void LayerNormBackwardBlock(const BackwardArgs& a, const Partials& partials,
                                       const WorkItem& item, std::int64_t b, const float* gamma,
                                       const DxStores& stores) {
  const std::int64_t begin = SplitPoint(a.rows, partials.blocks, b);
  const std::int64_t end = SplitPoint(a.rows, partials.blocks, b + 1);
  for (std::int64_t r = begin; r < end;) {
    const std::int64_t left = end - r;
    if (left >= 4 && left != 5) {
      LayerNormBackwardRun<T, kGamma, kNativeBf16, 4>(a, partials, item, b, begin, end, r, gamma,
                                                      stores);
      r += 4;
    } else if (left == 3 || left == 5) {
      LayerNormBackwardRun<T, kGamma, kNativeBf16, 3>(a, partials, item, b, begin, end, r, gamma,
                                                      stores);
      r += 3;
    } else if (left >= 2) {
      LayerNormBackwardRun<T, kGamma, kNativeBf16, 2>(a, partials, item, b, begin, end, r, gamma,
                                                      stores);
      r += 2;
    } else {
      LayerNormBackwardOneRow<T, kGamma, kNativeBf16>(a, partials, item, b, begin, end, r,
                                                      BackwardRowOf<T, kGamma>(a, r, gamma), gamma,
                                                      stores);
      r += 1;
    }
  }
}

// Blocks b to b + kN - 1 of `item` (an aligned subtree of the merge tree:
// b - item.block_begin is a multiple of kN), one row each, in one second
// pass (kSiblings).
template <typename T, bool kGamma, bool kNativeBf16, int kN>
HWY_INLINE void LayerNormBackwardSiblings(const BackwardArgs& a, const Partials& partials,
                                          const WorkItem& item, std::int64_t b, const float* gamma,
                                          const DxStores& stores) {
  const std::int64_t d = a.d;
  const std::int64_t r = SplitPoint(a.rows, partials.blocks, b);
  const int next_rows = static_cast<int>(std::min<std::int64_t>(kN, item.row_end - r - kN));
  T* dx = static_cast<T*>(a.dx);
  BackwardRow<T, kGamma> rows[kN];
  T* out[kN];
  bool scaled = false;
  for (int k = 0; k < kN; ++k) {
    rows[k] = BackwardRowOf<T, kGamma>(a, r + k, gamma);
    out[k] = dx + (r + k) * d;
    scaled = scaled || rows[k].Scaled();
  }
  if (scaled) {  // block by block, as the merge tree defines them
    for (int k = 0; k < kN; ++k) {
      LayerNormBackwardOneRow<T, kGamma, kNativeBf16>(a, partials, item, b + k, r + k, r + k + 1,
                                                      r + k, rows[k], gamma, stores);
    }
    return;
  }
  LayerNormBackwardWrite<T, kGamma, kN, true, kNativeBf16>(
      rows, gamma, out, d, partials.DgammaInto(item, b + kN - 1, true, true),
      partials.DbetaInto(item, b + kN - 1, true, true), static_cast<const T*>(a.x) + (r + kN) * d,
      static_cast<const T*>(a.dy) + (r + kN) * d, next_rows, stores);
}

// Whether blocks b to b + n - 1 of `item` are one-row blocks of an aligned
// subtree (b - item.block_begin a multiple of n: items are aligned pieces,
// driver.h's PieceBlocks). Which blocks form one may depend on the thread
// count (driver.h, ShareBegin); the sums do not.
inline bool OneRowSubtree(const BackwardArgs& a, const Partials& partials, const WorkItem& item,
                          std::int64_t b, std::int64_t n) {
  const auto first_row = [&](std::int64_t k) { return SplitPoint(a.rows, partials.blocks, k); };
  return (b - item.block_begin) % n == 0 && b + n - 1 < item.block_end &&
         first_row(b + n) - first_row(b) == n;
}

template <typename T, bool kGamma, bool kNativeBf16>
void LayerNormBackwardRowsOf(const BackwardArgs& a, WorkQueue& queue, const Partials& partials,
                             const float* gamma) {
  const std::int64_t row_bytes = a.d * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t footprint = 3 * a.rows * row_bytes;  // x, dy and dx
  DxStores stores;
  stores.stream = UseStreamingStoresForSpreadWrites(footprint, row_bytes);
  stores.prefetch = PrefetchOutputsForWriting(footprint, stores.stream);
  stores.next_inputs = PrefetchNextRows(footprint, queue.shares());
  WorkItem item;
  while (queue.Next(&item)) {
    for (std::int64_t b = item.block_begin; b < item.block_end;) {
      if (OneRowSubtree(a, partials, item, b, 4)) {
        LayerNormBackwardSiblings<T, kGamma, kNativeBf16, 4>(a, partials, item, b, gamma, stores);
        b += 4;
      } else if (OneRowSubtree(a, partials, item, b, 2)) {
        LayerNormBackwardSiblings<T, kGamma, kNativeBf16, 2>(a, partials, item, b, gamma, stores);
        b += 2;
      } else {
        LayerNormBackwardBlock<T, kGamma, kNativeBf16>(a, partials, item, b, gamma, stores);
        ++b;
      }
    }
  }
  if (stores.stream) hwy::FlushStream();
}

template <typename T, bool kNativeBf16 = false>
void LayerNormBackwardRows(const BackwardArgs& a, WorkQueue& queue, const Partials& partials,
                           float* scratch) {
  const float* gamma = ParamsAsF32(DF(), static_cast<const T*>(a.gamma), a.d, scratch);
  if (gamma != nullptr) {
    return LayerNormBackwardRowsOf<T, true, kNativeBf16>(a, queue, partials, gamma);
  }
  return LayerNormBackwardRowsOf<T, false, kNativeBf16>(a, queue, partials, gamma);
}

template <typename T>
int LayerNormForward(const ForwardArgs* args) {
  return RunForward(args, Norm::kLayerNorm, &LayerNormForwardRows<T>);
}

template <typename T>
int LayerNormBackward(const BackwardArgs* args) {
  constexpr DType kParam = kIsF32<T> ? DType::kF32 : kIsBf16<T> ? DType::kBF16 : DType::kF16;
  return RunBackward(args, Norm::kLayerNorm, kParam, &LayerNormBackwardRows<T>, &FinishColumns<T>);
}

#if HWY_TARGET == HWY_AVX3
// The bf16 backward with dx's whole lines rounded by vcvtne2ps2bf16
// (simd_row-inl.h, Bf16LineNative): LayerNormBackward<bfloat16_t>'s bits,
// for the AVX512_BF16 entry (avx512bf16_layer_norm.h), on a CPU with it.
int LayerNormBackwardNativeBf16(const BackwardArgs* args) {
  return RunBackward(args, Norm::kLayerNorm, DType::kBF16,
                     &LayerNormBackwardRows<hwy::bfloat16_t, true>,
                     &FinishColumns<hwy::bfloat16_t>);
}
#endif

}  // namespace

void FillLayerNorm(TargetKernels* out) {
  out->layer_norm.forward = {&LayerNormForward<float>, &LayerNormForward<hwy::bfloat16_t>,
                             &LayerNormForward<hwy::float16_t>};
  out->layer_norm.backward = {&LayerNormBackward<float>, &LayerNormBackward<hwy::bfloat16_t>,
                              &LayerNormBackward<hwy::float16_t>};
  out->layer_norm.backward_rows = {&LayerNormBackwardRows<float>,
                                   &LayerNormBackwardRows<hwy::bfloat16_t>,
                                   &LayerNormBackwardRows<hwy::float16_t>};
#if HWY_TARGET == HWY_AVX3
  out->layer_norm_bf16_native_backward = &LayerNormBackwardNativeBf16;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace lnv::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "impls/cpu/fast/per_target.h"

namespace lnv::fast {

void FillLayerNormKernels(std::int64_t target, TargetKernels* out) {
  LNV_FAST_FILL_FOR_TARGET(target, FillLayerNorm, out);
}

}  // namespace lnv::fast
#endif  // HWY_ONCE

// The fast LayerNorm row kernels, compiled once per SIMD target (Highway's
// foreach_target re-includes this file). The claim is in fast_layer_norm.h.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "impls/cpu/fast/fast_layer_norm.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "impls/cpu/fast/driver.h"
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

// `next` (or nullptr): the row to prefetch while this one's deviations are
// summed from L1.
// `known_sum` (or nullptr): sum(x) already computed in the tree shape, by
// the previous row's fused write pass.
template <typename T>
HWY_INLINE RowStats LayerNormStats(DF df, const T* HWY_RESTRICT x, std::int64_t d, float eps,
                                   const T* next = nullptr, const float* known_sum = nullptr) {
  const float n = static_cast<float>(d);
  float sum = 0.f;
  if (known_sum != nullptr) {
    sum = *known_sum;
  } else {
    TreeSums<1>(
        df, d,
        [&](std::int64_t i, std::int64_t m, VF* t)
            LNV_INLINE_LAMBDA { t[0] = LoadAt(df, x, i, m); },
        &sum);
  }
  const float mean = sum / n;
  const VF vmean = hn::Set(df, mean);
  constexpr std::int64_t kPerLine = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  float m2 = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        if (next != nullptr && i % kPerLine == 0) PrefetchToL2(next + i);
        const VF dev = hn::Sub(LoadAt(df, x, i, m), vmean);
        t[0] = KeepFirst(df, hn::Mul(dev, dev), m);
      },
      &m2);
  // A finite q implies a finite m2 and mean (an infinite or NaN mean makes
  // every deviation infinite or NaN).
  const float q = m2 / n + eps;
  if (!std::isfinite(q)) return LayerNormStatsRescaled(df, x, d, eps, mean);
  RowStats st;
  st.mean = st.mean_s = mean;
  st.rstd = st.rstd_s = 1.f / std::sqrt(q);
  return st;
}

// y = gamma * ((x s - mean_s) * rstd_s) + beta, a vector (bf16 on the SIMD
// targets: a pair of vectors) at a time (the multiplication by s only for a
// rescaled row). gamma/beta: fp32 copies;
// gamma_t/beta_t: the caller's arrays (used by the bf16 path).
// With `next`, the write is fused with next's first statistics pass
// (WriteRowSummingNext), and sum(next) is returned; otherwise 0.
template <typename T, bool kGamma, bool kBeta, bool kScaled>
HWY_INLINE float LayerNormWriteRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                                   const float* HWY_RESTRICT beta, const T* HWY_RESTRICT gamma_t,
                                   const T* HWY_RESTRICT beta_t, T* HWY_RESTRICT y, std::int64_t d,
                                   const RowStats& st, bool stream, const T* HWY_RESTRICT next,
                                   bool finite_params) {
  const DF df;
  const VF vscale = hn::Set(df, st.scale);
  const VF vmean = hn::Set(df, st.mean_s);
  const VF vrstd = hn::Set(df, st.rstd_s);
  // By value: captured by reference, the constants would be reloaded from
  // memory after every store (the compiler cannot tell that y's stores do
  // not change them).
  const auto f = [=](VF xs, VF g, VF b) LNV_INLINE_LAMBDA {
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
  };
  const auto at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    const VF g = kGamma ? LoadAt(df, gamma, i, m) : hn::Zero(df);
    const VF b = kBeta ? LoadAt(df, beta, i, m) : hn::Zero(df);
    return f(LoadAt(df, x, i, m), g, b);
  };
  if (next != nullptr) return WriteRowSummingNext(df, y, d, stream, at, next);
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kIsBf16<T>) {
    // No y is NaN when the statistics and the parameters are finite: a
    // finite rstd means a finite row (a NaN or an infinity in x makes the
    // mean and then rstd NaN, LayerNormStats), every xhat is finite (|xhat|
    // <= sqrt(d) (1 + O(u)) for eps >= 0; for any eps a positive rounded q is
    // at least about 2^-24 var, so xhat cannot overflow), and an FMA of
    // finite values is never NaN (it may overflow to infinity). The bf16
    // rounding then skips its NaN fix-up.
    const bool nan_free = finite_params && std::isfinite(st.mean_s) && std::isfinite(st.rstd_s);
    // Every element goes through f, with the same operands, as in `at`: the
    // same bits.
    const std::int64_t done =
        nan_free ? WriteBf16RowInPairs<false>(df, x, gamma_t, beta_t, y, d, stream, f)
                 : WriteBf16RowInPairs<true>(df, x, gamma_t, beta_t, y, d, stream, f);
    StoreRange(df, y, done, d, at);
    return 0.f;
  }
#endif
  (void)gamma_t;
  (void)beta_t;
  (void)finite_params;
  WriteRow(df, y, d, stream, at);
  return 0.f;
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
  T* y = static_cast<T*>(a.y);
  const bool stream = UseStreamingStores(2 * a.rows * d * static_cast<std::int64_t>(sizeof(T)),
                                         d * static_cast<std::int64_t>(sizeof(T)));
  // fp32 rows: each row's write is fused with the next row's sum
  // (WriteRowSummingNext), so the next row streams in while this one streams
  // out; the row's second pass then runs from L1. 16-bit rows: three
  // separate passes, the second prefetching the next row into L2. Measured
  // with bench_kernels (bench/README.md): fusing took fp32 at d = 4096 from
  // 0.75x to 1.2-1.3x oneDNN, and cost bf16 10-20 %, whose write pass has
  // twice the work per byte (the rounding). The fused write streams only
  // rows that start on a cache line. (Widening a 16-bit row once into
  // an fp32 copy for the later passes measured slower, too.)
  constexpr bool kFuse = kIsF32<T>;
  const bool finite_params = (gamma == nullptr || RowIsFinite(df, gamma, d)) &&
                             (beta == nullptr || RowIsFinite(df, beta, d));
  WorkItem item;
  while (queue.Next(&item)) {
    float next_sum = 0.f;  // sum of row r, when the previous write computed it
    bool have_sum = false;
    for (std::int64_t r = item.row_begin; r < item.row_end; ++r) {
      const T* xr = x + r * d;
      const T* next = r + 1 < item.row_end ? xr + d : nullptr;
      const RowStats st =
          LayerNormStats(df, xr, d, a.eps, kFuse ? nullptr : next, have_sum ? &next_sum : nullptr);
      T* yr = y + r * d;
      const T* fused = kFuse ? next : nullptr;
      if (st.scale == 1.f) {
        next_sum = LayerNormWriteRow<T, kGamma, kBeta, false>(xr, gamma, beta, gamma_t, beta_t, yr,
                                                              d, st, stream, fused, finite_params);
      } else {
        next_sum = LayerNormWriteRow<T, kGamma, kBeta, true>(xr, gamma, beta, gamma_t, beta_t, yr,
                                                             d, st, stream, fused, finite_params);
      }
      have_sum = fused != nullptr;
      if (a.mean != nullptr) a.mean[r] = st.mean;
      if (a.rstd != nullptr) a.rstd[r] = st.rstd;
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

// One row of the backward: a = mean(g), b = mean(g xhat) in the tree shape
// (one pass, which also adds dy * xhat and dy into the partials), then
// dx = rstd ((g - a) - xhat b).
template <typename T, bool kGamma>
HWY_NOINLINE void LayerNormBackwardRow(const T* HWY_RESTRICT x, const T* HWY_RESTRICT dy,
                                       const float* HWY_RESTRICT gamma, T* HWY_RESTRICT dx,
                                       std::int64_t d, float mean, float rstd,
                                       float* HWY_RESTRICT dgamma, float* HWY_RESTRICT dbeta,
                                       const T* HWY_RESTRICT next_x, const T* HWY_RESTRICT next_dy,
                                       bool stream) {
  const DF df;
  const float scale = BackwardScale(rstd);
  const VF vscale = hn::Set(df, scale);
  const VF vmean = hn::Set(df, mean * scale);
  const VF vrstd_s = hn::Set(df, rstd / scale);
  // By value, as in the forward: no reloads after every store.
  const auto xhat_at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    return hn::Mul(hn::Sub(hn::Mul(LoadAt(df, x, i, m), vscale), vmean), vrstd_s);
  };
  const auto g_at = [=](VF dyv, std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    if constexpr (kGamma) {
      return hn::Mul(dyv, LoadAt(df, gamma, i, m));
    } else {
      (void)i;
      (void)m;
      return dyv;
    }
  };
  float sums[2] = {0.f, 0.f};
  TreeSums<2>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        const VF xhat = xhat_at(i, m);
        const VF dyv = LoadAt(df, dy, i, m);
        const VF g = g_at(dyv, i, m);
        t[0] = KeepFirst(df, g, m);
        t[1] = KeepFirst(df, hn::Mul(g, xhat), m);
      },
      sums);
  const float n = static_cast<float>(d);
  const VF va = hn::Set(df, sums[0] / n);
  const VF vb = hn::Set(df, sums[1] / n);
  const VF vr = hn::Set(df, rstd);
  // dx, and the row's dy * xhat and dy into the partials, in one pass over
  // the row while it is in L1 from the pass above.
  constexpr std::int64_t kPerLine = static_cast<std::int64_t>(kCacheLine / sizeof(T));
  const auto dx_at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    // The next row, a line at a time, while this one is finished from L1.
    if (next_x != nullptr && i % kPerLine == 0) {
      PrefetchToL2(next_x + i);
      PrefetchToL2(next_dy + i);
    }
    const VF dyv = LoadAt(df, dy, i, m);
    const VF xhat = xhat_at(i, m);
    if (dgamma != nullptr) {
      StoreAt(df, hn::MulAdd(dyv, xhat, LoadAt(df, dgamma, i, m)), dgamma, i, m);
    }
    if (dbeta != nullptr) StoreAt(df, hn::Add(LoadAt(df, dbeta, i, m), dyv), dbeta, i, m);
    return hn::Mul(vr, hn::NegMulAdd(xhat, vb, hn::Sub(g_at(dyv, i, m), va)));
  };
  WriteRow(df, dx, d, stream, dx_at);
}

template <typename T>
void LayerNormBackwardRows(const BackwardArgs& a, WorkQueue& queue, const Partials& partials,
                           float* scratch) {
  const DF df;
  const std::int64_t d = a.d;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);
  const float* gamma = ParamsAsF32(df, static_cast<const T*>(a.gamma), d, scratch);
  T* dx = static_cast<T*>(a.dx);
  const bool saved = a.mean != nullptr && a.rstd != nullptr;
  const bool stream =
      UseStreamingStoresInBackward(3 * a.rows * d * static_cast<std::int64_t>(sizeof(T)),
                                   d * static_cast<std::int64_t>(sizeof(T)));
  WorkItem item;
  while (queue.Next(&item)) {
    partials.Zero(item.index);
    float* dgamma = partials.Dgamma(item.index);
    float* dbeta = partials.Dbeta(item.index);
    for (std::int64_t r = item.row_begin; r < item.row_end; ++r) {
      const bool last = r + 1 == item.row_end;
      const T* next_x = last ? nullptr : x + (r + 1) * d;
      const T* next_dy = last ? nullptr : dy + (r + 1) * d;
      float mean = 0.f;
      float rstd = 0.f;
      if (saved) {
        mean = a.mean[r];
        rstd = a.rstd[r];
      } else {  // no saved statistics: the forward's own
        const RowStats st = LayerNormStats(df, x + r * d, d, a.eps);
        mean = st.mean;
        rstd = st.rstd;
      }
      if (gamma != nullptr) {
        LayerNormBackwardRow<T, true>(x + r * d, dy + r * d, gamma, dx + r * d, d, mean, rstd,
                                      dgamma, dbeta, next_x, next_dy, stream);
      } else {
        LayerNormBackwardRow<T, false>(x + r * d, dy + r * d, gamma, dx + r * d, d, mean, rstd,
                                       dgamma, dbeta, next_x, next_dy, stream);
      }
    }
  }
  if (stream) hwy::FlushStream();
}

template <typename T>
int LayerNormForward(const ForwardArgs* args) {
  return RunForward(args, Norm::kLayerNorm, &LayerNormForwardRows<T>);
}

template <typename T>
int LayerNormBackward(const BackwardArgs* args) {
  constexpr DType kParam = kIsF32<T> ? DType::kF32 : kIsBf16<T> ? DType::kBF16 : DType::kF16;
  return RunBackward(args, Norm::kLayerNorm, kParam, &LayerNormBackwardRows<T>);
}

}  // namespace

void FillLayerNorm(TargetKernels* out) {
  out->layer_norm.forward = {&LayerNormForward<float>, &LayerNormForward<hwy::bfloat16_t>,
                             &LayerNormForward<hwy::float16_t>};
  out->layer_norm.backward = {&LayerNormBackward<float>, &LayerNormBackward<hwy::bfloat16_t>,
                              &LayerNormBackward<hwy::float16_t>};
  out->layer_norm.backward_rows = {&LayerNormBackwardRows<float>,
                                   &LayerNormBackwardRows<hwy::bfloat16_t>,
                                   &LayerNormBackwardRows<hwy::float16_t>};
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

// The fast RMSNorm row kernels, compiled once per SIMD target (Highway's
// foreach_target re-includes this file). The claim is in fast_rms_norm.h.
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "impls/cpu/fast/fast_rms_norm.cc"
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

template <typename T>
HWY_NOINLINE RowStats RmsStatsRescaled(DF df, const T* HWY_RESTRICT x, std::int64_t d, float eps) {
  RowStats st;
  if (!RowIsFinite(df, x, d)) {
    st.rstd = st.rstd_s = std::numeric_limits<float>::quiet_NaN();
    return st;
  }
  const float scale = ForwardScale(RowMaxAbs(df, x, d));
  const VF vscale = hn::Set(df, scale);
  float ss = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        const VF xs = hn::Mul(LoadAt(df, x, i, m), vscale);
        t[0] = hn::Mul(xs, xs);
      },
      &ss);
  st.scale = scale;
  st.rstd_s = ScaledRstd(ss / static_cast<float>(d), eps, scale);
  st.rstd = st.rstd_s * scale;
  return st;
}

// ms = sum(x^2) / d in the tree shape; rstd = 1 / sqrt(ms + eps); the
// rescaled path of row_scaling.h when that is not finite.
template <typename T>
HWY_INLINE RowStats RmsStats(DF df, const T* HWY_RESTRICT x, std::int64_t d, float eps) {
  float ss = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        const VF v = LoadAt(df, x, i, m);
        t[0] = hn::Mul(v, v);  // zero-padded tails square to zero
      },
      &ss);
  const float q = ss / static_cast<float>(d) + eps;
  if (!std::isfinite(q)) return RmsStatsRescaled(df, x, d, eps);
  RowStats st;
  st.rstd = st.rstd_s = 1.f / std::sqrt(q);
  return st;
}

// y = gamma * ((x s) * rstd_s).
// y = gamma * ((x s) * rstd_s) (the multiplication by s only for a rescaled
// row). `next` (or nullptr): the row to prefetch while this one is written
// from L1.
template <typename T, bool kGamma, bool kScaled>
HWY_INLINE void RmsWriteRow(const T* HWY_RESTRICT x, const float* HWY_RESTRICT gamma,
                            T* HWY_RESTRICT y, std::int64_t d, const RowStats& st,
                            const T* HWY_RESTRICT next, bool stream) {
  const DF df;
  const VF vscale = hn::Set(df, st.scale);
  const VF vrstd = hn::Set(df, st.rstd_s);
  // By value, as in fast_layer_norm.cc: no reloads after each store.
  const auto at = [=](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    if (next != nullptr) PrefetchToL2(next + i);
    VF xs = LoadAt(df, x, i, m);
    if constexpr (kScaled) xs = hn::Mul(xs, vscale);
    const VF xhat = hn::Mul(xs, vrstd);
    if constexpr (kGamma) {
      return hn::Mul(LoadAt(df, gamma, i, m), xhat);
    } else {
      return xhat;
    }
  };
  WriteRow(df, y, d, stream, at);
}

template <typename T, bool kGamma>
void RmsForwardRowsOf(const ForwardArgs& a, WorkQueue& queue, float* scratch) {
  const DF df;
  const std::int64_t d = a.d;
  const T* x = static_cast<const T*>(a.x);
  const float* gamma = ParamsAsF32(df, static_cast<const T*>(a.gamma), d, scratch);
  T* y = static_cast<T*>(a.y);
  const bool stream = UseStreamingStores(2 * a.rows * d * static_cast<std::int64_t>(sizeof(T)),
                                         d * static_cast<std::int64_t>(sizeof(T)));
  WorkItem item;
  while (queue.Next(&item)) {
    for (std::int64_t r = item.row_begin; r < item.row_end; ++r) {
      const T* next = r + 1 < item.row_end ? x + (r + 1) * d : nullptr;
      const RowStats st = RmsStats(df, x + r * d, d, a.eps);
      if (st.scale == 1.f) {
        RmsWriteRow<T, kGamma, false>(x + r * d, gamma, y + r * d, d, st, next, stream);
      } else {
        RmsWriteRow<T, kGamma, true>(x + r * d, gamma, y + r * d, d, st, next, stream);
      }
      if (a.rstd != nullptr) a.rstd[r] = st.rstd;
    }
  }
  if (stream) hwy::FlushStream();
}

template <typename T>
void RmsForwardRows(const ForwardArgs& a, WorkQueue& queue, float* scratch) {
  if (a.gamma != nullptr) return RmsForwardRowsOf<T, true>(a, queue, scratch);
  return RmsForwardRowsOf<T, false>(a, queue, scratch);
}

// One row of the backward: b = mean(g xhat), xhat = x rstd (a product of two
// finite floats of at most sqrt(d): no overflow, so no scaling), then
// dx = rstd (g - xhat b). The row's dy * xhat goes into the block's
// partials as `dgamma` says (partials.h, SumsInto).
template <typename T, bool kGamma>
HWY_NOINLINE void RmsBackwardRow(const T* HWY_RESTRICT x, const T* HWY_RESTRICT dy,
                                 const float* HWY_RESTRICT gamma, T* HWY_RESTRICT dx,
                                 std::int64_t d, float rstd, const SumsInto& dgamma,
                                 const T* HWY_RESTRICT next_x, const T* HWY_RESTRICT next_dy,
                                 bool stream) {
  const DF df;
  const VF vr = hn::Set(df, rstd);
  const auto g_at = [&](VF dyv, std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    if constexpr (kGamma) {
      return hn::Mul(dyv, LoadAt(df, gamma, i, m));
    } else {
      (void)i;
      (void)m;
      return dyv;
    }
  };
  float b_sum = 0.f;
  TreeSums<1>(
      df, d,
      [&](std::int64_t i, std::int64_t m, VF* t) LNV_INLINE_LAMBDA {
        const VF xhat = hn::Mul(LoadAt(df, x, i, m), vr);
        const VF dyv = LoadAt(df, dy, i, m);
        t[0] = KeepFirst(df, hn::Mul(g_at(dyv, i, m), xhat), m);
      },
      &b_sum);
  const VF vb = hn::Set(df, b_sum / static_cast<float>(d));
  const auto dx_at = [&](std::int64_t i, std::int64_t m) LNV_INLINE_LAMBDA {
    if (next_x != nullptr) {  // the next row, while this one is finished from L1
      PrefetchToL2(next_x + i);
      PrefetchToL2(next_dy + i);
    }
    const VF xhat = hn::Mul(LoadAt(df, x, i, m), vr);
    const VF dyv = LoadAt(df, dy, i, m);
    if (dgamma.out != nullptr) {  // the row's dy * xhat into the partials, in the same pass
      SumsFinish(df, dgamma, hn::MulAdd(dyv, xhat, SumsStart(df, dgamma, i, m)), i, m);
    }
    return hn::Mul(vr, hn::NegMulAdd(xhat, vb, g_at(dyv, i, m)));
  };
  WriteRow(df, dx, d, stream, dx_at);
}

template <typename T>
void RmsBackwardRows(const BackwardArgs& a, WorkQueue& queue, const Partials& partials,
                     float* scratch) {
  const DF df;
  const std::int64_t d = a.d;
  const T* x = static_cast<const T*>(a.x);
  const T* dy = static_cast<const T*>(a.dy);
  const float* gamma = ParamsAsF32(df, static_cast<const T*>(a.gamma), d, scratch);
  T* dx = static_cast<T*>(a.dx);
  const bool stream =
      UseStreamingStoresForSpreadWrites(3 * a.rows * d * static_cast<std::int64_t>(sizeof(T)),
                                        d * static_cast<std::int64_t>(sizeof(T)));
  WorkItem item;
  while (queue.Next(&item)) {
    for (std::int64_t b = item.block_begin; b < item.block_end; ++b) {
      const std::int64_t begin = SplitPoint(a.rows, partials.blocks, b);
      const std::int64_t end = SplitPoint(a.rows, partials.blocks, b + 1);
      for (std::int64_t r = begin; r < end; ++r) {
        const bool last = r + 1 == item.row_end;  // of the item: nothing to prefetch
        const T* next_x = last ? nullptr : x + (r + 1) * d;
        const T* next_dy = last ? nullptr : dy + (r + 1) * d;
        const SumsInto dgamma = partials.DgammaInto(item, b, r == begin, r + 1 == end);
        const float rstd = a.rstd != nullptr ? a.rstd[r] : RmsStats(df, x + r * d, d, a.eps).rstd;
        if (gamma != nullptr) {
          RmsBackwardRow<T, true>(x + r * d, dy + r * d, gamma, dx + r * d, d, rstd, dgamma, next_x,
                                  next_dy, stream);
        } else {
          RmsBackwardRow<T, false>(x + r * d, dy + r * d, gamma, dx + r * d, d, rstd, dgamma,
                                   next_x, next_dy, stream);
        }
      }
    }
  }
  if (stream) hwy::FlushStream();
}

template <typename T>
int RmsForward(const ForwardArgs* args) {
  return RunForward(args, Norm::kRmsNorm, &RmsForwardRows<T>);
}

template <typename T>
int RmsBackward(const BackwardArgs* args) {
  constexpr DType kParam = kIsF32<T> ? DType::kF32 : kIsBf16<T> ? DType::kBF16 : DType::kF16;
  return RunBackward(args, Norm::kRmsNorm, kParam, &RmsBackwardRows<T>, &FinishColumns<T>);
}

}  // namespace

void FillRmsNorm(TargetKernels* out) {
  out->rms_norm.forward = {&RmsForward<float>, &RmsForward<hwy::bfloat16_t>,
                           &RmsForward<hwy::float16_t>};
  out->rms_norm.backward = {&RmsBackward<float>, &RmsBackward<hwy::bfloat16_t>,
                            &RmsBackward<hwy::float16_t>};
  out->rms_norm.backward_rows = {&RmsBackwardRows<float>, &RmsBackwardRows<hwy::bfloat16_t>,
                                 &RmsBackwardRows<hwy::float16_t>};
}

}  // namespace HWY_NAMESPACE
}  // namespace lnv::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "impls/cpu/fast/per_target.h"

namespace lnv::fast {

void FillRmsNormKernels(std::int64_t target, TargetKernels* out) {
  LNV_FAST_FILL_FOR_TARGET(target, FillRmsNorm, out);
}

}  // namespace lnv::fast
#endif  // HWY_ONCE

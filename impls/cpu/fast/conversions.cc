// The storage conversions of the fast kernels, row-wise, per SIMD target:
// exactly simd_row-inl.h's LoadAt/StoreAt and the paired bf16 write's
// rounding (PackBf16Pair), exposed (targets.h) so that the tests check the
// code the kernels run against the oracle's rounding.
#include <Eigen/Core>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "impls/cpu/fast/conversions.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "impls/cpu/fast/simd_row-inl.h"
#include "impls/cpu/fast/targets.h"

HWY_BEFORE_NAMESPACE();
namespace lnv::fast {
namespace HWY_NAMESPACE {
namespace {

template <typename T>
void ToFloatRow(const void* src, float* dst, std::int64_t n) {
  const DF df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const T* s = static_cast<const T*>(src);
  for (std::int64_t i = 0; i < n; i += lanes) {
    StoreAt(df, LoadAt(df, s, i, std::min(lanes, n - i)), dst, i, std::min(lanes, n - i));
  }
}

template <typename T>
void FromFloatRow(const float* src, void* dst, std::int64_t n) {
  const DF df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  T* o = static_cast<T*>(dst);
  for (std::int64_t i = 0; i < n; i += lanes) {
    StoreAt(df, LoadAt(df, src, i, std::min(lanes, n - i)), o, i, std::min(lanes, n - i));
  }
}

void ToFloat(DType from, const void* src, float* dst, std::int64_t n) {
  switch (from) {
    case DType::kF32:
      return ToFloatRow<float>(src, dst, n);
    case DType::kBF16:
      return ToFloatRow<hwy::bfloat16_t>(src, dst, n);
    case DType::kF16:
      return ToFloatRow<hwy::float16_t>(src, dst, n);
    case DType::kF64:
      return;
  }
}

void FromFloat(DType to, const float* src, void* dst, std::int64_t n) {
  switch (to) {
    case DType::kF32:
      return FromFloatRow<float>(src, dst, n);
    case DType::kBF16:
      return FromFloatRow<hwy::bfloat16_t>(src, dst, n);
    case DType::kF16:
      return FromFloatRow<hwy::float16_t>(src, dst, n);
    case DType::kF64:
      return;
  }
}

#if HWY_TARGET != HWY_SCALAR
// PackBf16Pair over a row: each whole pair of vectors [i, i + 2 Lanes) is
// split into its even and odd elements, as the kernels' pairs hold them,
// packed and stored; the rest as StoreAt does.
template <bool kMayHoldNaN>
void FromFloatInPairs(DType to, const float* src, void* dst, std::int64_t n) {
  if (to != DType::kBF16) return;
  const DF df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  auto* o = static_cast<hwy::bfloat16_t*>(dst);
  HWY_ALIGN float even[kMaxLanes];
  HWY_ALIGN float odd[kMaxLanes];
  std::int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    for (std::int64_t j = 0; j < lanes; ++j) {
      even[j] = src[i + 2 * j];
      odd[j] = src[i + 2 * j + 1];
    }
    StoreBf16Pair<false>(PackBf16Pair<kMayHoldNaN>(hn::Load(df, even), hn::Load(df, odd)), o + i);
  }
  StoreRange(df, o, i, n, [&](std::int64_t k, std::int64_t m) { return LoadAt(df, src, k, m); });
}
#endif

#if HWY_TARGET == HWY_AVX3
// LineOfHalves' native form over a row: each whole line of 32 values as the
// native bf16 stores round it, the rest as StoreAt does. Returns how many
// lines the instruction rounded (Bf16LineNative true).
std::int64_t FromFloatNativeLines(const float* src, std::uint16_t* dst, std::int64_t n) {
  const DF df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  auto* o = reinterpret_cast<hwy::bfloat16_t*>(dst);
  std::int64_t i = 0, native = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const VF lo = hn::LoadU(df, src + i);
    const VF hi = hn::LoadU(df, src + i + lanes);
    hn::Vec<hn::Repartition<std::uint16_t, DF>> line;
    native += Bf16LineNative(lo, hi, &line) ? 1 : 0;
    StoreLineOfHalves<hwy::bfloat16_t, true>(df, lo, hi, o + i);
  }
  StoreRange(df, o, i, n, [&](std::int64_t k, std::int64_t m) { return LoadAt(df, src, k, m); });
  return native;
}
#endif

}  // namespace

void FillConversion(TargetKernels* out) {
  out->f32_lanes = static_cast<std::int64_t>(hn::Lanes(DF()));
  out->to_float = &ToFloat;
  out->from_float = &FromFloat;
#if HWY_TARGET != HWY_SCALAR
  out->bf16_pairs = {&FromFloatInPairs<true>, &FromFloatInPairs<false>};
#endif
#if HWY_TARGET == HWY_AVX3
  out->bf16_native_lines = &FromFloatNativeLines;
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace lnv::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "impls/cpu/fast/per_target.h"

namespace lnv::fast {

void FillConversions(std::int64_t target, TargetKernels* out) {
  LNV_FAST_FILL_FOR_TARGET(target, FillConversion, out);
}

}  // namespace lnv::fast
#endif  // HWY_ONCE

// The storage conversions of the fast kernels, row-wise, per SIMD target:
// exactly simd_row-inl.h's LoadAt/StoreAt, exposed (targets.h) so that the
// tests check the code the kernels run against the oracle's rounding.
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

}  // namespace

void FillConversion(TargetKernels* out) {
  out->f32_lanes = static_cast<std::int64_t>(hn::Lanes(DF()));
  out->to_float = &ToFloat;
  out->from_float = &FromFloat;
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

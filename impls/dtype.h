// Storage conversions between the ABI's dtypes and double/float. Rounding is
// IEEE round-to-nearest-even through Eigen::bfloat16 / Eigen::half (never a
// hand-written bit trick). Every value of every dtype is exactly a double, so
// Load is exact; Store rounds once from float (the accumulation type of the
// fp32-accumulating kernels) or from double (fp64 kernels).
#ifndef LNV_IMPLS_DTYPE_H_
#define LNV_IMPLS_DTYPE_H_

#include <Eigen/Core>
#include <cstdint>

#include "impls/api.h"

namespace lnv {

inline double LoadAsDouble(const void* base, DType t, std::int64_t i) {
  switch (t) {
    case DType::kF32:
      return static_cast<const float*>(base)[i];
    case DType::kF64:
      return static_cast<const double*>(base)[i];
    case DType::kF16:
      return static_cast<double>(static_cast<float>(static_cast<const Eigen::half*>(base)[i]));
    case DType::kBF16:
      return static_cast<double>(static_cast<float>(static_cast<const Eigen::bfloat16*>(base)[i]));
  }
  return 0.0;
}

inline float LoadAsFloat(const void* base, DType t, std::int64_t i) {
  return static_cast<float>(LoadAsDouble(base, t, i));  // exact except f64 input
}

// Rounds a float to the storage dtype (once, RNE) and stores it.
inline void StoreFromFloat(void* base, DType t, std::int64_t i, float v) {
  switch (t) {
    case DType::kF32:
      static_cast<float*>(base)[i] = v;
      return;
    case DType::kF64:
      static_cast<double*>(base)[i] = v;
      return;
    case DType::kF16:
      static_cast<Eigen::half*>(base)[i] = Eigen::half(v);
      return;
    case DType::kBF16:
      static_cast<Eigen::bfloat16*>(base)[i] = Eigen::bfloat16(v);
      return;
  }
}

// Stores a double that the caller knows is exactly representable in `t`
// (for f16/bf16/f32 it goes through float, which is exact for such values).
inline void StoreExact(void* base, DType t, std::int64_t i, double v) {
  if (t == DType::kF64) {
    static_cast<double*>(base)[i] = v;
  } else {
    StoreFromFloat(base, t, i, static_cast<float>(v));
  }
}

}  // namespace lnv

#endif  // LNV_IMPLS_DTYPE_H_

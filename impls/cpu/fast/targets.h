// The fast CPU kernels as compiled for each SIMD target, and the targets this
// CPU can run.
//
// Highway (libhwy) compiles the row kernels once per target (AVX-512, AVX2,
// and its scalar fallback) in the same translation unit; this table is how
// the rest of the project reaches a given target's code. The registry lists
// one entry per (target this CPU supports, norm, dtype), so `ln_check` judges
// every code path the machine can run, not only the one a dispatcher picks;
// AvailableTargets().front() is the best one (what the benchmarks run).
#ifndef LNV_IMPLS_CPU_FAST_TARGETS_H_
#define LNV_IMPLS_CPU_FAST_TARGETS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "impls/api.h"
#include "impls/cpu/fast/driver.h"

namespace lnv::fast {

// The storage dtypes of the fast kernels, in this order in every table.
inline constexpr std::array<DType, 3> kFastDTypes = {DType::kF32, DType::kBF16, DType::kF16};

// Index of `t` in kFastDTypes; -1 for f64.
constexpr int FastDTypeIndex(DType t) {
  switch (t) {
    case DType::kF32:
      return 0;
    case DType::kBF16:
      return 1;
    case DType::kF16:
      return 2;
    case DType::kF64:
      return -1;
  }
  return -1;
}

// ABI entry points of one norm, per storage dtype (kFastDTypes order).
struct NormKernels {
  std::array<ForwardFn, 3> forward{};
  std::array<BackwardFn, 3> backward{};
  // The backward's per-row-range part (driver.h), for tests that run it
  // with a chosen number of row blocks.
  std::array<BackwardRowsFn, 3> backward_rows{};
};

// The storage conversions exactly as the kernels use them, row-wise (n may be
// anything, including lengths that end in a partial vector). Exposed so the
// tests can check each one against the oracle's round-to-nearest-even.
using ToFloatFn = void (*)(DType from, const void* src, float* dst, std::int64_t n);
using FromFloatFn = void (*)(DType to, const float* src, void* dst, std::int64_t n);

struct TargetKernels {
  std::int64_t target = 0;     // Highway's target bit (HWY_AVX3, ...)
  std::string backend;         // the registry's backend part: "cpu-fast-avx512", ...
  std::int64_t f32_lanes = 0;  // floats per vector: fixes the reduction shape
  NormKernels layer_norm;
  // AVX-512 only: the bf16 LayerNorm backward rounding dx's lines with
  // vcvtne2ps2bf16 (the same bits as layer_norm.backward's); call it only
  // on a CPU with AVX512_BF16 (avx512bf16_layer_norm.h). nullptr elsewhere.
  BackwardFn layer_norm_bf16_native_backward = nullptr;
  NormKernels rms_norm;
  ToFloatFn to_float = nullptr;
  FromFloatFn from_float = nullptr;
  // The bf16 rounding of the paired write (simd_row-inl.h, PackBf16Pair),
  // row-wise: [0] the general one, [1] the NaN-free one (for rows without
  // NaN only). nullptr on the scalar target, which has no pairs. `to` must
  // be kBF16.
  std::array<FromFloatFn, 2> bf16_pairs{};
  // AVX-512 only: the native bf16 rounding of whole 32-value lines
  // (simd_row-inl.h, LineOfHalves with kNativeBf16) row-wise, the rest as
  // from_float; returns how many lines vcvtne2ps2bf16 itself rounded. Call
  // only on a CPU with AVX512_BF16. nullptr elsewhere.
  using Bf16NativeLinesFn = std::int64_t (*)(const float* src, std::uint16_t* dst, std::int64_t n);
  Bf16NativeLinesFn bf16_native_lines = nullptr;
};

// Every target compiled in that this CPU supports, best first. Never empty
// (the scalar fallback runs anywhere). Built once.
const std::vector<TargetKernels>& AvailableTargets();

// Per-target fillers, defined by each Highway translation unit (they leave
// fields they do not own alone). `target` must be one of the compiled ones.
void FillLayerNormKernels(std::int64_t target, TargetKernels* out);
void FillRmsNormKernels(std::int64_t target, TargetKernels* out);
void FillConversions(std::int64_t target, TargetKernels* out);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_TARGETS_H_

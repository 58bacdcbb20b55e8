// Storage formats of the CUDA kernels (fp32, bf16, fp16) as seen by their
// fp32 arithmetic: widening loads (exact) and narrowing stores (one IEEE
// round-to-nearest-even), the same bits on the GPU and in the host emulation.
//
//   * On the device the conversions are cuda_bf16.h / cuda_fp16.h's
//     __bfloat162float, __half2float (exact) and __float2bfloat16_rn,
//     __float2half_rn (IEEE convertFormat, roundTiesToEven, subnormals and
//     overflow to +-inf as IEEE says).
//   * On the host they are Eigen::bfloat16 / Eigen::half (host_convert.cc),
//     also round-to-nearest-even. Two correctly rounded conversions of the
//     same float agree on every non-NaN input; emulation_test.cc checks the
//     host one against the oracle's rounding, gpu_test.cc the two against
//     each other.
//   * NaN: every store writes the format's canonical quiet NaN (0x7fc00000,
//     0x7fc0, 0x7e00), because x86 and NVIDIA GPUs produce different NaN
//     payloads (x86's default NaN is negative, the GPU's is 0x7fffffff).
//
// A granule is 16 bytes of storage: the unit of a vector load. The kernels
// deal a row to their lanes granule by granule (reduction.h).
#ifndef LNV_IMPLS_CUDA_STORAGE_H_
#define LNV_IMPLS_CUDA_STORAGE_H_

#include <cstdint>
#include <cstring>

#include "impls/cuda/portable.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace lnv::cuda {

// Host conversions (host_convert.cc, Eigen). Bits are the format's encoding.
float HostBf16ToFloat(std::uint16_t bits);
std::uint16_t HostFloatToBf16(float v);  // RNE; NaN input: any NaN
float HostF16ToFloat(std::uint16_t bits);
std::uint16_t HostFloatToF16(float v);  // RNE; NaN input: any NaN

LNV_HD inline float BitsToFloat(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
#endif
}

struct F32Storage {
  using Bits = float;
  static constexpr int kGranule = 4;
  static constexpr std::uint32_t kCanonicalNanBits = 0x7fc00000u;
  LNV_HD static float ToFloat(float v) { return v; }
  LNV_HD static float FromFloat(float v) { return IsNan(v) ? BitsToFloat(kCanonicalNanBits) : v; }
};

struct Bf16Storage {
  using Bits = std::uint16_t;
  static constexpr int kGranule = 8;
  static constexpr std::uint16_t kCanonicalNan = 0x7fc0;
  LNV_HD static float ToFloat(std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __bfloat162float(__ushort_as_bfloat16(b));
#else
    return HostBf16ToFloat(b);
#endif
  }
  LNV_HD static std::uint16_t FromFloat(float v) {
    if (IsNan(v)) return kCanonicalNan;
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
#else
    return HostFloatToBf16(v);
#endif
  }
};

struct F16Storage {
  using Bits = std::uint16_t;
  static constexpr int kGranule = 8;
  static constexpr std::uint16_t kCanonicalNan = 0x7e00;
  LNV_HD static float ToFloat(std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(b));
#else
    return HostF16ToFloat(b);
#endif
  }
  LNV_HD static std::uint16_t FromFloat(float v) {
    if (IsNan(v)) return kCanonicalNan;
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(v));
#else
    return HostFloatToF16(v);
#endif
  }
};

// Statistics (mean, rstd) and the dgamma/dbeta partials are fp32 whatever
// the storage; NaN canonical like every other store.
LNV_HD inline float CanonicalF32(float v) { return F32Storage::FromFloat(v); }

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_STORAGE_H_

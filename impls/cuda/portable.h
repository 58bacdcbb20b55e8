// What lets one header hold a CUDA kernel's arithmetic for both the GPU and
// its host emulation: LNV_HD marks functions nvcc compiles for host and
// device; under g++ it is empty, so these headers are plain C++.
//
// Bit-exactness rests on the build: the CUDA sources are compiled with
// -fmad=false --prec-div=true --prec-sqrt=true -ftz=false (cmake/LnvCuda.cmake)
// and the host with -ffp-contract=off (cmake/LnvWarnings.cmake). Then every
// float +, -, *, /, sqrt and int-to-float conversion written in these headers
// is one IEEE round-to-nearest-even operation on both sides, with subnormals.
#ifndef LNV_IMPLS_CUDA_PORTABLE_H_
#define LNV_IMPLS_CUDA_PORTABLE_H_

#include <cstdint>

#if defined(__CUDACC__)
#define LNV_HD __host__ __device__
#else
#define LNV_HD
#endif

namespace lnv::cuda {

LNV_HD constexpr std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

LNV_HD constexpr std::int64_t MinI64(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// Smallest l with 2^l >= n (0 for n <= 1).
LNV_HD constexpr std::int64_t CeilLog2(std::int64_t n) {
  std::int64_t l = 0;
  while ((std::int64_t{1} << l) < n) ++l;
  return l;
}

// NaN without relying on the host's or the device's isnan (x != x is exact
// IEEE on both, and the build never assumes finite math).
LNV_HD inline bool IsNan(float v) { return v != v; }

// A finite float: not NaN, and |v| below infinity.
LNV_HD inline bool IsFinite(float v) { return v - v == 0.0f; }

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_PORTABLE_H_

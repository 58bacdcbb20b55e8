// The real CUDA kernels (kernels.cu), callable from plain C++: built only
// when CUDA is enabled (cmake/LnvCuda.cmake, LNV_CUDA_ENABLED). The argument
// structs are the plugin ABI's, holding DEVICE pointers; row pointers need no
// particular alignment (misaligned rows take the element path, with the same
// results). Each call is asynchronous on `stream` (a cudaStream_t; nullptr is
// the default stream) and returns a code of args.h: kInvalidArgs for
// arguments the host emulation also refuses, kCudaError when a launch fails.
#ifndef LNV_IMPLS_CUDA_DEVICE_API_H_
#define LNV_IMPLS_CUDA_DEVICE_API_H_

#include <cstdint>

#include "impls/api.h"

namespace lnv::cuda {

// dtype: kF32, kBF16 or kF16 (else kInvalidArgs).
int DeviceForward(DType dtype, Norm norm, const ForwardArgs* device_args, void* stream);
// Allocates its dgamma/dbeta partials on `stream` (cudaMallocAsync).
int DeviceBackward(DType dtype, Norm norm, const BackwardArgs* device_args, void* stream);

// True when a CUDA device of compute capability 8.0 or later is usable now
// (checked once).
bool DeviceAvailable();

// out[i] = the kernels' own store of in[i] into dtype (storage.h's FromFloat
// on the device), for n floats; device pointers, asynchronous on `stream`.
// For tests: the device conversion against the host one.
int DeviceStoreFloats(DType dtype, const float* device_in, void* device_out, std::int64_t n,
                      void* stream);

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_DEVICE_API_H_

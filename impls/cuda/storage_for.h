// The storage trait (storage.h) and norm policy of an ABI dtype and norm.
#ifndef LNV_IMPLS_CUDA_STORAGE_FOR_H_
#define LNV_IMPLS_CUDA_STORAGE_FOR_H_

#include <type_traits>

#include "impls/api.h"
#include "impls/cuda/layer_norm.h"
#include "impls/cuda/rms_norm.h"
#include "impls/cuda/storage.h"

namespace lnv::cuda {

template <DType kX>
using StorageFor =
    std::conditional_t<kX == DType::kF32, F32Storage,
                       std::conditional_t<kX == DType::kBF16, Bf16Storage,
                                          std::conditional_t<kX == DType::kF16, F16Storage, void>>>;

template <Norm kNorm>
using PolicyFor = std::conditional_t<kNorm == Norm::kLayerNorm, LayerNormPolicy, RmsNormPolicy>;

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_STORAGE_FOR_H_

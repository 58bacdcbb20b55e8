// How the CUDA group builds its registry entries, shared by the emulations
// (registry_part.cc) and the real kernels (device_impls.cc, CUDA builds only).
#ifndef LNV_IMPLS_CUDA_REGISTRY_ENTRIES_H_
#define LNV_IMPLS_CUDA_REGISTRY_ENTRIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "impls/cpu/valid_range.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/storage.h"
#include "impls/registry.h"

namespace lnv::cuda {

template <int kGranule>
LaneShape LaneShapeForGranule(std::int64_t d) {
  const RowShape s = RowShapeFor(d, kGranule);
  return {s.leaf, s.leaves, s.levels};
}

// The kLanes shape (reduction.h's RowShapeFor) of a storage dtype: 16-byte
// granules of 4 fp32 or 8 bf16/fp16 elements.
inline LaneShapeFn LaneShapeOf(DType t) {
  return t == DType::kF32 ? &LaneShapeForGranule<F32Storage::kGranule>
                          : &LaneShapeForGranule<Bf16Storage::kGranule>;
}

// An entry: <dtype>/welford_shfl/<backend> or <dtype>/rms_shfl/<backend>.
inline ImplInfo CudaImplInfo(DType dtype, Norm norm, const char* backend, ForwardFn forward,
                             BackwardFn backward) {
  const bool layer = norm == Norm::kLayerNorm;
  ImplInfo info;
  info.name = std::string(DTypeName(dtype)) + (layer ? "/welford_shfl/" : "/rms_shfl/") + backend;
  info.norm = norm;
  info.x_dtype = dtype;
  info.param_dtype = dtype;
  info.acc_dtype = DType::kF32;
  info.algorithm = layer ? Algorithm::kWelford : Algorithm::kSumOfSquares;
  info.bound_algorithm = info.algorithm;
  info.reduction = Reduction::kLanes;
  info.lane_shape = LaneShapeOf(dtype);
  info.status = ImplStatus::kClaimsBound;
  info.max_row_sumsq = cpu::kFloatAccMaxRowSumsq;
  info.max_backward_weight = cpu::kFloatAccMaxBackwardWeight;
  info.forward = forward;
  info.backward = backward;
  info.source = layer ? "impls/cuda/layer_norm.h" : "impls/cuda/rms_norm.h";
  return info;
}

// The real kernels, <dtype>/.../cuda, when a CUDA device is usable now;
// nothing otherwise (device_impls.cc).
void AppendDeviceImpls(std::vector<ImplInfo>* impls);

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_REGISTRY_ENTRIES_H_

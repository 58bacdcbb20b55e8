// Fast CPU kernels and the Eigen kernel: their registry entries. Each fast
// kernel has one entry per SIMD target this CPU supports (targets.h), per
// storage dtype; the native AVX512_BF16 forward one (bf16) where the CPU has
// that extension; the Eigen kernel one per storage dtype.
#include <limits>
#include <string>

#include "impls/cpu/fast/avx512bf16_layer_norm.h"
#include "impls/cpu/fast/eigen_layer_norm.h"
#include "impls/cpu/fast/fast_layer_norm.h"
#include "impls/cpu/fast/fast_rms_norm.h"
#include "impls/cpu/fast/reduction_shape.h"
#include "impls/cpu/fast/targets.h"
#include "impls/cpu/valid_range.h"
#include "impls/registry_parts.h"

namespace lnv {
namespace fast {
namespace {

// What every fast entry shares: fp32 accumulation, params in the storage
// dtype, the tree shape of reduction_shape.h, the full finite range.
ImplInfo FastEntry(const TargetKernels& target, DType dtype, const char* algorithm_name) {
  ImplInfo info;
  info.name = std::string(DTypeName(dtype)) + "/" + algorithm_name + "/" + target.backend;
  info.x_dtype = dtype;
  info.param_dtype = dtype;
  info.acc_dtype = DType::kF32;
  info.reduction = Reduction::kTree;
  info.chunk = kStepsPerBlock;
  info.status = ImplStatus::kClaimsBound;
  info.max_row_sumsq = std::numeric_limits<double>::infinity();
  info.max_backward_weight = cpu::kFloatAccMaxBackwardWeight;  // g is not rescaled
  return info;
}

}  // namespace

ImplInfo FastLayerNormImpl(const TargetKernels& target, DType dtype) {
  ImplInfo info = FastEntry(target, dtype, "two_pass_tree");
  info.norm = Norm::kLayerNorm;
  info.algorithm = info.bound_algorithm = Algorithm::kTwoPass;
  info.forward = target.layer_norm.forward[FastDTypeIndex(dtype)];
  info.backward = target.layer_norm.backward[FastDTypeIndex(dtype)];
  info.source = "impls/cpu/fast/fast_layer_norm.h";
  return info;
}

ImplInfo FastRmsNormImpl(const TargetKernels& target, DType dtype) {
  ImplInfo info = FastEntry(target, dtype, "rms_tree");
  info.norm = Norm::kRmsNorm;
  info.algorithm = info.bound_algorithm = Algorithm::kSumOfSquares;
  info.forward = target.rms_norm.forward[FastDTypeIndex(dtype)];
  info.backward = target.rms_norm.backward[FastDTypeIndex(dtype)];
  info.source = "impls/cpu/fast/fast_rms_norm.h";
  return info;
}

ImplInfo EigenLayerNormImpl(DType dtype) {
  ImplInfo info;
  info.name = std::string(DTypeName(dtype)) + "/two_pass/cpu-eigen";
  info.norm = Norm::kLayerNorm;
  info.x_dtype = dtype;
  info.param_dtype = dtype;
  info.acc_dtype = DType::kF32;
  info.algorithm = info.bound_algorithm = Algorithm::kTwoPass;
  info.reduction = Reduction::kSerial;
  info.status = ImplStatus::kClaimsBound;
  info.max_row_sumsq = cpu::kFloatAccMaxRowSumsq;
  info.max_backward_weight = cpu::kFloatAccMaxBackwardWeight;
  switch (dtype) {
    case DType::kBF16:
      info.forward = &EigenLayerNorm::Forward<DType::kBF16>;
      info.backward = &EigenLayerNorm::Backward<DType::kBF16>;
      break;
    case DType::kF16:
      info.forward = &EigenLayerNorm::Forward<DType::kF16>;
      info.backward = &EigenLayerNorm::Backward<DType::kF16>;
      break;
    default:
      info.forward = &EigenLayerNorm::Forward<DType::kF32>;
      info.backward = &EigenLayerNorm::Backward<DType::kF32>;
      break;
  }
  info.source = "impls/cpu/fast/eigen_layer_norm.h";
  return info;
}

}  // namespace fast

void AppendFastCpuImpls(std::vector<ImplInfo>* impls) {
  for (const fast::TargetKernels& target : fast::AvailableTargets()) {
    for (const DType dtype : fast::kFastDTypes) {
      impls->push_back(fast::FastLayerNormImpl(target, dtype));
      impls->push_back(fast::FastRmsNormImpl(target, dtype));
    }
  }
  // The native bf16 LayerNorm (forward, and dx's stores in the backward),
  // only on a CPU with AVX512_BF16.
  if (fast::HaveAvx512Bf16LayerNorm()) impls->push_back(fast::Avx512Bf16LayerNormImpl());
  for (const DType dtype : fast::kFastDTypes) impls->push_back(fast::EigenLayerNormImpl(dtype));
}

}  // namespace lnv

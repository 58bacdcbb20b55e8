// Third-party kernels judged as they are (status observed): one entry per
// kernel, for the libraries found at configure time (impls/thirdparty/
// CMakeLists.txt says which were skipped). Each is held to the generic bound
// of its accumulation dtype (Algorithm::kUnknown) over the full finite range,
// and ln_check compares what it breaks with its recorded baseline
// (impls/thirdparty/baselines/).
#include "impls/registry_parts.h"

#ifdef LNV_HAVE_ONEDNN
#include "impls/thirdparty/onednn_layer_norm.h"
#endif
#ifdef LNV_HAVE_ATEN
#include "impls/thirdparty/aten_layer_norm.h"
#endif

namespace lnv {
namespace {

[[maybe_unused]] ImplInfo Observed(const char* name, DType x, DType param, ForwardFn forward,
                                   BackwardFn backward, const char* source) {
  ImplInfo info;
  info.name = name;
  info.norm = Norm::kLayerNorm;
  info.x_dtype = x;
  info.param_dtype = param;
  info.acc_dtype = DType::kF32;
  info.algorithm = Algorithm::kUnknown;
  info.bound_algorithm = Algorithm::kUnknown;
  info.reduction = Reduction::kSerial;
  info.status = ImplStatus::kObserved;
  info.forward = forward;
  info.backward = backward;
  info.source = source;
  return info;
}

}  // namespace

void AppendThirdPartyImpls([[maybe_unused]] std::vector<ImplInfo>* impls) {
#ifdef LNV_HAVE_ONEDNN
  using thirdparty::OneDnnLayerNormBackward;
  using thirdparty::OneDnnLayerNormForward;
  constexpr const char* kOneDnn = "impls/thirdparty/onednn_layer_norm.h";
  impls->push_back(Observed("f32/onednn_layer_norm/onednn", DType::kF32, DType::kF32,
                            &OneDnnLayerNormForward<DType::kF32>,
                            &OneDnnLayerNormBackward<DType::kF32>, kOneDnn));
  // bf16 data with f32 scale/shift, as oneDNN expects; only where this CPU has
  // a bf16 implementation.
  if (thirdparty::OneDnnSupports(DType::kBF16)) {
    impls->push_back(Observed("bf16/onednn_layer_norm/onednn", DType::kBF16, DType::kF32,
                              &OneDnnLayerNormForward<DType::kBF16>,
                              &OneDnnLayerNormBackward<DType::kBF16>, kOneDnn));
  }
#endif
#ifdef LNV_HAVE_ATEN
  using thirdparty::AtenLayerNormBackward;
  using thirdparty::AtenLayerNormForward;
  constexpr const char* kAten = "impls/thirdparty/aten_layer_norm_module.cc";
  impls->push_back(Observed("f32/native_layer_norm/aten", DType::kF32, DType::kF32,
                            &AtenLayerNormForward<DType::kF32>, &AtenLayerNormBackward<DType::kF32>,
                            kAten));
  impls->push_back(Observed("bf16/native_layer_norm/aten", DType::kBF16, DType::kBF16,
                            &AtenLayerNormForward<DType::kBF16>,
                            &AtenLayerNormBackward<DType::kBF16>, kAten));
#endif
}

}  // namespace lnv

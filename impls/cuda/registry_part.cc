// The CUDA kernels' registry entries: their host emulations always, named
// <dtype>/<algorithm>/cuda-emulated; and, in a CUDA build on a machine with
// a GPU, the real kernels too, named <dtype>/<algorithm>/cuda (device_impls.cc).
// Both claim the same bound with the same kLanes shape: the emulation is the
// kernel's arithmetic, bit for bit (gpu_test.cc checks it on a GPU).
#include "impls/cuda/emulate.h"
#include "impls/cuda/registry_entries.h"
#include "impls/registry_parts.h"

namespace lnv {

void AppendCudaEmulatedImpls(std::vector<ImplInfo>* impls) {
  using cuda::CudaImplInfo;
  using cuda::EmulatedBackward;
  using cuda::EmulatedForward;
  constexpr auto kLn = Norm::kLayerNorm;
  constexpr auto kRms = Norm::kRmsNorm;
  const char* kBackend = "cuda-emulated";
  impls->push_back(CudaImplInfo(DType::kF32, kLn, kBackend, &EmulatedForward<DType::kF32, kLn>,
                                &EmulatedBackward<DType::kF32, kLn>));
  impls->push_back(CudaImplInfo(DType::kF32, kRms, kBackend, &EmulatedForward<DType::kF32, kRms>,
                                &EmulatedBackward<DType::kF32, kRms>));
  impls->push_back(CudaImplInfo(DType::kBF16, kLn, kBackend, &EmulatedForward<DType::kBF16, kLn>,
                                &EmulatedBackward<DType::kBF16, kLn>));
  impls->push_back(CudaImplInfo(DType::kBF16, kRms, kBackend, &EmulatedForward<DType::kBF16, kRms>,
                                &EmulatedBackward<DType::kBF16, kRms>));
  impls->push_back(CudaImplInfo(DType::kF16, kLn, kBackend, &EmulatedForward<DType::kF16, kLn>,
                                &EmulatedBackward<DType::kF16, kLn>));
  impls->push_back(CudaImplInfo(DType::kF16, kRms, kBackend, &EmulatedForward<DType::kF16, kRms>,
                                &EmulatedBackward<DType::kF16, kRms>));
#if defined(LNV_WITH_CUDA_DEVICE)
  cuda::AppendDeviceImpls(impls);  // the real kernels, only when a GPU is present at run time
#endif
}

}  // namespace lnv

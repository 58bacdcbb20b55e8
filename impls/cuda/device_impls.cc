// The real CUDA kernels as registry entries (<dtype>/welford_shfl/cuda,
// <dtype>/rms_shfl/cuda): host-pointer wrappers that copy the inputs to the
// device, run kernels.cu and copy the outputs back, so every tool (ln_check,
// the properties, fuzz_ln's replay, ln_report) judges the GPU exactly as it
// judges any CPU kernel. Listed only when a CUDA device is usable.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "impls/cuda/args.h"
#include "impls/cuda/device_api.h"
#include "impls/cuda/registry_entries.h"

namespace lnv::cuda {
namespace {

// All-ones bytes: a NaN in every IEEE binary format (fp32, bf16, fp16), so an
// output element the kernel never writes reads back as NaN, as a CPU kernel's
// unwritten element does in the judge's NaN-filled buffers; never the bytes a
// previous run left in recycled device memory.
constexpr int kUnwrittenByte = 0xFF;

// A device allocation holding a copy of `bytes` host bytes (or none).
class DeviceCopy {
 public:
  DeviceCopy() = default;
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  // Allocates `bytes` (nothing for a null host pointer or 0 bytes), then
  // copies them from `host` when `upload` (an input), or fills them with the
  // unwritten sentinel (an output). False on a CUDA error.
  bool Init(const void* host, std::size_t bytes, bool upload) {
    if (host == nullptr || bytes == 0) return true;
    if (cudaMalloc(&ptr_, bytes) != cudaSuccess) {
      ptr_ = nullptr;
      return false;
    }
    bytes_ = bytes;
    if (upload) return cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
    return cudaMemset(ptr_, kUnwrittenByte, bytes) == cudaSuccess;
  }
  bool Download(void* host) const {
    return ptr_ == nullptr || cudaMemcpy(host, ptr_, bytes_, cudaMemcpyDeviceToHost) == cudaSuccess;
  }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

template <DType kX, Norm kNorm>
int HostForward(const ForwardArgs* a) {
  if (const int rc = CheckForward(a, kNorm); rc != kOk) return rc;
  const auto n = static_cast<std::size_t>(a->rows * a->d) * SizeOf(kX);
  const auto p = static_cast<std::size_t>(a->d) * SizeOf(kX);
  const auto r = static_cast<std::size_t>(a->rows) * sizeof(float);
  DeviceCopy x, gamma, beta, y, mean, rstd;
  if (!x.Init(a->x, n, true) || !gamma.Init(a->gamma, p, true) || !beta.Init(a->beta, p, true) ||
      !y.Init(a->y, n, false) || !mean.Init(a->mean, r, false) || !rstd.Init(a->rstd, r, false)) {
    return kCudaError;
  }
  ForwardArgs da = *a;
  da.x = x.get();
  da.gamma = gamma.get();
  da.beta = beta.get();
  da.y = y.get();
  da.mean = mean.as<float>();
  da.rstd = rstd.as<float>();
  if (const int rc = DeviceForward(kX, kNorm, &da, nullptr); rc != kOk) return rc;
  if (cudaDeviceSynchronize() != cudaSuccess) return kCudaError;
  if (!y.Download(a->y) || !mean.Download(a->mean) || !rstd.Download(a->rstd)) return kCudaError;
  return kOk;
}

template <DType kX, Norm kNorm>
int HostBackward(const BackwardArgs* a) {
  if (const int rc = CheckBackward(a, kNorm); rc != kOk) return rc;
  const auto n = static_cast<std::size_t>(a->rows * a->d) * SizeOf(kX);
  const auto p = static_cast<std::size_t>(a->d) * SizeOf(kX);
  const auto r = static_cast<std::size_t>(a->rows) * sizeof(float);
  DeviceCopy x, gamma, dy, mean, rstd, dx, dgamma, dbeta;
  if (!x.Init(a->x, n, true) || !gamma.Init(a->gamma, p, true) || !dy.Init(a->dy, n, true) ||
      !mean.Init(a->mean, r, true) || !rstd.Init(a->rstd, r, true) || !dx.Init(a->dx, n, false) ||
      !dgamma.Init(a->dgamma, p, false) || !dbeta.Init(a->dbeta, p, false)) {
    return kCudaError;
  }
  BackwardArgs da = *a;
  da.x = x.get();
  da.gamma = gamma.get();
  da.dy = dy.get();
  da.mean = mean.as<const float>();
  da.rstd = rstd.as<const float>();
  da.dx = dx.get();
  da.dgamma = dgamma.get();
  da.dbeta = dbeta.get();
  if (const int rc = DeviceBackward(kX, kNorm, &da, nullptr); rc != kOk) return rc;
  if (cudaDeviceSynchronize() != cudaSuccess) return kCudaError;
  if (!dx.Download(a->dx) || !dgamma.Download(a->dgamma) || !dbeta.Download(a->dbeta)) {
    return kCudaError;
  }
  return kOk;
}

}  // namespace

// The kernels are built for sm_80 and sm_90 with PTX, so they run on compute
// capability 8.0 and later (newer GPUs JIT the PTX); older devices cannot.
bool DeviceAvailable() {
  static const bool available = [] {
    int count = 0, device = 0, major = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1 ||
        cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();  // no driver or no device: clear the error, report none
      return false;
    }
    return major >= 8;
  }();
  return available;
}

void AppendDeviceImpls(std::vector<ImplInfo>* impls) {
  if (!DeviceAvailable()) return;
  constexpr auto kLn = Norm::kLayerNorm;
  constexpr auto kRms = Norm::kRmsNorm;
  const char* kBackend = "cuda";
  impls->push_back(CudaImplInfo(DType::kF32, kLn, kBackend, &HostForward<DType::kF32, kLn>,
                                &HostBackward<DType::kF32, kLn>));
  impls->push_back(CudaImplInfo(DType::kF32, kRms, kBackend, &HostForward<DType::kF32, kRms>,
                                &HostBackward<DType::kF32, kRms>));
  impls->push_back(CudaImplInfo(DType::kBF16, kLn, kBackend, &HostForward<DType::kBF16, kLn>,
                                &HostBackward<DType::kBF16, kLn>));
  impls->push_back(CudaImplInfo(DType::kBF16, kRms, kBackend, &HostForward<DType::kBF16, kRms>,
                                &HostBackward<DType::kBF16, kRms>));
  impls->push_back(CudaImplInfo(DType::kF16, kLn, kBackend, &HostForward<DType::kF16, kLn>,
                                &HostBackward<DType::kF16, kLn>));
  impls->push_back(CudaImplInfo(DType::kF16, kRms, kBackend, &HostForward<DType::kF16, kRms>,
                                &HostBackward<DType::kF16, kRms>));
}

}  // namespace lnv::cuda

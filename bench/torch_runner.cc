// PyTorch ATen's CPU layer norm (libtorch 1.13), called as PyTorch itself
// calls it: at::native_layer_norm and at::native_layer_norm_backward, which
// allocate their outputs on every call. Weight and bias have the input's
// dtype. ATen's intra-op threads are set to the problem's thread count.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "bench/kernel_runners.h"

namespace lnv::bench {
namespace {

class TorchRunner : public Runner {
 public:
  explicit TorchRunner(const Inputs& in) : shape_{in.p.d}, eps_(in.p.eps) {
    const Problem& p = in.p;
    at::set_num_threads(p.threads);
    const auto options =
        at::TensorOptions().dtype(p.dtype == DType::kBF16 ? at::kBFloat16 : at::kFloat);
    auto* x = const_cast<unsigned char*>(in.x.data());  // from_blob takes void*; never written
    auto* dy = const_cast<unsigned char*>(in.dy.data());
    auto* gamma = const_cast<unsigned char*>(in.gamma.data());
    auto* beta = const_cast<unsigned char*>(in.beta.data());
    x_ = at::from_blob(x, {p.rows, p.d}, options);
    dy_ = at::from_blob(dy, {p.rows, p.d}, options);
    gamma_ = at::from_blob(gamma, {p.d}, options);
    beta_ = at::from_blob(beta, {p.d}, options);
    threads_ = p.threads;
    Forward();
  }

  void Forward() override {
    at::set_num_threads(threads_);
    std::tie(y_, mean_, rstd_) = at::native_layer_norm(x_, shape_, gamma_, beta_, eps_);
  }
  void Backward() override {
    at::set_num_threads(threads_);
    std::tie(dx_, dgamma_, dbeta_) = at::native_layer_norm_backward(
        dy_, x_, shape_, mean_, rstd_, gamma_, beta_, {true, true, true});
  }

 private:
  std::vector<std::int64_t> shape_;
  double eps_;
  int threads_ = 1;
  at::Tensor x_, dy_, gamma_, beta_, y_, mean_, rstd_, dx_, dgamma_, dbeta_;
};

}  // namespace

std::unique_ptr<Runner> MakeTorchRunner(const Inputs& in) {
  return std::make_unique<TorchRunner>(in);
}

std::string TorchStatus() {
  return "PyTorch ATen " + std::to_string(TORCH_VERSION_MAJOR) + "." +
         std::to_string(TORCH_VERSION_MINOR) + "." + std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace lnv::bench

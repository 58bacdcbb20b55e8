// oneDNN's layer normalization through its C++ API (libdnnl 2.6): fp32 or
// bf16 data, fp32 scale and shift (what oneDNN takes), forward_training (so
// it writes mean and variance, as our kernels write mean and rstd), and the
// backward that also computes diff_scale and diff_shift. The primitives are
// created once per problem.
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/kernel_runners.h"

namespace lnv::bench {
namespace {

class OneDnnRunner : public Runner {
 public:
  explicit OneDnnRunner(const Inputs& in) : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const Problem& p = in.p;
    const dt data_type = p.dtype == DType::kBF16 ? dt::bf16 : dt::f32;
    const dnnl::memory::desc data({p.rows, p.d}, data_type, tag::ab);
    const dnnl::memory::desc stats({p.rows}, dt::f32, tag::a);
    const dnnl::memory::desc params({p.d}, dt::f32, tag::a);
    const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    const dnnl::layer_normalization_forward::primitive_desc fwd_pd(
        {dnnl::prop_kind::forward_training, data, stats, p.eps, flags}, engine_);
    const dnnl::layer_normalization_backward::primitive_desc bwd_pd(
        {dnnl::prop_kind::backward, data, data, stats, p.eps, flags}, engine_, fwd_pd);
    forward_ = dnnl::layer_normalization_forward(fwd_pd);
    backward_ = dnnl::layer_normalization_backward(bwd_pd);
    const std::size_t bytes = in.x.size();
    y_.assign(bytes, 0);
    dx_.assign(bytes, 0);
    mean_.assign(p.rows, 0.f);
    variance_.assign(p.rows, 0.f);
    dscale_.assign(p.d, 0.f);
    dshift_.assign(p.d, 0.f);
    auto* x = const_cast<unsigned char*>(in.x.data());  // oneDNN memory takes void*; never written
    auto* dy = const_cast<unsigned char*>(in.dy.data());
    auto* scale = const_cast<float*>(in.gamma_f32.data());
    auto* shift = const_cast<float*>(in.beta_f32.data());
    const auto mem = [&](const dnnl::memory::desc& md, void* ptr) {
      return dnnl::memory(md, engine_, ptr);
    };
    forward_args_ = {{DNNL_ARG_SRC, mem(data, x)},
                     {DNNL_ARG_DST, mem(data, y_.data())},
                     {DNNL_ARG_MEAN, mem(stats, mean_.data())},
                     {DNNL_ARG_VARIANCE, mem(stats, variance_.data())},
                     {DNNL_ARG_SCALE, mem(params, scale)},
                     {DNNL_ARG_SHIFT, mem(params, shift)}};
    backward_args_ = {{DNNL_ARG_SRC, forward_args_.at(DNNL_ARG_SRC)},
                      {DNNL_ARG_DIFF_DST, mem(data, dy)},
                      {DNNL_ARG_MEAN, forward_args_.at(DNNL_ARG_MEAN)},
                      {DNNL_ARG_VARIANCE, forward_args_.at(DNNL_ARG_VARIANCE)},
                      {DNNL_ARG_SCALE, forward_args_.at(DNNL_ARG_SCALE)},
                      {DNNL_ARG_SHIFT, forward_args_.at(DNNL_ARG_SHIFT)},
                      {DNNL_ARG_DIFF_SRC, mem(data, dx_.data())},
                      {DNNL_ARG_DIFF_SCALE, mem(params, dscale_.data())},
                      {DNNL_ARG_DIFF_SHIFT, mem(params, dshift_.data())}};
    Forward();
  }

  void Forward() override {
    forward_.execute(stream_, forward_args_);
    stream_.wait();
  }
  void Backward() override {
    backward_.execute(stream_, backward_args_);
    stream_.wait();
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::layer_normalization_forward forward_;
  dnnl::layer_normalization_backward backward_;
  AlignedVector<unsigned char> y_, dx_;
  AlignedVector<float> mean_, variance_, dscale_, dshift_;
  std::unordered_map<int, dnnl::memory> forward_args_, backward_args_;
};

}  // namespace

std::unique_ptr<Runner> MakeOneDnnRunner(const Inputs& in) {
  try {
    return std::make_unique<OneDnnRunner>(in);
  } catch (const dnnl::error&) {  // no primitive for this problem on this CPU
    return nullptr;
  }
}

std::string OneDnnSkipReason(const Inputs& in) {
  try {
    OneDnnRunner runner(in);
  } catch (const dnnl::error& e) {
    return OneDnnStatus() + " has no " + std::string(DTypeName(in.p.dtype)) +
           " layer normalization on this CPU (" + e.what() + ")";
  }
  return OneDnnStatus();
}

std::string OneDnnStatus() {
  const dnnl::version_t* v = dnnl::version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (" +
         (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") + " runtime)";
}

}  // namespace lnv::bench

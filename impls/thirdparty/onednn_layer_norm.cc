#include "impls/thirdparty/onednn_layer_norm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

namespace lnv::thirdparty {
namespace {

using dnnl::memory;
using Flags = dnnl::normalization_flags;
using LnForward = dnnl::layer_normalization_forward;
using LnBackward = dnnl::layer_normalization_backward;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

template <DType kX>
constexpr memory::data_type DataType() {
  return kX == DType::kBF16 ? memory::data_type::bf16 : memory::data_type::f32;
}

bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  return d >= 1 && rows >= 0 && rows <= std::numeric_limits<std::int64_t>::max() / d;
}

// oneDNN takes non-const pointers for inputs it only reads.
void* Mutable(const void* p) { return const_cast<void*>(p); }

struct Descs {
  memory::desc data, stat, param;
};

template <DType kX>
Descs MakeDescs(std::int64_t rows, std::int64_t d) {
  return {memory::desc({rows, d}, DataType<kX>(), memory::format_tag::ab),
          memory::desc({rows}, memory::data_type::f32, memory::format_tag::a),
          memory::desc({d}, memory::data_type::f32, memory::format_tag::a)};
}

// Runs forward_training: y, mean and variance (all caller-owned).
template <DType kX>
LnForward::primitive_desc RunForward(const Descs& m, float eps, Flags flags, const void* x,
                                     const void* gamma, const void* beta, void* y, float* mean,
                                     float* var) {
  LnForward::desc desc(dnnl::prop_kind::forward_training, m.data, m.stat, eps, flags);
  LnForward::primitive_desc pd(desc, Engine());
  std::unordered_map<int, memory> margs = {
      {DNNL_ARG_SRC, memory(m.data, Engine(), Mutable(x))},
      {DNNL_ARG_DST, memory(m.data, Engine(), y)},
      {DNNL_ARG_MEAN, memory(m.stat, Engine(), mean)},
      {DNNL_ARG_VARIANCE, memory(m.stat, Engine(), var)},
  };
  if (gamma != nullptr) margs.insert({DNNL_ARG_SCALE, memory(m.param, Engine(), Mutable(gamma))});
  if (beta != nullptr) margs.insert({DNNL_ARG_SHIFT, memory(m.param, Engine(), Mutable(beta))});
  dnnl::stream stream(Engine());
  LnForward(pd).execute(stream, margs);
  stream.wait();
  return pd;
}

Flags ParamFlags(bool scale, bool shift) {
  Flags f = Flags::none;
  if (scale) f = f | Flags::use_scale;
  if (shift) f = f | Flags::use_shift;
  return f;
}

}  // namespace

template <DType kX>
int OneDnnLayerNormForward(const ForwardArgs* a) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->y == nullptr) {
    return kOneDnnInvalidArgs;
  }
  if (a->rows == 0) return 0;
  try {
    const Descs m = MakeDescs<kX>(a->rows, a->d);
    std::vector<float> mean(static_cast<std::size_t>(a->rows));
    std::vector<float> var(static_cast<std::size_t>(a->rows));
    RunForward<kX>(m, a->eps, ParamFlags(a->gamma != nullptr, a->beta != nullptr), a->x, a->gamma,
                   a->beta, a->y, mean.data(), var.data());
    for (std::int64_t r = 0; r < a->rows; ++r) {
      if (a->mean != nullptr) a->mean[r] = mean[r];
      if (a->rstd != nullptr) a->rstd[r] = 1.0f / std::sqrt(var[r] + a->eps);
    }
  } catch (const dnnl::error&) {
    return kOneDnnLibraryError;
  }
  return 0;
}

template <DType kX>
int OneDnnLayerNormBackward(const BackwardArgs* a) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr) {
    return kOneDnnInvalidArgs;
  }
  const std::size_t d = static_cast<std::size_t>(a->d);
  if (a->rows == 0) {  // empty sums
    for (void* p : {a->dgamma, a->dbeta}) {
      if (p != nullptr) std::fill_n(static_cast<float*>(p), d, 0.0f);
    }
    return 0;
  }
  try {
    const bool scale = a->gamma != nullptr || a->dgamma != nullptr;
    const bool shift = a->dbeta != nullptr;
    std::vector<float> ones;
    const void* gamma = a->gamma;
    if (scale && gamma == nullptr) {
      ones.assign(d, 1.0f);
      gamma = ones.data();
    }
    const Descs m = MakeDescs<kX>(a->rows, a->d);
    // The statistics oneDNN's forward produced (see the header), and a
    // forward primitive descriptor as the backward's hint.
    std::vector<float> mean(static_cast<std::size_t>(a->rows));
    std::vector<float> var(static_cast<std::size_t>(a->rows));
    std::vector<unsigned char> y_scratch(static_cast<std::size_t>(a->rows) * d * SizeOf(kX));
    std::vector<float> zeros;
    if (shift) zeros.assign(d, 0.0f);
    const Flags flags = ParamFlags(scale, shift);
    const auto fwd_pd =
        RunForward<kX>(m, a->eps, flags, a->x, scale ? gamma : nullptr,
                       shift ? zeros.data() : nullptr, y_scratch.data(), mean.data(), var.data());

    LnBackward::desc desc(dnnl::prop_kind::backward, m.data, m.data, m.stat, a->eps, flags);
    LnBackward::primitive_desc pd(desc, Engine(), fwd_pd);
    std::vector<float> dgamma_scratch, dbeta_scratch;
    void* dgamma = a->dgamma;
    void* dbeta = a->dbeta;
    if (scale && dgamma == nullptr) {
      dgamma_scratch.resize(d);
      dgamma = dgamma_scratch.data();
    }
    std::unordered_map<int, memory> margs = {
        {DNNL_ARG_SRC, memory(m.data, Engine(), Mutable(a->x))},
        {DNNL_ARG_DIFF_DST, memory(m.data, Engine(), Mutable(a->dy))},
        {DNNL_ARG_MEAN, memory(m.stat, Engine(), mean.data())},
        {DNNL_ARG_VARIANCE, memory(m.stat, Engine(), var.data())},
        {DNNL_ARG_DIFF_SRC, memory(m.data, Engine(), a->dx)},
    };
    if (scale) {
      margs.insert({DNNL_ARG_SCALE, memory(m.param, Engine(), Mutable(gamma))});
      margs.insert({DNNL_ARG_DIFF_SCALE, memory(m.param, Engine(), dgamma)});
    }
    if (shift) {
      // Unused by the math, but oneDNN's backward takes the shift as an input.
      margs.insert({DNNL_ARG_SHIFT, memory(m.param, Engine(), zeros.data())});
      margs.insert({DNNL_ARG_DIFF_SHIFT, memory(m.param, Engine(), dbeta)});
    }
    if (pd.workspace_desc().get_size() != 0) {
      return kOneDnnLibraryError;  // layer norm without ReLU fusion needs none
    }
    dnnl::stream stream(Engine());
    LnBackward(pd).execute(stream, margs);
    stream.wait();
  } catch (const dnnl::error&) {
    return kOneDnnLibraryError;
  }
  return 0;
}

bool OneDnnSupports(DType x_dtype) {
  try {
    const auto check = [](auto descs) {
      LnForward::desc fd(dnnl::prop_kind::forward_training, descs.data, descs.stat, 1e-5f,
                         Flags::use_scale | Flags::use_shift);
      LnForward::primitive_desc fpd(fd, Engine());
      LnBackward::desc bd(dnnl::prop_kind::backward, descs.data, descs.data, descs.stat, 1e-5f,
                          Flags::use_scale | Flags::use_shift);
      LnBackward::primitive_desc bpd(bd, Engine(), fpd);
    };
    if (x_dtype == DType::kF32) {
      check(MakeDescs<DType::kF32>(2, 8));
    } else if (x_dtype == DType::kBF16) {
      check(MakeDescs<DType::kBF16>(2, 8));
    } else {
      return false;
    }
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

template int OneDnnLayerNormForward<DType::kF32>(const ForwardArgs*);
template int OneDnnLayerNormForward<DType::kBF16>(const ForwardArgs*);
template int OneDnnLayerNormBackward<DType::kF32>(const BackwardArgs*);
template int OneDnnLayerNormBackward<DType::kBF16>(const BackwardArgs*);

}  // namespace lnv::thirdparty

// PyTorch ATen layer norm on the CPU, judged as it is (status observed).
//
// Library calls: at::native_layer_norm(input, {d}, weight, bias, eps) and
// at::native_layer_norm_backward(grad_out, input, {d}, mean, rstd, weight,
// bias, output_mask) from Debian's libtorch-dev 1.13, on CPU tensors that
// wrap the caller's buffers (at::from_blob, no copy of the inputs).
//
// Dtypes: f32 and bf16, with gamma/beta (and dgamma/dbeta) in the same dtype
// as x: ATen 1.13 rejects bf16 input with f32 weight ("expected scalar type
// BFloat16 but found Float") and has no CPU kernel for f16
// ("LayerNormKernelImpl" not implemented for 'Half'), so there is no f16
// entry. ATen returns mean and rstd in the input dtype: for bf16 they are
// bf16 values, which this adapter widens (exactly) to the ABI's float, and
// narrows back (exactly) for the backward.
// Algorithm: ATen's (row moments by a cascaded Welford, vectorised), judged
//   under the generic model (Algorithm::kUnknown: the loosest stable
//   algorithm, serial reduction, k = d - 1).
// Accumulation: f32 for f32 and bf16 data.
// Bound: torch.nn.LayerNorm's documentation gives the formulas of docs/DESIGN.md
//   §1 (biased variance, eps inside the square root) and claims no error
//   bound; we hold it to the generic bound and record what it breaks in
//   impls/thirdparty/baselines/.
// Valid range: none claimed; judged over the full finite range.
//
// Why a module: loading libtorch costs about half a second of static
// initialisation in every process that links it. This file is built as its
// own shared module speaking the plugin ABI (impls/plugin/lnv_plugin.h), and
// impls/thirdparty/aten_layer_norm.cc loads it on the first call of an ATen
// kernel, so only the processes that run one pay for it.
//
// Adapter arithmetic: none. A NULL gamma is passed as a tensor of ones (ATen
// multiplies by it: exact), and a NULL beta as no bias; the backward gets a
// zero bias tensor only to size dbeta.
#include <ATen/core/Tensor.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>

#include "impls/plugin/lnv_plugin.h"

namespace {

constexpr int kInvalidArgs = 1;   // NULL required pointer, d < 1, rows < 0
constexpr int kLibraryError = 2;  // ATen threw

bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  return d >= 1 && rows >= 0 && rows <= std::numeric_limits<std::int64_t>::max() / d;
}

template <lnv_dtype kX>
constexpr c10::ScalarType Scalar() {
  return kX == LNV_BF16 ? c10::ScalarType::BFloat16 : c10::ScalarType::Float;
}

constexpr std::size_t Bytes(lnv_dtype t) { return t == LNV_F32 ? 4 : 2; }

at::Tensor Wrap(const void* p, at::IntArrayRef shape, c10::ScalarType t) {
  return at::from_blob(const_cast<void*>(p), shape, at::TensorOptions().dtype(t));
}

// Copies a tensor of `n` elements of `t` into `dst`.
void CopyOut(const at::Tensor& src, c10::ScalarType t, void* dst, std::int64_t n) {
  const at::Tensor c = src.to(t).contiguous();
  std::memcpy(dst, c.data_ptr(), static_cast<std::size_t>(n) * c.element_size());
}

template <lnv_dtype kX>
int Forward(const lnv_forward_args* a) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->y == nullptr) {
    return kInvalidArgs;
  }
  if (a->rows == 0) return 0;
  try {
    const auto t = Scalar<kX>();
    const std::int64_t rows = a->rows, d = a->d;
    c10::optional<at::Tensor> weight, bias;
    if (a->gamma != nullptr) weight = Wrap(a->gamma, {d}, t);
    if (a->beta != nullptr) bias = Wrap(a->beta, {d}, t);
    const auto [y, mean, rstd] =
        at::native_layer_norm(Wrap(a->x, {rows, d}, t), {d}, weight, bias, double{a->eps});
    CopyOut(y, t, a->y, rows * d);
    if (a->mean != nullptr) CopyOut(mean, c10::ScalarType::Float, a->mean, rows);
    if (a->rstd != nullptr) CopyOut(rstd, c10::ScalarType::Float, a->rstd, rows);
  } catch (const std::exception&) {
    return kLibraryError;
  }
  return 0;
}

template <lnv_dtype kX>
int Backward(const lnv_backward_args* a) {
  if (a == nullptr || !ShapeIsValid(a->rows, a->d) || a->x == nullptr || a->dy == nullptr ||
      a->dx == nullptr || a->mean == nullptr || a->rstd == nullptr) {
    return kInvalidArgs;
  }
  const std::int64_t rows = a->rows, d = a->d;
  if (rows == 0) {  // empty sums
    for (void* p : {a->dgamma, a->dbeta}) {
      if (p != nullptr) std::memset(p, 0, static_cast<std::size_t>(d) * Bytes(kX));
    }
    return 0;
  }
  try {
    const auto t = Scalar<kX>();
    const auto opts = at::TensorOptions().dtype(t);
    // ATen's backward reads mean/rstd in the dtype its forward wrote them.
    const at::Tensor mean = Wrap(a->mean, {rows, 1}, c10::ScalarType::Float).to(t);
    const at::Tensor rstd = Wrap(a->rstd, {rows, 1}, c10::ScalarType::Float).to(t);
    const at::Tensor weight = a->gamma != nullptr ? Wrap(a->gamma, {d}, t) : at::ones({d}, opts);
    c10::optional<at::Tensor> bias;
    if (a->dbeta != nullptr) bias = at::zeros({d}, opts);
    const std::array<bool, 3> mask = {true, a->dgamma != nullptr, a->dbeta != nullptr};
    const auto [dx, dgamma, dbeta] = at::native_layer_norm_backward(
        Wrap(a->dy, {rows, d}, t), Wrap(a->x, {rows, d}, t), {d}, mean, rstd, weight, bias, mask);
    CopyOut(dx, t, a->dx, rows * d);
    if (a->dgamma != nullptr) CopyOut(dgamma, t, a->dgamma, d);
    if (a->dbeta != nullptr) CopyOut(dbeta, t, a->dbeta, d);
  } catch (const std::exception&) {
    return kLibraryError;
  }
  return 0;
}

// Names are the registry names the loader (aten_layer_norm.cc) looks up; the
// claim fields stay generic: the registry states what observed kernels are held to.
const lnv_kernel kKernels[] = {
    {sizeof(lnv_kernel), "f32/native_layer_norm/aten", LNV_LAYER_NORM, LNV_F32, LNV_F32, LNV_F32,
     &Forward<LNV_F32>, &Backward<LNV_F32>, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
    {sizeof(lnv_kernel), "bf16/native_layer_norm/aten", LNV_LAYER_NORM, LNV_BF16, LNV_BF16, LNV_F32,
     &Forward<LNV_BF16>, &Backward<LNV_BF16>, LNV_ALGO_UNKNOWN, LNV_REDUCTION_SERIAL, 0, 0.0, 0.0},
};

const lnv_plugin kPlugin = {sizeof(lnv_plugin), LNV_PLUGIN_ABI_MAJOR, 0,
                            static_cast<std::int32_t>(sizeof kKernels / sizeof kKernels[0]),
                            kKernels};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lnv_plugin* lnv_plugin_get(
    std::uint32_t host_abi_major) {
  return host_abi_major == LNV_PLUGIN_ABI_MAJOR ? &kPlugin : nullptr;
}

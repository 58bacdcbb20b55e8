// The C++ view of the plugin ABI (impls/plugin/lnv_plugin.h): every kernel,
// built-in or plugin, is called through these argument structs.
#ifndef LNV_IMPLS_API_H_
#define LNV_IMPLS_API_H_

#include <cstddef>
#include <string_view>

#include "impls/plugin/lnv_plugin.h"

namespace lnv {

using ForwardArgs = lnv_forward_args;
using BackwardArgs = lnv_backward_args;
using ForwardFn = int (*)(const ForwardArgs*);
using BackwardFn = int (*)(const BackwardArgs*);

enum class DType : int { kF32 = LNV_F32, kF16 = LNV_F16, kBF16 = LNV_BF16, kF64 = LNV_F64 };
enum class Norm : int { kLayerNorm = LNV_LAYER_NORM, kRmsNorm = LNV_RMS_NORM };

constexpr std::size_t SizeOf(DType t) {
  switch (t) {
    case DType::kF32:
      return 4;
    case DType::kF64:
      return 8;
    case DType::kF16:
    case DType::kBF16:
      return 2;
  }
  return 0;
}

// "f32", "f16", "bf16", "f64": the dtype part of a registry name.
constexpr std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

constexpr std::string_view NormName(Norm n) {
  return n == Norm::kLayerNorm ? "layer_norm" : "rms_norm";
}

}  // namespace lnv

#endif  // LNV_IMPLS_API_H_

#include "impls/registry.h"

#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "impls/cpu/kahan_two_pass.h"
#include "impls/cpu/one_pass.h"
#include "impls/cpu/rms_kahan.h"
#include "impls/cpu/rms_serial.h"
#include "impls/cpu/rms_tree.h"
#include "impls/cpu/two_pass.h"
#include "impls/cpu/valid_range.h"
#include "impls/cpu/welford.h"
#include "impls/cpu/welford_tree.h"
#include "impls/registry_parts.h"

namespace lnv {
namespace {

// Registry order of dtypes within each backend.
constexpr std::array<DType, 4> kScalarDTypes = {DType::kF32, DType::kBF16, DType::kF16,
                                                DType::kF64};

struct KernelFns {
  ForwardFn forward;
  BackwardFn backward;
};

// The four dtype instantiations of a scalar kernel, in kScalarDTypes order.
template <typename Kernel>
constexpr std::array<KernelFns, 4> ScalarFns() {
  return {{{&Kernel::template Forward<DType::kF32>, &Kernel::template Backward<DType::kF32>},
           {&Kernel::template Forward<DType::kBF16>, &Kernel::template Backward<DType::kBF16>},
           {&Kernel::template Forward<DType::kF16>, &Kernel::template Backward<DType::kF16>},
           {&Kernel::template Forward<DType::kF64>, &Kernel::template Backward<DType::kF64>}}};
}

// One scalar algorithm; it expands to one registry entry per dtype.
struct ScalarFamily {
  const char* algorithm_name;  // the middle part of the registry name
  Norm norm;
  Algorithm algorithm;
  Reduction reduction;
  std::int64_t chunk;
  Algorithm bound_algorithm;
  ImplStatus status;
  const char* source;
  std::array<KernelFns, 4> fns;
};

constexpr auto kSerial = Reduction::kSerial;
constexpr auto kTree = Reduction::kTree;
constexpr auto kClaims = ImplStatus::kClaimsBound;

// THE list of built-in kernels: adding a kernel is one entry here (it expands
// to one registry entry per dtype).
constexpr ScalarFamily kScalarFamilies[] = {
    {"two_pass", Norm::kLayerNorm, Algorithm::kTwoPass, kSerial, 0, Algorithm::kTwoPass, kClaims,
     "impls/cpu/two_pass.h", ScalarFns<cpu::TwoPassLayerNorm>()},
    {"welford", Norm::kLayerNorm, Algorithm::kWelford, kSerial, 0, Algorithm::kWelford, kClaims,
     "impls/cpu/welford.h", ScalarFns<cpu::WelfordLayerNorm>()},
    {"welford_tree", Norm::kLayerNorm, Algorithm::kWelford, kTree, cpu::kWelfordTreeChunk,
     Algorithm::kWelford, kClaims, "impls/cpu/welford_tree.h",
     ScalarFns<cpu::WelfordTreeLayerNorm>()},
    {"kahan_two_pass", Norm::kLayerNorm, Algorithm::kKahanTwoPass, kSerial, 0,
     Algorithm::kKahanTwoPass, kClaims, "impls/cpu/kahan_two_pass.h",
     ScalarFns<cpu::KahanTwoPassLayerNorm>()},
    // The negative control: held to the two-pass bound, which it must fail.
    {"one_pass", Norm::kLayerNorm, Algorithm::kOnePass, kSerial, 0, Algorithm::kTwoPass,
     ImplStatus::kNegativeControl, "impls/cpu/one_pass.h", ScalarFns<cpu::OnePassLayerNorm>()},
    {"rms_serial", Norm::kRmsNorm, Algorithm::kSumOfSquares, kSerial, 0, Algorithm::kSumOfSquares,
     kClaims, "impls/cpu/rms_serial.h", ScalarFns<cpu::RmsSerial>()},
    {"rms_tree", Norm::kRmsNorm, Algorithm::kSumOfSquares, kTree, cpu::kRmsTreeChunk,
     Algorithm::kSumOfSquares, kClaims, "impls/cpu/rms_tree.h", ScalarFns<cpu::RmsTree>()},
    {"rms_kahan", Norm::kRmsNorm, Algorithm::kKahanTwoPass, kSerial, 0, Algorithm::kKahanTwoPass,
     kClaims, "impls/cpu/rms_kahan.h", ScalarFns<cpu::RmsKahan>()},
};

std::vector<ImplInfo> BuildRegistry() {
  std::vector<ImplInfo> impls;
  for (std::size_t t = 0; t < kScalarDTypes.size(); ++t) {
    const DType dtype = kScalarDTypes[t];
    for (const ScalarFamily& f : kScalarFamilies) {
      ImplInfo info;
      info.name = std::string(DTypeName(dtype)) + "/" + f.algorithm_name + "/cpu-scalar";
      info.norm = f.norm;
      info.x_dtype = dtype;
      info.param_dtype = dtype;
      info.acc_dtype = dtype == DType::kF64 ? DType::kF64 : DType::kF32;
      info.algorithm = f.algorithm;
      info.reduction = f.reduction;
      info.chunk = f.chunk;
      info.bound_algorithm = f.bound_algorithm;
      info.status = f.status;
      info.max_row_sumsq = cpu::ScalarMaxRowSumsq(dtype);
      info.max_backward_weight = cpu::ScalarMaxBackwardWeight(dtype);
      info.forward = f.fns[t].forward;
      info.backward = f.fns[t].backward;
      info.source = f.source;
      impls.push_back(std::move(info));
    }
  }
  // Kernels beyond the scalar references, one line per group (registry_parts.h).
  AppendFastCpuImpls(&impls);
  AppendThirdPartyImpls(&impls);
  AppendCudaEmulatedImpls(&impls);
  AppendBrokenImpls(&impls);
  return impls;
}

}  // namespace

const std::vector<ImplInfo>& AllImpls() {
  static const std::vector<ImplInfo> impls = BuildRegistry();  // built once, on first use
  return impls;
}

const ImplInfo* FindImpl(std::string_view name) {
  for (const ImplInfo& i : AllImpls()) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

// Iterative glob with single-star backtracking: linear in practice, no
// recursion blow-up on patterns like "*a*a*a*b".
bool GlobMatch(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return true;
  std::size_t p = 0;
  std::size_t n = 0;
  std::size_t star = std::string_view::npos;  // position of the last '*' seen
  std::size_t star_n = 0;                     // name position that '*' is matched up to
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;  // let the last '*' swallow one more character
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kTwoPass:
      return "two_pass";
    case Algorithm::kWelford:
      return "welford";
    case Algorithm::kKahanTwoPass:
      return "kahan_two_pass";
    case Algorithm::kOnePass:
      return "one_pass";
    case Algorithm::kSumOfSquares:
      return "sum_of_squares";
    case Algorithm::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view ReductionName(Reduction r) {
  switch (r) {
    case Reduction::kTree:
      return "tree";
    case Reduction::kLanes:
      return "lanes";
    case Reduction::kSerial:
      break;
  }
  return "serial";
}

std::string_view StatusName(ImplStatus s) {
  switch (s) {
    case ImplStatus::kClaimsBound:
      return "claims_bound";
    case ImplStatus::kNegativeControl:
      return "negative_control";
    case ImplStatus::kObserved:
      return "observed";
  }
  return "unknown";
}

}  // namespace lnv

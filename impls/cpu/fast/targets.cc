#include "impls/cpu/fast/targets.h"

#include <hwy/highway.h>
#include <hwy/targets.h>

namespace lnv::fast {
namespace {

// Best first; only these are compiled (CMakeLists.txt disables the others).
constexpr std::int64_t kTargetOrder[] = {HWY_AVX3, HWY_AVX2, HWY_SCALAR};

const char* BackendName(std::int64_t target) {
  switch (target) {
    case HWY_AVX3:
      return "cpu-fast-avx512";
    case HWY_AVX2:
      return "cpu-fast-avx2";
    default:
      return "cpu-fast-scalar";
  }
}

std::vector<TargetKernels> BuildTargets() {
  std::vector<TargetKernels> targets;
  const std::int64_t supported = hwy::SupportedTargets();
  for (const std::int64_t t : kTargetOrder) {
    if ((HWY_TARGETS & t) == 0 || (supported & t) == 0) continue;
    TargetKernels k;
    k.target = t;
    k.backend = BackendName(t);
    FillConversions(t, &k);
    FillLayerNormKernels(t, &k);
    FillRmsNormKernels(t, &k);
    targets.push_back(std::move(k));
  }
  return targets;
}

}  // namespace

const std::vector<TargetKernels>& AvailableTargets() {
  static const std::vector<TargetKernels> targets = BuildTargets();
  return targets;
}

}  // namespace lnv::fast

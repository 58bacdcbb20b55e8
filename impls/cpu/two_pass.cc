#include "impls/cpu/two_pass.h"

#include "impls/cpu/scalar_common.h"

namespace lnv::cpu {
namespace {

struct TwoPass {
  static constexpr Norm kNorm = Norm::kLayerNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const Acc n = static_cast<Acc>(d);
    const Acc mean = SerialSum<Acc>(0, d, x) / n;
    const Acc m2 = SerialSum<Acc>(0, d, [&](std::int64_t i) {
      const Acc dev = x(i) - mean;
      return dev * dev;
    });
    return {mean, m2 / n};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return SerialSum<Acc>(0, d, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(TwoPassLayerNorm, TwoPass);

}  // namespace lnv::cpu

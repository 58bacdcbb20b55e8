#include "impls/cpu/welford.h"

#include "impls/cpu/scalar_common.h"
#include "impls/cpu/welford_state.h"

namespace lnv::cpu {
namespace {

struct Welford {
  static constexpr Norm kNorm = Norm::kLayerNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const WelfordState<Acc> s = WelfordRun<Acc>(0, d, x);
    const Acc m2 = M2WithDegenerateGuard<Acc>(s.m2, s.mean, d, x,
                                              [&](const auto& term) { return Sum<Acc>(d, term); });
    return {s.mean, m2 / static_cast<Acc>(d)};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return SerialSum<Acc>(0, d, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(WelfordLayerNorm, Welford);

}  // namespace lnv::cpu

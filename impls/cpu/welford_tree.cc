#include "impls/cpu/welford_tree.h"

#include "impls/cpu/scalar_common.h"
#include "impls/cpu/welford_state.h"

namespace lnv::cpu {
namespace {

struct WelfordTree {
  static constexpr Norm kNorm = Norm::kLayerNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const auto leaf = [&](std::int64_t c) {
      const std::int64_t begin = c * kWelfordTreeChunk;
      const std::int64_t end = begin + kWelfordTreeChunk < d ? begin + kWelfordTreeChunk : d;
      return WelfordRun<Acc>(begin, end, x);
    };
    const WelfordState<Acc> s = PairwiseReduce<WelfordState<Acc>>(
        0, NumChunks(d, kWelfordTreeChunk), leaf, WelfordMerge<Acc>);
    const Acc m2 = M2WithDegenerateGuard<Acc>(s.m2, s.mean, d, x,
                                              [&](const auto& term) { return Sum<Acc>(d, term); });
    return {s.mean, m2 / static_cast<Acc>(d)};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return TreeSum<Acc>(d, kWelfordTreeChunk, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(WelfordTreeLayerNorm, WelfordTree);

}  // namespace lnv::cpu

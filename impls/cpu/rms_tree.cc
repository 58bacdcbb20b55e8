#include "impls/cpu/rms_tree.h"

#include "impls/cpu/scalar_common.h"

namespace lnv::cpu {
namespace {

struct TreeSumOfSquares {
  static constexpr Norm kNorm = Norm::kRmsNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const Acc ss = TreeSum<Acc>(d, kRmsTreeChunk, [&](std::int64_t i) {
      const Acc xi = x(i);
      return xi * xi;
    });
    return {Acc(0), ss / static_cast<Acc>(d)};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return TreeSum<Acc>(d, kRmsTreeChunk, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(RmsTree, TreeSumOfSquares);

}  // namespace lnv::cpu

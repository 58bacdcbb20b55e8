#include "impls/cpu/rms_kahan.h"

#include "impls/cpu/scalar_common.h"

namespace lnv::cpu {
namespace {

struct KahanSumOfSquares {
  static constexpr Norm kNorm = Norm::kRmsNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const Acc ss = KahanSum<Acc>(d, [&](std::int64_t i) {
      const Acc xi = x(i);
      return xi * xi;
    });
    return {Acc(0), ss / static_cast<Acc>(d)};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return KahanSum<Acc>(d, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(RmsKahan, KahanSumOfSquares);

}  // namespace lnv::cpu

#include "impls/cpu/one_pass.h"

#include "impls/cpu/scalar_common.h"

namespace lnv::cpu {
namespace {

struct OnePass {
  static constexpr Norm kNorm = Norm::kLayerNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    Acc s1 = 0;
    Acc s2 = 0;
    for (std::int64_t i = 0; i < d; ++i) {  // one sweep: both sums serial
      const Acc xi = x(i);
      s1 = s1 + xi;
      s2 = s2 + xi * xi;
    }
    const Acc n = static_cast<Acc>(d);
    const Acc mean = s1 / n;
    Acc var = (s2 - s1 * mean) / n;
    if (var < Acc(0)) var = 0;  // NaN compares false and stays NaN
    return {mean, var};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return SerialSum<Acc>(0, d, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(OnePassLayerNorm, OnePass);

}  // namespace lnv::cpu

#include "impls/cpu/rms_serial.h"

#include "impls/cpu/scalar_common.h"

namespace lnv::cpu {
namespace {

struct SerialSumOfSquares {
  static constexpr Norm kNorm = Norm::kRmsNorm;

  template <typename Acc, typename X>
  static RowStats<Acc> Stats(std::int64_t d, const X& x) {
    const Acc ss = SerialSum<Acc>(0, d, [&](std::int64_t i) {
      const Acc xi = x(i);
      return xi * xi;
    });
    return {Acc(0), ss / static_cast<Acc>(d)};
  }

  template <typename Acc, typename T>
  static Acc Sum(std::int64_t d, const T& term) {
    return SerialSum<Acc>(0, d, term);
  }
};

}  // namespace

LNV_CPU_SCALAR_INSTANTIATE(RmsSerial, SerialSumOfSquares);

}  // namespace lnv::cpu

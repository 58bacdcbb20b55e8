#include "impls/broken/drop_past_power_of_two.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct Policy : Correct {
  static std::vector<Span> Seen(std::int64_t n) {
    std::int64_t p = 1;
    while (p <= n / 2) p *= 2;
    return {{0, p}};
  }
};

}  // namespace

int DropPastPowerOfTwoForward(const ForwardArgs* args) {
  return Forward<DType::kF32, Policy>(args);
}
int DropPastPowerOfTwoBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, Policy>(args);
}

}  // namespace lnv::broken

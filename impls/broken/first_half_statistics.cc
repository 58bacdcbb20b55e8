#include "impls/broken/first_half_statistics.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct Policy : Correct {
  static std::vector<Span> Seen(std::int64_t n) { return {{0, (n + 1) / 2}}; }
};

}  // namespace

int FirstHalfStatisticsForward(const ForwardArgs* args) {
  return Forward<DType::kF32, Policy>(args);
}
int FirstHalfStatisticsBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, Policy>(args);
}

}  // namespace lnv::broken

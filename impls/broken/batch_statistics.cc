#include "impls/broken/batch_statistics.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct OverBatch : Correct {
  static constexpr bool kStatisticsOverBatch = true;
};

}  // namespace

int BatchStatisticsForward(const ForwardArgs* args) {
  return Forward<DType::kF32, OverBatch>(args);
}
int BatchStatisticsBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, OverBatch>(args);
}

}  // namespace lnv::broken

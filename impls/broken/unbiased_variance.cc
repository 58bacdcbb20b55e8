#include "impls/broken/unbiased_variance.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct Unbiased : Correct {
  static float Variance(float m2, std::int64_t n) { return m2 / static_cast<float>(n - 1); }
};

}  // namespace

int UnbiasedVarianceForward(const ForwardArgs* args) {
  return Forward<DType::kF32, Unbiased>(args);
}
int UnbiasedVarianceBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, Unbiased>(args);
}

}  // namespace lnv::broken

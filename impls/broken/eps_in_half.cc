#include "impls/broken/eps_in_half.h"

#include <Eigen/Core>

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct EpsInHalf : Correct {
  static float Rstd(float var, float eps) {
    const float eps_half = static_cast<float>(Eigen::half(eps));  // the bug: eps in fp16
    return 1.0f / std::sqrt(var + eps_half);
  }
};

}  // namespace

int EpsInHalfForward(const ForwardArgs* args) { return Forward<DType::kF16, EpsInHalf>(args); }
int EpsInHalfBackward(const BackwardArgs* args) { return Backward<DType::kF16, EpsInHalf>(args); }

}  // namespace lnv::broken

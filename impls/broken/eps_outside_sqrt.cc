#include "impls/broken/eps_outside_sqrt.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct EpsOutside : Correct {
  static float Rstd(float var, float eps) { return 1.0f / (std::sqrt(var) + eps); }
};

}  // namespace

int EpsOutsideSqrtForward(const ForwardArgs* args) {
  return Forward<DType::kF32, EpsOutside>(args);
}
int EpsOutsideSqrtBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, EpsOutside>(args);
}

}  // namespace lnv::broken

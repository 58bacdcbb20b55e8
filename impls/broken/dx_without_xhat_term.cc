#include "impls/broken/dx_without_xhat_term.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct NoXhatTerm : Correct {
  static constexpr bool kDxHasXhatTerm = false;
};

}  // namespace

int DxWithoutXhatTermForward(const ForwardArgs* args) {
  return Forward<DType::kF32, NoXhatTerm>(args);
}
int DxWithoutXhatTermBackward(const BackwardArgs* args) {
  return Backward<DType::kF32, NoXhatTerm>(args);
}

}  // namespace lnv::broken

// The ATen layer norm kernels (aten_layer_norm_module.cc, where the library
// calls and dtypes are described), reached through a shared module that is
// loaded on the first call: libtorch's static initialisation then costs only
// the processes that run an ATen kernel.
#ifndef LNV_IMPLS_THIRDPARTY_ATEN_LAYER_NORM_H_
#define LNV_IMPLS_THIRDPARTY_ATEN_LAYER_NORM_H_

#include <string>

#include "impls/api.h"

namespace lnv::thirdparty {

// Returned by the entry points when the module cannot be loaded (the reason
// is printed once, on stderr).
inline constexpr int kAtenModuleUnavailable = 3;

template <DType kX>
int AtenLayerNormForward(const ForwardArgs* args);
template <DType kX>
int AtenLayerNormBackward(const BackwardArgs* args);

// Loads the module if it is not yet loaded: "" when it is usable, else why not.
std::string AtenModuleError();

}  // namespace lnv::thirdparty

#endif  // LNV_IMPLS_THIRDPARTY_ATEN_LAYER_NORM_H_

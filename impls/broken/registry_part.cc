// Negative-control kernels beyond the one-pass variance (which is a scalar
// reference, impls/cpu/one_pass.h). Empty until the property suite adds its
// realistic bugs; kept so that registry.cc has one line per group.
#include "impls/registry_parts.h"

namespace lnv {

void AppendBrokenImpls(std::vector<ImplInfo>* /*impls*/) {}

}  // namespace lnv

// The groups of kernels that AllImpls() lists after the scalar references.
// Each group's entries are written out in its own file, one entry per kernel;
// registry.cc calls every Append* here, in this order.
#ifndef LNV_IMPLS_REGISTRY_PARTS_H_
#define LNV_IMPLS_REGISTRY_PARTS_H_

#include <vector>

#include "impls/registry.h"

namespace lnv {

// Deliberately broken kernels (status kNegativeControl): each imitates a real
// bug, and the suites must catch it (impls/broken/).
void AppendBrokenImpls(std::vector<ImplInfo>* impls);

}  // namespace lnv

#endif  // LNV_IMPLS_REGISTRY_PARTS_H_

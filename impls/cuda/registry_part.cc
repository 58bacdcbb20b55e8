// CUDA host emulations: their registry entries, one per kernel. Empty until the group's
// kernels are written.
#include "impls/registry_parts.h"

namespace lnv {

void AppendCudaEmulatedImpls(std::vector<ImplInfo>* /*impls*/) {}

}  // namespace lnv

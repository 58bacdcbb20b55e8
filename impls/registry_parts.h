// The groups of kernels that AllImpls() lists after the scalar references.
// Each group's entries are written out in its own file, one entry per kernel;
// registry.cc calls every Append* here, in this order.
#ifndef LNV_IMPLS_REGISTRY_PARTS_H_
#define LNV_IMPLS_REGISTRY_PARTS_H_

#include <vector>

#include "impls/registry.h"

namespace lnv {

// Fast CPU kernels (SIMD, multithreaded) and the Eigen kernel (impls/cpu/fast/).
void AppendFastCpuImpls(std::vector<ImplInfo>* impls);

// Third-party kernels judged as they are, status kObserved (impls/thirdparty/):
// empty when the libraries were not found at configure time.
void AppendThirdPartyImpls(std::vector<ImplInfo>* impls);

// Host emulations of the CUDA kernels, bit for bit (impls/cuda/).
void AppendCudaEmulatedImpls(std::vector<ImplInfo>* impls);

// Deliberately broken kernels (status kNegativeControl): each imitates a real
// bug, and the suites must catch it (impls/broken/).
void AppendBrokenImpls(std::vector<ImplInfo>* impls);

}  // namespace lnv

#endif  // LNV_IMPLS_REGISTRY_PARTS_H_

// Host emulation of the CUDA kernels (layer_norm.h, rms_norm.h): the same
// per-lane code (row_ops.h) run lane by lane and warp by warp on the CPU, the
// shuffle trees replayed in their order (reduction.h), so each function
// returns exactly the bits the GPU kernel writes. Plain C++: builds and runs
// without CUDA. Arguments are host pointers (the plugin ABI's structs).
#ifndef LNV_IMPLS_CUDA_EMULATE_H_
#define LNV_IMPLS_CUDA_EMULATE_H_

#include "impls/api.h"

namespace lnv::cuda {

// kX: kF32, kBF16 or kF16. Return codes: args.h.
template <DType kX, Norm kNorm>
int EmulatedForward(const ForwardArgs* args);
template <DType kX, Norm kNorm>
int EmulatedBackward(const BackwardArgs* args);

}  // namespace lnv::cuda

#endif  // LNV_IMPLS_CUDA_EMULATE_H_

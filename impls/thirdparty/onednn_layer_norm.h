// oneDNN layer normalization, judged as it is (status observed).
//
// Library calls: dnnl::layer_normalization_forward (prop_kind::forward_training)
// and dnnl::layer_normalization_backward (prop_kind::backward) through the
// oneDNN C++ API (Debian libdnnl-dev 2.6), CPU engine, plain row-major
// [rows][d] data ("ab"), statistics [rows].
//
// Dtypes: x, y, dy, dx in f32 or bf16; scale (gamma), shift (beta) and their
// gradients always f32, which is what oneDNN's layer normalization expects of
// bf16 data.
// Algorithm: oneDNN's own (JIT per ISA; not documented), judged under the
//   generic model (Algorithm::kUnknown: the loosest stable algorithm, serial
//   reduction, k = d - 1).
// Accumulation: f32 (oneDNN's documentation for bf16 data).
// Bound: oneDNN's documentation gives the formulas of docs/DESIGN.md §1 (biased
//   variance, eps inside the square root) and claims no error bound; we hold
//   it to the generic bound and record what it breaks in
//   impls/thirdparty/baselines/.
// Valid range: none claimed; judged over the full finite range.
//
// The adapter's own arithmetic, kept out of the kernel's verdict where it can
// be:
//   * oneDNN outputs the variance, the ABI rstd: rstd = 1/sqrt(var + eps) in
//     float (two correctly rounded operations, what oneDNN computes inside).
//   * The backward needs oneDNN's variance, not an rstd to invert (1/rstd^2 -
//     eps cancels when var << eps): it runs the forward again on x to get the
//     mean and variance that oneDNN's forward produced (deterministic), as a
//     framework would keep them; args->mean and args->rstd are not read.
//   * A NULL gamma is passed as scale = 1 when dgamma is wanted (and omitted
//     otherwise); a NULL beta omits the shift.
#ifndef LNV_IMPLS_THIRDPARTY_ONEDNN_LAYER_NORM_H_
#define LNV_IMPLS_THIRDPARTY_ONEDNN_LAYER_NORM_H_

#include "impls/api.h"

namespace lnv::thirdparty {

// Return codes (the ABI fixes only 0 = success).
inline constexpr int kOneDnnInvalidArgs = 1;   // NULL required pointer, d < 1, rows < 0
inline constexpr int kOneDnnLibraryError = 2;  // oneDNN threw (e.g. no implementation)

template <DType kX>
int OneDnnLayerNormForward(const ForwardArgs* args);
template <DType kX>
int OneDnnLayerNormBackward(const BackwardArgs* args);

// Whether oneDNN can create the primitives for kX on this CPU (bf16 needs
// AVX-512 or newer in oneDNN 2.6).
bool OneDnnSupports(DType x_dtype);

}  // namespace lnv::thirdparty

#endif  // LNV_IMPLS_THIRDPARTY_ONEDNN_LAYER_NORM_H_

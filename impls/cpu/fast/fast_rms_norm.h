// Fast RMSNorm: SIMD over the row, OpenMP over rows; forward and backward
// (dx, dgamma) for fp32, bf16 and fp16 storage with fp32 accumulation.
//
// Algorithm: ms = sum(x^2) / d, the sum in the tree shape of
//   reduction_shape.h; rstd = 1 / sqrt(ms + eps), fp32 division and square
//   root; y = gamma * (x * rstd) (an absent gamma is skipped). No mean, no
//   beta: `mean` is never written and a beta is an invalid argument.
// SIMD and threads: as fast_layer_norm.h (Highway per target: AVX-512, AVX2,
//   scalar; OpenMP over rows, driver.h); registry names
//   `<dtype>/rms_tree/cpu-fast-<target>`.
// Accumulation: fp32. Loads are exact; y and dx are rounded once (RNE) into
//   the storage dtype; rstd is the fp32 value the kernel used (row_scaling.h
//   for a rescaled row).
// Backward: xhat = x * rstd from the stored rstd (or the forward's when it
//   is not passed); b = mean(g * xhat), g = dy * gamma, in the tree shape;
//   dx = rstd * (g - xhat * b), the bracket one FMA. dgamma = sum_rows dy *
//   xhat in fp32 per row block, merged in a fixed tree and rounded once:
//   deterministic and bitwise independent of the thread count (driver.h).
//   dbeta must be NULL.
// Claimed bound: the harness's sum-of-squares model with a tree reduction,
//   chunk = kStepsPerBlock = 8: k = min(d - 1, 8 + ceil(log2(ceil(d / 8))))
//   (Higham, ASNA 2nd ed. §4.2: nonnegative terms, relative error at most
//   gamma_{k+2}); reduction_shape.h shows the kernel's chain is within it.
// Valid range: every finite input (max_row_sumsq = +inf): rows whose fp32
//   sum of squares overflows are recomputed on x scaled by a power of two
//   (row_scaling.h); d < 2^43. Rows holding NaN or +-inf give NaN rows.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_FAST_FAST_RMS_NORM_H_
#define LNV_IMPLS_CPU_FAST_FAST_RMS_NORM_H_

#include "impls/cpu/fast/targets.h"
#include "impls/registry.h"

namespace lnv::fast {

// The registry entry of this kernel for one target and storage dtype.
ImplInfo FastRmsNormImpl(const TargetKernels& target, DType dtype);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_FAST_RMS_NORM_H_

// Fast LayerNorm: SIMD over the row, OpenMP over rows; forward and backward
// (dx, dgamma, dbeta) for fp32, bf16 and fp16 storage with fp32 accumulation.
//
// Algorithm: two-pass. mean = sum(x) / d; var = sum((x - mean)^2) / d; both
//   sums in the tree shape of reduction_shape.h (columns of 8 vectors, 8
//   serial terms per column and block, blocks merged pairwise, then the
//   accumulators and lanes pairwise); rstd = 1 / sqrt(var + eps), fp32
//   division and square root; xhat = (x - mean) * rstd; y = gamma * xhat +
//   beta with one FMA (an absent gamma or beta is skipped). fp32 rows of
//   16 KiB and more go two at a time, and the pass that writes a pair's y
//   also computes the next pair's sum(x), in the same shape and so to the
//   same bits (memory reads and writes then overlap), except in calls that
//   stream y; other rows go one at a time, their deviations' pass
//   prefetching the next row. Every row gives the bits it gives alone (tested; a NaN's sign and
//   payload aside, which IEEE 754 leaves open and the compiler's operand order decides). bf16 rows
//   on the SIMD targets go two at a time (rescaled rows one at a time) through each pass (two
//   independent chains of sums, one write pass for both; the next two rows prefetched into L2, the
//   first in the deviations' pass and the second in the write) and write y from pairs of vectors
//   held in 32-bit lanes, gamma and beta read as bf16 (the same operations on the same values: the
//   same bits). Throughput and what was measured: bench/README.md.
// SIMD: Google Highway (Debian's libhwy 1.0.3), compiled per target in one
//   source: AVX-512, AVX2 and Highway's scalar fallback (SSE4/SSSE3 are not
//   built: AVX2 covers every x86-64 CPU of the last decade). Highway rather
//   than intrinsics: one source for every target, runtime detection, and
//   fp16 conversions through F16C. What it lacks, a rounding bf16 demotion,
//   is written here (simd_row-inl.h), and every conversion path is checked
//   against the oracle. The registry lists one entry per target the CPU
//   supports (`<dtype>/two_pass_tree/cpu-fast-avx512`, `-avx2`, `-scalar`),
//   so every path the machine can run is judged. Beside them, on a CPU with
//   AVX512_BF16, the native bf16 entry (avx512bf16_layer_norm.h), whose
//   backward is this one with dx's lines rounded by the CPU's instruction.
// Threads: OpenMP over rows; driver.h says how the work is split.
// Accumulation: fp32. Loads are exact; y and dx are rounded once (RNE) into
//   the storage dtype; mean/rstd are the fp32 values the kernel used (for a
//   rescaled row, exactly scaled back: row_scaling.h).
// Backward: g = dy * gamma; a = mean(g) and b = mean(g * xhat) in one pass
//   over the row, both in the same tree shape, xhat recomputed from the
//   stored mean/rstd (or from the forward's statistics when they are not
//   passed); dx = rstd * ((g - a) - xhat * b), the bracket one FMA. The
//   pass that writes dx takes two rows at a time and adds both rows into
//   the partial sums below in row order (the same bits as one at a time).
//   dgamma = sum_rows dy * xhat and dbeta = sum_rows dy in fp32 (never in
//   bf16/fp16), per row block, merged in a fixed tree, rounded once into the
//   param dtype: deterministic, and bitwise independent of the thread count
//   (driver.h). The tree is merged in pieces as the rows are done; two or
//   four one-row blocks that form a subtree of it go through one pass,
//   their sum added in registers as the tree adds it (partials.h for the
//   tree; fast_layer_norm.cc, SubtreeSum).
// Claimed bound: the harness's two-pass model with a tree reduction, chunk =
//   kStepsPerBlock = 8: longest rounding chain k = min(d - 1, 8 +
//   ceil(log2(ceil(d / 8)))), e.g. 15 at d = 768 and 17 at d = 4096, where
//   the serial model has d - 1 (Chan, Golub & LeVeque 1983; Higham, ASNA 2nd
//   ed. §4.2). reduction_shape.h derives that the kernel's real chain is
//   within it, and its test checks every d up to 2^17.
// Valid range: every finite input (max_row_sumsq = +inf). Rows whose fp32 sum
//   of squares (or var + eps) overflows are recomputed on x scaled by a power
//   of two (row_scaling.h says how, and why that is exact); d < 2^43. Rows
//   holding NaN or +-inf give NaN rows.
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_CPU_FAST_FAST_LAYER_NORM_H_
#define LNV_IMPLS_CPU_FAST_FAST_LAYER_NORM_H_

#include "impls/cpu/fast/targets.h"
#include "impls/registry.h"

namespace lnv::fast {

// The registry entry of this kernel for one target and storage dtype.
ImplInfo FastLayerNormImpl(const TargetKernels& target, DType dtype);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_FAST_LAYER_NORM_H_

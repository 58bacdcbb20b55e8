// Native AVX512_BF16 LayerNorm for bf16 storage: the forward is the fast
// kernel's algorithm with hand-written AVX-512 intrinsics, rounding y with
// the CPU's bf16 conversion (vcvtne2ps2bf16); the backward is the Highway
// one storing dx with the same instruction (below). One more registry entry
// beside the Highway ones: `bf16/two_pass_tree/cpu-fast-avx512bf16`, listed
// only on a CPU with AVX512_BF16 (and Highway's AVX-512 target, which it
// falls back on). Debian's Highway 1.0.3 has no target with native bf16, so
// the forward is a function with __attribute__((target(...))) and the
// backward's stores inline assembly, chosen at run time from cpuid.
//
// Algorithm: two-pass, as fast_layer_norm.h. mean = sum(x) / d; var =
//   sum((x - mean)^2) / d, both sums in the tree shape of reduction_shape.h
//   (16 lanes, 8 accumulators, blocks of 8 steps), blocks merged in the tree
//   of the Highway kernels' binary counter (depth ceil(log2(blocks))),
//   accumulators pairwise, lanes by folding halves; rstd =
//   1 / sqrt(var + eps) in fp32; y = gamma * ((x - mean) * rstd) + beta, one
//   FMA. Rows go two at a time (two independent chains of sums, one write
//   pass sharing gamma's and beta's loads); in calls whose rows fit in a
//   core's L2, with rows of up to a twelfth of its L1d, a pair's write pass
//   follows the next pair's sums, so that the pair's last reductions overlap
//   other work (InterleavesNextSums). x widened from bf16 in each pass
//   (loads exact) as the even and odd elements of 32 (one shift or mask
//   each, no widening shuffle). The sums keep those in pairs of
//   accumulators whose lanes are the tree shape's columns in another order
//   (the same terms in the same order: the same bits), put back once per
//   block; the write interleaves the converted halves with one word
//   permutation.
// Stores: ordinary, except in calls whose rows (x and y) outgrow the
//   streaming footprint, under the Highway bf16 forward's rule (driver.h:
//   UseStreamingStoresForSpreadWrites for two rows written in one pass,
//   UseStreamingStores for a row written alone; rows of at least
//   kMinStreamedRowBytes), unless they are the calls below that prefetch y
//   for writing: those never stream (measured faster past the cache,
//   Avx512Bf16PrefetchesOutputs). Where a call streams, the whole 64-byte
//   lines of y go out with non-temporal stores, after an aligning head (two
//   rows together only when they start at the same offset within a line);
//   partial lines use ordinary stores. The stores never change a bit.
// Prefetches: the next two rows' x into L2, the first while these rows'
//   deviations are summed and the second while they are written; in calls
//   that outgrow a core's L2 with short rows (Avx512Bf16PrefetchesOutputs),
//   into L1 a row per pass (the first while these rows are summed, the
//   second while their deviations are), and the next rows' y for writing
//   (driver.h, PrefetchOutputsForWriting), within the thread's item, while
//   these rows are written.
// Accumulation: fp32. y rounded once into bf16 by vcvtne2ps2bf16, which is
//   round-to-nearest-even for normal, zero, infinite and NaN (quieted)
//   values, but turns an fp32 subnormal into a signed zero (measured on an
//   AMD EPYC with AVX512_BF16: 0x000ae398 gives 0x0000 where RNE gives
//   0x000b). Pairs of vectors holding a subnormal (vfpclassps) are therefore
//   rounded again in integer arithmetic (RNE, NaN quieted), so every y is
//   RNE. mean/rstd are the fp32 values the kernel used.
// Rows whose var + eps is not finite (overflowed sums, NaN or +-inf in x):
//   that row is computed by the Highway AVX-512 bf16 forward
//   (`bf16/two_pass_tree/cpu-fast-avx512`), which rescales finite rows
//   (row_scaling.h) and gives NaN rows for non-finite ones.
// Backward: the Highway AVX-512 bf16 backward (fast_layer_norm.h), with dx's
//   whole 64-byte lines (32 values) rounded by vcvtne2ps2bf16 rather than
//   in integers (simd_row-inl.h, Bf16LineNative; a line with a +-0 result,
//   which is also what the instruction makes of an fp32 subnormal, is
//   rounded in integers). Partial lines, dgamma and dbeta round as the
//   Highway kernel's. Fewer vector operations a line; the gain measured
//   (bench/README.md) is at d = 768 in L2, none at d = 4096.
// Threads: OpenMP over rows through driver.h; each row is computed by itself,
//   so the bits do not depend on the thread count.
// Claimed bound: as fast_layer_norm.h, tree model with chunk = kStepsPerBlock:
//   longest rounding chain k = min(d - 1, 8 + ceil(log2(ceil(d / 8)))).
// Valid range: every finite input (max_row_sumsq = +inf), through the
//   fallback above; d < 2^43. Backward: as fast_layer_norm.h.
// Bits: the same reduction shape and arithmetic as the Highway AVX-512 bf16
//   kernel, so the same y, mean and rstd bits, and the same dx, dgamma and
//   dbeta (avx512bf16_layer_norm_test.cc checks every row length class,
//   subnormal results, the fallback rows and streamed calls with y at every
//   offset within a line; and the backward's row lengths, row blocks,
//   subnormal, zero and non-finite dx, and streamed dx).
#ifndef LNV_IMPLS_CPU_FAST_AVX512BF16_LAYER_NORM_H_
#define LNV_IMPLS_CPU_FAST_AVX512BF16_LAYER_NORM_H_

#include <cstdint>

#include "impls/api.h"
#include "impls/registry.h"

namespace lnv::fast {

// True when this CPU runs the kernel (AVX512_BF16 and Highway's AVX-512
// target).
bool HaveAvx512Bf16LayerNorm();

// The ABI forward (bf16 storage only). Call only when the above is true.
int Avx512Bf16LayerNormForward(const ForwardArgs* args);

// How many rows the kernel has written with streaming stores since the
// program started (every thread, every call): for the tests, which force
// streaming (driver.h, SetStreamingFootprintBytesForTest) and check that it
// happened.
std::int64_t Avx512Bf16StreamedRowsForTest();

// Whether a call of `footprint_bytes` (x and y) with rows of `row_bytes`
// prefetches the next rows' x into L1 and their y for writing. Such a call
// stores y the ordinary way at every size: it never streams.
bool Avx512Bf16PrefetchesOutputs(std::int64_t footprint_bytes, std::int64_t row_bytes);

// The registry entry. Call only when HaveAvx512Bf16LayerNorm().
ImplInfo Avx512Bf16LayerNormImpl();

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_AVX512BF16_LAYER_NORM_H_

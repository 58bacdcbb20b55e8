// The shape of every row reduction in the fast CPU kernels (the forward's
// sums and the backward's row sums), and the longest rounding chain it has,
// which is what the harness's tree model (harness/bounds.h, ChainLength)
// must cover.
//
// Shape, for a vector of `lanes` floats (16 with AVX-512, 8 with AVX2, 1 for
// the scalar fallback), L = kAccumulators * lanes "columns":
//   1. The row is cut into blocks of kStepsPerBlock * L consecutive elements
//      (the last block may be shorter).
//   2. Within a block, element i goes to column (i - block start) mod L: each
//      column adds at most kStepsPerBlock terms, serially, starting from 0.
//   3. The blocks' column vectors are merged as a binary counter does
//      (pairwise summation: a completed block joins the pending sums of 1,
//      2, 4, ... blocks its count carries into; the pending sums are added
//      smallest first at the end): depth ceil(log2(blocks)).
//   4. The kAccumulators vectors are added pairwise (a0 + a1, a2 + a3, ...,
//      then those pairwise), then the lanes are summed by folding halves (lane j + lane j +
//      lanes/2, and again on the sums): a balanced tree of depth
//      log2(kAccumulators) + log2(lanes) = log2(L).
// A column's first addition is 0 + t, which is exact, so a term sees at most
// (kStepsPerBlock - 1) + ceil(log2(blocks)) + log2(L) roundings. Adding a
// subtree that holds only padding zeros is exact too, so no term sees more
// than d - 1 roundings (each rounding merges it with a disjoint subtree that
// holds another element of the row).
//
// The registry declares Reduction::kTree with chunk = kStepsPerBlock. The
// model's chain is min(d - 1, chunk + ceil(log2(ceil(d / chunk)))); with m =
// ceil(d / chunk) and blocks = ceil(m / L), L * blocks < m + L, which is at
// most 2m when m >= L, so log2(L) + ceil(log2(blocks)) <= 1 + ceil(log2(m)):
// the kernel's chain is at most the model's. For a single block (m < L) the
// test beside this header checks it for every d. Note what the model does NOT
// cover: a plain lane-strided sum (no blocks) has a chain of about d / L,
// which outgrows chunk + log2(d / chunk); the blocks are there for the bound.
#ifndef LNV_IMPLS_CPU_FAST_REDUCTION_SHAPE_H_
#define LNV_IMPLS_CPU_FAST_REDUCTION_SHAPE_H_

#include <cstdint>

namespace lnv::fast {

// Independent vector accumulators: eight hide the add latency (4 cycles)
// at two loads per cycle.
inline constexpr std::int64_t kAccumulators = 8;
// Serial terms per column within a block: the registry's `chunk`.
inline constexpr std::int64_t kStepsPerBlock = 8;

constexpr std::int64_t CeilLog2(std::int64_t n) {
  std::int64_t l = 0;
  while ((std::int64_t{1} << l) < n) ++l;
  return l;
}

// Elements per block for a vector of `lanes` floats.
constexpr std::int64_t BlockElements(std::int64_t lanes) {
  return kStepsPerBlock * kAccumulators * lanes;
}

// The longest rounding chain of a d-term row sum in the shape above, with
// `steps_per_block` serial terms per column (kStepsPerBlock in the kernels;
// other values only for tests).
constexpr std::int64_t FastChainLength(std::int64_t d, std::int64_t lanes,
                                       std::int64_t steps_per_block = kStepsPerBlock) {
  if (d <= 1) return 0;
  const std::int64_t columns = kAccumulators * lanes;
  const std::int64_t block = steps_per_block * columns;
  const std::int64_t blocks = (d + block - 1) / block;
  // The most terms one column takes in one block: a full block gives
  // steps_per_block; a single short block gives ceil(d / columns).
  const std::int64_t longest = blocks > 1 ? steps_per_block : (d + columns - 1) / columns;
  const std::int64_t chain = (longest - 1) + CeilLog2(blocks) + CeilLog2(columns);
  return chain < d - 1 ? chain : d - 1;
}

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_REDUCTION_SHAPE_H_

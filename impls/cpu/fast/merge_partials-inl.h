// The backward's last step, per SIMD target (partials.h, FinishColumnsFn):
// the pieces' fp32 dgamma/dbeta partial sums merged in partials.h's fixed
// tree, several vectors of columns at a time, each array read once, and
// rounded once into the param dtype. Included, after simd_row-inl.h, by the
// Highway translation units that run a backward.
#if defined(LNV_IMPLS_CPU_FAST_MERGE_PARTIALS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LNV_IMPLS_CPU_FAST_MERGE_PARTIALS_INL_H_
#undef LNV_IMPLS_CPU_FAST_MERGE_PARTIALS_INL_H_
#else
#define LNV_IMPLS_CPU_FAST_MERGE_PARTIALS_INL_H_
#endif

#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/simd_row-inl.h"
#include "impls/dtype.h"

HWY_BEFORE_NAMESPACE();
namespace lnv::fast {
namespace HWY_NAMESPACE {

// Vectors of columns merged side by side (independent chains of additions).
inline constexpr int kMergeVectors = 4;
// Levels of the tree: blocks < 2^63.
inline constexpr int kMaxMergeLevels = 64;

// left + right as one x86 addition with `left` as its first operand gives
// it, whatever order the compiler puts the operands in: left's NaN
// (quieted) if left is NaN, else right's, else the sum (inf - inf: the
// default NaN). Every addition of the merge tree goes through it, so which
// NaN a column ends with does not depend on the path that added it (a
// piece, a register, the last merge; that is, on the thread count), and is
// the one MergeColumnsReference's scalar `left += right` gives.
HWY_INLINE VF TreeAdd(VF left, VF right) {
  const DF df;
  const hn::RebindToUnsigned<DF> du;
  const auto quiet = [&](VF v) {
    return hn::BitCast(df, hn::Or(hn::BitCast(du, v), hn::Set(du, 0x00400000u)));
  };
  return hn::IfThenElse(hn::IsNaN(left), quiet(left),
                        hn::IfThenElse(hn::IsNaN(right), quiet(right), hn::Add(left, right)));
}

// kN vectors of columns from i on, of one sum's arrays (block b's at first
// + b * stride), merged in the tree of partials.h. After the rows, the
// arrays of the pieces' first blocks hold the pieces (aligned subtrees); they
// are taken in order as a binary counter takes blocks: a piece of 2^l blocks
// starting at p completes a pair when bit l of p is set, and joins the
// pending left one (left + right), and so on up; at the end the pending
// subtrees (the set bits of `blocks`, larger to the left) are added smallest
// first, each as the right operand of the next larger one. That is the
// level-by-level tree exactly: at each level its last, incomplete subtree is
// its left part plus the rest (MergeColumnsReference).
template <int kN>
HWY_INLINE void MergedColumns(DF df, const Partials& partials, const float* HWY_RESTRICT first,
                              std::int64_t stride, std::int64_t i, VF* out) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  VF pending[kMaxMergeLevels][kN];
  // The pieces in block order (WorkQueue's shares, then PieceBlocks).
  const std::int64_t blocks = partials.blocks;
  for (int s = 0; s < partials.shares; ++s) {
    const std::int64_t end = ShareBegin(blocks, partials.shares, s + 1, partials.max_piece);
    std::int64_t n = 0;
    for (std::int64_t p = ShareBegin(blocks, partials.shares, s, partials.max_piece); p < end;
         p += n) {
      n = PieceBlocks(p, end, partials.max_piece);
      VF c[kN];
      for (int k = 0; k < kN; ++k) c[k] = hn::LoadU(df, first + p * stride + i + k * lanes);
      int level = __builtin_ctzll(static_cast<std::uint64_t>(n));
      for (; (p >> level) & 1; ++level) {
        for (int k = 0; k < kN; ++k) c[k] = TreeAdd(pending[level][k], c[k]);
      }
      for (int k = 0; k < kN; ++k) pending[level][k] = c[k];
    }
  }
  // blocks >= 1: its lowest set bit, then the others.
  auto rest = static_cast<std::uint64_t>(partials.blocks);
  for (int k = 0; k < kN; ++k) out[k] = pending[__builtin_ctzll(rest)][k];
  for (rest &= rest - 1; rest != 0; rest &= rest - 1) {
    const int level = __builtin_ctzll(rest);
    for (int k = 0; k < kN; ++k) out[k] = TreeAdd(pending[level][k], out[k]);
  }
}

// A pass's sum of one vector of columns [i, i + n) (partials.h, SumsInto):
// SumsStart gives in's vector (or zeros), the caller adds the rows' terms,
// SumsFinish adds left[from], left[from + 1], ... and stores (from = 1 or
// 2: the caller added left[0], or left[0] and left[1], from registers: the
// sibling blocks' sum, fast_layer_norm.cc).
HWY_INLINE VF SumsStart(DF df, const SumsInto& s, std::int64_t i, std::int64_t n) {
  return s.in != nullptr ? LoadAt(df, s.in, i, n) : hn::Zero(df);
}
HWY_INLINE void SumsFinish(DF df, const SumsInto& s, VF p, std::int64_t i, std::int64_t n,
                           int from = 0) {
  for (int k = from; k < s.lefts; ++k) p = TreeAdd(LoadAt(df, s.left[k], i, n), p);
  StoreAt(df, p, s.out, i, n);
}

// Lanes [0, n) of v into out[i, i + n), rounded as StoreFromFloat rounds:
// the kernels' vector rounding (RNE, the same bits for every number), and
// StoreFromFloat itself for a vector holding a NaN (its NaN bits).
template <typename T>
HWY_INLINE void StoreParams(DF df, VF v, T* HWY_RESTRICT out, std::int64_t i, std::int64_t n) {
  if constexpr (!kIsF32<T>) {
    if (!hn::AllFalse(df, hn::IsNaN(v))) {
      HWY_ALIGN float lane_values[kMaxLanes];
      hn::Store(v, df, lane_values);
      const DType dtype = kIsBf16<T> ? DType::kBF16 : DType::kF16;
      for (std::int64_t k = 0; k < n; ++k) StoreFromFloat(out, dtype, i + k, lane_values[k]);
      return;
    }
  }
  StoreAt(df, v, out, i, n);
}

// Columns [begin, end) of one partial array family (dgamma's or dbeta's),
// merged and stored into out: kMergeVectors vectors at a time, then one.
// The arrays are PaddedLength(d) long, so a vector that starts before `end`
// is read whole (lanes past `end` are not stored).
template <typename T>
HWY_INLINE void MergeAndStore(DF df, const Partials& partials, const float* HWY_RESTRICT first,
                              T* HWY_RESTRICT out, std::int64_t begin, std::int64_t end) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const std::int64_t stride = partials.Arrays() * partials.padded;
  std::int64_t i = begin;
  for (; i + kMergeVectors * lanes <= end; i += kMergeVectors * lanes) {
    VF merged[kMergeVectors];
    MergedColumns<kMergeVectors>(df, partials, first, stride, i, merged);
    for (int k = 0; k < kMergeVectors; ++k) StoreParams(df, merged[k], out, i + k * lanes, lanes);
  }
  for (; i < end; i += lanes) {
    VF merged[1];
    MergedColumns<1>(df, partials, first, stride, i, merged);
    StoreParams(df, merged[0], out, i, std::min(lanes, end - i));
  }
}

// partials.h's FinishColumnsFn for storage (and param) type T.
template <typename T>
void FinishColumns(const BackwardArgs& a, const Partials& partials, std::int64_t begin,
                   std::int64_t end) {
  const DF df;
  if (partials.dgamma) {
    MergeAndStore(df, partials, partials.Dgamma(0), static_cast<T*>(a.dgamma), begin, end);
  }
  if (partials.dbeta) {
    MergeAndStore(df, partials, partials.Dbeta(0), static_cast<T*>(a.dbeta), begin, end);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace lnv::fast
HWY_AFTER_NAMESPACE();

#endif  // include guard (toggled per target)

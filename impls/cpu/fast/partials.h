// The backward's dgamma/dbeta partial sums (driver.h says why they are
// bitwise independent of the thread count).
//
// Each of the call's `blocks` row blocks has an fp32 array per wanted sum
// (dgamma's, dbeta's) of PaddedLength(d) floats. The merge tree over the
// blocks is fixed: level by level, block b absorbs block b + step (left +
// right; step = 1, 2, 4, ...), so the subtree of 2^k blocks starting at
// block s (s a multiple of 2^k) ends up in s's arrays. MergeColumnsReference
// is that definition, in plain C++.
//
// The work is handed out in pieces (driver.h, PieceBlocks): aligned subtrees
// of up to kMaxPieceBlocks blocks. The thread that takes a piece merges it
// as it goes, while each block's last rows are still in registers
// (Partials::Into): a block that completes an aligned pair of subtrees adds
// the left one to itself (left + right, as the tree does) and stores the
// sum where the pair starts. After the rows only one array per piece and
// sum is left, and FinishColumnsFn merges the pieces the same way (each an
// aligned subtree). The tree, and so every bit, is the same for every piece
// size; the pieces only cut the number of arrays the last merge reads.
#ifndef LNV_IMPLS_CPU_FAST_PARTIALS_H_
#define LNV_IMPLS_CPU_FAST_PARTIALS_H_

#include <cstdint>

#include "impls/api.h"

namespace lnv::fast {

// d rounded up to a multiple of 16 floats (the widest vector): partial arrays
// are read and written in whole vectors.
constexpr std::int64_t PaddedLength(std::int64_t d) { return (d + 15) / 16 * 16; }

// The largest piece: a piece's last block merges at most log2 of it levels.
inline constexpr std::int64_t kMaxPieceBlocks = 8;
inline constexpr int kMaxCarries = 3;
static_assert(std::int64_t{1} << kMaxCarries == kMaxPieceBlocks);

// Where one pass over rows of a block puts one sum's terms: (in, or zeros
// when the pass holds the block's first rows) + the rows' terms in row
// order, then + left[0], + left[1], ... (each the left operand), stored to
// out. out == nullptr: the sum is not wanted. out may be in or left's last.
struct SumsInto {
  const float* in = nullptr;
  const float* left[kMaxCarries] = {};
  int lefts = 0;
  float* out = nullptr;
};

struct WorkItem;

// The partial arrays of a call (not zeroed: a block's first pass adds its
// terms to zeros, SumsInto::in), and how its blocks were handed out.
struct Partials {
  float* base = nullptr;
  std::int64_t padded = 0;
  bool dgamma = false;
  bool dbeta = false;
  std::int64_t blocks = 0;
  int shares = 1;              // WorkQueue's
  std::int64_t max_piece = 1;  // WorkQueue's

  std::int64_t Arrays() const { return (dgamma ? 1 : 0) + (dbeta ? 1 : 0); }
  float* Dgamma(std::int64_t block) const {
    return dgamma ? base + block * Arrays() * padded : nullptr;
  }
  float* Dbeta(std::int64_t block) const {
    return dbeta ? base + (block * Arrays() + (dgamma ? 1 : 0)) * padded : nullptr;
  }
  // For a pass over rows of block b of `item` (a piece): `first`, it holds
  // the block's first row; `last`, its last.
  SumsInto DgammaInto(const WorkItem& item, std::int64_t b, bool first, bool last) const;
  SumsInto DbetaInto(const WorkItem& item, std::int64_t b, bool first, bool last) const;
};

// The backward's last step for columns [begin, end) (begin a multiple of
// kFinishColumns): merges the pieces' partials in the tree above and stores
// them into args.dgamma / args.dbeta, rounded once into the param dtype as
// impls/dtype.h's StoreFromFloat rounds.
using FinishColumnsFn = void (*)(const BackwardArgs& args, const Partials& partials,
                                 std::int64_t begin, std::int64_t end);

// Columns per strip of the last merge (a multiple of 16 floats).
inline constexpr std::int64_t kFinishColumns = 256;

// The tree's definition, one column at a time, for pieces of one block:
// level by level in place in block 0's arrays, then StoreFromFloat into
// `param_dtype`. The per-target FinishColumnsFn with larger pieces give the
// same bits (the tests compare them).
void MergeColumnsReference(const BackwardArgs& args, const Partials& partials, DType param_dtype,
                           std::int64_t begin, std::int64_t end);

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_PARTIALS_H_

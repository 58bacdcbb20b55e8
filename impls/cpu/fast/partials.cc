#include "impls/cpu/fast/partials.h"

#include <cassert>

#include "impls/cpu/fast/driver.h"
#include "impls/dtype.h"

namespace lnv::fast {
namespace {

// SumsInto for one sum, whose array of block b is array(b). Block b sits at
// p = b - item.block_begin in its piece (an aligned subtree, so the last
// block's p is all ones). The subtrees pending before it are the set bits of
// p (level l: 2^l blocks from p with bits 0..l cleared); its last pass
// merges those of p's trailing one bits, the pairs it completes, smallest
// first, and stores the sum where the last of them starts.
template <typename Array>
SumsInto Into(const Array& array, const WorkItem& item, std::int64_t b, bool first, bool last) {
  SumsInto s;
  s.out = array(b);
  if (s.out == nullptr) return s;
  s.in = first ? nullptr : s.out;
  if (!last) return s;
  const std::int64_t p = b - item.block_begin;
  int l = 0;
  for (; (p >> l) & 1; ++l) {
    assert(s.lefts < kMaxCarries);
    s.left[s.lefts++] = array(item.block_begin + ((p >> (l + 1)) << (l + 1)));
  }
  s.out = array(item.block_begin + ((p >> l) << l));
  return s;
}

}  // namespace

SumsInto Partials::DgammaInto(const WorkItem& item, std::int64_t b, bool first, bool last) const {
  return Into([this](std::int64_t k) { return Dgamma(k); }, item, b, first, last);
}

SumsInto Partials::DbetaInto(const WorkItem& item, std::int64_t b, bool first, bool last) const {
  return Into([this](std::int64_t k) { return Dbeta(k); }, item, b, first, last);
}

void MergeColumnsReference(const BackwardArgs& args, const Partials& partials, DType param_dtype,
                           std::int64_t begin, std::int64_t end) {
  for (std::int64_t step = 1; step < partials.blocks; step *= 2) {
    for (std::int64_t b = 0; b + step < partials.blocks; b += 2 * step) {
      if (float* dg = partials.Dgamma(b)) {
        const float* other = partials.Dgamma(b + step);
        for (std::int64_t j = begin; j < end; ++j) dg[j] += other[j];
      }
      if (float* db = partials.Dbeta(b)) {
        const float* other = partials.Dbeta(b + step);
        for (std::int64_t j = begin; j < end; ++j) db[j] += other[j];
      }
    }
  }
  // Rounded once into the param dtype (impls/dtype.h: Eigen, RNE).
  for (std::int64_t j = begin; j < end; ++j) {
    if (partials.dgamma) StoreFromFloat(args.dgamma, param_dtype, j, partials.Dgamma(0)[j]);
    if (partials.dbeta) StoreFromFloat(args.dbeta, param_dtype, j, partials.Dbeta(0)[j]);
  }
}

}  // namespace lnv::fast

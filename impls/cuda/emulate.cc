#include "impls/cuda/emulate.h"

#include <cstdint>
#include <new>
#include <vector>

#include "impls/cuda/args.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_ops.h"
#include "impls/cuda/storage_for.h"

namespace lnv::cuda {
namespace {

// Granule access on the host: element by element (the GPU's vector accesses
// move the same values).
struct HostMemory {
  template <typename S>
  static int Load(const typename S::Bits* base, std::int64_t g, std::int64_t d, float* v) {
    const std::int64_t begin = g * S::kGranule;
    const int n = static_cast<int>(MinI64(S::kGranule, d - begin));
    for (int k = 0; k < n; ++k) v[k] = S::ToFloat(base[begin + k]);
    return n;
  }
  template <typename S>
  static void Store(typename S::Bits* base, std::int64_t g, std::int64_t d, const float* v) {
    const std::int64_t begin = g * S::kGranule;
    const int n = static_cast<int>(MinI64(S::kGranule, d - begin));
    for (int k = 0; k < n; ++k) base[begin + k] = S::FromFloat(v[k]);
  }
};

template <typename S>
RowRefs<S> RowAt(const void* x, const void* gamma, const void* beta, const void* dy, void* out,
                 std::int64_t r, std::int64_t d) {
  using Bits = typename S::Bits;
  RowRefs<S> row;
  const std::int64_t off = r * d;
  row.x = static_cast<const Bits*>(x) + off;
  row.gamma = static_cast<const Bits*>(gamma);
  row.beta = static_cast<const Bits*>(beta);
  row.dy = dy != nullptr ? static_cast<const Bits*>(dy) + off : nullptr;
  row.out = static_cast<Bits*>(out) + off;
  row.d = d;
  return row;
}

}  // namespace

template <DType kX, Norm kNorm>
int EmulatedForward(const ForwardArgs* a) {
  using S = StorageFor<kX>;
  using N = PolicyFor<kNorm>;
  if (const int rc = CheckForward(a, kNorm); rc != kOk) return rc;
  const std::int64_t d = a->d;
  const int lanes = LanesPerRow(d);
  try {
    std::vector<typename N::State> state(static_cast<std::size_t>(lanes));
    std::vector<SumPairState> centered(N::kLayer ? static_cast<std::size_t>(lanes) : 0);
    for (std::int64_t r = 0; r < a->rows; ++r) {
      const RowRefs<S> row = RowAt<S>(a->x, a->gamma, a->beta, nullptr, a->y, r, d);
      for (int l = 0; l < lanes; ++l) state[l] = LaneStats<S, N, HostMemory>(row, l, lanes);
      const typename N::State total = EmulateRowTree(state.data(), lanes);
      RowStatsF st = N::Finish(total, d, a->eps);
      if constexpr (N::kLayer) {
        if (N::NeedsCenteredPass(total, d)) {
          for (int l = 0; l < lanes; ++l) {
            centered[l] = LaneCenteredSums<S, HostMemory>(row, l, lanes, total.mean);
          }
          st = N::FinishCentered(total, EmulateRowTree(centered.data(), lanes), d, a->eps);
        }
      }
      for (int l = 0; l < lanes; ++l) LaneForwardOutput<S, N, HostMemory>(row, l, lanes, st);
      if (N::kLayer && a->mean != nullptr) a->mean[r] = CanonicalF32(st.mean);
      if (a->rstd != nullptr) a->rstd[r] = CanonicalF32(st.rstd);
    }
  } catch (const std::bad_alloc&) {
    return kOutOfMemory;
  }
  return kOk;
}

template <DType kX, Norm kNorm>
int EmulatedBackward(const BackwardArgs* a) {
  using S = StorageFor<kX>;
  using N = PolicyFor<kNorm>;
  if (const int rc = CheckBackward(a, kNorm); rc != kOk) return rc;
  const std::int64_t d = a->d, rows = a->rows;
  const int lanes = LanesPerRow(d);
  try {
    std::vector<SumPairState> sums(static_cast<std::size_t>(lanes));
    for (std::int64_t r = 0; r < rows; ++r) {
      const RowRefs<S> row = RowAt<S>(a->x, a->gamma, nullptr, a->dy, a->dx, r, d);
      const RowStatsF st{N::kLayer ? a->mean[r] : 0.0f, a->rstd[r]};
      for (int l = 0; l < lanes; ++l)
        sums[l] = LaneBackwardSums<S, N, HostMemory>(row, l, lanes, st);
      const SumPairState ab = BackwardMeans(EmulateRowTree(sums.data(), lanes), d);
      for (int l = 0; l < lanes; ++l) LaneDx<S, N, HostMemory>(row, l, lanes, st, ab);
    }
    if (a->dgamma == nullptr && a->dbeta == nullptr) return kOk;
    // The partial kernel's grid: chunk c of rows, column j (any order: each
    // partial is its own serial sum); then the second kernel.
    const std::int64_t chunks = ParamChunks(rows), chunk_rows = ParamChunkRows(rows);
    std::vector<float> pg(static_cast<std::size_t>(chunks * d)), pb(pg.size());
    using Bits = typename S::Bits;
    const auto* x = static_cast<const Bits*>(a->x);
    const auto* dy = static_cast<const Bits*>(a->dy);
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t r0 = c * chunk_rows, r1 = MinI64(rows, r0 + chunk_rows);
      for (std::int64_t j = 0; j < d; ++j) {
        const ColumnPartial p = ParamPartialColumn<S, N>(x, dy, a->mean, a->rstd, d, j, r0, r1);
        pg[c * d + j] = p.dgamma;
        pb[c * d + j] = p.dbeta;
      }
    }
    for (std::int64_t j = 0; j < d; ++j) {
      if (a->dgamma != nullptr) {
        static_cast<Bits*>(a->dgamma)[j] = S::FromFloat(SumPartials(pg.data(), chunks, d, j));
      }
      if (a->dbeta != nullptr) {
        static_cast<Bits*>(a->dbeta)[j] = S::FromFloat(SumPartials(pb.data(), chunks, d, j));
      }
    }
  } catch (const std::bad_alloc&) {
    return kOutOfMemory;
  }
  return kOk;
}

#define LNV_CUDA_EMULATE_INSTANTIATE(kX)                                    \
  template int EmulatedForward<kX, Norm::kLayerNorm>(const ForwardArgs*);   \
  template int EmulatedForward<kX, Norm::kRmsNorm>(const ForwardArgs*);     \
  template int EmulatedBackward<kX, Norm::kLayerNorm>(const BackwardArgs*); \
  template int EmulatedBackward<kX, Norm::kRmsNorm>(const BackwardArgs*)

LNV_CUDA_EMULATE_INSTANTIATE(DType::kF32);
LNV_CUDA_EMULATE_INSTANTIATE(DType::kBF16);
LNV_CUDA_EMULATE_INSTANTIATE(DType::kF16);

}  // namespace lnv::cuda

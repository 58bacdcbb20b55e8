// Shared machinery of the scalar CPU reference kernels (impls/cpu/*.cc):
// storage access, the three reduction shapes (serial, Kahan, chunked tree),
// and one forward and one backward driver that every algorithm plugs its row
// statistics into. Each algorithm is written once, as a policy struct, and
// instantiated for every storage dtype by LNV_CPU_SCALAR_INSTANTIATE.
//
// Arithmetic contract (the bound models count these roundings, so keep them):
//   * Storage f32/bf16/f16 accumulates in float, f64 in double (AccFor).
//     Loads are exact; every output is rounded once from the accumulation
//     type into its dtype through impls/dtype.h (round-to-nearest-even).
//   * rstd = 1 / sqrt(var + eps): two correctly rounded operations, eps
//     converted (exactly) to the accumulation type.
//   * y = gamma * xhat + beta in the accumulation type; an absent gamma or
//     beta is skipped, not multiplied by 1 or added as 0.
//   * No FMA contraction (the project compiles with -ffp-contract=off).
//
// This header is private to impls/cpu: include it only from kernel .cc files.
#ifndef LNV_IMPLS_CPU_SCALAR_COMMON_H_
#define LNV_IMPLS_CPU_SCALAR_COMMON_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <type_traits>
#include <vector>

#include "impls/api.h"
#include "impls/dtype.h"

namespace lnv::cpu {

// Return codes of every scalar kernel (the ABI only fixes 0 = success).
inline constexpr int kOk = 0;
inline constexpr int kInvalidArgs = 1;  // null required pointer, d < 1, rows < 0, ...
inline constexpr int kOutOfMemory = 2;  // scratch allocation failed

template <DType kX>
using AccFor = std::conditional_t<kX == DType::kF64, double, float>;

// Storage access for dtype kX, through impls/dtype.h only. kX is a constant,
// so the dtype switch inside dtype.h folds away.
template <DType kX>
struct Storage {
  using Acc = AccFor<kX>;
  static Acc Load(const void* base, std::int64_t i) {
    if constexpr (std::is_same_v<Acc, double>) {
      return LoadAsDouble(base, kX, i);
    } else {
      return LoadAsFloat(base, kX, i);  // exact: kX is f32, bf16 or f16
    }
  }
  // Rounds v once (RNE) into kX.
  static void Store(void* base, std::int64_t i, Acc v) {
    if constexpr (kX == DType::kF64) {
      StoreExact(base, kX, i, v);  // a double is exact in f64: no rounding
    } else {
      StoreFromFloat(base, kX, i, v);
    }
  }
};

// ---- Reduction shapes. `term(i)` yields the i-th addend in Acc. ----

// Left to right: the longest rounding chain is k = n - 1.
template <typename Acc, typename Term>
Acc SerialSum(std::int64_t begin, std::int64_t end, Term term) {
  Acc s = 0;
  for (std::int64_t i = begin; i < end; ++i) s = s + term(i);
  return s;
}

// Kahan's compensated summation, left to right. Relies on no reassociation
// and no FMA contraction of `(t - s) - y`, which the build guarantees.
template <typename Acc, typename Term>
Acc KahanSum(std::int64_t n, Term term) {
  Acc s = 0;
  Acc c = 0;  // running compensation: the low part lost by the last addition
  for (std::int64_t i = 0; i < n; ++i) {
    const Acc y = term(i) - c;
    const Acc t = s + y;
    c = (t - s) - y;
    s = t;
  }
  return s;
}

// Reduces the leaves [lo, hi) in a balanced binary tree: depth
// ceil(log2(hi - lo)), which is what the tree bound model counts.
template <typename T, typename Leaf, typename Merge>
T PairwiseReduce(std::int64_t lo, std::int64_t hi, const Leaf& leaf, const Merge& merge) {
  if (hi - lo == 1) return leaf(lo);
  const std::int64_t mid = lo + (hi - lo + 1) / 2;
  return merge(PairwiseReduce<T>(lo, mid, leaf, merge), PairwiseReduce<T>(mid, hi, leaf, merge));
}

inline std::int64_t NumChunks(std::int64_t n, std::int64_t chunk) {
  return (n + chunk - 1) / chunk;
}

// Serial sums within chunks of `chunk`, chunk sums merged pairwise:
// k = chunk - 1 + ceil(log2(parts)) <= chunk + ceil(log2(parts)).
template <typename Acc, typename Term>
Acc TreeSum(std::int64_t n, std::int64_t chunk, Term term) {
  const auto leaf = [&](std::int64_t c) {
    const std::int64_t begin = c * chunk;
    const std::int64_t end = begin + chunk < n ? begin + chunk : n;
    return SerialSum<Acc>(begin, end, term);
  };
  const auto merge = [](Acc a, Acc b) { return a + b; };
  return PairwiseReduce<Acc>(0, NumChunks(n, chunk), leaf, merge);
}

// Row statistics: for LayerNorm the mean and biased variance; for RMSNorm
// `mean` is unused (0) and `var` is the mean square.
template <typename Acc>
struct RowStats {
  Acc mean = 0;
  Acc var = 0;
};

// An algorithm policy provides:
//   static constexpr Norm kNorm;
//   template <typename Acc, typename X> static RowStats<Acc> Stats(int64_t d, const X& x);
//   template <typename Acc, typename T> static Acc Sum(int64_t d, const T& term);
// where x(i) loads element i of the row in Acc, Stats computes the forward's
// statistics and Sum is the same reduction shape, used for the backward's
// sums over the row.

// rstd = 1/sqrt(var + eps). A row holding +-inf has an infinite sum of
// squares, which would give rstd = 0 and finite outputs; the contract is a NaN
// row (LayerNorm gets there by itself: inf - inf). Within the valid range var
// is finite, so only non-finite inputs take this branch.
template <typename Acc>
Acc RowRstd(Acc var, Acc eps) {
  if (!std::isfinite(var)) return std::numeric_limits<Acc>::quiet_NaN();
  return Acc(1) / std::sqrt(var + eps);
}

inline bool ShapeIsValid(std::int64_t rows, std::int64_t d) {
  if (d < 1 || rows < 0) return false;
  return rows <= std::numeric_limits<std::int64_t>::max() / d;  // rows * d must not overflow
}

template <DType kX, typename Algo>
int NormForward(const ForwardArgs* args) {
  using S = Storage<kX>;
  using Acc = typename S::Acc;
  constexpr bool kLayer = Algo::kNorm == Norm::kLayerNorm;
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->y == nullptr) {
    return kInvalidArgs;
  }
  if (!kLayer && args->beta != nullptr) return kInvalidArgs;  // RMSNorm has no beta (ABI)
  const std::int64_t d = args->d;
  const Acc eps = static_cast<Acc>(args->eps);
  for (std::int64_t r = 0; r < args->rows; ++r) {
    const std::int64_t off = r * d;
    const auto x = [&](std::int64_t i) { return S::Load(args->x, off + i); };
    const RowStats<Acc> st = Algo::template Stats<Acc>(d, x);
    const Acc mean = kLayer ? st.mean : Acc(0);
    const Acc rstd = RowRstd<Acc>(st.var, eps);
    for (std::int64_t i = 0; i < d; ++i) {
      const Acc xhat = kLayer ? (x(i) - mean) * rstd : x(i) * rstd;
      Acc v = args->gamma != nullptr ? S::Load(args->gamma, i) * xhat : xhat;
      if (args->beta != nullptr) v = v + S::Load(args->beta, i);
      S::Store(args->y, off + i, v);
    }
    if (kLayer && args->mean != nullptr) args->mean[r] = static_cast<float>(mean);
    if (args->rstd != nullptr) args->rstd[r] = static_cast<float>(rstd);
  }
  return kOk;
}

// Backward. The row's mean/rstd come from the ABI's float arrays when the
// accumulation type is float (they are exactly what the forward computed);
// an fp64 kernel, or a call without them, recomputes them from x with the
// forward's own Stats, since float statistics would ruin an fp64 result.
template <DType kX, typename Algo>
int NormBackward(const BackwardArgs* args) {
  using S = Storage<kX>;
  using Acc = typename S::Acc;
  constexpr bool kLayer = Algo::kNorm == Norm::kLayerNorm;
  if (args == nullptr || !ShapeIsValid(args->rows, args->d) || args->x == nullptr ||
      args->dy == nullptr || args->dx == nullptr) {
    return kInvalidArgs;
  }
  if (!kLayer && args->dbeta != nullptr) return kInvalidArgs;  // RMSNorm has no beta (ABI)
  const std::int64_t d = args->d;
  const Acc eps = static_cast<Acc>(args->eps);
  const Acc n = static_cast<Acc>(d);
  const bool use_saved =
      std::is_same_v<Acc, float> && args->rstd != nullptr && (!kLayer || args->mean != nullptr);
  try {
    std::vector<Acc> xhat(d), g(d);
    // dgamma/dbeta partials stay in Acc across rows; rounded to the param
    // dtype once at the end (never accumulated in bf16/f16).
    std::vector<Acc> dgamma(args->dgamma != nullptr ? d : 0, Acc(0));
    std::vector<Acc> dbeta(args->dbeta != nullptr ? d : 0, Acc(0));
    for (std::int64_t r = 0; r < args->rows; ++r) {
      const std::int64_t off = r * d;
      const auto x = [&](std::int64_t i) { return S::Load(args->x, off + i); };
      Acc mean = 0;
      Acc rstd = 0;
      if (use_saved) {
        mean = kLayer ? static_cast<Acc>(args->mean[r]) : Acc(0);
        rstd = static_cast<Acc>(args->rstd[r]);
      } else {
        const RowStats<Acc> st = Algo::template Stats<Acc>(d, x);
        mean = kLayer ? st.mean : Acc(0);
        rstd = RowRstd<Acc>(st.var, eps);
      }
      for (std::int64_t i = 0; i < d; ++i) {
        xhat[i] = kLayer ? (x(i) - mean) * rstd : x(i) * rstd;
        const Acc dy = S::Load(args->dy, off + i);
        g[i] = args->gamma != nullptr ? dy * S::Load(args->gamma, i) : dy;
        if (!dgamma.empty()) dgamma[i] = dgamma[i] + dy * xhat[i];
        if (!dbeta.empty()) dbeta[i] = dbeta[i] + dy;
      }
      const Acc a =
          kLayer ? Algo::template Sum<Acc>(d, [&](std::int64_t i) { return g[i]; }) / n : Acc(0);
      const Acc b = Algo::template Sum<Acc>(d, [&](std::int64_t i) { return g[i] * xhat[i]; }) / n;
      for (std::int64_t i = 0; i < d; ++i) {
        const Acc centered = kLayer ? g[i] - a : g[i];
        S::Store(args->dx, off + i, rstd * (centered - xhat[i] * b));
      }
    }
    for (std::size_t j = 0; j < dgamma.size(); ++j) S::Store(args->dgamma, j, dgamma[j]);
    for (std::size_t j = 0; j < dbeta.size(); ++j) S::Store(args->dbeta, j, dbeta[j]);
  } catch (const std::bad_alloc&) {
    return kOutOfMemory;
  }
  return kOk;
}

}  // namespace lnv::cpu

// Defines Kernel::Forward<kX>/Backward<kX> (declared in the kernel's header)
// on top of the policy Algo, for the four storage dtypes.
#define LNV_CPU_SCALAR_INSTANTIATE(Kernel, Algo)                                  \
  template <::lnv::DType kX>                                                      \
  int Kernel::Forward(const ::lnv::ForwardArgs* args) {                           \
    return ::lnv::cpu::NormForward<kX, Algo>(args);                               \
  }                                                                               \
  template <::lnv::DType kX>                                                      \
  int Kernel::Backward(const ::lnv::BackwardArgs* args) {                         \
    return ::lnv::cpu::NormBackward<kX, Algo>(args);                              \
  }                                                                               \
  template int Kernel::Forward<::lnv::DType::kF32>(const ::lnv::ForwardArgs*);    \
  template int Kernel::Forward<::lnv::DType::kBF16>(const ::lnv::ForwardArgs*);   \
  template int Kernel::Forward<::lnv::DType::kF16>(const ::lnv::ForwardArgs*);    \
  template int Kernel::Forward<::lnv::DType::kF64>(const ::lnv::ForwardArgs*);    \
  template int Kernel::Backward<::lnv::DType::kF32>(const ::lnv::BackwardArgs*);  \
  template int Kernel::Backward<::lnv::DType::kBF16>(const ::lnv::BackwardArgs*); \
  template int Kernel::Backward<::lnv::DType::kF16>(const ::lnv::BackwardArgs*);  \
  template int Kernel::Backward<::lnv::DType::kF64>(const ::lnv::BackwardArgs*)

#endif  // LNV_IMPLS_CPU_SCALAR_COMMON_H_

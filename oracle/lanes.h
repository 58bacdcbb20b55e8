// Sums carried in kLanes independent chains (element i of a block of kLanes
// goes to chain i mod kLanes), so that the loops vectorize, and the merge of
// the chains with its error bound. Internal to oracle/.
#ifndef LNV_ORACLE_LANES_H_
#define LNV_ORACLE_LANES_H_

#include <cmath>
#include <cstdint>

#include "oracle/fast_path.h"

namespace lnv::oracle_internal {

inline constexpr int kLanes = 8;

// For the lambdas given to ForEachInLanes: a lambda is a function of its
// own, and the compiler does not otherwise inline it into a caller compiled
// for another instruction set (isa.h).
#define LNV_ALWAYS_INLINE __attribute__((always_inline))

// Calls step(k, i) for every i < d, with k the chain of i: blocks of kLanes
// elements first, then the tail in chain 0. A chain's error bound must hold
// for any number of its terms up to d.
template <class Step>
[[gnu::always_inline]] inline void ForEachInLanes(std::int64_t d, Step step) {
  std::int64_t i = 0;
  for (; i + kLanes <= d; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) step(k, i + k);
  }
  for (; i < d; ++i) step(0, i);
}

// The double-word sum of the chains' pairs hi_k + lo_k: a TwoSum chain over
// the hi_k, and the lo_k with its residuals t_k summed recursively (2 kLanes
// terms). e bounds the distance from sum_k (hi_k + lo_k): gamma_2L times the
// sum of |lo_k| and |t_k| (Higham, ASNA 2nd ed., §4.2), doubled for the
// rounding of that sum itself.
[[gnu::always_inline]] inline Edd MergeLanes(const double* hi, const double* lo) {
  double h = hi[0], l = lo[0], mag = std::fabs(lo[0]);
  for (int k = 1; k < kLanes; ++k) {
    double s, t;
    TwoSum(h, hi[k], &s, &t);
    h = s;
    l += t;
    l += lo[k];
    mag += std::fabs(t) + std::fabs(lo[k]);
  }
  const double n = 2.0 * kLanes;
  double s, t;
  TwoSum(h, l, &s, &t);
  return {s, t, 2 * GammaN(n) * mag};
}

[[gnu::always_inline]] inline double SumLanes(const double* v) {
  double s = 0.0;
  for (int k = 0; k < kLanes; ++k) s += v[k];
  return s;
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_LANES_H_

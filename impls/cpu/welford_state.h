// Welford/West updating and Chan, Golub & LeVeque's merge, shared by the
// serial and tree Welford kernels. Private to impls/cpu.
#ifndef LNV_IMPLS_CPU_WELFORD_STATE_H_
#define LNV_IMPLS_CPU_WELFORD_STATE_H_

#include <cstdint>

namespace lnv::cpu {

template <typename Acc>
struct WelfordState {
  std::int64_t count = 0;
  Acc mean = 0;
  Acc m2 = 0;  // sum of squared deviations from `mean`
};

// Welford/West updating over x(begin) .. x(end - 1), left to right.
template <typename Acc, typename X>
WelfordState<Acc> WelfordRun(std::int64_t begin, std::int64_t end, const X& x) {
  WelfordState<Acc> s;
  for (std::int64_t i = begin; i < end; ++i) {
    const Acc xi = x(i);
    s.count += 1;
    const Acc delta = xi - s.mean;
    s.mean = s.mean + delta / static_cast<Acc>(s.count);
    s.m2 = s.m2 + delta * (xi - s.mean);
  }
  return s;
}

// Chan, Golub & LeVeque (1979/1983) pairwise combination of two partitions:
// mean = ma + delta * nb/n, M2 = M2a + M2b + delta^2 * na*nb/n. The weights
// are formed first so delta^2 is never multiplied by a count (it could
// overflow); delta^2 * (na*nb/n) is part of the merged M2, so it cannot.
// The row's M2, with a guard for Welford's one degenerate output. At
// |mean| / sigma beyond about 1/sqrt(u) the updates can cancel to M2 = 0 on a
// row that is not constant (e.g. two floats one ulp apart near 128); with
// eps = 0 that gives rstd = inf and a NaN row where the exact answer is
// finite. So when M2 comes out 0 for d >= 2, it is recomputed by the
// corrected two-pass formula about the computed mean m (Chan, Golub &
// LeVeque 1983, eq. 1.7):
//   M2 = sum (x_i - m)^2 - (sum (x_i - m))^2 / d,  clamped at 0,
// an identity for any m, with both sums in the kernel's own summation shape
// (`sum`). A constant row still gives 0.
// Why the claimed bound still holds. harness/bounds.cc proves that Welford's
// computed M2 / d is within Delta of s2 = S / d, so M2 = 0 means s2 <= Delta;
// and Delta >= E^2 / 2 for d >= 2 (its E^2 (d - P) / d + E^2 L terms, E the
// bound on the mean's error e). The corrected formula's rounding error is at
// most gamma_{d+3} (2 s2 + 3 e^2) (ASNA §1.9 and §4.2: one rounding per
// difference and square, d - 1 per sum, the correction term's relative error
// carried through a = d e + O(gamma_d)), i.e. at most 8 gamma_{d+3} Delta <=
// Delta while (d + 3) u <= 1/9 (d <= 2^20 in float). The result lies in
// [0, s2 + Delta], and 0 <= s2 <= Delta, so it is within Delta of s2.
template <typename Acc, typename X, typename SumFn>
Acc M2WithDegenerateGuard(Acc m2, Acc mean, std::int64_t d, const X& x, const SumFn& sum) {
  if (m2 != 0 || d < 2) return m2;
  const auto centered = [&](std::int64_t i) { return static_cast<Acc>(x(i)) - mean; };
  const Acc a = sum(centered);
  const Acc b = sum([&](std::int64_t i) {
    const Acc c = centered(i);
    return c * c;
  });
  const Acc corrected = b - a * (a / static_cast<Acc>(d));
  return corrected > 0 ? corrected : Acc{0};
}

template <typename Acc>
WelfordState<Acc> WelfordMerge(const WelfordState<Acc>& a, const WelfordState<Acc>& b) {
  WelfordState<Acc> s;
  s.count = a.count + b.count;
  const Acc na = static_cast<Acc>(a.count);
  const Acc nb = static_cast<Acc>(b.count);
  const Acc n = static_cast<Acc>(s.count);
  const Acc delta = b.mean - a.mean;
  s.mean = a.mean + delta * (nb / n);
  s.m2 = (a.m2 + b.m2) + delta * delta * (na * nb / n);
  return s;
}

}  // namespace lnv::cpu

#endif  // LNV_IMPLS_CPU_WELFORD_STATE_H_

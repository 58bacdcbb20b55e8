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

// Row statistics in double-words with error bounds (fast_stats.h has the math).
#include "oracle/fast_stats.h"

#include <cmath>

#include "oracle/isa.h"
#include "oracle/lanes.h"

namespace lnv::oracle_internal {
namespace {

// Sum2 of x and of |x|, in kLanes chains each (lanes.h). Ogita, Rump &
// Oishi Prop. 4.5 bounds each chain by gamma_n^2 times its sum of |terms|,
// doubled for the rounding of that sum; the merge adds its own bound.
struct FirstPass {
  Edd sum, abs_sum;
};

[[gnu::always_inline]] inline FirstPass FirstPassBody(const double* __restrict x, std::int64_t d) {
  double h[kLanes] = {}, l[kLanes] = {}, a[kLanes] = {};
  double ah[kLanes] = {}, al[kLanes] = {};
  ForEachInLanes(d, [&](int k, std::int64_t i) LNV_ALWAYS_INLINE {
    double s, t;
    TwoSum(h[k], x[i], &s, &t);
    h[k] = s;
    l[k] += t;
    const double v = std::fabs(x[i]);
    a[k] += v;
    TwoSum(ah[k], v, &s, &t);
    ah[k] = s;
    al[k] += t;
  });
  const double g2 = GammaN(static_cast<double>(d)) * GammaN(static_cast<double>(d));
  const double abs_total = SumLanes(a);
  Edd sum = MergeLanes(h, l), abs_sum = MergeLanes(ah, al);
  sum.e += 2 * g2 * abs_total;
  abs_sum.e += 2 * g2 * abs_total;
  return {sum, abs_sum};
}

// S = sum (x_i - m)^2 as a double-word (m = 0 for RMSNorm), see fast_stats.h,
// in kLanes chains. Bound: each chain's TwoSum chain of p_i is exact; the
// recursive sum of its errors, e_i and c_i (3n terms) is within gamma_3n of
// the sum of their magnitudes, each c_i within 3u |c_i| of (2 a_i + b_i) b_i
// (doubled, with the magnitudes, for their own rounding), an underflowing
// a_i^2 leaves e_i wrong by at most 2^-1074 (kTiny) for each of 2 roundings;
// the merge adds its own bound.
[[gnu::always_inline]] inline Edd SumOfSquaresBody(const double* __restrict x, std::int64_t d,
                                                   double m) {
  double h[kLanes] = {}, l[kLanes] = {}, la[kLanes] = {}, ca[kLanes] = {};
  ForEachInLanes(d, [&](int k, std::int64_t i) LNV_ALWAYS_INLINE {
    double a, b;
    TwoSum(x[i], -m, &a, &b);
    const double p = a * a;
    const double e = std::fma(a, a, -p);
    const double c = (2 * a + b) * b;
    double s, t;
    TwoSum(h[k], p, &s, &t);
    h[k] = s;
    l[k] += t;
    l[k] += e;
    l[k] += c;
    la[k] += std::fabs(t) + std::fabs(e) + std::fabs(c);
    ca[k] += std::fabs(c);
  });
  const double n = static_cast<double>(d);
  Edd sum = MergeLanes(h, l);
  sum.e += 2 * GammaN(3 * n) * SumLanes(la) + 6 * kU * SumLanes(ca) + 4 * n * kTiny;
  return sum;
}

LNV_ISA_VERSIONS(FirstPass, First, (const double* x, std::int64_t d), FirstPassBody(x, d))
LNV_ISA_VERSIONS(Edd, Squares, (const double* x, std::int64_t d, double m),
                 SumOfSquaresBody(x, d, m))

bool Finite(const Edd& a) {
  return std::isfinite(a.hi) && std::isfinite(a.lo) && std::isfinite(a.e);
}

// r = q^(-1/2) for q > 0 known to 2^-60: a Newton step from the double
// estimate, then the residual rho = 1 - q r~^2 bounds the result (header).
bool RecipSqrt(const Edd& q, Edd* r) {
  const double r0 = 1.0 / std::sqrt(q.hi);
  const Edd one{1.0, 0.0, 0.0};
  const Edd r0w{r0, 0.0, 0.0};
  const Edd rho0 = AddEdd(one, NegEdd(MulEdd(q, MulEdd(r0w, r0w))));
  double h, l;
  TwoSum(r0, r0 * 0.5 * (rho0.hi + rho0.lo), &h, &l);
  const Edd r1{h, l, 0.0};
  const Edd rho = AddEdd(one, NegEdd(MulEdd(q, MulEdd(r1, r1))));
  const double bound = std::fabs(rho.hi + rho.lo) * (1 + 2 * kU) + rho.e;
  if (!(bound <= 0.25) || !std::isfinite(h)) return false;
  *r = {h, l, 2.01 * bound * std::fabs(h) + 4 * kTiny};
  return h > 0x1p-900 && h < 0x1p900;
}

}  // namespace

bool ComputeFastStats(const double* x, std::int64_t d, bool layer, double eps, FastStats* out) {
  if (!(eps >= 0.0) || !std::isfinite(eps)) return false;
  const FirstPass first = LNV_ISA_CALL(First, x, d);
  const double n = static_cast<double>(d);
  const Edd inv_d = InverseOf(d);
  out->mean_abs = MulEdd(first.abs_sum, inv_d);
  out->mu = layer ? MulEdd(first.sum, inv_d) : Edd{0.0, 0.0, 0.0};
  if (!Finite(out->mean_abs) || !Finite(out->mu)) return false;
  const double mh = out->mu.hi, ml = out->mu.lo, em = out->mu.e;
  Edd s = LNV_ISA_CALL(Squares, x, d, mh);
  if (layer) {
    // sum (x_i - mu)^2 = S - d (mu - mh)^2, with mu - mh = ml +- em.
    const double k = n * ml * ml;
    const double k_err = n * (2 * std::fabs(ml) * em + em * em) + 4 * kU * k + 2 * kTiny;
    s = AddEdd(s, Edd{-k, 0.0, k_err});
  }
  out->var = MulEdd(s, inv_d);
  out->q = AddEdd(out->var, Edd{eps, 0.0, 0.0});
  const Edd& q = out->q;
  if (!Finite(out->var) || !Finite(q)) return false;
  if (!(q.hi > 0x1p-1000) || !(q.e <= 0x1p-60 * q.hi) || !(q.hi < 0x1p1000)) return false;
  return RecipSqrt(q, &out->r);
}

bool NearestDouble(const Edd& a, double* out) {
  double v, t;
  TwoSum(a.hi, a.lo, &v, &t);
  if (!std::isfinite(v) || !std::isfinite(a.e)) return false;
  if (v == 0.0) {
    if (t != 0.0 || a.e != 0.0) return false;
    *out = 0.0;
    return true;
  }
  // The smaller of the two gaps around |v| (the one below, at a power of two).
  const double m = std::fabs(v);
  const double gap = m - NextDown(m);
  if (!((std::fabs(t) + a.e) * (1 + 0x1p-40) < 0.5 * gap)) return false;
  *out = v;
  return true;
}

}  // namespace lnv::oracle_internal

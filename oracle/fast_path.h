// The oracle's fast path: evaluate in binary64 while carrying a rigorous bound
// on the absolute error, and accept the result only if every value inside the
// error interval rounds to the same number of the output format and the
// interval is narrow enough to serve as the "exact" value (2p bits).
// Internal to oracle/.
#ifndef LNV_ORACLE_FAST_PATH_H_
#define LNV_ORACLE_FAST_PATH_H_

#include <cmath>

#include "oracle/oracle.h"

namespace lnv::oracle_internal {

inline constexpr double kU = 0x1p-53;       // unit roundoff of binary64 (RNE)
inline constexpr double kTiny = 0x1p-1074;  // absolute error of one rounding below the normal range

// v with |exact - v| <= e. Each rounding of binary64 arithmetic adds at most
// u|result| (normal range) or kTiny (subnormal range) (Higham, 2nd ed., §2.2).
struct Ed {
  double v;
  double e;
};

inline Ed ExactEd(double v) { return {v, 0.0}; }

inline Ed AddEd(Ed a, Ed b) {
  const double s = a.v + b.v;
  return {s, a.e + b.e + kU * std::fabs(s) + kTiny};
}

inline Ed NegEd(Ed a) { return {-a.v, a.e}; }

inline Ed MulEd(Ed a, Ed b) {
  const double p = a.v * b.v;
  return {p, std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e + kU * std::fabs(p) + kTiny};
}

// x - m exactly as s + t (Knuth's TwoSum; needs no overflow).
inline void TwoSum(double x, double m, double* s, double* t) {
  const double sum = x + m;
  const double bb = sum - x;
  *t = (x - (sum - bb)) + (m - bb);
  *s = sum;
}

// A double-word value hi + lo with |exact - (hi + lo)| <= e, for sums that
// cancel (the backward's g - a - xhat b). Error terms follow Joldes, Muller &
// Popescu, "Tight and rigorous error bounds for basic building blocks of
// double-word arithmetic", ACM TOMS 44(2), 2017: the accurate DW+DW sum has
// relative error <= 3u^2/(1-4u) (Thm 3.1) and DW*DW <= 7u^2 (Alg. 12,
// Thm 5.3 and its remark), so 4u^2(|a|+|b|) and 8u^2|a||b| cover them.
struct Edd {
  double hi;
  double lo;
  double e;
};

inline constexpr double kU2 = kU * kU;

inline Edd FromEd(Ed a) { return {a.v, 0.0, a.e}; }

inline void FastTwoSum(double a, double b, double* s, double* t) {
  *s = a + b;
  *t = b - (*s - a);
}

inline Edd AddEdd(Edd a, Edd b) {
  double sh, sl, th, tl;
  TwoSum(a.hi, b.hi, &sh, &sl);
  TwoSum(a.lo, b.lo, &th, &tl);
  sl += th;
  FastTwoSum(sh, sl, &sh, &sl);
  sl += tl;
  FastTwoSum(sh, sl, &sh, &sl);
  const double mag = std::fabs(a.hi) + std::fabs(a.lo) + std::fabs(b.hi) + std::fabs(b.lo);
  return {sh, sl, a.e + b.e + 4 * kU2 * mag + 8 * kTiny};
}

inline Edd NegEdd(Edd a) { return {-a.hi, -a.lo, a.e}; }

inline Edd MulEdd(Edd a, Edd b) {
  const double ph = a.hi * b.hi;
  double pl = std::fma(a.hi, b.hi, -ph);
  pl += a.hi * b.lo + a.lo * b.hi;
  double h, l;
  FastTwoSum(ph, pl, &h, &l);
  const double ma = std::fabs(a.hi) + std::fabs(a.lo), mb = std::fabs(b.hi) + std::fabs(b.lo);
  return {h, l, ma * b.e + mb * a.e + a.e * b.e + 8 * kU2 * ma * mb + 8 * kTiny};
}

// Collapses to one double (one more rounding).
inline Ed ToEd(Edd a) {
  const double v = a.hi + a.lo;
  return {v, a.e + kU * std::fabs(v) + kTiny};
}

// Accepts the fast value when it decides the rounding into f and carries at
// least 2p correct bits. The error sums above are themselves rounded: a few
// dozen roundings of nonnegative terms inflate them by less than the factor
// (1 + 2^-40) applied here (Higham, Lemma 3.1).
inline bool DecideFast(Ed y, FloatFormat f, ExactValue* out) {
  if (f.precision > 26) return false;  // binary64 cannot hold 2p bits of fp64
  const double err = y.e * (1.0 + 0x1p-40) + 0x1p-1070;
  if (!std::isfinite(y.v) || !std::isfinite(err)) return false;
  const double lo = std::nextafter(y.v - err, -HUGE_VAL);
  const double hi = std::nextafter(y.v + err, HUGE_VAL);
  const double rl = RoundToFormat(lo, f);
  const double rh = RoundToFormat(hi, f);
  if (rl != rh || std::signbit(rl) != std::signbit(rh)) return false;
  if (!(err <= std::ldexp(std::fabs(y.v) - err, -2 * f.precision))) return false;
  *out = ExactValue{rl, y.v, 0.0, ValueStatus::kDecided};
  return true;
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_FAST_PATH_H_

// The oracle's fast path: evaluate in binary64 while carrying a rigorous bound
// on the absolute error, and accept the result only if every value inside the
// error interval rounds to the same number of the output format and the
// interval is narrow enough to serve as the "exact" value (2p bits).
// Internal to oracle/.
#ifndef LNV_ORACLE_FAST_PATH_H_
#define LNV_ORACLE_FAST_PATH_H_

#include <bit>
#include <cmath>
#include <cstdint>

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

[[gnu::always_inline]] inline Edd AddEdd(Edd a, Edd b) {
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

[[gnu::always_inline]] inline Edd MulEdd(Edd a, Edd b) {
  const double ph = a.hi * b.hi;
  double pl = std::fma(a.hi, b.hi, -ph);
  pl += a.hi * b.lo + a.lo * b.hi;
  double h, l;
  FastTwoSum(ph, pl, &h, &l);
  const double ma = std::fabs(a.hi) + std::fabs(a.lo), mb = std::fabs(b.hi) + std::fabs(b.lo);
  return {h, l, ma * b.e + mb * a.e + a.e * b.e + 8 * kU2 * ma * mb + 8 * kTiny};
}

// gamma_n = n u / (1 - n u) (Higham, ASNA 2nd ed., §3.1).
inline double GammaN(double n) { return n * kU / (1.0 - n * kU); }

// 1/d as a double-word: |1/d - (ih + il)| <= 2u^2/d.
inline Edd InverseOf(std::int64_t d) {
  const double dd = static_cast<double>(d);
  const double ih = 1.0 / dd;
  const double il = -std::fma(ih, dd, -1.0) / dd;
  return {ih, il, 2 * kU2 * ih};
}

// Collapses to one double (one more rounding).
inline Ed ToEd(Edd a) {
  const double v = a.hi + a.lo;
  return {v, a.e + kU * std::fabs(v) + kTiny};
}

// The next double above (below) a finite x: std::nextafter(x, +-inf) without
// the library call (the fast path's hot loop calls these twice an element).
// Adjacent doubles of one sign have adjacent bit patterns; zeros of either
// sign step to the smallest subnormal, the largest finite value to infinity.
inline double NextUp(double x) {
  if (x == 0.0) return 0x1p-1074;
  const auto b = std::bit_cast<std::uint64_t>(x);
  return std::bit_cast<double>(x > 0 ? b + 1 : b - 1);
}
inline double NextDown(double x) { return -NextUp(-x); }

// Accepts the fast value when it decides the rounding into f and carries at
// least 2p correct bits. The error sums above are themselves rounded: a few
// dozen roundings of nonnegative terms inflate them by less than the factor
// (1 + 2^-40) applied here (Higham, Lemma 3.1).
// RoundToFormat, with binary32's hardware conversion inlined (the hot case).
[[gnu::always_inline]] inline double RoundFast(double v, FloatFormat f) {
  if (f.precision == 24 && f.emin == -126 && f.emax == 127) {
    return static_cast<double>(static_cast<float>(v));
  }
  return RoundToFormat(v, f);
}

[[gnu::always_inline]] inline bool DecideFast(Ed y, FloatFormat f, ExactValue* out) {
  if (f.precision > 26) return false;  // binary64 cannot hold 2p bits of fp64
  const double err = y.e * (1.0 + 0x1p-40) + 0x1p-1070;
  if (!std::isfinite(y.v) || !std::isfinite(err)) return false;
  const double below = y.v - err, above = y.v + err;
  if (!std::isfinite(below) || !std::isfinite(above)) return false;  // the exact path decides
  const double lo = NextDown(below);
  const double hi = NextUp(above);
  const double rl = RoundFast(lo, f);
  const double rh = RoundFast(hi, f);
  if (rl != rh || std::signbit(rl) != std::signbit(rh)) return false;
  // (|y| - err) 2^-2p, rounded as std::ldexp rounds it (2p <= 52: an exact
  // power of two, so the product is the one correctly rounded value).
  const double two_to_minus_2p = 1.0 / static_cast<double>(std::uint64_t{1} << (2 * f.precision));
  if (!(err <= (std::fabs(y.v) - err) * two_to_minus_2p)) return false;
  *out = ExactValue{rl, y.v, 0.0, ValueStatus::kDecided};
  return true;
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_FAST_PATH_H_

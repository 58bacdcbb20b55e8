// Approx: a double together with a rigorous bound on its distance from an
// exact real number, carried through double arithmetic by running error
// analysis (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// §3.3). The property suite uses it wherever it compares a sum or a formula
// against an exact identity: the tolerance is derived from the operations
// performed, never a literal.
//
// Rounding model (ASNA §2.2, eq. (2.5)): for round to nearest in binary64,
// fl(a op b) = (a op b) / (1 + delta), |delta| <= u = 2^-53, so
// |fl(z) - z| <= u |fl(z)| for a normal result; a product or quotient that
// underflows adds at most eta = 2^-1075 absolutely (ASNA §2.1), and sums that
// underflow are exact. Each operation below adds its own rounding to the
// propagated input errors.
//
// The error terms are themselves computed in double; a chain of n < 2^22
// operations makes them too small by a relative n u < 2^-31 at most, which
// Within() covers by inflating them by kErrorSlack.
#ifndef LNV_PROPERTIES_APPROX_H_
#define LNV_PROPERTIES_APPROX_H_

#include <cmath>
#include <limits>

#include "harness/formats.h"  // FloatFormat, ExactValue, RoundToFormat (the oracle's types)

namespace lnv::props {

inline constexpr double kUnitRoundoff64 = 0x1p-53;  // u of binary64
inline constexpr double kUnderflow64 = 0x1p-1074;   // >= 2^-1075, the eta above
// 1 + 2^-30 > 1 + n u for every chain of n < 2^22 error-term roundings.
inline constexpr double kErrorSlack = 1 + 0x1p-30;

struct Approx {
  double v = 0.0;    // the computed value
  double err = 0.0;  // |v - exact| <= err
};

// An exactly known value (an input, a float from a kernel).
inline Approx Exact(double v) { return {v, 0.0}; }

// A value correctly rounded to double: |v - exact| <= u |v| for a normal
// result, <= 2^-1075 for a subnormal (or zero) one.
inline Approx Rounded(double v) { return {v, kUnitRoundoff64 * std::fabs(v) + kUnderflow64}; }

// The oracle's exact value hi + lo, which it states to at least 2p bits of
// the output format (oracle.h), so |hi + lo - exact| <= 2^(1-2p) |hi|
// (2p bits: a relative 2^-2p of the value, 2^(1-2p) of hi to cover lo),
// plus the double's own floor for values in the subnormal range.
inline Approx FromOracle(const ExactValue& e, FloatFormat out) {
  const double v = e.hi + e.lo;
  return {v, std::ldexp(std::fabs(e.hi), 1 - 2 * out.precision) + kUnitRoundoff64 * std::fabs(v) +
                 kUnderflow64};
}

inline Approx operator+(Approx a, Approx b) {
  const double v = a.v + b.v;
  return {v, a.err + b.err + kUnitRoundoff64 * std::fabs(v)};
}

inline Approx operator-(Approx a, Approx b) {
  const double v = a.v - b.v;
  return {v, a.err + b.err + kUnitRoundoff64 * std::fabs(v)};
}

inline Approx operator-(Approx a) { return {-a.v, a.err}; }

// |ab - a~b~| <= |a~| e_b + |b~| e_a + e_a e_b, then the product's rounding.
inline Approx operator*(Approx a, Approx b) {
  const double v = a.v * b.v;
  return {v, std::fabs(a.v) * b.err + std::fabs(b.v) * a.err + a.err * b.err +
                 kUnitRoundoff64 * std::fabs(v) + kUnderflow64};
}

// a/b for |b~| > e_b: |a/b - a~/b~| <= (e_a + |a~/b~| e_b) / (|b~| - e_b).
inline Approx operator/(Approx a, Approx b) {
  const double v = a.v / b.v;
  const double margin = std::fabs(b.v) - b.err;
  if (!(margin > 0)) return {v, std::numeric_limits<double>::infinity()};
  return {v,
          (a.err + std::fabs(v) * b.err) / margin + kUnitRoundoff64 * std::fabs(v) + kUnderflow64};
}

// sqrt(a) for a >= 0: |sqrt(a) - sqrt(a~)| = |a - a~| / (sqrt(a) + sqrt(a~))
// <= e_a / (sqrt(max(a~ - e_a, 0)) + sqrt(a~)).
inline Approx Sqrt(Approx a) {
  const double v = std::sqrt(a.v);
  const double den = std::sqrt(std::fmax(a.v - a.err, 0.0)) + v;
  const double prop = a.err == 0 ? 0.0 : den > 0 ? a.err / den : std::sqrt(a.err);
  return {v, prop + kUnitRoundoff64 * v};
}

inline Approx Abs(Approx a) { return {std::fabs(a.v), a.err}; }

// sigma^2 / (sigma^2 + eps) from the oracle's correctly rounded double
// variance `var` (exact eps >= 0), computed as 1 / (1 + eps/var) so that it
// survives a variance beyond the double range (var = inf: sigma^2 > DBL_MAX,
// the fraction is 1 within eps 2^-1023) and one that rounded to 0 (sigma^2 <=
// 2^-1075: the fraction is at most 2^-1075/eps). Returns false when it has
// no value (var = 0 and eps = 0: q may be 0).
inline bool VarianceFraction(double var, double eps, Approx* out) {
  if (std::isinf(var)) {
    *out = {1.0, eps * 0x1p-1023};
    return true;
  }
  if (var == 0) {
    if (eps == 0) return false;
    *out = {0.0, kUnderflow64 / eps};
    return true;
  }
  const Approx ratio = Exact(eps) / Rounded(var);
  *out = Exact(1) / (Exact(1) + ratio);
  return true;
}

// True when the exact values behind a and b can differ by at most `tol`
// (itself an upper bound, e.g. a sum of kernel error bounds): |a - b| <= tol
// is then established, or at least not refuted, by the computed values.
// Equal infinities agree (their difference, inf - inf, is NaN: no evidence
// of a gap, e.g. y = -inf against gamma xhat + beta with gamma = -inf); a NaN
// agrees with nothing.
inline bool Within(Approx a, Approx b, double tol) {
  if (std::isinf(a.v) && a.v == b.v) return true;
  const double gap = std::fabs(a.v - b.v);
  return gap <= (a.err + b.err + tol) * kErrorSlack + kUnitRoundoff64 * gap;
}

// True when the exact value behind a can be <= the exact value behind b.
inline bool AtMost(Approx a, Approx b, double tol) {
  return a.v - b.v <= (a.err + b.err + tol) * kErrorSlack + kUnitRoundoff64 * std::fabs(a.v - b.v);
}

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_APPROX_H_

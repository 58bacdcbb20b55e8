// Exact rationals num/den * 2^exp over a big-integer type (cpp_int or mpz_int),
// and rounding of such a value, once, into a binary format.
// Internal to oracle/.
#ifndef LNV_ORACLE_RAT_H_
#define LNV_ORACLE_RAT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "oracle/oracle.h"

namespace lnv::oracle_internal {

// value = num / den * 2^exp, den > 0. Not reduced: callers keep dens small by
// construction (powers of d and the q of the row).
template <class Int>
struct Rat {
  Int num{0};
  Int den{1};
  std::int64_t exp = 0;
};

template <class Int>
int Sign(const Rat<Int>& a) {
  return a.num.sign();
}

template <class Int>
Int ShiftLeft(const Int& v, std::int64_t s) {
  return s == 0 ? Int(v) : Int(v << static_cast<unsigned>(s));
}

// Builds an Int from a signed 64-bit value.
template <class Int>
Int FromInt64(std::int64_t v) {
  if (v >= 0) return Int(static_cast<std::uint64_t>(v));
  Int r(static_cast<std::uint64_t>(-(v + 1)) + 1u);
  return Int(-r);
}

// A finite double as num * 2^exp with an odd (or zero) integer num.
template <class Int>
Rat<Int> FromDouble(double v) {
  Rat<Int> r;
  if (v == 0.0) return r;
  int e = 0;
  double m = std::frexp(std::fabs(v), &e);  // |v| = m 2^e, m in [0.5, 1)
  auto mant = static_cast<std::uint64_t>(std::ldexp(m, 53));
  int tz = __builtin_ctzll(mant);
  mant >>= tz;
  r.num = Int(mant);
  if (v < 0) r.num = -r.num;
  r.exp = static_cast<std::int64_t>(e) - 53 + tz;
  return r;
}

template <class Int>
Rat<Int> Neg(Rat<Int> a) {
  a.num = -a.num;
  return a;
}

template <class Int>
Rat<Int> Mul(const Rat<Int>& a, const Rat<Int>& b) {
  Rat<Int> r;
  r.num = a.num * b.num;
  if (r.num.is_zero()) return Rat<Int>{};
  r.den = a.den * b.den;
  r.exp = a.exp + b.exp;
  return r;
}

template <class Int>
Rat<Int> Add(const Rat<Int>& a, const Rat<Int>& b) {
  if (a.num.is_zero()) return b;
  if (b.num.is_zero()) return a;
  const std::int64_t e = a.exp < b.exp ? a.exp : b.exp;
  Int an = ShiftLeft(a.num, a.exp - e);
  Int bn = ShiftLeft(b.num, b.exp - e);
  Rat<Int> r;
  r.exp = e;
  if (a.den == b.den) {
    r.num = an + bn;
    r.den = a.den;
  } else {
    r.num = an * b.den + bn * a.den;
    r.den = a.den * b.den;
  }
  if (r.num.is_zero()) return Rat<Int>{};
  return r;
}

template <class Int>
Rat<Int> Sub(const Rat<Int>& a, const Rat<Int>& b) {
  return Add(a, Neg(b));
}

// a / b for b != 0.
template <class Int>
Rat<Int> Div(const Rat<Int>& a, const Rat<Int>& b) {
  Rat<Int> r;
  if (a.num.is_zero()) return r;
  r.num = a.num * b.den;
  r.den = a.den * b.num;
  if (r.den.sign() < 0) {
    r.den = -r.den;
    r.num = -r.num;
  }
  r.exp = a.exp - b.exp;
  return r;
}

// floor(log2(|a|)) for a != 0.
template <class Int>
std::int64_t FloorLog2(const Rat<Int>& a) {
  Int n = abs(a.num);
  std::int64_t e = static_cast<std::int64_t>(msb(n)) - static_cast<std::int64_t>(msb(a.den));
  // |num|/den is in [2^(e-1), 2^(e+1)); pick the side.
  bool below = e >= 0 ? n < ShiftLeft(a.den, e) : ShiftLeft(n, -e) < a.den;
  if (below) --e;
  return e + a.exp;
}

// -1, 0, +1 as a < b, a == b, a > b.
template <class Int>
int Compare(const Rat<Int>& a, const Rat<Int>& b) {
  Rat<Int> diff = Sub(a, b);
  return Sign(diff);
}

// Result of rounding an exact rational into a format.
struct Rounded {
  double value;  // the rounded value (+-inf on overflow, +-0 on underflow)
  bool exact;    // the rational was representable
};

// Rounds a once into the format (IEEE round-to-nearest-even, subnormals and
// overflow included). The result is exactly representable as a double for
// every format with p <= 53 and an exponent range inside binary64's.
template <class Int>
Rounded RoundRat(const Rat<Int>& a, FloatFormat f) {
  if (a.num.is_zero()) return {0.0, true};
  const bool negative = a.num.sign() < 0;
  const Int n = abs(a.num);
  const std::int64_t e = FloorLog2(a);
  const std::int64_t ulp_exp = (e > f.emin ? e : f.emin) - (f.precision - 1);
  if (e > f.emax + 1) return {negative ? -HUGE_VAL : HUGE_VAL, false};
  // quotient = floor(|a| / 2^ulp_exp): at most p+1 bits.
  const std::int64_t shift = a.exp - ulp_exp;
  Int num = shift >= 0 ? ShiftLeft(n, shift) : n;
  Int den = shift >= 0 ? a.den : ShiftLeft(a.den, -shift);
  Int quotient, remainder;
  divide_qr(num, den, quotient, remainder);
  const bool exact = remainder.is_zero();
  if (!exact) {
    Int twice = remainder << 1;
    if (twice > den || (twice == den && bit_test(quotient, 0))) ++quotient;
  }
  // quotient <= 2^p (< 2^63), so it converts exactly.
  const auto q = static_cast<std::uint64_t>(quotient);
  double mag = std::ldexp(static_cast<double>(q), static_cast<int>(ulp_exp));
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  if (mag > max_finite) mag = HUGE_VAL;
  return {negative ? -mag : mag, exact && mag != HUGE_VAL};
}

// The nearest double (binary64) to a.
template <class Int>
double ToDouble(const Rat<Int>& a) {
  return RoundRat(a, kBinary64).value;
}

// a as an unevaluated double-double hi + lo (hi = nearest double).
template <class Int>
std::pair<double, double> ToDoubleDouble(const Rat<Int>& a) {
  Rounded hi = RoundRat(a, kBinary64);
  if (!std::isfinite(hi.value) || hi.exact) return {hi.value, 0.0};
  double lo = ToDouble(Sub(a, FromDouble<Int>(hi.value)));
  return {hi.value, lo};
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_RAT_H_

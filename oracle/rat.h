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

// Whether a is dyadic as written (den 1): such values are multiplied,
// rounded and compared with shifts and bit tests, no division.
template <class Int>
bool IsDyadic(const Rat<Int>& a) {
  return a.den == 1;
}

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

// A finite nonzero double as (-1)^negative mant 2^exp with an odd mant,
// from its bits: a normal double is (2^52 + M) 2^(E - 1075), a subnormal
// M 2^-1074; the trailing zeros then move into the exponent.
struct DoubleParts {
  std::uint64_t mant;
  std::int64_t exp;
  bool negative;
};
inline DoubleParts SplitDouble(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  const auto biased = static_cast<std::int64_t>((bits >> 52) & 0x7ff);
  std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased != 0) mant |= std::uint64_t{1} << 52;
  const int tz = __builtin_ctzll(mant);
  return {mant >> tz, (biased == 0 ? -1074 : biased - 1075) + tz, (bits >> 63) != 0};
}

// A finite double as num * 2^exp with an odd (or zero) integer num.
template <class Int>
Rat<Int> FromDouble(double v) {
  Rat<Int> r;
  if (v == 0.0) return r;
  const DoubleParts parts = SplitDouble(v);
  r.num = Int(parts.mant);
  if (parts.negative) r.num = -r.num;
  r.exp = parts.exp;
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
  if (!IsDyadic(a) || !IsDyadic(b)) r.den = a.den * b.den;
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
  if (IsDyadic(a)) return static_cast<std::int64_t>(msb(abs(a.num))) + a.exp;
  Int n = abs(a.num);
  std::int64_t e = static_cast<std::int64_t>(msb(n)) - static_cast<std::int64_t>(msb(a.den));
  // |num|/den is in [2^(e-1), 2^(e+1)); pick the side.
  bool below = e >= 0 ? n < ShiftLeft(a.den, e) : ShiftLeft(n, -e) < a.den;
  if (below) --e;
  return e + a.exp;
}

// floor(a 2^F), or its ceiling, as an integer.
template <class Int>
Int ScaleToInteger(const Rat<Int>& a, std::int64_t F, bool ceiling) {
  const std::int64_t sh = a.exp + F;
  Int num = sh >= 0 ? ShiftLeft(a.num, sh) : Int(a.num);
  Int den = sh >= 0 ? Int(a.den) : ShiftLeft(a.den, -sh);
  Int q, rem;
  divide_qr(num, den, q, rem);  // truncates toward zero
  if (!rem.is_zero()) {
    if (ceiling && num.sign() > 0) ++q;
    if (!ceiling && num.sign() < 0) --q;
  }
  return q;
}

// -1, 0, +1 as a < b, a == b, a > b.
template <class Int>
int Compare(const Rat<Int>& a, const Rat<Int>& b) {
  Rat<Int> diff = Sub(a, b);
  return Sign(diff);
}

// v 2^e for an integer-valued double v < 2^54 and the exponents RoundRat
// passes (e >= -1074): a product with the power of two, exact whenever the
// result is representable (v's bits sit at 2^e or above, e >= -1074), which
// std::ldexp also gives, at several times the cost.
inline double ScaleByPowerOfTwo(double v, std::int64_t e) {
  if (e < -1022 || e > 1023) return std::ldexp(v, static_cast<int>(e));
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double p;
  std::memcpy(&p, &bits, sizeof p);
  return v * p;
}

// Result of rounding an exact rational into a format.
struct Rounded {
  double value;  // the rounded value (+-inf on overflow, +-0 on underflow)
  bool exact;    // the rational was representable
};

// The exponent of f's last place at a value whose leading bit is 2^e: f's
// precision below e, or below f's smallest normal exponent (subnormals).
inline std::int64_t UlpExponent(std::int64_t e, FloatFormat f) {
  return (e > f.emin ? e : f.emin) - (f.precision - 1);
}

// n / 2^s for integers n > 0 and s > 0, rounded to the nearest integer, ties
// to even, from the bits shifted out: the half bit s - 1 and the sticky bits
// under it. The caller knows the result fits in 64 bits.
template <class Int>
std::uint64_t RoundShiftedDyadic(const Int& n, std::int64_t s, bool* exact) {
  auto q = static_cast<std::uint64_t>(Int(n >> static_cast<unsigned>(s)));
  const auto low = static_cast<std::int64_t>(lsb(n));
  *exact = low >= s;
  if (!*exact && bit_test(n, static_cast<unsigned>(s - 1)) && (low < s - 1 || (q & 1))) ++q;
  return q;
}

// The rounded value q 2^ulp_exp (q <= 2^p, the quotient rounded to
// nearest even) with its sign, +-inf past the format's largest finite value.
inline Rounded FinishRounding(std::uint64_t q, bool exact, std::int64_t ulp_exp, bool negative,
                              FloatFormat f) {
  double mag = ScaleByPowerOfTwo(static_cast<double>(q), ulp_exp);
  const double max_finite =
      ScaleByPowerOfTwo(2.0 - ScaleByPowerOfTwo(1.0, 1 - f.precision), f.emax);
  if (mag > max_finite) mag = HUGE_VAL;
  return {negative ? -mag : mag, exact && mag != HUGE_VAL};
}

// Rounds a once into the format (IEEE round-to-nearest-even, subnormals and
// overflow included). The result is exactly representable as a double for
// every format with p <= 53 and an exponent range inside binary64's.
template <class Int>
Rounded RoundRat(const Rat<Int>& a, FloatFormat f) {
  if (a.num.is_zero()) return {0.0, true};
  const bool negative = a.num.sign() < 0;
  const Int n = abs(a.num);
  const std::int64_t e = FloorLog2(a);
  const std::int64_t ulp_exp = UlpExponent(e, f);
  if (e > f.emax + 1) return {negative ? -HUGE_VAL : HUGE_VAL, false};
  // quotient = |a| / 2^ulp_exp rounded to an integer: at most p+1 bits.
  const std::int64_t shift = a.exp - ulp_exp;
  bool exact = true;
  std::uint64_t q = 0;
  if (IsDyadic(a)) {
    // n 2^shift < 2^p when shift >= 0 (ulp_exp >= e - p + 1): exact.
    q = shift >= 0 ? static_cast<std::uint64_t>(n) << shift : RoundShiftedDyadic(n, -shift, &exact);
  } else {
    Int num = shift >= 0 ? ShiftLeft(n, shift) : n;
    Int den = shift >= 0 ? a.den : ShiftLeft(a.den, -shift);
    Int quotient, remainder;
    divide_qr(num, den, quotient, remainder);
    exact = remainder.is_zero();
    if (!exact) {
      Int twice = remainder << 1;
      if (twice > den || (twice == den && bit_test(quotient, 0))) ++quotient;
    }
    // quotient <= 2^p (< 2^63), so it converts exactly.
    q = static_cast<std::uint64_t>(quotient);
  }
  return FinishRounding(q, exact, ulp_exp, negative, f);
}

// The nearest double (binary64) to a.
template <class Int>
double ToDouble(const Rat<Int>& a) {
  return RoundRat(a, kBinary64).value;
}

// a as an unevaluated double-double hi + lo (hi = nearest double). Past
// binary64's overflow threshold hi is +-inf and lo the nearest double to
// a -+ 2^1024, what is left of a beyond the format (ExactValue, oracle.h).
template <class Int>
std::pair<double, double> ToDoubleDouble(const Rat<Int>& a) {
  Rounded hi = RoundRat(a, kBinary64);
  if (hi.exact) return {hi.value, 0.0};
  if (std::isinf(hi.value)) {
    const Rat<Int> top{Int(hi.value > 0 ? 1 : -1), Int(1), 1024};
    return {hi.value, ToDouble(Sub(a, top))};
  }
  double lo = ToDouble(Sub(a, FromDouble<Int>(hi.value)));
  return {hi.value, lo};
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_RAT_H_

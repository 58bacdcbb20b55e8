// Exact dyadic numbers m 2^exp with |m| < 2^(64 kDyadicLimbs), held in
// fixed-width limbs on the stack: the per-element arithmetic of the oracle's
// Boost backend (oracle.cc, EvalAffine), where cpp_int spent most of its
// time allocating. Every operation is exact or reports that its result does
// not fit (false); nothing wraps. Rounding follows RoundRat (rat.h) bit for
// bit; oracle/dyadic_test.cc checks both against it. Internal to oracle/.
#ifndef LNV_ORACLE_DYADIC_H_
#define LNV_ORACLE_DYADIC_H_

#include <array>
#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "oracle/oracle.h"
#include "oracle/rat.h"

namespace lnv::oracle_internal {

inline constexpr int kDyadicLimbs = 6;

struct Dyadic {
  std::array<std::uint64_t, kDyadicLimbs> mag{};  // |m|, least significant limb first
  int used = 0;                                   // limbs in use: mag[used - 1] != 0; 0 for m = 0
  bool negative = false;
  std::int64_t exp = 0;
};

// floor(log2 |m|) for m != 0.
inline std::int64_t MsbOf(const Dyadic& a) {
  return 64 * (a.used - 1) + 63 - __builtin_clzll(a.mag[a.used - 1]);
}

// The index of the lowest set bit of |m|, m != 0.
inline std::int64_t LsbOf(const Dyadic& a) {
  int i = 0;
  while (a.mag[i] == 0) ++i;
  return 64 * i + __builtin_ctzll(a.mag[i]);
}

inline bool BitOf(const Dyadic& a, std::int64_t bit) {
  if (bit < 0 || bit >= 64 * a.used) return false;
  return (a.mag[bit / 64] >> (bit % 64)) & 1;
}

// The 64 bits of |m| from bit s up.
inline std::uint64_t BitsFrom(const Dyadic& a, std::int64_t s) {
  const std::int64_t limb = s / 64, off = s % 64;
  if (limb >= a.used) return 0;
  std::uint64_t v = a.mag[limb] >> off;
  if (off != 0 && limb + 1 < a.used) v |= a.mag[limb + 1] << (64 - off);
  return v;
}

inline void Trim(Dyadic* a) {
  while (a->used > 0 && a->mag[a->used - 1] == 0) --a->used;
  if (a->used == 0) a->negative = false;
}

// A finite double.
inline Dyadic DyadicFromDouble(double v) {
  Dyadic d;
  if (v == 0.0) return d;
  const DoubleParts parts = SplitDouble(v);
  d.mag[0] = parts.mant;
  d.used = 1;
  d.negative = parts.negative;
  d.exp = parts.exp;
  return d;
}

// num 2^exp from a cpp_int (any storage); false if |num| needs more than
// kDyadicLimbs limbs.
template <class CppInt>
bool DyadicFromInt(const CppInt& num, std::int64_t exp, Dyadic* out) {
  *out = Dyadic{};
  out->exp = exp;
  if (num.is_zero()) return true;
  const auto& be = num.backend();
  static_assert(sizeof(*be.limbs()) == sizeof(std::uint64_t), "64-bit limbs");
  if (be.size() > static_cast<unsigned>(kDyadicLimbs)) return false;
  out->used = static_cast<int>(be.size());
  for (int i = 0; i < out->used; ++i) out->mag[i] = be.limbs()[i];
  out->negative = num.sign() < 0;
  Trim(out);
  return true;
}

// a b; false if the product may need more than kDyadicLimbs limbs.
inline bool MulDyadic(const Dyadic& a, const Dyadic& b, Dyadic* out) {
  *out = Dyadic{};
  if (a.used == 0 || b.used == 0) return true;
  if (a.used + b.used > kDyadicLimbs) return false;
  for (int i = 0; i < a.used; ++i) {
    unsigned __int128 carry = 0;
    for (int j = 0; j < b.used; ++j) {
      carry += static_cast<unsigned __int128>(a.mag[i]) * b.mag[j] + out->mag[i + j];
      out->mag[i + j] = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
    out->mag[i + b.used] = static_cast<std::uint64_t>(carry);
  }
  out->used = a.used + b.used;
  out->negative = a.negative != b.negative;
  out->exp = a.exp + b.exp;
  Trim(out);
  return true;
}

// |m| 2^s (s >= 0) into out, exponent exp - s; false if it does not fit.
inline bool ShiftMagnitude(const Dyadic& a, std::int64_t s, Dyadic* out) {
  *out = Dyadic{};
  out->negative = a.negative;
  out->exp = a.exp - s;
  if (a.used == 0) return true;
  if (MsbOf(a) + s >= 64 * kDyadicLimbs) return false;
  const std::int64_t limbs = s / 64, off = s % 64;
  for (int i = a.used - 1; i >= 0; --i) {
    out->mag[i + limbs] |= off == 0 ? a.mag[i] : a.mag[i] << off;
    if (off != 0 && i + limbs + 1 < kDyadicLimbs) out->mag[i + limbs + 1] |= a.mag[i] >> (64 - off);
  }
  out->used = kDyadicLimbs;
  Trim(out);
  return true;
}

// -1, 0, 1 as |a| <, =, > |b| (same exponent).
inline int CompareMagnitudes(const Dyadic& a, const Dyadic& b) {
  if (a.used != b.used) return a.used < b.used ? -1 : 1;
  for (int i = a.used - 1; i >= 0; --i) {
    if (a.mag[i] != b.mag[i]) return a.mag[i] < b.mag[i] ? -1 : 1;
  }
  return 0;
}

// a + b; false if the aligned operands or the sum do not fit.
inline bool AddDyadic(const Dyadic& a, const Dyadic& b, Dyadic* out) {
  if (a.used == 0) return *out = b, true;
  if (b.used == 0) return *out = a, true;
  const std::int64_t e = a.exp < b.exp ? a.exp : b.exp;
  Dyadic x, y;
  if (!ShiftMagnitude(a, a.exp - e, &x) || !ShiftMagnitude(b, b.exp - e, &y)) return false;
  if (x.negative == y.negative) {
    if (x.used == kDyadicLimbs || y.used == kDyadicLimbs) return false;  // room for the carry
    *out = x;
    unsigned __int128 carry = 0;
    for (int i = 0; i < kDyadicLimbs; ++i) {
      carry += static_cast<unsigned __int128>(x.mag[i]) + y.mag[i];
      out->mag[i] = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
    out->used = kDyadicLimbs;
    Trim(out);
    return true;
  }
  const int c = CompareMagnitudes(x, y);
  if (c == 0) return *out = Dyadic{}, out->exp = e, true;
  const Dyadic& big = c > 0 ? x : y;
  const Dyadic& small = c > 0 ? y : x;
  *out = big;
  std::uint64_t borrow = 0;
  for (int i = 0; i < kDyadicLimbs; ++i) {
    const unsigned __int128 sub = static_cast<unsigned __int128>(small.mag[i]) + borrow;
    borrow = static_cast<unsigned __int128>(big.mag[i]) < sub ? 1 : 0;
    out->mag[i] = big.mag[i] - static_cast<std::uint64_t>(sub);
  }
  out->used = kDyadicLimbs;
  Trim(out);
  return true;
}

// Whether rounding |m| to a multiple of 2^s (s > 0) goes up from its
// truncation q, bits s and above: the half bit s - 1 is set and either a
// sticky bit under it is, or the tie goes to the even q + 1.
inline bool RoundsUp(const Dyadic& a, std::int64_t s, std::uint64_t q) {
  return BitOf(a, s - 1) && (LsbOf(a) < s - 1 || (q & 1));
}

// Rounds a once into f: RoundRat's dyadic case (rat.h), on the limbs.
inline Rounded RoundRat(const Dyadic& a, FloatFormat f) {
  if (a.used == 0) return {0.0, true};
  const std::int64_t e = MsbOf(a) + a.exp;
  if (e > f.emax + 1) return {a.negative ? -HUGE_VAL : HUGE_VAL, false};
  const std::int64_t ulp_exp = UlpExponent(e, f);
  const std::int64_t shift = a.exp - ulp_exp;
  bool exact = true;
  std::uint64_t q = 0;
  if (shift >= 0) {
    q = a.mag[0] << shift;  // |m| 2^shift < 2^p: one limb
  } else {
    const std::int64_t s = -shift;
    q = BitsFrom(a, s);
    exact = LsbOf(a) >= s;
    if (!exact && RoundsUp(a, s, q)) ++q;
  }
  return FinishRounding(q, exact, ulp_exp, a.negative, f);
}

inline double ToDouble(const Dyadic& a) { return RoundRat(a, kBinary64).value; }

// Whether a leaves ToDoubleDouble room: hi may round |a| up to the next
// power of two, and a - hi, aligned to a's exponent, must fit with its sign.
// Where |a| may round to inf in binary64 (|a| >= 2^1023), the remainder is
// a -+ 2^1024, which fits the same way only if a's exponent is at most 1024.
inline bool FitsDoubleDouble(const Dyadic& a) {
  if (a.used == 0) return true;
  const std::int64_t msb = MsbOf(a);
  return msb < 64 * kDyadicLimbs - 2 && (msb + a.exp < 1023 || a.exp <= 1024);
}

// The remainder a - hi of a finite, inexact rounding hi of a to binary64,
// from the s low bits of |m| that the rounding dropped (s > 0: hi's last
// place is 2^(exp + s)). Rounded down, |a - hi| is those bits L times 2^exp,
// with a's sign; rounded up (RoundsUp, RoundRat's rule), it is 2^s - L,
// with the opposite sign. False when 2^s - L would not fit the limbs.
inline bool RoundingRemainder(const Dyadic& a, std::int64_t s, Dyadic* rest) {
  const bool up = RoundsUp(a, s, BitsFrom(a, s));
  if (up && s > 64 * kDyadicLimbs) return false;
  *rest = Dyadic{};
  rest->exp = a.exp;
  const std::int64_t full = s / 64, off = s % 64;
  const std::uint64_t top_mask = (std::uint64_t{1} << off) - 1;
  for (std::int64_t i = 0; i < full && i < a.used; ++i) rest->mag[i] = a.mag[i];
  if (off != 0 && full < a.used) rest->mag[full] = a.mag[full] & top_mask;
  if (up) {  // 2^s - L = (~L + 1) mod 2^s, over the limbs that hold s bits
    const std::int64_t n = full + (off != 0 ? 1 : 0);
    std::uint64_t carry = 1;
    for (std::int64_t i = 0; i < n; ++i) {
      rest->mag[i] = ~rest->mag[i] + carry;
      carry = carry != 0 && rest->mag[i] == 0 ? 1 : 0;
    }
    if (off != 0) rest->mag[n - 1] &= top_mask;
  }
  rest->used = kDyadicLimbs;
  Trim(rest);
  rest->negative = a.negative != up;  // L != 0 (inexact) and 2^s - L != 0
  return true;
}

// a as hi + lo, hi the nearest double (as ToDoubleDouble in rat.h), for a
// with FitsDoubleDouble(a): then |hi| <= 2^(MsbOf(a) + 1 + exp) and the
// remainder a - hi, both aligned to a's exponent, fit.
inline std::pair<double, double> ToDoubleDouble(const Dyadic& a) {
  if (!FitsDoubleDouble(a)) throw std::logic_error("ToDoubleDouble(Dyadic): no room for hi");
  const Rounded hi = RoundRat(a, kBinary64);
  if (hi.exact) return {hi.value, 0.0};
  if (!std::isinf(hi.value)) {
    // RoundRat's last place: inexact means it lies above a's exponent.
    const std::int64_t e = MsbOf(a) + a.exp;
    const std::int64_t ulp_exp = UlpExponent(e, kBinary64);
    Dyadic rest;
    if (RoundingRemainder(a, ulp_exp - a.exp, &rest)) return {hi.value, ToDouble(rest)};
  }
  Dyadic minus_hi;  // -hi, or -+2^1024 past the overflow threshold (rat.h)
  if (std::isinf(hi.value)) {
    minus_hi.mag[0] = 1;
    minus_hi.used = 1;
    minus_hi.exp = 1024;
    minus_hi.negative = hi.value > 0;
  } else {
    minus_hi = DyadicFromDouble(-hi.value);
  }
  Dyadic rest;
  if (!AddDyadic(a, minus_hi, &rest)) {
    throw std::logic_error("ToDoubleDouble(Dyadic): the remainder did not fit");
  }
  return {hi.value, ToDouble(rest)};
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_DYADIC_H_

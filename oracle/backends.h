// The two arithmetic backends of the oracle. Each gives a big-integer type
// for the exact rational statistics and an enclosure of r = 1/sqrt(q) for a
// rational q > 0. They share no arithmetic: cpp_int with an exact integer
// square root, versus GMP integers with MPFR's directed-rounding sqrt.
// Internal to oracle/.
#ifndef LNV_ORACLE_BACKENDS_H_
#define LNV_ORACLE_BACKENDS_H_

#include <mpfr.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <boost/multiprecision/gmp.hpp>
#include <cmath>
#include <cstdint>

#include "oracle/rat.h"

namespace lnv::oracle_internal {

// r in [lo, hi]; lo == hi (and exact) when r is rational.
template <class Int>
struct Enclosure {
  Rat<Int> lo, hi;
  bool exact = false;
};

// [e.lo, e.hi] / den (e.lo > 0, den > 0) widened outward to dyadics (den 1)
// at 2^-F, F = bits + 8 - floor(log2(e.lo / den)): floor(2^F e.lo / den) and
// ceil(2^F e.hi / den) over 2^F. Each end moves by less than 2^-F <=
// 2^-(bits+8) e.lo / den, so an enclosure about 2^-bits wide (relative)
// stays about that wide, and keeps narrowing as `bits` grows.
template <class Int>
Enclosure<Int> DyadicQuotient(const Enclosure<Int>& e, const Int& den, int bits) {
  const Rat<Int> lo{e.lo.num, Int(e.lo.den * den), e.lo.exp};
  const Rat<Int> hi{e.hi.num, Int(e.hi.den * den), e.hi.exp};
  const std::int64_t F = bits + 8 - FloorLog2(lo);
  Enclosure<Int> out;
  out.lo = Rat<Int>{ScaleToInteger(lo, F, false), Int(1), -F};
  out.hi = Rat<Int>{ScaleToInteger(hi, F, true), Int(1), -F};
  return out;
}

// q = num/den * 2^exp with num, den > 0 and exp even (callers normalize).
template <class Int>
struct PositiveRat {
  Int num, den;
  std::int64_t exp;
};

// floor(sqrt(n)) by Newton's iteration from above (Brent & Zimmermann,
// Modern Computer Arithmetic, Alg. 1.13 SqrtInt): from any x0 >= floor(sqrt(n))
// the sequence x <- floor((x + floor(n/x))/2) decreases until it reaches
// floor(sqrt(n)), where it stops decreasing. The start is taken from a binary64
// estimate of the top bits, rounded up generously so that it is above the root.
template <class Int>
Int ISqrt(const Int& n) {
  if (n.is_zero()) return n;
  const std::int64_t bits = static_cast<std::int64_t>(msb(n)) + 1;
  std::int64_t shift = bits > 104 ? bits - 104 : 0;
  if (shift % 2) ++shift;
  const Int top = n >> static_cast<unsigned>(shift);  // < 2^104: exact in two doubles
  const double hi = std::ldexp(static_cast<double>(static_cast<std::uint64_t>(top >> 52)), 52);
  const double lo =
      static_cast<double>(static_cast<std::uint64_t>(top & Int((std::uint64_t{1} << 52) - 1)));
  // sqrt(top) * (1 + 2^-40) + 2 is above sqrt(top + 1), so x0 > sqrt(n).
  const double est = std::sqrt(hi + lo) * (1.0 + 0x1p-40) + 2.0;
  Int x = Int(static_cast<std::uint64_t>(std::ldexp(est, -20)) + 1)
          << 20;  // keep it an integer >= est
  x <<= static_cast<unsigned>(shift / 2);
  while (true) {
    Int y = (x + n / x) >> 1;
    if (y >= x) return x;
    x = y;
  }
}

// If num*den is a perfect square, r = sqrt(num*den)/num * 2^(-exp/2) exactly.
template <class Int>
bool ExactRecipSqrt(const PositiveRat<Int>& q, Rat<Int>* r) {
  Int m = q.num * q.den;
  Int root = ISqrt(m);
  if (root * root != m) return false;
  r->num = root;
  r->den = q.num;
  r->exp = -q.exp / 2;
  return true;
}

// cpp_int: sqrt(num/den) = sqrt(num*den)/num. With M = num*den and s chosen
// so that M*4^s has about 2*bits bits, L = isqrt(floor(M*4^s)) satisfies
// L <= sqrt(M)*2^s < L+1 (floor(sqrt(floor(x))) = floor(sqrt(x)) for x >= 0),
// so 1/sqrt(q) = sqrt(M)/num * 2^(-exp/2) lies in [L, L+1]/num * 2^(-s-exp/2).
// cpp_int with 512 bits kept inside the object: the exact path's usual
// integers (a row's scaled x, its sums, the enclosures at 2p + 40 bits) then
// need no heap allocation, which cost more than the arithmetic (most of all
// under the fuzz build's AddressSanitizer). Larger values still grow on the
// heap; only the storage differs from cpp_int, never a value.
using BoostInt = boost::multiprecision::number<boost::multiprecision::cpp_int_backend<
    512, 0, boost::multiprecision::signed_magnitude, boost::multiprecision::unchecked,
    std::allocator<boost::multiprecision::limb_type>>>;

struct BoostBackend {
  using Int = BoostInt;
  // Per-element products in fixed-width dyadics when they fit (dyadic.h).
  static constexpr bool kFixedWidthElements = true;
  static Enclosure<Int> RecipSqrt(const PositiveRat<Int>& q, int bits) {
    Int m = q.num * q.den;
    const std::int64_t mbits = static_cast<std::int64_t>(msb(m)) + 1;
    const std::int64_t s = bits - mbits / 2;
    Int scaled =
        s >= 0 ? Int(m << static_cast<unsigned>(2 * s)) : Int(m >> static_cast<unsigned>(-2 * s));
    Int root = ISqrt(scaled);
    Enclosure<Int> e;
    e.lo = Rat<Int>{root, q.num, -s - q.exp / 2};
    e.hi = Rat<Int>{Int(root + 1), q.num, -s - q.exp / 2};
    return e;
  }
};

// GMP integers; MPFR computes t = den/num rounded down and up at `bits` bits,
// then sqrt(t) rounded the same way; 1/sqrt(q) = sqrt(den/num) * 2^(-exp/2).
// Every MPFR number is a dyadic rational, read back exactly with get_z_2exp.
struct MpfrBackend {
  using Int = boost::multiprecision::mpz_int;
  static constexpr bool kFixedWidthElements = false;
  static Enclosure<Int> RecipSqrt(const PositiveRat<Int>& q, int bits) {
    Enclosure<Int> e;
    e.lo = Bound(q, bits, MPFR_RNDD);
    e.hi = Bound(q, bits, MPFR_RNDU);
    return e;
  }

 private:
  static Rat<Int> Bound(const PositiveRat<Int>& q, int bits, mpfr_rnd_t dir) {
    mpfr_t n, d, t;
    mpfr_init2(n, static_cast<mpfr_prec_t>(msb(q.num) + 1));
    mpfr_init2(d, static_cast<mpfr_prec_t>(msb(q.den) + 1));
    mpfr_init2(t, bits);
    mpfr_set_z(n, q.num.backend().data(), MPFR_RNDN);  // exact: enough bits
    mpfr_set_z(d, q.den.backend().data(), MPFR_RNDN);
    mpfr_div(t, d, n, dir);
    mpfr_sqrt(t, t, dir);
    Int z;
    mpfr_exp_t ze = mpfr_get_z_2exp(z.backend().data(), t);
    mpfr_clears(n, d, t, static_cast<mpfr_ptr>(nullptr));
    return Rat<Int>{z, Int(1), static_cast<std::int64_t>(ze) - q.exp / 2};
  }
};

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_BACKENDS_H_

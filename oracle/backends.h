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
#include <cstdint>

#include "oracle/rat.h"

namespace lnv::oracle_internal {

// r in [lo, hi]; lo == hi (and exact) when r is rational.
template <class Int>
struct Enclosure {
  Rat<Int> lo, hi;
  bool exact = false;
};

// q = num/den * 2^exp with num, den > 0 and exp even (callers normalize).
template <class Int>
struct PositiveRat {
  Int num, den;
  std::int64_t exp;
};

// If num*den is a perfect square, r = sqrt(num*den)/num * 2^(-exp/2) exactly.
template <class Int>
bool ExactRecipSqrt(const PositiveRat<Int>& q, Rat<Int>* r) {
  Int m = q.num * q.den;
  Int rem;
  Int root = sqrt(m, rem);
  if (!rem.is_zero()) return false;
  r->num = root;
  r->den = q.num;
  r->exp = -q.exp / 2;
  return true;
}

// cpp_int: sqrt(num/den) = sqrt(num*den)/num. With M = num*den and s chosen
// so that M*4^s has about 2*bits bits, L = isqrt(floor(M*4^s)) satisfies
// L <= sqrt(M)*2^s < L+1 (floor(sqrt(floor(x))) = floor(sqrt(x)) for x >= 0),
// so 1/sqrt(q) = sqrt(M)/num * 2^(-exp/2) lies in [L, L+1]/num * 2^(-s-exp/2).
struct BoostBackend {
  using Int = boost::multiprecision::cpp_int;
  static Enclosure<Int> RecipSqrt(const PositiveRat<Int>& q, int bits) {
    Int m = q.num * q.den;
    const std::int64_t mbits = static_cast<std::int64_t>(msb(m)) + 1;
    const std::int64_t s = bits - mbits / 2;
    Int scaled = s >= 0 ? Int(m << static_cast<unsigned>(2 * s))
                        : Int(m >> static_cast<unsigned>(-2 * s));
    Int root = sqrt(scaled);
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

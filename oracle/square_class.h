// Square classes of positive rationals: q and q' are in one class iff q q'
// is the square of a rational, and then sqrt(q/q') is rational. The oracle
// groups dgamma's rows by the class of q so that each class's terms add up to
// one rational times one root. Internal to oracle/.
#ifndef LNV_ORACLE_SQUARE_CLASS_H_
#define LNV_ORACLE_SQUARE_CLASS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>

#include "oracle/backends.h"
#include "oracle/rat.h"

namespace lnv::oracle_internal {

// The odd primes whose quadratic characters key the square classes below.
constexpr std::uint32_t kKeyPrimes[] = {3,  5,  7,   11,  13,  17,  19,  23,  29,  31, 37,
                                        41, 43, 47,  53,  59,  61,  67,  71,  73,  79, 83,
                                        89, 97, 101, 103, 107, 109, 113, 127, 131, 137};

// Euler's criterion: whether a (0 < a < p, p an odd prime) is a square mod p.
inline bool IsQuadraticResidue(std::uint32_t a, std::uint32_t p) {
  std::uint64_t result = 1, base = a;
  for (std::uint32_t e = (p - 1) / 2; e > 0; e >>= 1) {
    if (e & 1) result = result * base % p;
    base = base * base % p;
  }
  return result == 1;
}

// A necessary condition for positive integers P, P' to have a square product,
// cheap enough to bucket thousands of rows (an exact test on every pair would
// be quadratic in big square roots). The primes 2, 3, ..., 137 are divided out
// of P in turn; the key holds the parity of each exponent and, for each odd p,
// whether what is left, T, is a square mod p. If P P' is a square, the
// parities agree, so T T' is a square prime to p and (T/p) = (T'/p).
struct ClassKey {
  std::uint64_t odd_exponents = 0, nonresidues = 0;
  bool operator==(const ClassKey&) const = default;
};

struct ClassKeyHash {
  std::size_t operator()(const ClassKey& k) const {
    return std::hash<std::uint64_t>()(k.odd_exponents * 0x9e3779b97f4a7c15ull ^ k.nonresidues);
  }
};

// The key of an integer t > 0 (t = P = n m of q = n/m 2^e, e even).
template <class Int>
ClassKey SquareClassKey(Int t) {
  ClassKey key;
  const auto twos = lsb(t);
  key.odd_exponents = twos & 1;
  t >>= twos;
  for (std::size_t i = 0; i < std::size(kKeyPrimes); ++i) {
    const std::uint32_t prime = kKeyPrimes[i];
    unsigned exponent = 0;
    std::uint32_t rem = integer_modulus(t, prime);
    for (; rem == 0; rem = integer_modulus(t, prime)) {
      t /= prime;
      ++exponent;
    }
    if (exponent & 1) key.odd_exponents |= std::uint64_t{2} << i;
    if (!IsQuadraticResidue(rem, prime)) key.nonresidues |= std::uint64_t{1} << i;
  }
  return key;
}

// rho = sqrt(q_i / q_k), if it is rational; pi and pk are P = n m of q = n/m 2^e
// (e even, as PositiveRat keeps it). q_i / q_k = P_i P_k / (m_i n_k)^2 2^(e_i - e_k), so rho is
// rational iff P_i P_k is a perfect square, and then rho = sqrt(P_i P_k) / (m_i n_k) 2^((e_i -
// e_k)/2).
template <class Int>
bool RationalRootRatio(const PositiveRat<Int>& qi, const Int& pi, const PositiveRat<Int>& qk,
                       const Int& pk, Rat<Int>* rho) {
  const Int product = pi * pk;
  const Int root = ISqrt(product);
  if (root * root != product) return false;
  const Int den = qi.den * qk.num;
  const Int common = gcd(root, den);  // keeps the class sums' denominators small
  rho->num = root / common;
  rho->den = den / common;
  rho->exp = (qi.exp - qk.exp) / 2;
  return true;
}

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_SQUARE_CLASS_H_

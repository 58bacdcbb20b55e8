// The square-class helpers of the dgamma grouping, on both integer types:
// the key must never separate a class (it buckets rows before the exact test),
// and the exact test must hold at the boundary next to a square.
#include "oracle/square_class.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace lnv {
namespace {

using oracle_internal::BoostBackend;
using oracle_internal::MpfrBackend;
using oracle_internal::PositiveRat;
using oracle_internal::Rat;
using oracle_internal::RationalRootRatio;
using oracle_internal::SquareClassKey;

template <class Int>
Int RandomInt(std::mt19937_64& rng, int max_limbs) {
  Int n = 0;
  const int limbs = 1 + static_cast<int>(rng() % max_limbs);
  for (int l = 0; l < limbs; ++l) n = (n << 64) + Int(rng());
  return n == 0 ? Int(1) : n;
}

// Small prime factors, so that the key's stripping loop runs.
template <class Int>
Int WithSmallFactors(std::mt19937_64& rng, Int n) {
  for (std::uint32_t p : {2u, 3u, 5u, 137u}) {
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) n *= p;
  }
  return n;
}

template <class Int>
void ExpectKeyIsOnePerClass() {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 500; ++i) {
    const Int a = WithSmallFactors(rng, RandomInt<Int>(rng, 3));
    const Int s = WithSmallFactors(rng, RandomInt<Int>(rng, 2));
    const Int t = WithSmallFactors(rng, RandomInt<Int>(rng, 2));
    ASSERT_EQ(SquareClassKey(Int(a * s * s)), SquareClassKey(Int(a * t * t)))
        << a << " " << s << " " << t;
  }
}

TEST(SquareClassKey, IsTheSameForIntegersWhoseProductIsASquare) {
  ExpectKeyIsOnePerClass<BoostBackend::Int>();
  ExpectKeyIsOnePerClass<MpfrBackend::Int>();
}

TEST(SquareClassKey, SeparatesSmallSquareFreeIntegers) {
  // 139 is the first prime past the key's; it is a non-residue mod 7.
  using Int = BoostBackend::Int;
  const std::vector<int> squarefree = {1, 2, 3, 5, 6, 7, 10, 137, 139};
  for (std::size_t i = 0; i < squarefree.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      EXPECT_FALSE(SquareClassKey(Int(squarefree[i])) == SquareClassKey(Int(squarefree[k])))
          << squarefree[i] << " " << squarefree[k];
    }
  }
}

template <class Int>
PositiveRat<Int> Q(Int num, Int den, std::int64_t exp) {
  return PositiveRat<Int>{num, den, exp};
}

template <class Int>
bool Ratio(const PositiveRat<Int>& qi, const PositiveRat<Int>& qk, Rat<Int>* rho) {
  return RationalRootRatio(qi, Int(qi.num * qi.den), qk, Int(qk.num * qk.den), rho);
}

template <class Int>
void ExpectExactRatios() {
  Rat<Int> rho;
  // The LayerNorm rows (0, 7, 2) and (0, 14, 4): q = 78/9 and 78/9 * 2^2, rho = 1/2.
  ASSERT_TRUE(Ratio(Q<Int>(78, 9, 0), Q<Int>(78, 9, 2), &rho));
  EXPECT_EQ(rho.num, 1);
  EXPECT_EQ(rho.den, 1);
  EXPECT_EQ(rho.exp, -1);
  // The RMSNorm rows (1, 2, 3) and (3, 6, 9): q = 14/3 and 126/3, rho = 1/3.
  ASSERT_TRUE(Ratio(Q<Int>(14, 3, 0), Q<Int>(126, 3, 0), &rho));
  EXPECT_EQ(rho.num, 1);
  EXPECT_EQ(rho.den, 3);
  EXPECT_EQ(rho.exp, 0);
  // q_i q_k next to a square: n^2 - 1 and n^2 + 1 are not squares; n^2 is.
  std::mt19937_64 rng(77);
  for (int i = 0; i < 200; ++i) {
    const Int n = i == 0 ? Int(1) << 27 : RandomInt<Int>(rng, 3) + 1;
    EXPECT_FALSE(Ratio(Q<Int>(Int(n - 1), 1, 0), Q<Int>(Int(n + 1), 1, 0), &rho)) << n;
    EXPECT_FALSE(Ratio(Q<Int>(Int(n * n + 1), 1, 0), Q<Int>(1, 1, 0), &rho)) << n;
    ASSERT_TRUE(Ratio(Q<Int>(Int(n * n), 1, 0), Q<Int>(1, 1, 0), &rho)) << n;
    EXPECT_EQ(rho.num, n);
    EXPECT_EQ(rho.den, 1);
  }
  // q_i = a s^2 2^e_i and q_k = a t^2 2^e_k: rho^2 q_k = q_i exactly.
  for (int i = 0; i < 200; ++i) {
    const Int a = RandomInt<Int>(rng, 2), s = RandomInt<Int>(rng, 1), t = RandomInt<Int>(rng, 1);
    const Int mi = RandomInt<Int>(rng, 1), mk = RandomInt<Int>(rng, 1);
    const std::int64_t ei = 2 * static_cast<std::int64_t>(rng() % 200) - 200;
    const std::int64_t ek = 2 * static_cast<std::int64_t>(rng() % 200) - 200;
    // Unreduced, as the rows' q are: n/m with n m = a s^2 m^2.
    const auto qi = Q<Int>(Int(a * s * s * mi), mi, ei);
    const auto qk = Q<Int>(Int(a * t * t * mk), mk, ek);
    ASSERT_TRUE(Ratio(qi, qk, &rho));
    const Rat<Int> lhs = Mul(Mul(rho, rho), Rat<Int>{qk.num, qk.den, qk.exp});
    EXPECT_EQ(Compare(lhs, Rat<Int>{qi.num, qi.den, qi.exp}), 0);
  }
}

TEST(RationalRootRatio, IsExactOnScaledCopiesAndNextToASquare) {
  ExpectExactRatios<BoostBackend::Int>();
  ExpectExactRatios<MpfrBackend::Int>();
}

}  // namespace
}  // namespace lnv

// Rounding into binary formats: the oracle's single rounding step.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "oracle/backends.h"
#include "oracle/oracle.h"
#include "oracle/rat.h"

namespace lnv {
namespace {

using oracle_internal::BoostBackend;
using oracle_internal::FromDouble;
using oracle_internal::MpfrBackend;
using oracle_internal::Rat;
using oracle_internal::RoundRat;

TEST(RoundToFormat, AgreesWithTheHardwareFloatConversionOnRandomBitPatterns) {
  std::mt19937_64 rng(20261129);
  // RoundRat is independent of the cast that RoundToFormat uses for binary32.
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) continue;
    // Bring the exponent into and around float's range, subnormals included.
    int unused = 0;
    v = std::ldexp(std::frexp(v, &unused), static_cast<int>(rng() % 300) - 160);
    const double want = static_cast<float>(v);
    EXPECT_EQ(RoundToFormat(v, kBinary32), want) << std::hexfloat << v;
    EXPECT_EQ(RoundRat(FromDouble<BoostBackend::Int>(v), kBinary32).value, want)
        << std::hexfloat << v;
  }
}

TEST(RoundToFormat, Bfloat16TiesGoToEven) {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the even neighbour is 1.
  EXPECT_EQ(RoundToFormat(1.0 + 0x1p-8, kBfloat16), 1.0);
  // 1 + 3*2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  EXPECT_EQ(RoundToFormat(1.0 + 3 * 0x1p-8, kBfloat16), 1.0 + 0x1p-6);
  EXPECT_EQ(RoundToFormat(1.0 + 0x1p-8 + 0x1p-30, kBfloat16), 1.0 + 0x1p-7);
}

TEST(RoundToFormat, Binary16OverflowsExactlyAtTheIeeeThreshold) {
  // max fp16 = 65504; values >= 65504 + 16 (half an ulp) round to inf.
  EXPECT_EQ(RoundToFormat(65519.99, kBinary16), 65504.0);
  EXPECT_EQ(RoundToFormat(65520.0, kBinary16), HUGE_VAL);
  EXPECT_EQ(RoundToFormat(-65520.0, kBinary16), -HUGE_VAL);
}

TEST(RoundToFormat, Binary16SubnormalsUseTheFixedSpacing) {
  // Subnormal spacing is 2^-24; 3.5 * 2^-24 ties to 4 * 2^-24 (even).
  EXPECT_EQ(RoundToFormat(3.5 * 0x1p-24, kBinary16), 4 * 0x1p-24);
  EXPECT_EQ(RoundToFormat(2.5 * 0x1p-24, kBinary16), 2 * 0x1p-24);
  EXPECT_EQ(RoundToFormat(0.5 * 0x1p-24, kBinary16), 0.0);  // tie to even zero
  EXPECT_EQ(RoundToFormat(0.51 * 0x1p-24, kBinary16), 0x1p-24);
}

TEST(UlpOf, HasTheSubnormalFloor) {
  EXPECT_EQ(UlpOf(1.0, kBinary32), 0x1p-23);
  EXPECT_EQ(UlpOf(1.5, kBinary16), 0x1p-10);
  EXPECT_EQ(UlpOf(0x1p-140, kBinary32), 0x1p-149);
  EXPECT_EQ(UlpOf(0.0, kBfloat16), 0x1p-133);
  EXPECT_EQ(UlpOf(1.0, kBfloat16), 0x1p-7);
}

template <class Int>
void ExpectRationalRounding() {
  // 1/3 in fp32: 0x1.555556p-2 (the 25th bit and beyond are 0101..., round up).
  Rat<Int> third{Int(1), Int(3), 0};
  EXPECT_EQ(RoundRat(third, kBinary32).value, static_cast<double>(1.0f / 3.0f));
  EXPECT_FALSE(RoundRat(third, kBinary32).exact);
  // An exact midpoint given as a rational with a non-power-of-two denominator:
  // (3 + 3*2^-8)/3 = 1 + 2^-8 ties to 1 in bf16.
  Rat<Int> mid{Int(3 * 256 + 3), Int(3 * 256), 0};
  EXPECT_EQ(RoundRat(mid, kBfloat16).value, 1.0);
  // Overflow to inf, underflow to 0 and to the smallest subnormal.
  EXPECT_EQ(RoundRat(Rat<Int>{Int(1), Int(1), 200}, kBinary32).value, HUGE_VAL);
  EXPECT_EQ(RoundRat(Rat<Int>{Int(-1), Int(1), 128}, kBinary32).value, -HUGE_VAL);
  EXPECT_EQ(RoundRat(Rat<Int>{Int(1), Int(1), -151}, kBinary32).value, 0.0);
  EXPECT_EQ(RoundRat(Rat<Int>{Int(3), Int(1), -151}, kBinary32).value, 0x1p-149);
  EXPECT_EQ(RoundRat(Rat<Int>{Int(1), Int(1), -1074}, kBinary64).value, 0x1p-1074);
}

TEST(RoundRat, RoundsRationalsOnceInBothBackends) {
  ExpectRationalRounding<BoostBackend::Int>();
  ExpectRationalRounding<MpfrBackend::Int>();
}

}  // namespace
}  // namespace lnv

namespace lnv {
namespace {

TEST(ISqrt, MatchesTheLibraryIntegerSquareRootOnRandomAndBoundaryIntegers) {
  using Int = oracle_internal::BoostBackend::Int;
  std::mt19937_64 rng(99);
  for (int i = 0; i < 3000; ++i) {
    Int n = 0;
    const int limbs = 1 + static_cast<int>(rng() % 12);
    for (int l = 0; l < limbs; ++l) n = (n << 64) + Int(rng());
    n >>= static_cast<unsigned>(rng() % 64);
    for (Int m : {n, Int(n * n), Int(n * n - 1), Int(n * n + 1)}) {
      if (m.sign() < 0) continue;
      ASSERT_EQ(oracle_internal::ISqrt(m), boost::multiprecision::sqrt(m)) << m;
    }
  }
  for (std::uint64_t small = 0; small < 5000; ++small) {
    ASSERT_EQ(oracle_internal::ISqrt(Int(small)), boost::multiprecision::sqrt(Int(small))) << small;
  }
}

}  // namespace
}  // namespace lnv

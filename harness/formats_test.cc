#include "harness/formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace lnv {
namespace {

TEST(Formats, MapEachDTypeToItsFormat) {
  EXPECT_EQ(FormatOf(DType::kF32).precision, 24);
  EXPECT_EQ(FormatOf(DType::kF16).precision, 11);
  EXPECT_EQ(FormatOf(DType::kBF16).precision, 8);
  EXPECT_EQ(FormatOf(DType::kF64).precision, 53);
}

TEST(Formats, UlpHasTheSubnormalFloor) {
  EXPECT_EQ(FormatUlp(1.0, kBinary32), std::ldexp(1.0, -23));
  EXPECT_EQ(FormatUlp(1.5, kBfloat16), std::ldexp(1.0, -7));
  EXPECT_EQ(FormatUlp(0.0, kBinary32), std::ldexp(1.0, -149));
  EXPECT_EQ(FormatUlp(std::ldexp(1.0, -140), kBinary32), std::ldexp(1.0, -149));
  EXPECT_EQ(FormatUlp(std::ldexp(1.0, -20), kBinary16), std::ldexp(1.0, -24));
  EXPECT_EQ(FormatUlp(65504.0, kBinary16), 32.0);
}

TEST(Formats, UlpAgreesWithTheOracles) {
  for (FloatFormat f : {kBinary32, kBinary16, kBfloat16, kBinary64}) {
    for (double v : {0.0, 1.0, -3.75, 1e-30, 1e-300, 6e4, 1e38, std::ldexp(1.0, -140)}) {
      EXPECT_EQ(FormatUlp(v, f), UlpOf(v, f)) << v;
    }
  }
}

// FormatUlp, UnitRoundoff and UnderflowUnit build their powers of two from
// bits: the same values as ldexp over every binade of a double, the binary64
// subnormals (ulp 2^-1074) and the clamps at emin and emax included.
TEST(Formats, UlpIsLdexpOfTheClampedExponentOverEveryBinade) {
  for (FloatFormat f : {kBinary32, kBinary16, kBfloat16, kBinary64}) {
    EXPECT_EQ(UnitRoundoff(f), std::ldexp(1.0, -f.precision));
    EXPECT_EQ(UnderflowUnit(f), std::ldexp(1.0, f.emin - f.precision + 1));
    for (int e = -1074; e <= 1023; ++e) {
      const double v = -1.5 * std::ldexp(1.0, e);  // below 2^1024; its binade is ilogb(v)
      const int clamped = std::clamp(std::ilogb(v), f.emin, f.emax);
      ASSERT_EQ(FormatUlp(v, f), std::ldexp(1.0, clamped - f.precision + 1)) << e;
    }
  }
}

TEST(Formats, RepresentabilityIsExact) {
  EXPECT_TRUE(IsRepresentable(1.0 + std::ldexp(1.0, -23), kBinary32));
  EXPECT_FALSE(IsRepresentable(1.0 + std::ldexp(1.0, -24), kBinary32));
  EXPECT_TRUE(IsRepresentable(std::ldexp(1.0, -149), kBinary32));
  EXPECT_FALSE(IsRepresentable(std::ldexp(1.0, -150), kBinary32));
  EXPECT_TRUE(IsRepresentable(std::ldexp(3.0, -150), kBinary64));
  EXPECT_TRUE(IsRepresentable(65504.0, kBinary16));
  EXPECT_FALSE(IsRepresentable(65505.0, kBinary16));
  EXPECT_FALSE(IsRepresentable(1e6, kBinary16));
  EXPECT_TRUE(IsRepresentable(1.0078125, kBfloat16));    // 1 + 2^-7
  EXPECT_FALSE(IsRepresentable(1.00390625, kBfloat16));  // 1 + 2^-8
  EXPECT_TRUE(IsRepresentable(std::numeric_limits<double>::quiet_NaN(), kBinary16));
  EXPECT_TRUE(IsRepresentable(-std::numeric_limits<double>::infinity(), kBfloat16));
  EXPECT_TRUE(IsRepresentable(-0.0, kBinary16));
}

TEST(Formats, Binary32ContainsTheHalfFormatsButNotConversely) {
  EXPECT_TRUE(FormatContains(kBinary32, kBfloat16));
  EXPECT_TRUE(FormatContains(kBinary32, kBinary16));
  EXPECT_TRUE(FormatContains(kBinary64, kBinary32));
  EXPECT_FALSE(FormatContains(kBinary32, kBinary64));
  EXPECT_FALSE(FormatContains(kBfloat16, kBinary32));
  EXPECT_FALSE(FormatContains(kBinary16, kBfloat16));
}

}  // namespace
}  // namespace lnv

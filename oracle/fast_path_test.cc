// The fast path's building blocks at their edges: NextUp/NextDown are
// std::nextafter toward +-inf, and DecideFast accepts a value only when every
// point of its error interval rounds alike (ties, near-ties, the overflow
// threshold, subnormal outputs), so that it never decides what the exact path
// would decide differently.
#include "oracle/fast_path.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace lnv::oracle_internal {
namespace {

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(FastPathNeighbours, AreNextafterTowardInfinityOnEdgesAndRandomBits) {
  const double edges[] = {
      0.0,  -0.0,    0x1p-1074, -0x1p-1074,           DBL_MIN, -DBL_MIN, 0x1p-1022 - 0x1p-1074, 1.0,
      -1.0, DBL_MAX, -DBL_MAX,  0x1.fffffffffffffp-1, 3.5};
  for (double x : edges) {
    EXPECT_TRUE(SameBits(NextUp(x), std::nextafter(x, HUGE_VAL))) << std::hexfloat << x;
    EXPECT_TRUE(SameBits(NextDown(x), std::nextafter(x, -HUGE_VAL))) << std::hexfloat << x;
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    double x;
    const std::uint64_t bits = rng();
    std::memcpy(&x, &bits, sizeof x);
    if (!std::isfinite(x)) continue;
    ASSERT_TRUE(SameBits(NextUp(x), std::nextafter(x, HUGE_VAL))) << std::hexfloat << x;
    ASSERT_TRUE(SameBits(NextDown(x), std::nextafter(x, -HUGE_VAL))) << std::hexfloat << x;
  }
}

// The tie between 1 and the next binary32 value, 1 + 2^-23.
constexpr double kTie = 1.0 + 0x1p-24;

TEST(FastPathDecision, RefusesAnIntervalHoldingATieAndAcceptsOneBesideIt) {
  ExactValue out;
  EXPECT_FALSE(DecideFast(Ed{kTie, 0.0}, kBinary32, &out));  // exactly a tie: the exact path
  EXPECT_FALSE(DecideFast(Ed{kTie + 0x1p-60, 0x1p-59}, kBinary32, &out));  // straddles it
  EXPECT_FALSE(DecideFast(Ed{kTie - 0x1p-60, 0x1p-59}, kBinary32, &out));
  ASSERT_TRUE(DecideFast(Ed{kTie + 0x1p-40, 0x1p-60}, kBinary32, &out));  // just above
  EXPECT_EQ(out.rounded, 1.0 + 0x1p-23);
  ASSERT_TRUE(DecideFast(Ed{kTie - 0x1p-40, 0x1p-60}, kBinary32, &out));  // just below
  EXPECT_EQ(out.rounded, 1.0);
  // Decided, but the interval is wider than 2p = 48 bits: not an exact value.
  EXPECT_FALSE(DecideFast(Ed{1.25, 0x1p-47}, kBinary32, &out));
}

TEST(FastPathDecision, DecidesTheOverflowThresholdOnlyClearOfIt) {
  ExactValue out;
  const double threshold = (2.0 - 0x1p-24) * 0x1p127;  // rounds to +inf in binary32 (a tie)
  EXPECT_FALSE(DecideFast(Ed{threshold, 0x1p60}, kBinary32, &out));
  ASSERT_TRUE(DecideFast(Ed{threshold + 0x1p80, 0x1p50}, kBinary32, &out));
  EXPECT_EQ(out.rounded, HUGE_VAL);
  ASSERT_TRUE(DecideFast(Ed{threshold - 0x1p80, 0x1p50}, kBinary32, &out));
  EXPECT_EQ(out.rounded, static_cast<double>(FLT_MAX));
  EXPECT_FALSE(DecideFast(Ed{DBL_MAX, 0x1p970}, kBinary32, &out));  // y + err overflows binary64
}

TEST(FastPathDecision, RoundsIntoSubnormalsAndRefusesTheirTies) {
  ExactValue out;
  const double sub = 0x1p-149;  // binary32's smallest subnormal
  ASSERT_TRUE(DecideFast(Ed{3 * sub + 0x1p-180, 0x1p-200}, kBinary32, &out));
  EXPECT_EQ(out.rounded, 3 * sub);
  EXPECT_FALSE(DecideFast(Ed{2.5 * sub, 0x1p-200}, kBinary32, &out));  // a subnormal tie
  ASSERT_TRUE(DecideFast(Ed{2.5 * sub + 0x1p-170, 0x1p-200}, kBinary32, &out));
  EXPECT_EQ(out.rounded, 3 * sub);
  ASSERT_TRUE(DecideFast(Ed{-0.25 * sub, 0x1p-200}, kBinary32, &out));  // rounds to -0
  EXPECT_TRUE(SameBits(out.rounded, -0.0));
  EXPECT_FALSE(DecideFast(Ed{0.0, 0x1p-200}, kBinary32, &out));  // sign undecided
}

TEST(FastPathDecision, DecidesNarrowFormatsWithTheirOwnTies) {
  ExactValue out;
  const double bf16_tie = 1.0 + 0x1p-8;  // between 1 and 1 + 2^-7 in bfloat16
  EXPECT_FALSE(DecideFast(Ed{bf16_tie, 0x1p-40}, kBfloat16, &out));
  ASSERT_TRUE(DecideFast(Ed{bf16_tie + 0x1p-30, 0x1p-40}, kBfloat16, &out));
  EXPECT_EQ(out.rounded, 1.0 + 0x1p-7);
  const double f16_tie = 1.0 + 0x1p-11;
  EXPECT_FALSE(DecideFast(Ed{f16_tie, 0x1p-40}, kBinary16, &out));
  ASSERT_TRUE(DecideFast(Ed{f16_tie - 0x1p-30, 0x1p-40}, kBinary16, &out));
  EXPECT_EQ(out.rounded, 1.0);
  EXPECT_FALSE(DecideFast(Ed{1.0, 0.0}, kBinary64, &out));  // binary64 cannot hold 2p bits
}

}  // namespace
}  // namespace lnv::oracle_internal

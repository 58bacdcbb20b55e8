#include "properties/approx.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lnv::props {
namespace {

TEST(Approx, ASumOfTenthsKeepsItsExactValueInsideItsErrorBound) {
  // 0.1 is not a double: Rounded(0.1) carries its representation error, and
  // ten additions carry theirs; the exact sum of ten exact tenths is 1.
  Approx s = Exact(0);
  for (int i = 0; i < 10; ++i) s = s + Rounded(0.1);
  EXPECT_NE(s.v, 1.0);                    // the computed value is off ...
  EXPECT_TRUE(Within(s, Exact(1.0), 0));  // ... by less than its bound
}

// y = -inf = gamma xhat + beta with gamma = -inf: inf - inf is NaN, not a gap.
TEST(Approx, WithinTakesEqualInfinitiesAsAgreementButNotNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(Within(Exact(-inf), Exact(-inf), 0));  // false before: |-inf - -inf| is NaN
  EXPECT_TRUE(Within(Exact(inf), Exact(inf) * Exact(2), 0));
  EXPECT_FALSE(Within(Exact(inf), Exact(std::nan("")), 0));  // the negative controls
  EXPECT_FALSE(Within(Exact(std::nan("")), Exact(std::nan("")), 0));
}

TEST(Approx, WithinRejectsAValueFartherThanTheErrorsAndTheTolerance) {
  const Approx a = Rounded(1.0);
  const Approx b = Exact(1.0 + 0x1p-40);
  EXPECT_FALSE(Within(a, b, 0));  // the negative control: 2^-40 >> u
  EXPECT_TRUE(Within(a, b, 0x1p-40));
  EXPECT_FALSE(Within(a, b, 0x1p-41));
}

TEST(Approx, ProductsQuotientsAndRootsBoundTheirExactValues) {
  const Approx third = Exact(1) / Exact(3);
  EXPECT_TRUE(Within(third * Exact(3), Exact(1), 0));
  EXPECT_GT(third.err, 0);
  const Approx root = Sqrt(Exact(2));
  EXPECT_TRUE(Within(root * root, Exact(2), 0));
  EXPECT_FALSE(Within(root * root, Exact(2 + 0x1p-45), 0));
}

TEST(Approx, ADivisorThatMayBeZeroGivesNoBound) {
  const Approx maybe_zero{1e-300, 1e-299};
  EXPECT_TRUE(std::isinf((Exact(1) / maybe_zero).err));
}

TEST(Approx, AtMostAllowsOnlyTheErrorsAndTheTolerance) {
  EXPECT_TRUE(AtMost(Exact(1), Exact(1), 0));
  EXPECT_FALSE(AtMost(Exact(1 + 0x1p-30), Exact(1), 0));
  EXPECT_TRUE(AtMost(Exact(1 + 0x1p-30), Exact(1), 0x1p-30));
}

}  // namespace
}  // namespace lnv::props

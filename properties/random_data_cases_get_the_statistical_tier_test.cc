// PropertyCase::Run judges a case drawn from a random-data family under the
// statistical tier (as ln_check does, TypicalTierFor), and any other case
// under the deterministic tier alone: the tier's own power is proven by the
// judge's tests and the ln_check control (first_half_statistics).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "harness/families.h"
#include "properties/property.h"

namespace lnv::props {
namespace {

Case FamilyCase(const std::string& family) {
  FamilyParams p;
  p.d = 256;
  p.rows = 3;
  p.seed = 7;
  return GenerateCase(*FindFamily(family), p);
}

// Whether some element of y carries the statistical tier's bound.
bool HasTypicalBound(const Case& c) {
  const ImplInfo* k = FindImpl("f32/two_pass/cpu-scalar");
  EXPECT_NE(k, nullptr);
  Targets t;
  t.kernels = {k};
  const PropertyCase pc("RandomDataCasesGetTheStatisticalTier", t);
  const auto run = pc.Run(*k, c, ComputeReference(c));
  EXPECT_TRUE(run.has_value());
  if (!run) return false;
  for (std::int64_t i = 0; i < run->Count(Output::kY); ++i) {
    if (std::isfinite(run->At(Output::kY, i).typical_bound)) return true;
  }
  return false;
}

TEST(RandomDataCases, GetTheStatisticalTierInTheProperties) {
  EXPECT_TRUE(HasTypicalBound(FamilyCase("standard_normal")));
  EXPECT_TRUE(HasTypicalBound(FamilyCase("rows_differ")));
}

TEST(AdversarialCases, KeepOnlyTheDeterministicTierInTheProperties) {
  EXPECT_FALSE(HasTypicalBound(FamilyCase("large_mean")));
  Case drawn = FamilyCase("standard_normal");
  drawn.provenance.family = "";  // a RapidCheck-drawn case has no family
  EXPECT_FALSE(HasTypicalBound(drawn));
}

}  // namespace
}  // namespace lnv::props

// The one plan (BudgetPlan): what each family's row in AllFamilies() states.
#include <gtest/gtest.h>

#include <bit>
#include <set>
#include <string>

#include "harness/driver.h"
#include "harness/families.h"

namespace lnv {
namespace {

TEST(BudgetPlan, EveryFamilyIsInEveryBudget) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    std::set<std::string> planned;
    for (const PlannedRun& p : BudgetPlan(b)) planned.insert(p.family);
    for (const Family& f : AllFamilies()) {
      EXPECT_TRUE(planned.contains(std::string(f.name))) << f.name << " in " << BudgetName(b);
    }
  }
}

// The plan is the families' rows, nothing else: each run is one of its
// family's shapes (at seed offset 0 or, in the full budget, 1 more).
TEST(BudgetPlan, EachRunIsAShapeItsFamilyStates) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    std::size_t expected = 0;
    for (const Family& f : AllFamilies()) {
      expected += (b == Budget::kQuick ? f.quick.size() : 2 * f.full.size());
    }
    const std::vector<PlannedRun> plan = BudgetPlan(b);
    EXPECT_EQ(plan.size(), expected) << BudgetName(b);
    for (const PlannedRun& r : plan) {
      const Family* f = FindFamily(r.family);
      ASSERT_NE(f, nullptr) << r.family;
      bool found = false;
      for (const FamilyShape& s : b == Budget::kQuick ? f->quick : f->full) {
        found |= s.d == r.d && s.rows == r.rows && s.with_dy == r.with_dy && s.roles == r.roles &&
                 (r.seed_offset == s.seed_offset ||
                  (b == Budget::kFull && r.seed_offset == s.seed_offset + 1));
      }
      EXPECT_TRUE(found) << r.family << " d=" << r.d << " rows=" << r.rows;
    }
  }
}

TEST(BudgetPlan, TheDSweepGoesFromOneTo65536OnStandardNormalRows) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    std::set<std::int64_t> swept;
    for (const PlannedRun& p : BudgetPlan(b)) {
      if (!(p.roles & kRoleDSweep)) continue;
      EXPECT_EQ(p.family, "standard_normal");
      swept.insert(p.d);
    }
    ASSERT_FALSE(swept.empty());
    EXPECT_EQ(*swept.begin(), 1);
    EXPECT_EQ(*swept.rbegin(), 65536);
    EXPECT_GE(swept.size(), b == Budget::kQuick ? 6u : 15u) << BudgetName(b);
  }
}

TEST(BudgetPlan, KappaAndMagnitudeChartsComeFromTheFamiliesThatSweepThem) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    bool kappa = false, magnitude = false;
    for (const PlannedRun& p : BudgetPlan(b)) {
      if (p.roles & kRoleKappa) {
        EXPECT_EQ(p.family, "large_mean");
      }
      if (p.family == "tiny_magnitude" || p.family == "huge_magnitude") {
        EXPECT_TRUE(p.roles & kRoleMagnitude) << p.family;
      }
      kappa |= (p.roles & kRoleKappa) != 0;
      magnitude |= (p.roles & kRoleMagnitude) != 0;
    }
    EXPECT_TRUE(kappa && magnitude) << BudgetName(b);
  }
}

// The dropped-element families run where their controls show: a long ramp
// past 2^17 whose tail past the last power of two is a sizeable share of it,
// one outlier past 2^16, and odd as well as even batches of rows that differ.
TEST(BudgetPlan, BothBudgetsPlanLongRampsOutliersPast2To16AndOddAndEvenBatches) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    bool long_ramp = false, long_outlier = false, odd_batch = false, even_batch = false;
    for (const PlannedRun& r : BudgetPlan(b)) {
      const std::int64_t below = std::bit_floor(static_cast<std::uint64_t>(r.d));
      long_ramp |= r.family == "ramp" && below >= 131072 && r.d - below >= r.d / 16;
      long_outlier |= r.family == "one_outlier" && r.d > 65536;
      odd_batch |= r.family == "rows_differ" && r.rows >= 3 && r.rows % 2 == 1;
      even_batch |= r.family == "rows_differ" && r.rows % 2 == 0;
    }
    EXPECT_TRUE(long_ramp) << BudgetName(b);
    EXPECT_TRUE(long_outlier) << BudgetName(b);
    EXPECT_TRUE(odd_batch) << BudgetName(b);
    EXPECT_TRUE(even_batch) << BudgetName(b);
  }
}

// The flags that were name lists: random data, and the typical model within it.
TEST(BudgetPlan, TheTypicalModelHoldsOnlyOnRandomDataFamilies) {
  int random = 0;
  for (const Family& f : AllFamilies()) {
    if (f.typical_model) {
      EXPECT_TRUE(f.random_data) << f.name;
    }
    random += f.random_data;
  }
  EXPECT_EQ(random, 6);
  EXPECT_FALSE(HoldsTheTypicalModel("heavy_tails"));
  EXPECT_TRUE(IsRandomDataFamily("heavy_tails"));
  EXPECT_FALSE(IsRandomDataFamily("no_such_family"));
}

TEST(BudgetPlan, TheFullBudgetRunsMoreThanTheQuickOne) {
  EXPECT_GT(BudgetPlan(Budget::kFull).size(), 2 * BudgetPlan(Budget::kQuick).size());
}

}  // namespace
}  // namespace lnv

#include "reports/plan.h"

#include <gtest/gtest.h>

#include <set>

#include "harness/families.h"

namespace lnv::report {
namespace {

TEST(ReportPlan, EveryFamilyIsInEveryBudget) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    std::set<std::string> planned;
    for (const PlanItem& p : ReportPlan(b)) planned.insert(p.family);
    for (const Family& f : AllFamilies()) {
      EXPECT_TRUE(planned.count(std::string(f.name))) << f.name << " in " << BudgetName(b);
    }
  }
}

TEST(ReportPlan, TheDSweepGoesFromOneTo65536) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    const std::vector<std::int64_t> ds = DSweepValues(b);
    EXPECT_EQ(ds.front(), 1);
    EXPECT_EQ(ds.back(), 65536);
    std::set<std::int64_t> swept;
    for (const PlanItem& p : ReportPlan(b)) {
      if (p.roles & kRoleDSweep) swept.insert(p.d);
    }
    EXPECT_EQ(swept, std::set<std::int64_t>(ds.begin(), ds.end()));
  }
}

TEST(ReportPlan, KappaAndMagnitudeChartsComeFromTheFamiliesThatSweepThem) {
  for (const PlanItem& p : ReportPlan(Budget::kQuick)) {
    if (p.roles & kRoleKappa) {
      EXPECT_EQ(p.family, "large_mean");
    }
    if (p.family == "tiny_magnitude" || p.family == "huge_magnitude") {
      EXPECT_TRUE(p.roles & kRoleMagnitude);
    }
  }
}

// rows_differ catches a row given its neighbour's statistics only in an odd
// batch, so both budgets run odd and even ones; the full budget also runs
// the long ramps and outliers (past 2^16 and 2^17).
TEST(ReportPlan, RowsDifferRunInOddAndEvenBatchesAndTheFullBudgetHasLongRamps) {
  for (Budget b : {Budget::kQuick, Budget::kFull}) {
    bool odd = false, even = false, long_ramp = false;
    for (const PlanItem& p : ReportPlan(b)) {
      odd |= p.family == "rows_differ" && p.rows >= 3 && p.rows % 2 == 1;
      even |= p.family == "rows_differ" && p.rows % 2 == 0;
      long_ramp |= p.family == "ramp" && p.d > 131072;
    }
    EXPECT_TRUE(odd) << BudgetName(b);
    EXPECT_TRUE(even) << BudgetName(b);
    EXPECT_EQ(long_ramp, b == Budget::kFull) << BudgetName(b);
  }
}

TEST(ReportPlan, TheFullBudgetMeasuresMoreThanTheQuickOne) {
  EXPECT_GT(ReportPlan(Budget::kFull).size(), 2 * ReportPlan(Budget::kQuick).size());
}

}  // namespace
}  // namespace lnv::report

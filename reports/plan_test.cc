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

TEST(ReportPlan, TheFullBudgetMeasuresMoreThanTheQuickOne) {
  EXPECT_GT(ReportPlan(Budget::kFull).size(), 2 * ReportPlan(Budget::kQuick).size());
}

}  // namespace
}  // namespace lnv::report

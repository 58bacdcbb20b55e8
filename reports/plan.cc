#include "reports/plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "harness/families.h"

namespace lnv::report {
namespace {

// Rows per case of the d sweep: enough rows for a spread at small d, one row
// at the largest d, at most `cap` elements per case otherwise.
std::int64_t SweepRows(std::int64_t d, std::int64_t max_rows, std::int64_t cap) {
  return std::clamp<std::int64_t>(cap / d, 1, max_rows);
}

// The families built to expose dropped, repeated and mixed-up elements
// (harness/families.cc).
bool IsDroppedElementFamily(const std::string& name) {
  return name == "ramp" || name == "sorted_rows" || name == "one_outlier" || name == "two_halves" ||
         name == "rows_differ";
}

// Their shapes, as ln_check's (harness/check.cc, BudgetPlan): long ramps
// whose tail past a power of two is a sizeable part of the row, one outlier
// past the first 256-element chunk and past 2^16 and 2^17, rows_differ in
// odd and even batches. The long rows are in the full budget only (but for
// one_outlier's): with the backward that every report case has, each costs
// seconds per group.
void AppendDroppedElementItems(const std::string& name, Budget budget, std::uint64_t seed,
                               std::vector<PlanItem>* plan) {
  using Shape = std::pair<std::int64_t, std::int64_t>;  // d, rows
  const bool quick = budget == Budget::kQuick;
  std::vector<Shape> shapes;
  if (name == "ramp") {
    shapes = quick ? std::vector<Shape>{{7, 5}, {64, 8}}
                   : std::vector<Shape>{
                         {7, 16}, {64, 16}, {768, 16}, {98304 + 1, 2}, {131072 + 16384 + 3, 2}};
  } else if (name == "one_outlier") {
    // Quick too: one row past 2^16 with its outlier first and one with it
    // last, so a kernel that drops the tail of rows longer than 2^16 - 1 is
    // caught by the quick report (as the d sweep's 65536 costs, no more).
    shapes = quick ? std::vector<Shape>{{64, 6}, {4099, 3}, {65536 + 17, 2}}
                   : std::vector<Shape>{{7, 15},   {64, 15},        {768, 6},
                                        {4099, 3}, {65536 + 17, 2}, {131072 + 3, 2}};
  } else if (name == "rows_differ") {
    shapes = quick ? std::vector<Shape>{{64, 7}, {64, 8}}
                   : std::vector<Shape>{{7, 15}, {7, 16}, {64, 15}, {64, 16}, {768, 7}, {768, 8}};
  } else {  // sorted_rows, two_halves
    shapes = quick ? std::vector<Shape>{{64, 8}} : std::vector<Shape>{{7, 16}, {64, 16}, {768, 16}};
  }
  for (const auto& [d, rows] : shapes) plan->push_back({name, d, rows, seed, 0, 0, kRoleNone});
}

}  // namespace

std::vector<std::int64_t> DSweepValues(Budget budget) {
  if (budget == Budget::kQuick) return {1, 7, 64, 768, 4096, 65536};
  return {1, 2, 3, 7, 16, 31, 64, 127, 256, 768, 1024, 4096, 8191, 16384, 65536};
}

std::vector<PlanItem> ReportPlan(Budget budget) {
  const bool quick = budget == Budget::kQuick;
  const std::uint64_t seeds = quick ? 1 : 2;
  std::vector<PlanItem> plan;
  for (std::uint64_t s = 0; s < seeds; ++s) {
    // kappa: large_mean sweeps kappa = 1 ... 1e7 over its rows.
    for (std::int64_t d :
         quick ? std::vector<std::int64_t>{64} : std::vector<std::int64_t>{64, 768, 4096}) {
      plan.push_back({"large_mean", d, quick ? 24 : (d > 1024 ? 16 : 48), s, 0, 0, kRoleKappa});
    }
    // Magnitude: tiny rows up to the normal range, unit-sized rows, huge rows
    // up to 2^(emax-3) (families.cc).
    for (std::int64_t d :
         quick ? std::vector<std::int64_t>{64} : std::vector<std::int64_t>{64, 768}) {
      const std::int64_t rows = quick ? 16 : 32;
      plan.push_back({"tiny_magnitude", d, rows, s, 0, 0, kRoleMagnitude});
      plan.push_back({"huge_magnitude", d, rows, s, 0, 0, kRoleMagnitude});
    }
    // The d sweep on standard normal rows (its d = 64 case also marks the
    // unit magnitude on the magnitude chart).
    for (std::int64_t d : DSweepValues(budget)) {
      const unsigned roles = d == 64 ? kRoleDSweep | kRoleMagnitude : kRoleDSweep;
      plan.push_back({"standard_normal", d, SweepRows(d, quick ? 8 : 16, quick ? 8192 : 65536), s,
                      0, 0, roles});
    }
    // Every other family, for coverage and findings.
    const std::vector<std::int64_t> ds =
        quick ? std::vector<std::int64_t>{64} : std::vector<std::int64_t>{7, 64, 768};
    for (const Family& f : AllFamilies()) {
      const std::string name(f.name);
      if (name == "large_mean" || name == "tiny_magnitude" || name == "huge_magnitude" ||
          name == "standard_normal") {
        continue;
      }
      if (IsDroppedElementFamily(name)) {
        AppendDroppedElementItems(name, budget, s, &plan);
      } else if (name == "large_d") {
        plan.push_back({name, 64, 2, s, quick ? 4099 : 65536 + 17, 0, kRoleNone});
      } else if (name == "many_rows") {
        // The oracle groups dgamma's rows by equal q pairwise, so its cost
        // grows with rows^2 (2048 rows: 0.75 s per dtype group, 8192: 14 s,
        // 65536: about 15 min); 4096 keeps the nightly sweep in minutes.
        plan.push_back({name, 64, 1, s, 0, quick ? 2048 : 4096, kRoleNone});
      } else if (name == "d_one") {
        plan.push_back({name, 1, quick ? 8 : 64, s, 0, 0, kRoleNone});
      } else {
        for (std::int64_t d : ds) {
          plan.push_back(
              {name, d, name == "nan_inf_rows" ? 10 : (quick ? 8 : 16), s, 0, 0, kRoleNone});
        }
      }
    }
  }
  return plan;
}

}  // namespace lnv::report

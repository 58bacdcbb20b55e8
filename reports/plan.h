// What ln_report measures: the list of cases (a family at a shape) that every
// group of kernels sharing (norm, x dtype, param dtype) is judged on, and
// which charts each case feeds. The plan is a pure function of the budget, so
// two reports with the same budget and seed measure the same inputs.
#ifndef LNV_REPORTS_PLAN_H_
#define LNV_REPORTS_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "harness/driver.h"

namespace lnv::report {

// Which charts a case's per-row points feed (a bit set).
enum PlanRole : unsigned {
  kRoleNone = 0,
  kRoleKappa = 1,      // error vs kappa (the large_mean family sweeps kappa over its rows)
  kRoleMagnitude = 2,  // error vs magnitude (tiny/huge families sweep the row scale)
  kRoleDSweep = 4,     // max bound use vs d (one family, many d)
};

struct PlanItem {
  std::string family;
  std::int64_t d = 64;  // passed to the family (odd_d, ragged_d, ... derive theirs from it)
  std::int64_t rows = 8;
  std::uint64_t seed_offset = 0;  // added to the user's seed
  std::int64_t large_d = 0;       // 0: the family's default
  std::int64_t many_rows = 0;     // 0: the family's default
  unsigned roles = kRoleNone;
};

// The d values of the d sweep: 1 ... 65536.
std::vector<std::int64_t> DSweepValues(Budget budget);

// Every case of the budget, in a fixed order. Every family of AllFamilies()
// appears at least once, so every family can produce a finding.
std::vector<PlanItem> ReportPlan(Budget budget);

}  // namespace lnv::report

#endif  // LNV_REPORTS_PLAN_H_

// --compare: what got better or worse between two errors.json files, kernel
// by kernel and output by output (verdicts, max bound use, max ULP; compared
// exactly through their hex floats).
#ifndef LNV_REPORTS_COMPARE_H_
#define LNV_REPORTS_COMPARE_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lnv::report {

struct Change {
  std::string kernel;
  std::string output;   // "" for the kernel as a whole
  std::string measure;  // "verdict", "max_bound_use", "max_ulp", "kernel"
  std::string old_value, new_value;
  int direction = 0;  // +1 worse, -1 better, 0 neither (added, removed)
};

struct Comparison {
  std::string old_commit, old_date, old_budget;
  bool same_inputs = true;  // same budget and seed: the inputs were the same
  std::vector<Change> changes;
  int worse = 0, better = 0, other = 0;
};

Comparison CompareReports(const nlohmann::json& old_report, const nlohmann::json& new_report);

// A few lines for stdout: counts, then every change that got worse.
std::string FormatComparison(const Comparison& c);

nlohmann::json ComparisonJson(const Comparison& c);

}  // namespace lnv::report

#endif  // LNV_REPORTS_COMPARE_H_

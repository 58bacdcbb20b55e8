#include "harness/driver.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "impls/plugin/loader.h"

namespace lnv {
std::vector<PlannedRun> BudgetPlan(Budget budget) {
  std::vector<PlannedRun> plan;
  const std::uint64_t seeds = budget == Budget::kQuick ? 1 : 2;
  for (const Family& f : AllFamilies()) {
    const std::vector<FamilyShape>& shapes = budget == Budget::kQuick ? f.quick : f.full;
    for (std::uint64_t s = 0; s < seeds; ++s) {
      for (const FamilyShape& sh : shapes) {
        plan.push_back({std::string(f.name), sh.d, sh.rows, sh.seed_offset + s, sh.large_d,
                        sh.many_rows, sh.with_dy, sh.roles});
      }
    }
  }
  return plan;
}

std::vector<PlannedRun> SelectPlan(Budget budget, const std::string& families_glob) {
  std::vector<PlannedRun> plan;
  for (PlannedRun& run : BudgetPlan(budget)) {
    if (GlobMatch(families_glob, run.family)) plan.push_back(std::move(run));
  }
  return plan;
}

Case PlannedCase(const PlannedRun& run, FamilyParams p, std::uint64_t seed) {
  p.d = run.d;
  p.rows = run.rows;
  p.seed = seed + run.seed_offset;
  p.with_dy = run.with_dy;
  if (run.large_d > 0) p.large_d = run.large_d;
  if (run.many_rows > 0) p.many_rows = run.many_rows;
  return GenerateCase(*FindFamily(run.family), p);
}

std::string BudgetName(Budget budget) { return budget == Budget::kQuick ? "quick" : "full"; }

std::vector<std::vector<std::size_t>> GroupBySignature(const std::vector<const ImplInfo*>& impls) {
  std::map<std::tuple<int, int, int>, std::vector<std::size_t>> by_key;
  for (std::size_t k = 0; k < impls.size(); ++k) {
    const ImplInfo& i = *impls[k];
    by_key[{static_cast<int>(i.norm), static_cast<int>(i.x_dtype), static_cast<int>(i.param_dtype)}]
        .push_back(k);
  }
  std::vector<std::vector<std::size_t>> groups;
  for (auto& [key, members] : by_key) groups.push_back(std::move(members));
  return groups;
}

FamilyParams FamilyParamsFor(const ImplInfo& impl) {
  FamilyParams p;
  p.norm = impl.norm;
  p.dtype = impl.x_dtype;
  p.param_dtype = impl.param_dtype;
  return p;
}

bool MeetsExpectation(ImplStatus status, bool any_failure) {
  switch (status) {
    case ImplStatus::kClaimsBound:
      return !any_failure;
    case ImplStatus::kNegativeControl:
      return any_failure;
    case ImplStatus::kObserved:
      return true;  // compared with its baseline (harness/baseline.h)
  }
  return false;
}

std::string ShellQuote(const std::string& s) {
  bool plain = !s.empty();
  for (char ch : s) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '.' ||
                      ch == '_' || ch == '-' || ch == ':' || ch == '=' || ch == ',');
  }
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string ReplayCommand(const ImplInfo& impl, const std::string& case_path,
                          const std::string& program) {
  const std::string plugin = IsPluginImpl(impl) ? " --plugin " + ShellQuote(impl.source) : "";
  return program + plugin + " --replay " + ShellQuote(case_path);
}

std::unique_ptr<Isolator> MakePluginIsolator(const std::vector<const ImplInfo*>& impls,
                                             double timeout_seconds, std::string* error) {
  if (std::none_of(impls.begin(), impls.end(),
                   [](const ImplInfo* i) { return IsPluginImpl(*i); })) {
    return nullptr;
  }
  IsolateOptions io;
  io.timeout_seconds = timeout_seconds;
  auto isolator = std::make_unique<Isolator>(io);
  if (!isolator->error().empty()) {
    *error = isolator->error();
    return nullptr;
  }
  return isolator;
}

}  // namespace lnv

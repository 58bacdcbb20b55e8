#include "harness/driver.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "impls/plugin/loader.h"

namespace lnv {
namespace {

// The families built to expose dropped, repeated and mixed-up elements.
bool IsDroppedElementFamily(const std::string& name) {
  return name == "ramp" || name == "sorted_rows" || name == "one_outlier" || name == "two_halves" ||
         name == "rows_differ";
}

// Their shapes, chosen by where each bug shows. A dropped tail or a repeated
// chunk shows on a ramp, sorted rows or halves in proportion to its share of
// the row, so the long ramps drop a sizeable tail past a power of two (3 *
// 2^15 + 1 past 2^16, 2^17 + 2^14 + 3 past 2^17, and more than half past a
// 16-bit count); one outlier shows at any d, so one_outlier runs at d past
// the first 256-element chunk and (full) past 2^16 and 2^17; a row given its
// neighbour's statistics shows only in an odd batch, so rows_differ runs odd
// and even row counts. The quick budget's one long ramp is a single row,
// forward only: it adds about 3 s over every kernel group, and its exact
// backward would add as much again.
void AppendDroppedElementRuns(const std::string& name, Budget budget, std::uint64_t seed,
                              std::vector<PlannedRun>* plan) {
  struct Shape {
    std::int64_t d, rows;
    bool with_dy = true;
  };
  std::vector<Shape> shapes;
  const bool quick = budget == Budget::kQuick;
  if (name == "ramp") {
    shapes = quick ? std::vector<Shape>{{7, 5}, {64, 8}, {131072 + 16384 + 3, 1, false}}
                   : std::vector<Shape>{{7, 16},   {64, 32},       {768, 8},
                                        {4096, 4}, {98304 + 1, 2}, {131072 + 16384 + 3, 2}};
  } else if (name == "one_outlier") {
    shapes = quick ? std::vector<Shape>{{7, 3}, {64, 6}, {4099, 3}}
                   : std::vector<Shape>{{7, 15},   {64, 30},        {768, 6},
                                        {4099, 3}, {65536 + 17, 2}, {131072 + 3, 2}};
  } else if (name == "rows_differ") {
    shapes = quick ? std::vector<Shape>{{7, 5}, {64, 7}, {64, 8}, {768, 3}}
                   : std::vector<Shape>{{7, 15},  {7, 16},  {64, 31},  {64, 32},
                                        {768, 7}, {768, 8}, {4096, 3}, {4096, 4}};
  } else {  // sorted_rows, two_halves
    shapes = quick ? std::vector<Shape>{{64, 8}, {768, 4}}
                   : std::vector<Shape>{{7, 16}, {64, 32}, {768, 8}, {4096, 4}};
  }
  for (const Shape& sh : shapes) plan->push_back({name, sh.d, sh.rows, seed, 0, 0, sh.with_dy});
}

}  // namespace

std::vector<PlannedRun> BudgetPlan(Budget budget) {
  std::vector<PlannedRun> plan;
  for (const Family& f : AllFamilies()) {
    const std::string name(f.name);
    if (budget == Budget::kQuick && IsDroppedElementFamily(name)) {
      AppendDroppedElementRuns(name, budget, 0, &plan);
    } else if (budget == Budget::kQuick) {
      PlannedRun r{name, 64, 8, 0, 4099, 2048};
      if (name == "large_mean") r.rows = 16;  // the kappa sweep needs rows
      if (name == "nan_inf_rows") r.rows = 10;
      plan.push_back(r);
      // Short and long rows where the value families matter most.
      if (name == "standard_normal" || name == "large_mean" || name == "heavy_tails" ||
          name == "near_constant" || name == "tiny_magnitude") {
        plan.push_back({name, 7, r.rows, 1, 0, 0});
        plan.push_back({name, 768, 4, 2, 0, 0});
      }
    } else {
      for (std::uint64_t s = 0; s < 2; ++s) {
        if (name == "large_d") {
          plan.push_back({name, 64, 2, s, 65536 + 17, 0});
        } else if (name == "many_rows") {
          // 2^16 rows forward only: the oracle's exact dgamma sums cost about
          // rows^2 (4096 rows: ~1 s; 65536: minutes), so the backward gets 4096.
          plan.push_back({name, 64, 1, s, 0, 65536, false});
          plan.push_back({name, 64, 1, s + 2, 0, 4096, true});
        } else if (name == "d_one") {
          plan.push_back({name, 1, 64, s, 0, 0});
        } else if (IsDroppedElementFamily(name)) {
          AppendDroppedElementRuns(name, Budget::kFull, s, &plan);
        } else {
          for (const auto& [d, rows] :
               {std::pair<std::int64_t, std::int64_t>{7, 16}, {64, 32}, {768, 8}, {4096, 4}}) {
            plan.push_back({name, d, name == "large_mean" ? 2 * rows : rows, s, 0, 0});
          }
        }
      }
    }
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

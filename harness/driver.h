// What every tool shares when it drives kernels over cases (ln_check,
// ln_report, the properties, fuzz_ln, the GPU tests): the budgets and the
// default seed, the grouping of kernels that share each case and its oracle
// answer, the family parameters a kernel's case is drawn with, whether a
// kernel's verdicts are what its status expects, and the child process that
// runs plugin kernels.
#ifndef LNV_HARNESS_DRIVER_H_
#define LNV_HARNESS_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/families.h"
#include "harness/isolate.h"
#include "impls/registry.h"

namespace lnv {

// quick: seconds, for CI and every edit; full: the nightly run.
enum class Budget { kQuick, kFull };
std::string BudgetName(Budget budget);  // "quick" / "full"

// The seed every tool uses unless told otherwise (always printed).
inline constexpr std::uint64_t kDefaultSeed = 20240611;

// One planned run: a family at one of its shapes (harness/families.h).
struct PlannedRun {
  std::string family;
  std::int64_t d = 0;
  std::int64_t rows = 0;
  std::uint64_t seed_offset = 0;  // added to the user's seed
  std::int64_t large_d = 0;       // 0: the family's default
  std::int64_t many_rows = 0;     // 0: the family's default
  bool with_dy = true;            // judge the backward too
  unsigned roles = kRoleNone;     // PlanRole bits: the report's charts it feeds
};
// The one plan of every tool (ln_check, ln_report, the Python module's
// cases()): each family's shapes under the budget, as its row in
// AllFamilies() states them, in the families' order. The full budget runs
// every shape at seed offsets 0 and 1 (added to the shape's own).
std::vector<PlannedRun> BudgetPlan(Budget budget);

// BudgetPlan's runs of the families matching `families_glob` (*, ?); empty
// when none matches.
std::vector<PlannedRun> SelectPlan(Budget budget, const std::string& families_glob);

// The case of `run` for kernels of p's norm and dtypes (FamilyParamsFor),
// drawn from the user's seed plus the run's offset: exactly what ln_check
// judges.
Case PlannedCase(const PlannedRun& run, FamilyParams p, std::uint64_t seed);

// Kernels sharing (norm, x dtype, param dtype) share each case and the
// oracle's answer for it: their indices into `impls`, one group per
// signature, in a fixed order (norm, then x dtype, then param dtype).
std::vector<std::vector<std::size_t>> GroupBySignature(const std::vector<const ImplInfo*>& impls);

// The family parameters of a case for `impl`: its norm and dtypes, the
// defaults for the rest (the caller sets the shape and seed).
FamilyParams FamilyParamsFor(const ImplInfo& impl);

// Whether a kernel's run is what its status expects: a claims_bound kernel
// without a failure, a negative control with one; an observed kernel is
// compared with its baseline instead (true here).
bool MeetsExpectation(ImplStatus status, bool any_failure);

// The one command that replays a case file of `impl` with ln_check
// (`program`): `program --replay PATH`, with `--plugin <its library>` for a
// plugin kernel (the replay must load it; a flag, not LNV_PLUGINS, which
// splits paths at ':'), each word shell-quoted where it needs to be. What
// every tool prints and writes into a case's provenance.
std::string ReplayCommand(const ImplInfo& impl, const std::string& case_path,
                          const std::string& program = "ln_check");

// s as one shell word: unchanged when it holds only [A-Za-z0-9/._:=,-],
// else in single quotes.
std::string ShellQuote(const std::string& s);

// The child process that runs plugin kernels (harness/isolate.h), made
// before any kernel runs: nullptr when no kernel of `impls` is a plugin's,
// or when it cannot start (then *error says why and the caller decides).
std::unique_ptr<Isolator> MakePluginIsolator(const std::vector<const ImplInfo*>& impls,
                                             double timeout_seconds, std::string* error);

}  // namespace lnv

#endif  // LNV_HARNESS_DRIVER_H_

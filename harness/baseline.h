// Baselines of the observed (third-party) kernels, like glibc's
// libm-test-ulps: what each one is known to get wrong, so that ln_check fails
// on any change (a new finding, or a recorded one that vanished) rather than
// on the known ones.
//
// A finding is (family, output, verdict): the kernel broke its bound or its
// contract on `output` ("y", "mean", ..., or "call" when it did not return
// normally) in some case of `family`, and `verdict` is that output's worst
// verdict there. Findings are recorded per run (budget and seed: the cases
// they come from), each with the smallest case found that shows it, stored
// beside the baseline.
//
// Format (one file per kernel, <dir>/<kernel with / and : as _>.baseline):
//   # comment lines
//   lnv-baseline 1
//   kernel f32/native_layer_norm/aten
//   run quick 20240611                       # budget seed; findings follow
//   finding d_one y bound_exceeded f32_native_layer_norm_aten__d_one__y__bound_exceeded.case
//   ...
//   end
#ifndef LNV_HARNESS_BASELINE_H_
#define LNV_HARNESS_BASELINE_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "harness/judge.h"

namespace lnv {

struct Finding {
  std::string family;
  std::string output;   // OutputName, or "call"
  std::string verdict;  // VerdictName
  auto operator<=>(const Finding&) const = default;
};
std::string FindingText(const Finding& f);  // "d_one y bound_exceeded"

struct BaselineRun {
  std::string budget;  // "quick" or "full"
  std::uint64_t seed = 0;
  std::set<Finding> findings;
};

struct Baseline {
  std::string kernel;
  std::vector<BaselineRun> runs;
  std::map<Finding, std::string> cases;  // case file of each finding, relative to the baseline's dir
  const BaselineRun* FindRun(const std::string& budget, std::uint64_t seed) const;
};

// The directory of the recorded baselines in this source tree.
std::string DefaultBaselinesDir();
// <dir>/<kernel, file-safe>.baseline, and the case file name of a finding.
std::string BaselinePath(const std::string& dir, const std::string& kernel);
std::string FindingCaseName(const std::string& kernel, const Finding& f);

std::string FormatBaseline(const Baseline& b);
// On failure returns false with a one-line reason (with the line number).
bool ParseBaseline(const std::string& text, Baseline* out, std::string* error);
bool ReadBaseline(const std::string& path, Baseline* out, std::string* error);
bool WriteBaseline(const std::string& path, const Baseline& b, std::string* error);

// The findings a judgement of a case of `family` shows: one per failing
// output, or ("call", verdict) when the kernel did not return normally.
std::set<Finding> FindingsOf(const std::string& family, const Judgement& j);

// Recorded versus observed, both restricted to the families matching
// `families_glob` (a run over fewer families cannot see the others).
struct BaselineDiff {
  std::vector<Finding> added;     // observed, not recorded
  std::vector<Finding> vanished;  // recorded, not observed
  bool Changed() const { return !added.empty() || !vanished.empty(); }
};
BaselineDiff CompareFindings(const std::set<Finding>& recorded, const std::set<Finding>& observed,
                             const std::string& families_glob);

// A smaller case for which still_fails holds: first single rows (in the
// order given by `rows_first`, then the others), then chunks of rows, then
// chunks of columns (delta debugging), until nothing more can go or
// max_tries calls of still_fails are spent. still_fails(c) must hold.
// Columns stop at 2 unless c.d is 1: d = 1 is a family of its own (x-hat
// is exactly 0), and a case that slid into it would show that family's
// failure instead of its own.
Case ShrinkCase(const Case& c, const std::function<bool(const Case&)>& still_fails,
                const std::vector<std::int64_t>& rows_first = {}, int max_tries = 400);

// The case restricted to the given columns (in order): x, gamma, beta, dy.
Case SelectColumns(const Case& c, const std::vector<std::int64_t>& cols);

// ---- What ln_check does with an observed kernel after its run. ----

// Where the baselines are, and the run that is compared or recorded.
struct BaselineSetting {
  std::string dir;            // the baselines directory
  std::string case_ref_dir;   // how replay commands name that directory
  std::string budget;         // "quick" or "full"
  std::uint64_t seed = 0;
  std::string families_glob = "*";
  std::string program = "ln_check";
  std::string found_by;       // provenance of the cases RecordBaseline writes
};

// The first case of this run that showed a finding, and its judgement.
struct ObservedCase {
  Case c;
  Judgement j;
};
using ObservedFindings = std::map<Finding, ObservedCase>;

// Compares this run's findings with the kernel's baseline (a missing or
// unreadable baseline is a change; a baseline without this budget and seed
// is reported and not compared), and replays every recorded case of the
// families run: it must still show its finding. Prints one line per change,
// calls on_new for each new finding, sets *status for the table ("matches,
// 5 finding(s)", "CHANGED: 1 new, 0 vanished", ...). Returns whether nothing
// changed.
bool CompareWithBaseline(const BaselineSetting& setting, const ImplInfo& impl,
                         const ObservedFindings& found, std::string* status, std::ostream& out,
                         const std::function<void(const Finding&, const ObservedCase&)>& on_new);

// --write-baselines: records this run's findings as the kernel's baseline
// for this budget and seed (other runs, and findings of families outside
// families_glob, are kept), each with the smallest case found (ShrinkCase; a
// recorded case that still shows its finding is kept, for stable diffs).
// Deletes the cases no run lists any more. Returns whether it was written.
bool RecordBaseline(const BaselineSetting& setting, const ImplInfo& impl,
                    const ObservedFindings& found, std::string* status, std::ostream& out);

}  // namespace lnv

#endif  // LNV_HARNESS_BASELINE_H_

// The one sweep of every kernel over a plan's cases (harness/driver.h,
// BudgetPlan), run by ln_check and ln_report alike. Kernels sharing (norm, x
// dtype, param dtype) share each case and the oracle's answer for it
// (ComputeReference once, then JudgeWithReference per kernel); plugin kernels
// run through SweepOptions::plugin_runner (a child process). Cases run on
// --jobs threads and the result is merged in plan order, so it does not depend
// on the number of jobs. Per kernel it keeps what both tools report: per
// output the worst verdict, max ULP and bound use, counts, histogram, chart
// points and worst element; the worst case of each failing family (a
// finding); and, for an observed kernel, what its baseline is compared with.
#ifndef LNV_HARNESS_SWEEP_H_
#define LNV_HARNESS_SWEEP_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/baseline.h"
#include "harness/case_file.h"
#include "harness/driver.h"
#include "harness/judge.h"
#include "harness/measure.h"
#include "impls/registry.h"

namespace lnv {

// One kernel's outputs over every case.
struct OutputSummary {
  bool present = false;
  Verdict verdict = Verdict::kPass;  // worst over the cases
  double max_ulp = 0.0;
  double max_bound_use = 0.0;
  std::int64_t count = 0, unclaimed = 0, out_of_range = 0, undecided = 0;
  std::int64_t beyond_typical = 0;
  std::optional<ElementResult> worst;  // worst element over every case
  std::int32_t worst_item = -1;        // its case (plan item)
  std::int64_t worst_row = -1;
  UlpHistogram hist;
  std::vector<RowPoint> points;  // y and dx: per-row points of the charted cases
  std::string worst_case_file;   // filled by WriteCaseFiles
};

// A broken claim (or a caught negative control): the worst case of one
// family for one kernel.
struct FamilyFinding {
  std::int32_t item = -1;
  std::int64_t d = 0, rows = 0;  // the case's shape
  Output output = Output::kY;    // the output that decides the verdict
  Verdict verdict = Verdict::kPass;
  std::optional<ElementResult> worst;
  std::int64_t worst_row = -1;
  std::string summary;  // per output: max ulp, bound use, verdict
  double kappa = 0.0,
         log2_mag = 0.0;          // of the worst row; NaN for column outputs
  std::string case_file, replay;  // filled by WriteCaseFiles
  std::string case_result;        // the written case's result (after shrinking)
};

struct KernelReport {
  ImplInfo info;
  std::int64_t cases = 0;
  std::int64_t kernel_errors =
      0;                    // cases where a call gave no outputs (error, crash, hang, overrun)
  std::string first_error;  // the first such message
  Verdict verdict = Verdict::kPass;                        // worst over the cases
  std::array<OutputSummary, 6> outputs;                    // indexed by Output
  std::map<std::int64_t, std::array<double, 6>> use_by_d;  // d sweep: max bound use per output
  std::vector<FamilyFinding> findings;  // in plan order of the families' first failures
  // Per output, over the random-data families (IsRandomDataFamily): elements
  // judged, and those judged without a claim (unclaimed + out_of_range).
  std::array<std::int64_t, 6> random_count{}, random_unclaimed{};
  // claims_bound and plugin kernels: "" or why the kernel is "not judged"
  // (NotJudgedReason, harness/judge.h).
  std::string not_judged;
  // Observed kernels: every case's findings and magnitudes, for the
  // comparison with the kernel's baseline (harness/baseline.h).
  ObservedRun observed;
};

struct SweepOptions {
  Budget budget = Budget::kQuick;
  std::uint64_t seed = kDefaultSeed;
  int jobs = 1;
  std::vector<ImplInfo> impls;   // the kernels to sweep (already filtered)
  std::vector<PlannedRun> plan;  // empty: BudgetPlan(budget); tests pass a small one
  // The statistical tier on the random-data families (TypicalTierFor).
  TypicalTier typical = TypicalTier::kFail;
  // Runs plugin kernels (harness/isolate.h: a child process, so that a
  // plugin that crashes or hangs is a finding, not a dead tool); nullptr: in
  // this process, and then on one thread (jobs is ignored).
  KernelRunner* plugin_runner = nullptr;
  // Called from the calling thread about twice a second, and once at the end.
  std::function<void(double done_fraction, std::int64_t cases_done, std::int64_t cases_total)>
      progress;
};

struct SweepResult {
  std::vector<PlannedRun> plan;
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;  // per plan item: the case's d, rows
  std::vector<KernelReport> kernels;                          // in the order of SweepOptions::impls
  std::int64_t cases_judged = 0;                              // kernel x case judgements
  double seconds = 0.0;
};

SweepResult RunSweep(const SweepOptions& options);

// The output that decides a case's verdict: the worst output's, ties broken
// by bound use.
Output DecidingOutput(const CaseMeasure& m);

// Kernel report verdict words of errors.json: "pass", "fail" (a broken bound
// or contract on some case), "error" (it never ran: every call failed),
// "not_judged" (no broken claim, but too few elements held a claim).
std::string KernelVerdictWord(const KernelReport& k);

// Whether a kernel's sweep is what its status requires: claims_bound and
// plugin kernels no failure and a claim on the random-data families (not
// "not judged"); negative_control a failure (caught); observed always here
// (its baseline decides: ln_check compares it, ln_report shows it).
bool MeetsExpectation(const KernelReport& k);

}  // namespace lnv

#endif  // LNV_HARNESS_SWEEP_H_

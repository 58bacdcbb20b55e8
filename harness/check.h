// The library behind ln_check: the one sweep (harness/sweep.h) of every
// registered kernel over the plan's cases, a table of results, a case file
// for each finding (harness/write_cases.h), and the exit
// status shared by every tool (0: every claim holds, every negative control is
// caught and every observed kernel matches its baseline; 1: a finding; 2:
// bad usage or unreadable input).
//
// Plugin kernels ("plugin:" names, impls/plugin/loader.h) run in a child
// process (harness/isolate.h), so one that crashes, hangs or writes outside
// its buffers is a finding with its case. Observed (third-party) kernels are
// compared with their baselines (harness/baseline.h): only a change is a
// finding, and only a new finding gets a case file in cases_dir.
#ifndef LNV_HARNESS_CHECK_H_
#define LNV_HARNESS_CHECK_H_

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/driver.h"
#include "harness/judge.h"
#include "harness/sweep.h"
#include "impls/registry.h"

namespace lnv {

struct CheckOptions {
  std::string impls_glob = "*";
  std::string families_glob = "*";
  Budget budget = Budget::kQuick;
  std::uint64_t seed = kDefaultSeed;
  std::string cases_dir = "lnv-cases";
  bool write_cases = true;
  std::string program = "ln_check";  // how the replay command names the tool
  // The kernels to check; empty: AllImpls() (both filtered by impls_glob).
  std::vector<ImplInfo> impls;
  // --plugin PATHs: loaded by the caller (ImplsWithPlugins) into `impls`.
  std::vector<std::string> plugins;
  bool isolate_plugins = true;                   // run plugin kernels in a child process
  double timeout_seconds = kDefaultCallSeconds;  // per plugin kernel call
  std::string baselines_dir;                     // "": DefaultBaselinesDir() (harness/baseline.h)
  bool write_baselines = false;                  // record this run's findings instead of comparing
  // The statistical tier on the random-data families (TypicalTierFor).
  TypicalTier typical = TypicalTier::kFail;
  // --list: print the selected kernels and what each is held to, run nothing
  // (harness/kernel_list.h); --format json for the same as JSON.
  bool list = false;
  bool list_json = false;
  int jobs = 0;  // cases judged at once; 0: one per hardware thread
  // --output-json FILE: the run as errors.json (harness/errors_json.h,
  // reports/SCHEMA.md), as ln_report writes it; "": none.
  std::string output_json;
};

struct KernelSummary {
  std::string name;
  DType dtype = DType::kF32;
  ImplStatus status = ImplStatus::kClaimsBound;
  std::int64_t cases = 0;
  double max_ulp = 0.0;  // over every judged output
  Output max_ulp_output = Output::kY;
  double max_bound_use = 0.0;
  Output max_use_output = Output::kY;
  Verdict verdict = Verdict::kPass;  // the worst over all cases
  std::string first_failure;      // "family: summary" of the worst case of the first failing family
  std::int64_t unclaimed = 0;     // elements in range whose bound was +inf (no claim)
  std::int64_t out_of_range = 0;  // elements outside the claimed range
  std::int64_t beyond_typical = 0;  // elements beyond the statistical tier's bound
  std::int64_t undecided = 0;
  // Per output (indexed by Output), over the random-data families
  // (IsRandomDataFamily): elements judged, and those judged without a claim
  // (bound +inf, or outside the claimed range).
  std::array<std::int64_t, 6> random_count{}, random_unclaimed{};
  // claims_bound kernels: "" or why the kernel is "not judged": some output's
  // unclaimed fraction on those families is above kMaxUnclaimedFraction.
  std::string not_judged;
  // claims_bound: no failure; negative_control: caught; observed: its
  // findings match its baseline.
  bool ok = true;
  std::string baseline;  // observed: "matches (N findings)", "CHANGED: ...", ...
  // observed: findings its baseline does not record ("family output
  // verdict"), each with the case file written for it ("" if none).
  std::vector<std::pair<std::string, std::string>> baseline_new;
  std::vector<std::string> case_files;
};

struct CheckResult {
  SweepResult sweep;                      // what the run measured (harness/sweep.h)
  std::vector<KernelSummary> kernels;     // in the order of sweep.kernels
  std::vector<std::string> write_errors;  // case files that could not be written
  int exit_code = 0;
  double seconds = 0.0;
};

// Runs the check, printing progress and every case file written (with its
// replay command) to `out`.
CheckResult RunCheck(const CheckOptions& options, std::ostream& out);

// ln_check's report of a run: the table (kernel, dtype, max ULP, max bound
// use, verdict), the "ok"/"FAILED" line with the seed and time, the elements
// without a claim, and why each kernel that is not as expected is not.
void PrintCheckReport(const CheckOptions& options, const CheckResult& result, std::ostream& out);

// Writes the run as errors.json to options.output_json (case paths relative
// to its directory; observed kernels with their baseline comparison).
// `command` is the command line and `load_errors` the plugins that did not
// load. Returns "" or why the file could not be written.
std::string WriteCheckJson(const CheckOptions& options, const CheckResult& result,
                           const std::string& command, const std::vector<std::string>& load_errors);

// ln_check --replay FILE: prints oracle vs kernel element by element, with
// error and bound, then the same summary line the run that wrote the file
// printed. Returns 0 when the verdict is what the kernel's status expects
// (claims_bound: no failure; negative_control: a failure), 1 when not, 2 when
// the file is unreadable or names no registered, compatible kernel.
// A plugin kernel is replayed in a child process (timeout in seconds).
int ReplayCase(const std::string& path, const std::vector<ImplInfo>& impls, std::ostream& out,
               std::ostream& err, double timeout_seconds = kDefaultCallSeconds);

// Command line. Returns 0 to run, 2 with *error set for bad usage; sets
// *help for --help and *replay for --replay FILE.
int ParseCheckArgs(const std::vector<std::string>& args, CheckOptions* options, bool* help,
                   std::string* replay, std::string* error);
std::string CheckUsage();

}  // namespace lnv

#endif  // LNV_HARNESS_CHECK_H_

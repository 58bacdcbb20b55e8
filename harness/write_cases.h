// The case files of a sweep (harness/case_file.h's format), written the same
// way by ln_check and ln_report: one per finding (the worst case of each
// failing family of a kernel) and, for a report, one per kernel output's
// worst case, each with its provenance (tool, seed, family, why, the kernel's
// status and result) and the ln_check command that replays it. A row-local
// result is shrunk to its worst row when that row alone reproduces it (rows
// are independent); a plugin's crash to fewer rows that still crash.
#ifndef LNV_HARNESS_WRITE_CASES_H_
#define LNV_HARNESS_WRITE_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "harness/sweep.h"

namespace lnv {

struct CaseWriteOptions {
  std::string out_dir = "report";           // files go to out_dir/subdir/
  std::string subdir = "cases";             // "" for out_dir itself
  std::string found_by;                     // the tool's command line (provenance)
  std::string replay_program = "ln_check";  // how the replay command names ln_check
  std::uint64_t seed = 0;
  // Runs plugin kernels when a case is shrunk (as SweepOptions::plugin_runner);
  // nullptr: in this process.
  KernelRunner* plugin_runner = nullptr;
  TypicalTier typical = TypicalTier::kFail;  // as SweepOptions::typical, when shrinking
  // Which cases: the report writes them all; ln_check writes a negative
  // control's first finding only (to show its replay), leaves observed
  // kernels' findings to their baselines, and writes no worst cases.
  bool every_control_finding = true;
  bool observed_findings = true;
  bool worst_cases = true;
};

// A worst case (not a finding) is written only when it holds at most this
// many x values after shrinking, so that a report stays a few megabytes; a
// larger one is named by its plan case (family, d, rows, seed), which
// regenerates it. Findings are always written.
inline constexpr std::int64_t kMaxWorstCaseValues = 4096;

// Writes the files and fills FamilyFinding::case_file/replay and
// OutputSummary::worst_case_file (paths relative to out_dir). Returns one
// line per file that could not be written.
std::vector<std::string> WriteCaseFiles(const CaseWriteOptions& options, SweepResult* result);

// Writes one judged case of `impl` (an observed kernel's new finding, found
// outside a sweep's findings). Returns its path relative to out_dir, or ""
// with *error set; *result: the written case's result (after shrinking).
std::string WriteJudgedCase(const CaseWriteOptions& options, const ImplInfo& impl, const Case& c,
                            const Judgement& j, std::string* error, std::string* result = nullptr);

// Writes c to `path`, creating its directory, with the command that replays
// it: `replay` when not empty, else ln_check's (`program`) for `impl`
// (ReplayCommand: with the plugin of a plugin kernel; `program --replay PATH`
// when impl is null). Returns "" or why it could not. Every tool's case files
// (ln_check, ln_report, the baselines, the properties, fuzz_ln) go through it.
std::string WriteReplayableCase(const std::string& path, Case c, const ImplInfo* impl,
                                const std::string& replay = "",
                                const std::string& program = "ln_check");

// The replay command of a case file written under out_dir.
std::string CaseReplayCommand(const CaseWriteOptions& options, const ImplInfo& impl,
                              const std::string& relative_case_path);

}  // namespace lnv

#endif  // LNV_HARNESS_WRITE_CASES_H_

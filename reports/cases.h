// The case files of a report (harness/case_file.h's format): one per finding
// and one per kernel output's worst case, under DIR/cases/, each with its
// provenance (tool, seed, family, why) and the ln_check command that replays
// it. Row-local results are shrunk to the worst row when that row alone
// reproduces them (rows are independent), as ln_check does.
#ifndef LNV_REPORTS_CASES_H_
#define LNV_REPORTS_CASES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reports/sweep.h"

namespace lnv::report {

struct CaseWriteOptions {
  std::string out_dir = "report";           // case files go to out_dir/cases/
  std::string found_by;                     // the ln_report command line (provenance)
  std::string replay_program = "ln_check";  // how the replay command names ln_check
  std::uint64_t seed = 0;
  // Runs plugin kernels when a case is shrunk to its worst row (as
  // SweepOptions::plugin_runner); nullptr: plugin cases are not shrunk.
  KernelRunner* plugin_runner = nullptr;
};

// A worst case (not a finding) is written only when it holds at most this
// many x values after shrinking, so that a report stays a few megabytes; a
// larger one is named by its plan case (family, d, rows, seed), which
// regenerates it. Findings are always written.
inline constexpr std::int64_t kMaxWorstCaseValues = 4096;

// Writes the files and fills Finding::case_file/replay and
// OutputSummary::worst_case_file (paths relative to out_dir). Returns one
// line per file that could not be written.
std::vector<std::string> WriteCaseFiles(const CaseWriteOptions& options, SweepResult* result);

// The replay command of a case file written under out_dir.
std::string ReplayCommand(const CaseWriteOptions& options, const ImplInfo& impl,
                          const std::string& relative_case_path);

}  // namespace lnv::report

#endif  // LNV_REPORTS_CASES_H_

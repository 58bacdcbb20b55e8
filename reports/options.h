// ln_report's command line (see ReportUsage(), printed by --help).
#ifndef LNV_REPORTS_OPTIONS_H_
#define LNV_REPORTS_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "harness/driver.h"
#include "harness/judge.h"

namespace lnv::report {

struct ReportOptions {
  std::string out_dir = "report";
  bool out_given = false;
  std::string impls_glob = "*";
  std::vector<std::string> plugins;  // --plugin PATH, after those of LNV_PLUGINS
  Budget budget = Budget::kQuick;
  std::uint64_t seed = kDefaultSeed;
  int jobs = 0;                              // 0: one per hardware thread
  TypicalTier typical = TypicalTier::kFail;  // --typical: the statistical tier
  bool quiet = false;
  std::string render;   // --render FILE: render this errors.json, measure nothing
  std::string compare;  // --compare FILE: an older errors.json to compare with
  bool help = false;
};

// Returns "" when the arguments are valid, else a one-line reason.
std::string ParseReportArgs(const std::vector<std::string>& args, ReportOptions* options);

std::string ReportUsage();

}  // namespace lnv::report

#endif  // LNV_REPORTS_OPTIONS_H_

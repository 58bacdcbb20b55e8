// The "context" object of errors.json: what produced the numbers (commit,
// date, compiler and flags, CPU, library versions, seed, budget, oracle).
#ifndef LNV_REPORTS_CONTEXT_H_
#define LNV_REPORTS_CONTEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "impls/registry.h"
#include "reports/options.h"

namespace lnv::report {

struct RunFacts {
  std::string command;  // the command line, as run
  double seconds = 0.0;
  int jobs = 1;
  std::vector<std::string> plugin_paths;
};

nlohmann::json CollectContext(const ReportOptions& options, const RunFacts& facts,
                              const std::vector<ImplInfo>& impls);

// The commit of the source tree this binary was built from ("unknown" when
// git or the tree is not there), with "-dirty" when it has local changes.
std::string GitCommit();

// CPU model and the SIMD features that matter to the kernels (from /proc/cpuinfo).
nlohmann::json CpuFacts();

}  // namespace lnv::report

#endif  // LNV_REPORTS_CONTEXT_H_

// The "context" object of errors.json (ln_report's, and ln_check's with
// --output-json): what produced the numbers (tool, commit, date, compiler
// and flags, CPU, library versions, seed, budget, selection, oracle).
#ifndef LNV_HARNESS_RUN_CONTEXT_H_
#define LNV_HARNESS_RUN_CONTEXT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/driver.h"
#include "impls/registry.h"

namespace lnv {

struct RunFacts {
  std::string tool = "ln_report";
  std::string command;  // the command line, as run
  Budget budget = Budget::kQuick;
  std::uint64_t seed = kDefaultSeed;
  std::string impls_glob = "*";
  std::string families_glob = "*";
  double seconds = 0.0;
  int jobs = 1;
  std::vector<std::string> plugin_paths;
};

nlohmann::json CollectContext(const RunFacts& facts, const std::vector<ImplInfo>& impls);

// The commit of the source tree this binary was built from ("unknown" when
// git or the tree is not there), with "-dirty" when it has local changes.
std::string GitCommit();

// CPU model and the SIMD features that matter to the kernels (from /proc/cpuinfo).
nlohmann::json CpuFacts();

}  // namespace lnv

#endif  // LNV_HARNESS_RUN_CONTEXT_H_

// ln_check: every registered kernel over the input families, against the
// exact oracle and each kernel's derived bound. See CheckUsage() (--help).
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/check.h"
#include "impls/plugin/loader.h"
#include "impls/registry.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  lnv::CheckOptions options;
  bool help = false;
  std::string replay, error;
  if (lnv::ParseCheckArgs(args, &options, &help, &replay, &error) != 0) {
    std::cerr << "ln_check: " << error << " (see --help)\n";
    return 2;
  }
  if (help) {
    std::cout << lnv::CheckUsage();
    return 0;
  }
  // The registry, then LNV_PLUGINS, then --plugin (impls/plugin/loader.h).
  lnv::PluginLoad load = lnv::ImplsWithPlugins(options.plugins);
  if (!load.errors.empty()) {
    for (const std::string& e : load.errors) std::cerr << "ln_check: " << e << "\n";
    return 2;
  }
  if (!replay.empty()) return lnv::ReplayCase(replay, load.impls, std::cout, std::cerr);
  options.impls = std::move(load.impls);
  return lnv::RunCheck(options, std::cout).exit_code;
}

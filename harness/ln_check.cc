// ln_check: every registered kernel over the input families, against the
// exact oracle and each kernel's derived bound. See CheckUsage() (--help).
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/check.h"
#include "harness/kernel_list.h"
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
  // Plugins first: the isolation's launcher process must inherit them.
  const lnv::PluginLoad loaded = lnv::ImplsWithPlugins(options.plugins);
  for (const std::string& e : loaded.errors) std::cerr << "ln_check: " << e << "\n";
  const int load_status = loaded.errors.empty() ? 0 : 2;
  if (!replay.empty()) {
    const int rc =
        lnv::ReplayCase(replay, loaded.impls, std::cout, std::cerr, options.timeout_seconds);
    return std::max(rc, load_status);
  }
  if (options.list) {
    if (lnv::ListKernels(loaded.impls, options.impls_glob, options.list_json, std::cout) == 0) {
      std::cerr << "ln_check: no kernel matches --impls '" << options.impls_glob << "'\n";
      return 2;
    }
    return load_status;
  }
  options.impls = loaded.impls;
  const lnv::CheckResult result = lnv::RunCheck(options, std::cout);
  if (result.exit_code != 2) lnv::PrintCheckReport(options, result, std::cout);
  int rc = result.exit_code;
  if (!options.output_json.empty() && result.exit_code != 2) {
    std::string command = "ln_check";
    for (const std::string& a : args) command += " " + lnv::ShellQuote(a);
    const std::string e = lnv::WriteCheckJson(options, result, command, loaded.errors);
    if (e.empty()) {
      std::cout << "wrote " << options.output_json << "\n";
    } else {
      std::cerr << "ln_check: " << e << "\n";
      rc = 2;
    }
  }
  if (load_status != 0) {
    std::cout << "ln_check: " << loaded.errors.size()
              << " plugin error(s); the kernels that loaded were checked:\n";
    for (const std::string& e : loaded.errors) std::cout << "  " << e << "\n";
  }
  return std::max(rc, load_status);
}

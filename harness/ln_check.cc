// ln_check: every registered kernel over the input families, against the
// exact oracle and each kernel's derived bound. See CheckUsage() (--help).
#include <iostream>
#include <string>
#include <vector>

#include "harness/check.h"
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
  if (!replay.empty()) return lnv::ReplayCase(replay, lnv::AllImpls(), std::cout, std::cerr);
  return lnv::RunCheck(options, std::cout).exit_code;
}

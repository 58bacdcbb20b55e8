// main() of properties_test: sets RapidCheck's parameters from
// LNV_PROPERTY_BUDGET before RapidCheck reads RC_PARAMS, loads LNV_PLUGINS,
// prints the seed and the kernels, and after each property the coverage.
//
//   LNV_PROPERTY_BUDGET=default  max_success=100, the fixed seed below (CI)
//   LNV_PROPERTY_BUDGET=long     max_success=1000, a random seed (nightly)
// Keys the user puts in RC_PARAMS win (seed=, max_success=, reproduce=...).
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/driver.h"
#include "properties/coverage.h"
#include "properties/property.h"

namespace {

constexpr int kDefaultMaxSuccess = 100;
constexpr int kLongMaxSuccess = 1000;

std::set<std::string> Keys(const std::string& params) {
  std::set<std::string> keys;
  std::istringstream in(params);
  std::string token;
  while (in >> token) keys.insert(token.substr(0, token.find('=')));
  return keys;
}

// The budget's RapidCheck parameters, then the user's (the user's keys win).
std::string MergedParams(lnv::props::Budget b, const std::string& user,
                         const std::string& seed_flag) {
  const std::set<std::string> given = Keys(user + " " + seed_flag);
  std::string out;
  const auto add = [&](const std::string& key, const std::string& value) {
    if (!given.count(key)) out += key + "=" + value + " ";
  };
  const bool long_run = b == lnv::props::Budget::kLong;
  add("max_success", std::to_string(long_run ? kLongMaxSuccess : kDefaultMaxSuccess));
  add("max_size", "100");
  if (!long_run) add("seed", std::to_string(lnv::kDefaultSeed));
  return out + seed_flag + " " + user;
}

// Prints each property's coverage, and fails the run when a property of the
// suite passed without judging every kernel it applies to (a vacuous pass
// for that kernel). Not while reproducing one case (RC_PARAMS reproduce=).
class CoveragePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit CoveragePrinter(bool reproducing) : reproducing_(reproducing) {}
  bool some_kernel_never_judged() const { return some_kernel_never_judged_; }

 private:
  void OnTestStart(const ::testing::TestInfo& info) override {
    lnv::props::Coverage::Current().Reset(info.name());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const lnv::props::Coverage& c = lnv::props::Coverage::Current();
    if (c.cases() == 0 && c.judged().empty()) return;
    std::cout << "coverage of " << info.test_suite_name() << "." << info.name() << ":\n"
              << c.Summary() << std::flush;
    const lnv::props::PropertyDef* p = lnv::props::FindProperty(info.name());
    if (reproducing_ || p == nullptr || std::string_view(info.test_suite_name()) != "Properties" ||
        !info.result()->Passed()) {
      return;
    }
    for (const std::string& k : lnv::props::NeverJudged(*p, lnv::props::SuiteTargets(), c)) {
      std::cout << "properties_test: FAILED: " << info.name() << " never judged " << k
                << ", a kernel it applies to (more cases: RC_PARAMS=\"max_success=N\")\n";
      some_kernel_never_judged_ = true;
    }
  }

  bool reproducing_;
  bool some_kernel_never_judged_ = false;
};

const char kUsage[] =
    "properties_test: the RapidCheck property suite (one gtest per property).\n"
    "  --seed N        RapidCheck's seed (same as RC_PARAMS=\"seed=N\"); always printed\n"
    "  LNV_PROPERTY_BUDGET=default|long   cases per property (100, or 1000 with a random seed)\n"
    "  RC_PARAMS=...   RapidCheck's own parameters; its keys win over the budget's\n"
    "  LNV_PLUGINS=a.so:b.so   kernel plugins, added to every property\n"
    "Exit status: 0 all properties hold, 1 a property failed or passed without\n"
    "judging every kernel it applies to, 2 bad usage.\n"
    "GoogleTest's options follow.\n\n";

}  // namespace

int main(int argc, char** argv) {
  bool listing = false;
  std::string seed_flag;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--gtest_list_tests", 0) == 0) listing = true;
    if (a == "--help" || a == "-h") std::cout << kUsage;
    if (a == "--seed" || a.rfind("--seed=", 0) == 0) {
      std::string v = a == "--seed" ? (i + 1 < argc ? argv[++i] : "") : a.substr(7);
      std::uint64_t seed = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
      if (v.empty() || ec != std::errc() || p != v.data() + v.size()) {
        std::cerr << "properties_test: --seed wants an unsigned 64-bit integer, got '" << v
                  << "'\n";
        return 2;
      }
      seed_flag = "seed=" + v;
      continue;
    }
    args.push_back(argv[i]);
  }
  lnv::props::Budget budget;
  const char* env_budget = std::getenv("LNV_PROPERTY_BUDGET");
  if (!lnv::props::ParseBudget(env_budget, &budget)) {
    std::cerr << "properties_test: LNV_PROPERTY_BUDGET must be 'default' or 'long', not '"
              << env_budget << "'\n";
    return 2;
  }
  lnv::props::SetCurrentBudget(budget);
  const char* env_params = std::getenv("RC_PARAMS");
  const std::string params = MergedParams(budget, env_params ? env_params : "", seed_flag);
  setenv("RC_PARAMS", params.c_str(), 1);

  if (!listing) {
    const rc::detail::TestParams& tp = rc::detail::configuration().testParams;
    const auto& kernels = lnv::props::LoadedKernels();
    if (!lnv::props::PluginLoadErrors().empty()) {
      for (const std::string& e : lnv::props::PluginLoadErrors()) {
        std::cerr << "properties_test: " << e << "\n";
      }
      return 2;
    }
    int plugins = 0;
    for (const lnv::ImplInfo& k : kernels) plugins += k.name.rfind("plugin:", 0) == 0;
    std::cout << "properties_test: budget " << lnv::props::BudgetName(budget) << ", seed "
              << tp.seed << ", max_success " << tp.maxSuccess << ", max_size " << tp.maxSize << "; "
              << kernels.size() << " kernels (" << plugins << " from LNV_PLUGINS)\n"
              << "  RC_PARAMS=\"" << params << "\"\n"
              << std::flush;
  }
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);  // argv[argc] == nullptr: GoogleTest moves it when it removes its flags
  ::testing::InitGoogleTest(&n, args.data());
  auto* printer = new CoveragePrinter(params.find("reproduce=") != std::string::npos);
  ::testing::UnitTest::GetInstance()->listeners().Append(printer);  // gtest owns it
  const int failed = RUN_ALL_TESTS();
  return failed == 0 && !printer->some_kernel_never_judged() ? 0 : 1;
}

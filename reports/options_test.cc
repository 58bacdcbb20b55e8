#include "reports/options.h"

#include <gtest/gtest.h>

namespace lnv::report {
namespace {

TEST(ReportOptions, WithoutArgumentsItSweepsEveryKernelWithTheQuickBudgetIntoReport) {
  ReportOptions o;
  EXPECT_EQ(ParseReportArgs({}, &o), "");
  EXPECT_EQ(o.out_dir, "report");
  EXPECT_EQ(o.impls_glob, "*");
  EXPECT_EQ(o.budget, Budget::kQuick);
  EXPECT_EQ(o.seed, kDefaultSeed);
  EXPECT_TRUE(o.render.empty());
}

TEST(ReportOptions, EveryOptionTakesItsValueInBothSpellings) {
  ReportOptions o;
  EXPECT_EQ(ParseReportArgs(
                {"--out", "r2", "--impls=f32/*", "--plugin", "a.so", "--plugin=b.so", "--budget",
                 "full", "--seed=7", "-j", "3", "--quiet", "--compare", "old.json"},
                &o),
            "");
  EXPECT_EQ(o.out_dir, "r2");
  EXPECT_TRUE(o.out_given);
  EXPECT_EQ(o.impls_glob, "f32/*");
  EXPECT_EQ(o.plugins, (std::vector<std::string>{"a.so", "b.so"}));
  EXPECT_EQ(o.budget, Budget::kFull);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.jobs, 3);
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(o.compare, "old.json");
}

TEST(ReportOptions, BadUsageIsOneLineThatNamesTheProblem) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--budget", "slow"}, "--budget: want quick or full, got 'slow'"},
      {{"--jobs", "0"}, "--jobs: want a whole number from 1 to 1024, got '0'"},
      {{"--seed", "-1"}, "--seed: '-1' is not an unsigned 64-bit integer"},
      {{"--out"}, "--out needs a value"},
      {{"--frobnicate"}, "unknown argument '--frobnicate'"},
      {{"--quiet=yes"}, "--quiet takes no value"},
  };
  for (const auto& [args, why] : bad) {
    ReportOptions o;
    const std::string e = ParseReportArgs(args, &o);
    EXPECT_EQ(e, why);
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }
}

TEST(ReportOptions, RenderingRefusesOptionsThatOnlyApplyToASweep) {
  ReportOptions o;
  EXPECT_NE(ParseReportArgs({"--render", "e.json", "--budget", "full"}, &o), "");
  ReportOptions ok;
  EXPECT_EQ(ParseReportArgs({"--render", "e.json", "--compare", "old.json", "--out", "x"}, &ok),
            "");
}

TEST(ReportOptions, HelpNamesEveryOptionAndTheExitStatuses) {
  const std::string u = ReportUsage();
  for (const char* word :
       {"--out", "--impls", "--plugin", "--budget", "--seed", "--jobs", "--quiet", "--render",
        "--compare", "--help", "LNV_PLUGINS", "Exit status"}) {
    EXPECT_NE(u.find(word), std::string::npos) << word;
  }
}

}  // namespace
}  // namespace lnv::report

#include "harness/sweep.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "harness/check.h"
#include "harness/sweep_test_support.h"
#include "harness/write_cases.h"

namespace lnv {
namespace {

TEST(RunSweep, JudgesEveryKernelOnEveryPlannedCase) {
  const SweepResult r = SmallSweep();
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.cases_judged, static_cast<std::int64_t>(3 * SmallPlan().size()));
  for (const KernelReport& k : r.kernels) {
    EXPECT_EQ(k.cases, static_cast<std::int64_t>(SmallPlan().size())) << k.info.name;
    EXPECT_TRUE(k.outputs[static_cast<int>(Output::kY)].present);
    EXPECT_TRUE(k.outputs[static_cast<int>(Output::kDx)].present);
  }
  EXPECT_EQ(r.shapes[3], (std::pair<std::int64_t, std::int64_t>{1, 4}));
}

TEST(RunSweep, TheStableKernelPassesAndTheOnePassControlIsCaught) {
  const SweepResult r = SmallSweep();
  const KernelReport& two = r.kernels[0];
  const KernelReport& one = r.kernels[1];
  EXPECT_EQ(KernelVerdictWord(two), "pass");
  EXPECT_TRUE(two.findings.empty());
  EXPECT_TRUE(MeetsExpectation(two));
  EXPECT_EQ(KernelVerdictWord(one), "fail");
  ASSERT_FALSE(one.findings.empty());
  EXPECT_TRUE(MeetsExpectation(one));  // a negative control must fail
  EXPECT_EQ(r.plan[one.findings.front().item].family, "large_mean");
}

TEST(RunSweep, TheDSweepRecordsTheMaxBoundUsePerD) {
  const SweepResult r = SmallSweep();
  const auto& by_d = r.kernels[0].use_by_d;
  ASSERT_EQ(by_d.size(), 3u);
  EXPECT_TRUE(by_d.count(1) && by_d.count(8) && by_d.count(33));
  for (const auto& [d, uses] : by_d) {
    EXPECT_LE(uses[static_cast<int>(Output::kY)], 1.0) << d;
  }
}

TEST(WriteCaseFiles, EveryFindingGetsACaseThatLnCheckReplaysAsExpected) {
  SweepResult r = SmallSweep();
  const std::string dir = ::testing::TempDir() + "report_cases_test";
  std::filesystem::remove_all(dir);
  CaseWriteOptions w;
  w.out_dir = dir;
  w.found_by = "ln_report (test)";
  w.seed = kDefaultSeed;
  EXPECT_TRUE(WriteCaseFiles(w, &r).empty());
  const FamilyFinding& f = r.kernels[1].findings.front();
  ASSERT_FALSE(f.case_file.empty());
  EXPECT_NE(f.replay.find("ln_check --replay " + dir + "/" + f.case_file), std::string::npos);
  Case c;
  std::string error;
  ASSERT_TRUE(ReadCaseFile(dir + "/" + f.case_file, &c, &error)) << error;
  EXPECT_EQ(c.kernel, "f32/one_pass/cpu-scalar");
  EXPECT_EQ(c.provenance.found_by, "ln_report (test)");
  EXPECT_EQ(c.rows, 1);  // shrunk to the worst row, which still fails
  std::ostringstream out, err;
  EXPECT_EQ(ReplayCase(dir + "/" + f.case_file, AllImpls(), out, err), 0) << out.str() << err.str();
  // The stable kernel's worst y case is written too, and replays as a pass.
  const OutputSummary& y = r.kernels[0].outputs[static_cast<int>(Output::kY)];
  ASSERT_FALSE(y.worst_case_file.empty());
  EXPECT_EQ(ReplayCase(dir + "/" + y.worst_case_file, AllImpls(), out, err), 0) << out.str();
}

}  // namespace
}  // namespace lnv

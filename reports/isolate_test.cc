#include "reports/isolate.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/families.h"
#include "reports/cases.h"
#include "reports/report_test_support.h"

namespace lnv::report {
namespace {

int Segfaults(const ForwardArgs*) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a test crash leaves no core file behind
  raise(SIGSEGV);
  return 0;
}

int Hangs(const ForwardArgs*) {
  for (;;) pause();
}

ImplInfo AsPlugin(const std::string& name, ForwardFn forward) {
  ImplInfo i = Kernel("f32/two_pass/cpu-scalar");
  i.name = "plugin:test/" + name;
  if (forward != nullptr) {
    i.forward = forward;
    i.backward = nullptr;
  }
  return i;
}

Case Normal() {
  FamilyParams p;
  p.d = 16;
  p.rows = 4;
  return GenerateCase(*FindFamily("huge_magnitude"), p);
}

TEST(RunsIsolated, OnlyPluginKernels) {
  EXPECT_TRUE(RunsIsolated(AsPlugin("x", nullptr)));
  EXPECT_FALSE(RunsIsolated(Kernel("f32/two_pass/cpu-scalar")));
}

TEST(MeasureIsolated, AHealthyKernelMeasuresExactlyAsInProcess) {
  const Case c = Normal();
  const Reference ref = ComputeReference(c);
  const ImplInfo plugin = AsPlugin("two_pass", nullptr);
  JudgeOptions jo;
  jo.keep_elements = true;
  const CaseMeasure here = Measure(plugin, c, ref, JudgeWithReference(plugin, c, ref, jo), true, 3);
  const CaseMeasure there = MeasureIsolated(plugin, c, ref, true, 3, 60);
  EXPECT_EQ(SerializeMeasure(there), SerializeMeasure(here));
  EXPECT_FALSE(here.outputs[0].points.empty());  // with out-of-range (NaN) points in it
}

TEST(MeasureIsolated, ACrashIsAKernelErrorThatNamesTheSignal) {
  const Case c = Normal();
  const CaseMeasure m =
      MeasureIsolated(AsPlugin("segv", &Segfaults), c, ComputeReference(c), false, 0, 60);
  EXPECT_EQ(m.verdict, Verdict::kKernelError);
  EXPECT_NE(m.message.find("crashed: signal " + std::to_string(SIGSEGV)), std::string::npos)
      << m.message;
}

TEST(MeasureIsolated, AHangIsKilledAfterTheTimeout) {
  const Case c = Normal();
  const CaseMeasure m =
      MeasureIsolated(AsPlugin("hang", &Hangs), c, ComputeReference(c), false, 0, 0.5);
  EXPECT_EQ(m.verdict, Verdict::kKernelError);
  EXPECT_NE(m.message.find("hung"), std::string::npos) << m.message;
}

TEST(MeasureIsolated, ACrashingPluginIsAFindingWithItsCaseAndTheSweepGoesOn) {
  SweepOptions o;
  o.plan = SmallPlan();
  o.impls = {Kernel("f32/two_pass/cpu-scalar"), AsPlugin("segv", &Segfaults)};
  SweepResult r = RunSweep(o);
  EXPECT_EQ(KernelVerdictWord(r.kernels[0]), "pass");
  EXPECT_EQ(KernelVerdictWord(r.kernels[1]), "error");
  ASSERT_FALSE(r.kernels[1].findings.empty());
  CaseWriteOptions w;
  w.out_dir = ::testing::TempDir() + "report_isolate_test";
  w.plugin_paths = {"test.so"};
  EXPECT_TRUE(WriteCaseFiles(w, &r).empty());
  const Finding& f = r.kernels[1].findings.front();
  EXPECT_FALSE(f.case_file.empty());
  EXPECT_EQ(f.replay.rfind("LNV_PLUGINS=test.so ln_check --replay ", 0), 0u) << f.replay;
  EXPECT_NE(f.summary.find("crashed"), std::string::npos) << f.summary;
}

}  // namespace
}  // namespace lnv::report

// ln_report runs plugin kernels through harness/isolate.h: a plugin that
// crashes or hangs is a finding with its case, and the sweep goes on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>

#include "harness/isolate.h"
#include "harness/sweep.h"
#include "harness/sweep_test_support.h"
#include "harness/write_cases.h"

namespace lnv::report {
namespace {

int Segfaults(const ForwardArgs*) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a test crash leaves no core file behind
  // A real fault (raise() would return once the isolator's handler ran).
  static volatile std::uintptr_t unmapped = 8;
  *reinterpret_cast<volatile int*>(unmapped) = 1;
  return 0;
}

int Hangs(const ForwardArgs*) {
  for (;;) pause();
}

ImplInfo AsPlugin(const std::string& name, ForwardFn forward) {
  ImplInfo i = Kernel("f32/two_pass/cpu-scalar");
  i.name = "plugin:test/" + name;
  i.source = "test.so";  // the loader's source of a plugin kernel: its library
  if (forward != nullptr) {
    i.forward = forward;
    i.backward = nullptr;
  }
  return i;
}

TEST(PluginIsolation, AHealthyPluginMeasuresExactlyAsInProcess) {
  Isolator isolator;
  ASSERT_EQ(isolator.error(), "");
  SweepOptions o;
  o.plan = SmallPlan();
  o.impls = {AsPlugin("two_pass", nullptr)};
  const SweepResult here = RunSweep(o);
  o.plugin_runner = &isolator;
  const SweepResult there = RunSweep(o);
  ASSERT_EQ(here.kernels.size(), 1u);
  ASSERT_EQ(there.kernels.size(), 1u);
  EXPECT_EQ(KernelVerdictWord(there.kernels[0]), "pass");
  EXPECT_GT(there.kernels[0].cases, 0);
  for (int out = 0; out < 6; ++out) {
    EXPECT_EQ(there.kernels[0].outputs[out].max_ulp, here.kernels[0].outputs[out].max_ulp) << out;
    EXPECT_EQ(there.kernels[0].outputs[out].max_bound_use,
              here.kernels[0].outputs[out].max_bound_use)
        << out;
  }
}

TEST(PluginIsolation, ACrashingPluginIsAFindingWithItsCaseAndTheSweepGoesOn) {
  Isolator isolator;
  ASSERT_EQ(isolator.error(), "");
  SweepOptions o;
  o.plan = SmallPlan();
  o.impls = {Kernel("f32/two_pass/cpu-scalar"), AsPlugin("segv", &Segfaults)};
  o.plugin_runner = &isolator;
  SweepResult r = RunSweep(o);
  EXPECT_EQ(KernelVerdictWord(r.kernels[0]), "pass");
  EXPECT_EQ(KernelVerdictWord(r.kernels[1]), "error");
  ASSERT_FALSE(r.kernels[1].findings.empty());
  CaseWriteOptions w;
  w.out_dir = ::testing::TempDir() + "report_plugin_isolation_test";
  w.plugin_runner = &isolator;
  EXPECT_TRUE(WriteCaseFiles(w, &r).empty());
  const FamilyFinding& f = r.kernels[1].findings.front();
  EXPECT_FALSE(f.case_file.empty());
  EXPECT_EQ(f.replay.rfind("ln_check --plugin test.so --replay ", 0), 0u) << f.replay;
  EXPECT_NE(f.summary.find("SIGSEGV"), std::string::npos) << f.summary;
}

TEST(PluginIsolation, AHangingPluginIsKilledAfterTheTimeout) {
  IsolateOptions io;
  io.timeout_seconds = 0.5;
  Isolator isolator(io);
  ASSERT_EQ(isolator.error(), "");
  SweepOptions o;
  o.plan = SmallPlan();
  o.plan.resize(1);
  o.impls = {AsPlugin("hang", &Hangs)};
  o.plugin_runner = &isolator;
  const SweepResult r = RunSweep(o);
  EXPECT_EQ(KernelVerdictWord(r.kernels[0]), "error");
  EXPECT_EQ(r.kernels[0].verdict, Verdict::kTimedOut);
}

}  // namespace
}  // namespace lnv::report

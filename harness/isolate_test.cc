#include "harness/isolate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/judge.h"
#include "impls/plugin/loader.h"

namespace lnv {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// The test plugins' kernels by their name within the plugin, loaded before
// the Isolator is made (its workers inherit the launcher's address space).
class IsolateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const PluginLoad load = LoadPlugins({LNV_MISBEHAVING_PLUGIN, LNV_EXAMPLE_PLUGIN});
    ASSERT_TRUE(load.errors.empty());
    kernels_ = new std::map<std::string, ImplInfo>;
    for (const ImplInfo& i : load.impls) (*kernels_)[i.name.substr(i.name.find('/') + 1)] = i;
    IsolateOptions o;
    o.timeout_seconds = 0.5;
    isolator_ = new Isolator(o);
    ASSERT_EQ(isolator_->error(), "");
  }
  static void TearDownTestSuite() {
    delete isolator_;
    delete kernels_;
  }
  static const ImplInfo& Kernel(const std::string& name) { return kernels_->at(name); }

  // A rows x d forward (2 x 8 unless said): x = col - 3.5 (or `fill`), no
  // gamma/beta, outputs NaN.
  struct Call {
    std::vector<float> x, y, mean, rstd;
    ForwardArgs args{};
    explicit Call(float fill = 0, int rows = 2, int d = 8)
        : x(rows * d), y(rows * d, kNan), mean(rows, kNan), rstd(rows, kNan) {
      for (int i = 0; i < rows * d; ++i) x[i] = fill != 0 ? fill : static_cast<float>(i % d) - 3.5f;
      args.rows = rows;
      args.d = d;
      args.x = x.data();
      args.eps = 1e-5f;
      args.y = y.data();
      args.mean = mean.data();
      args.rstd = rstd.data();
    }
  };
  static CallResult Run(const std::string& kernel, Call* call) {
    return isolator_->Forward(Kernel(kernel), call->args);
  }

  static std::map<std::string, ImplInfo>* kernels_;
  static Isolator* isolator_;
};
std::map<std::string, ImplInfo>* IsolateTest::kernels_ = nullptr;
Isolator* IsolateTest::isolator_ = nullptr;

TEST_F(IsolateTest, AWellBehavedKernelGivesTheSameBitsAsADirectCall) {
  Call isolated, direct;
  const CallResult r = Run("f32/layer_norm/c", &isolated);
  EXPECT_EQ(r.status, CallStatus::kOk) << r.message;
  ASSERT_EQ(Kernel("f32/layer_norm/c").forward(&direct.args), 0);
  EXPECT_EQ(std::memcmp(isolated.y.data(), direct.y.data(), 16 * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(isolated.mean.data(), direct.mean.data(), 2 * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(isolated.rstd.data(), direct.rstd.data(), 2 * sizeof(float)), 0);
  EXPECT_FALSE(std::isnan(isolated.y[0]));
}

TEST_F(IsolateTest, ASegfaultIsACrashAndTheOutputsStayUnwritten) {
  Call call(1e30f);
  const CallResult r = Run("f32/segfaults_on_huge/test", &call);
  EXPECT_EQ(r.status, CallStatus::kCrashed);
  EXPECT_NE(r.message.find("killed by SIGSEGV at address 0x8 (outside its buffers)"),
            std::string::npos)
      << r.message;
  EXPECT_TRUE(std::isnan(call.y[0]));
  // The same kernel on ordinary input is fine: the fault is the input's.
  Call ordinary;
  EXPECT_EQ(Run("f32/segfaults_on_huge/test", &ordinary).status, CallStatus::kOk);
}

TEST_F(IsolateTest, AHangIsKilledAfterTheTimeout) {
  Call call;
  const CallResult r = Run("f32/hangs/test", &call);
  EXPECT_EQ(r.status, CallStatus::kTimedOut);
  EXPECT_EQ(r.message, "still running after 0.5 s: killed");
}

TEST_F(IsolateTest, AWriteJustPastAnUnalignedEndIsCaughtByTheCanary) {
  Call call(0, 1, 7);  // y has 28 bytes: 36 bytes of canary before the guard page
  const CallResult r = Run("f32/writes_past_end/test", &call);
  EXPECT_EQ(r.status, CallStatus::kBufferOverrun);
  EXPECT_EQ(r.message, "wrote past the end of y (as far as byte 31; y has bytes 0 to 27)");
  EXPECT_TRUE(std::isnan(call.y[0]));  // not copied back
}

TEST_F(IsolateTest, AWriteJustPastAnAlignedEndHitsTheGuardPage) {
  Call call;  // y has 64 bytes: the guard page follows at once
  const CallResult r = Run("f32/writes_past_end/test", &call);
  EXPECT_EQ(r.status, CallStatus::kBufferOverrun);
  EXPECT_EQ(r.message,
            "killed by SIGSEGV: touched byte 64 of y, past its end (y has bytes 0 to 63)");
}

TEST_F(IsolateTest, AWriteFarPastTheEndHitsTheGuardPage) {
  Call call;
  const CallResult r = Run("f32/writes_far_past_end/test", &call);
  EXPECT_EQ(r.status, CallStatus::kBufferOverrun);
  EXPECT_EQ(r.message,
            "killed by SIGSEGV: touched byte 2112 of y, past its end (y has bytes 0 to 63)");
}

TEST_F(IsolateTest, AWriteBeforeTheStartIsCaughtByTheCanary) {
  Call call;
  const CallResult r = Run("f32/writes_before_start/test", &call);
  EXPECT_EQ(r.status, CallStatus::kBufferOverrun);
  EXPECT_EQ(r.message, "wrote before the start of y (from byte -4; y has bytes 0 to 63)");
}

TEST_F(IsolateTest, AWriteIntoAnInputIsCaughtBecauseInputsAreReadOnly) {
  Call call;
  const CallResult r = Run("f32/writes_input/test", &call);
  EXPECT_EQ(r.status, CallStatus::kBufferOverrun);
  EXPECT_EQ(r.message, "killed by SIGSEGV: wrote byte 0 of the input x, which is read-only");
  EXPECT_EQ(call.x[0], -3.5f);  // the caller's input is untouched
}

TEST_F(IsolateTest, ANonZeroReturnIsReportedWithItsValue) {
  Call call;
  const CallResult r = Run("f32/returns_error/test", &call);
  EXPECT_EQ(r.status, CallStatus::kReturnedError);
  EXPECT_EQ(r.rc, 7);
  EXPECT_EQ(r.message, "returned 7");
}

TEST_F(IsolateTest, AbortAndExitAreCrashes) {
  Call a, e;
  const CallResult aborted = Run("f32/aborts/test", &a);
  EXPECT_EQ(aborted.status, CallStatus::kCrashed);
  EXPECT_EQ(aborted.message, "killed by SIGABRT");
  const CallResult exited = Run("f32/exits/test", &e);
  EXPECT_EQ(exited.status, CallStatus::kCrashed);
  EXPECT_EQ(exited.message, "the process exited with status 3 before the kernel returned");
}

TEST_F(IsolateTest, TheIsolatorKeepsWorkingAfterEveryKindOfFailure) {
  for (const char* bad : {"f32/aborts/test", "f32/writes_input/test", "f32/hangs/test"}) {
    Call call;
    EXPECT_NE(Run(bad, &call).status, CallStatus::kOk);
  }
  Call call;
  EXPECT_EQ(Run("f32/layer_norm/c", &call).status, CallStatus::kOk);
}

TEST_F(IsolateTest, TheJudgeReportsACrashingBackwardAsItsVerdictWithTheForwardJudged) {
  Case c;
  c.d = 4;
  c.rows = 1;
  c.eps = static_cast<double>(1e-5f);
  c.x = {1, 2, 3, 5};
  c.dy = {1, -1, 0.5, 0.25};
  JudgeOptions opt;
  opt.runner = isolator_;
  const Judgement j = Judge(Kernel("f32/backward_segfaults/test"), c, opt);
  EXPECT_EQ(j.verdict, Verdict::kCrashed);
  EXPECT_TRUE(j[Output::kY].present);
  EXPECT_EQ(j.message.rfind("backward killed by SIGSEGV", 0), 0u) << j.message;
  EXPECT_TRUE(IsFailure(Verdict::kCrashed));
  EXPECT_EQ(VerdictName(Verdict::kBufferOverrun), "buffer_overrun");
  // Negative control: the example kernel through the same isolator passes.
  EXPECT_EQ(Judge(Kernel("f32/layer_norm/c"), c, opt).verdict, Verdict::kPass);
}

TEST(Isolator, NullPointersStayNullInTheWorker) {
  // The example's RMSNorm refuses a beta (returns 1): passing one must reach it.
  const PluginLoad load = LoadPlugins({LNV_EXAMPLE_PLUGIN});
  Isolator isolator;
  std::vector<float> x(4, 1.0f), beta(4, 0.0f), y(4, kNan), rstd(1, kNan);
  ForwardArgs a{};
  a.rows = 1;
  a.d = 4;
  a.x = x.data();
  a.eps = 1e-5f;
  a.y = y.data();
  a.rstd = rstd.data();
  EXPECT_EQ(isolator.Forward(load.impls[1], a).status, CallStatus::kOk);
  a.beta = beta.data();
  const CallResult r = isolator.Forward(load.impls[1], a);
  EXPECT_EQ(r.status, CallStatus::kReturnedError);
  EXPECT_EQ(r.rc, 1);
}

}  // namespace
}  // namespace lnv

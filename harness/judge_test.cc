#include "harness/judge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "harness/case_file.h"
#include "harness/families.h"
#include "harness/formats.h"
#include "impls/dtype.h"

namespace lnv {
namespace {

// ---- Test kernels (fp32 LayerNorm), defined here so their behaviour is known ----

// Computes in long double and rounds once: well within any fp32 bound.
// `perturb` then damages its output to make the controls below.
struct Perturb {
  double y_ulps = 0;         // added to every y, in ulps of max(|y|, 1)
  std::int64_t y_only = -1;  // if >= 0, only this y element
  double dx_ulps = 0;
  bool nan_at_0 = false;   // y[0] = NaN
  bool inf_at_0 = false;   // y[0] = +inf
  bool drop_nans = false;  // write 0 where the row has a NaN/inf
  int forward_rc = 0;
};
Perturb g_perturb;

int PreciseForward(const ForwardArgs* a) {
  if (g_perturb.forward_rc != 0) return g_perturb.forward_rc;
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* beta = static_cast<const float*>(a->beta);
  auto* y = static_cast<float*>(a->y);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* xr = x + r * a->d;
    long double s = 0;
    for (std::int64_t i = 0; i < a->d; ++i) s += xr[i];
    const long double mu = s / a->d;
    long double m2 = 0;
    for (std::int64_t i = 0; i < a->d; ++i) m2 += (xr[i] - mu) * (xr[i] - mu);
    const long double rs = 1.0L / std::sqrt(m2 / a->d + a->eps);
    for (std::int64_t i = 0; i < a->d; ++i) {
      const std::int64_t idx = r * a->d + i;
      long double v = (xr[i] - mu) * rs;
      if (gamma) v *= gamma[i];
      if (beta) v += beta[i];
      float out = static_cast<float>(static_cast<double>(v));
      if (g_perturb.y_ulps != 0 && (g_perturb.y_only < 0 || g_perturb.y_only == idx)) {
        out = static_cast<float>(out + g_perturb.y_ulps *
                                           std::ldexp(1.0, std::max(std::ilogb(out), 0) - 23));
      }
      if (g_perturb.drop_nans && !std::isfinite(out)) out = 0;
      y[idx] = out;
    }
    if (a->mean) a->mean[r] = static_cast<float>(static_cast<double>(mu));
    if (a->rstd) a->rstd[r] = static_cast<float>(static_cast<double>(rs));
  }
  if (g_perturb.nan_at_0) y[0] = std::numeric_limits<float>::quiet_NaN();
  if (g_perturb.inf_at_0) y[0] = std::numeric_limits<float>::infinity();
  return 0;
}

// Ignores the saved statistics and recomputes everything in long double.
int PreciseBackward(const BackwardArgs* a) {
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* dy = static_cast<const float*>(a->dy);
  auto* dx = static_cast<float*>(a->dx);
  std::vector<long double> dg(a->d, 0), db(a->d, 0), xh(a->d), g(a->d);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* xr = x + r * a->d;
    long double s = 0;
    for (std::int64_t i = 0; i < a->d; ++i) s += xr[i];
    const long double mu = s / a->d;
    long double m2 = 0;
    for (std::int64_t i = 0; i < a->d; ++i) m2 += (xr[i] - mu) * (xr[i] - mu);
    const long double rs = 1.0L / std::sqrt(m2 / a->d + a->eps);
    long double ga = 0, gb = 0;
    for (std::int64_t i = 0; i < a->d; ++i) {
      xh[i] = (xr[i] - mu) * rs;
      g[i] = static_cast<long double>(dy[r * a->d + i]) * (gamma ? gamma[i] : 1.0f);
      ga += g[i];
      gb += g[i] * xh[i];
      dg[i] += dy[r * a->d + i] * xh[i];
      db[i] += dy[r * a->d + i];
    }
    ga /= a->d;
    gb /= a->d;
    for (std::int64_t i = 0; i < a->d; ++i) {
      float out = static_cast<float>(static_cast<double>(rs * (g[i] - ga - xh[i] * gb)));
      if (g_perturb.dx_ulps != 0) {
        out = static_cast<float>(out + g_perturb.dx_ulps *
                                           std::ldexp(1.0, std::max(std::ilogb(out), 0) - 23));
      }
      dx[r * a->d + i] = out;
    }
  }
  for (std::int64_t i = 0; i < a->d; ++i) {
    if (a->dgamma)
      static_cast<float*>(a->dgamma)[i] = static_cast<float>(static_cast<double>(dg[i]));
    if (a->dbeta) static_cast<float*>(a->dbeta)[i] = static_cast<float>(static_cast<double>(db[i]));
  }
  return 0;
}

ImplInfo PreciseImpl() {
  ImplInfo i;
  i.name = "f32/precise/test";
  i.norm = Norm::kLayerNorm;
  i.x_dtype = i.param_dtype = i.acc_dtype = DType::kF32;
  i.algorithm = i.bound_algorithm = Algorithm::kTwoPass;
  i.forward = &PreciseForward;
  i.backward = &PreciseBackward;
  return i;
}

class JudgeTest : public ::testing::Test {
 protected:
  void SetUp() override { g_perturb = Perturb{}; }
  void TearDown() override { g_perturb = Perturb{}; }
  static Case Normal(std::int64_t d = 64, std::int64_t rows = 4) {
    FamilyParams p;
    p.d = d;
    p.rows = rows;
    return GenerateCase(*FindFamily("standard_normal"), p);
  }
};

TEST_F(JudgeTest, PassesACorrectKernelWithRoomToSpare) {
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j.verdict, Verdict::kPass) << Summarize(j);
  for (Output o : kAllOutputs) {
    ASSERT_TRUE(j[o].present) << OutputName(o);
    EXPECT_LE(j[o].max_ulp, 1.0) << OutputName(o);  // rounded once from ~64 bits
    EXPECT_LT(j[o].max_bound_use, 0.5) << OutputName(o);
    EXPECT_EQ(j[o].unclaimed, 0);
  }
  EXPECT_EQ(j[Output::kY].count, 256);
  EXPECT_EQ(j[Output::kMean].count, 4);
  EXPECT_EQ(j[Output::kDgamma].count, 64);
}

TEST_F(JudgeTest, FlagsAKernelThatIsOffByAThousandUlps) {
  g_perturb.y_ulps = 1000;
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j.verdict, Verdict::kBoundExceeded) << Summarize(j);
  EXPECT_EQ(j[Output::kY].verdict, Verdict::kBoundExceeded);
  EXPECT_GE(j[Output::kY].max_ulp, 999);
  EXPECT_GT(j[Output::kY].max_bound_use, 1);
  EXPECT_EQ(j[Output::kMean].verdict, Verdict::kPass);  // only y is damaged
}

TEST_F(JudgeTest, PointsAtTheWorstElement) {
  g_perturb.y_ulps = 1000;
  g_perturb.y_only = 77;
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j[Output::kY].verdict, Verdict::kBoundExceeded);
  ASSERT_TRUE(j[Output::kY].worst.has_value());
  EXPECT_EQ(*j[Output::kY].worst, 77);
}

TEST_F(JudgeTest, FlagsADamagedBackward) {
  g_perturb.dx_ulps = 1000;
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j[Output::kY].verdict, Verdict::kPass);
  EXPECT_EQ(j[Output::kDx].verdict, Verdict::kBoundExceeded) << Summarize(j);
}

TEST_F(JudgeTest, CallsANanWhereTheOracleIsFiniteANanMismatch) {
  g_perturb.nan_at_0 = true;
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j.verdict, Verdict::kNanMismatch);
  EXPECT_EQ(*j[Output::kY].worst, 0);
}

TEST_F(JudgeTest, CallsAnInfinityFromFiniteInputsNotFinite) {
  g_perturb.inf_at_0 = true;
  EXPECT_EQ(Judge(PreciseImpl(), Normal()).verdict, Verdict::kNotFinite);
}

// eps = 0 and a row whose square underflows in float: the sum-of-squares
// model has no claim (bound +inf), the kernel's rstd is inf and its dx -inf
// where the exact dx is +0. No claim means either infinity is allowed.
TEST_F(JudgeTest, AllowsAnInfinityOfEitherSignWhereTheBoundIsInfinite) {
  const ImplInfo* rms = FindImpl("bf16/rms_serial/cpu-scalar");
  ASSERT_NE(rms, nullptr);
  Case c;
  c.norm = Norm::kRmsNorm;
  c.dtype = c.param_dtype = DType::kBF16;
  c.d = 1;
  c.rows = 1;
  c.eps = 0;
  c.x = {0x1p-133};
  c.gamma = {1.0};
  c.dy = {0.125};
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(*rms, c, opt);
  ASSERT_TRUE(j[Output::kDx].present);
  EXPECT_TRUE(std::isinf(j[Output::kDx].elements[0].kernel));
  EXPECT_TRUE(std::isinf(j[Output::kDx].elements[0].bound));
  EXPECT_FALSE(IsFailure(j.verdict)) << Summarize(j);
}

ExactValue Exact(double v, FloatFormat f) {
  ExactValue e;
  e.rounded = RoundToFormat(v, f);
  e.hi = v;
  e.lo = 0;
  return e;
}

// Beyond the format's range the exact value rounds to inf: without a claim
// any finite kernel value passes, but the other infinity never does; with a
// finite bound a finite value that far off does not pass either.
TEST(JudgeElement, AnExactOverflowConstrainsOnlyWhereThereIsABound) {
  const double big = 0x1p+20;  // beyond fp16's overflow threshold (65520)
  const ExactValue ev = Exact(big, kBinary16);
  ASSERT_TRUE(std::isinf(ev.rounded));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(JudgeElement(0, 65504, ev, inf, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, inf, ev, inf, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, ev, inf, kBinary16, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, 65504, ev, 1.0, kBinary16, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, inf, ev, 1.0, kBinary16, true).verdict, Verdict::kPass);
}

// "No claim" is no licence to overflow: finite in, finite out holds whatever
// the bound, so a kernel infinity for a finite exact value fails even where
// the bound is +inf (it used to pass there, either sign). Only a row outside
// the claimed range may give one (the out-of-range rule, tested below).
TEST(JudgeElement, AKernelInfinityForAFiniteExactValueFailsEvenWithoutAClaim) {
  const double inf = std::numeric_limits<double>::infinity();
  const ExactValue zero = Exact(0.0, kBinary16);
  EXPECT_EQ(JudgeElement(0, -inf, zero, inf, kBinary16, true).verdict, Verdict::kNotFinite);
  EXPECT_EQ(JudgeElement(0, inf, zero, inf, kBinary16, true).verdict, Verdict::kNotFinite);
  EXPECT_EQ(JudgeElement(0, 3.0, zero, inf, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, zero, inf, kBinary16, false).verdict, Verdict::kOutOfRange);
}

// Errors are measured against the exact value, also where it rounds to inf:
// a finite kernel value within the bound of an exact value just past the
// overflow threshold passes (fuzz_ln found an fp32 RMSNorm y 0.6 ulp below
// such an exact value failed as infinitely wrong), one beyond the bound does
// not, and the other infinity only where the bound reaches the threshold on
// its side (fuzz_ln: an f16 RMSNorm dx of +1.2e7 with a bound of 2.2e8, the
// kernel -inf).
TEST(JudgeElement, AFiniteValueWithinTheBoundOfAnExactOverflowPasses) {
  const double inf = std::numeric_limits<double>::infinity();
  const double max = MaxFinite(kBinary16);  // 65504
  const double past = 65530;                // beyond the threshold 65520
  const ExactValue ev = Exact(past, kBinary16);
  ASSERT_TRUE(std::isinf(ev.rounded));
  const ElementResult within = JudgeElement(0, max, ev, 2 * (past - max), kBinary16, true);
  EXPECT_EQ(within.verdict, Verdict::kPass);
  EXPECT_EQ(within.error, past - max);
  EXPECT_EQ(JudgeElement(0, max, ev, (past - max) / 2, kBinary16, true).verdict,
            Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, -inf, ev, 2 * (past - max), kBinary16, true).verdict,
            Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, inf, ev, 2 * (past - max), kBinary16, true).verdict, Verdict::kPass);
  const double t = OverflowThreshold(kBinary16);
  EXPECT_EQ(JudgeElement(0, -inf, ev, past + t, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, ev, past + t / 2, kBinary16, true).verdict,
            Verdict::kBoundExceeded);
}

// The same for binary64 outputs, whose exact value past DBL_MAX the oracle
// gives as hi = +-inf and lo = exact -+ 2^1024 (oracle.h): fuzz_ln found an
// f64 RMSNorm y of DBL_MAX for an exact value 2^970 above it (0.5 ulp, within
// the bound 8e292) failed as infinitely wrong.
TEST(JudgeElement, AFiniteValueWithinTheBoundOfAnExactValueBeyondBinary64Passes) {
  const double inf = std::numeric_limits<double>::infinity();
  const double max = std::numeric_limits<double>::max();  // 2^1024 - 2^971
  ExactValue ev;
  ev.rounded = ev.hi = inf;
  ev.lo = -0x1p970;  // exact = 2^1024 - 2^970, the overflow threshold
  const ElementResult within = JudgeElement(0, max, ev, 0x1p972, kBinary64, true);
  EXPECT_EQ(within.verdict, Verdict::kPass);
  EXPECT_EQ(within.error, 0x1p970);
  EXPECT_EQ(within.ulps, 0.5);
  EXPECT_EQ(JudgeElement(0, max, ev, 0x1p969, kBinary64, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, 1.0, ev, 0x1p972, kBinary64, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, -max, ev, 0x1p972, kBinary64, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, inf, ev, 0x1p972, kBinary64, true).verdict, Verdict::kPass);
  // Without lo (an exact value far past the range) nothing finite is near it.
  ev.lo = inf;
  EXPECT_EQ(JudgeElement(0, max, ev, 0x1p1000, kBinary64, true).verdict, Verdict::kBoundExceeded);
  ev.rounded = ev.hi = -inf;
  ev.lo = 0x1p970;
  EXPECT_EQ(JudgeElement(0, -max, ev, 0x1p972, kBinary64, true).verdict, Verdict::kPass);
}

// A kernel infinity is reachable when exact +- bound reaches the overflow
// threshold on the infinity's side, whatever the sign of the exact value.
TEST(JudgeElement, AKernelInfinityIsReachableWhenTheBoundReachesTheThresholdOnItsSide) {
  const double inf = std::numeric_limits<double>::infinity();
  const double t = OverflowThreshold(kBinary16);
  const ExactValue zero = Exact(0.0, kBinary16);
  EXPECT_EQ(JudgeElement(0, -inf, zero, 2 * t, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, inf, zero, 2 * t, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, zero, t / 2, kBinary16, true).verdict, Verdict::kNotFinite);
  const ExactValue near = Exact(60000.0, kBinary16);
  EXPECT_EQ(JudgeElement(0, inf, near, 6000.0, kBinary16, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, near, 6000.0, kBinary16, true).verdict, Verdict::kNotFinite);
  EXPECT_EQ(JudgeElement(0, inf, near, 1000.0, kBinary16, true).verdict, Verdict::kNotFinite);
}

// A constant row with eps = 0 is 0/0: the oracle says NaN, and a kernel whose
// mean is off by an ulp gives x-hat = +-1 instead. From finite inputs that is
// no broken claim (found by the long property budget: f64, d = 257); a row
// holding NaN must still give NaN (the test below).
TEST_F(JudgeTest, AcceptsAnyValueWhereTheExactResultIsZeroOverZero) {
  const ImplInfo* k = FindImpl("f64/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  Case c;
  c.dtype = c.param_dtype = DType::kF64;
  c.d = 257;
  c.rows = 1;
  c.eps = 0;
  c.x.assign(257, 0x1.94f18c9e8860ap+4);
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(*k, c, opt);
  ASSERT_TRUE(j[Output::kY].present);
  EXPECT_TRUE(std::isnan(j[Output::kY].elements[0].exact.rounded));
  EXPECT_FALSE(std::isnan(j[Output::kY].elements[0].kernel));  // the kernel's +-1
  EXPECT_FALSE(IsFailure(j.verdict)) << Summarize(j);
  // Negative control: the same values judged as a row that is not 0/0 fail.
  const ExactValue nan_exact = j[Output::kY].elements[0].exact;
  EXPECT_EQ(JudgeElement(0, 1.0, nan_exact, 1.0, kBinary64, true, false).verdict,
            Verdict::kNanMismatch);
  EXPECT_EQ(JudgeElement(0, 1.0, nan_exact, 1.0, kBinary64, true, true).verdict, Verdict::kPass);
}

// The statistical tier's negative control: statistics over the first half
// of a row at d = 2^17 are off by ~1/sqrt(d/2), within the worst-case bound
// (gamma_(d-1) in fp32 is about as large), so the deterministic tier passes
// the kernel on standard_normal; beyond_typical alone catches it. A correct
// kernel (the two-pass reference) passes both tiers on the same case.
TEST_F(JudgeTest, TheStatisticalTierAloneCatchesStatisticsOverHalfALongRow) {
  const ImplInfo* half = FindImpl("f32/first_half_statistics/cpu-broken");
  const ImplInfo* ref = FindImpl("f32/two_pass/cpu-scalar");
  ASSERT_NE(half, nullptr);
  ASSERT_NE(ref, nullptr);
  FamilyParams p;
  p.d = std::int64_t{1} << 17;
  p.rows = 2;
  p.with_dy = false;
  const Case c = GenerateCase(*FindFamily("standard_normal"), p);
  JudgeOptions deterministic;
  JudgeOptions typical;
  typical.typical = TypicalTier::kFail;
  const Judgement worst_case = Judge(*half, c, deterministic);
  EXPECT_FALSE(IsFailure(worst_case.verdict)) << Summarize(worst_case);
  const Judgement tiered = Judge(*half, c, typical);
  EXPECT_EQ(tiered.verdict, Verdict::kBeyondTypical) << Summarize(tiered);
  EXPECT_GT(tiered[Output::kY].beyond_typical, 0);
  const Judgement correct = Judge(*ref, c, typical);
  EXPECT_EQ(correct.verdict, Verdict::kPass) << Summarize(correct);
  EXPECT_EQ(correct[Output::kY].beyond_typical, 0);
}

// fuzz/regressions/judge-no-claim-infinity.case: a constant f16 row with
// eps = 2^-126 (rstd = 2^63), where the kernel's dx overflows to -inf for an
// exact +0. The row's variance error bound reaches sigma^2 + eps, so it is
// outside the claimed range (RowInClaimedRange): out_of_range, not a pass and
// not a failure; dbeta, a sum of dy alone, is still judged. The same -inf in
// range, without a claim, is not_finite (the check can fail).
TEST_F(JudgeTest, AnIllConditionedRowIsOutsideTheClaimedRangeButItsDbetaIsJudged) {
  const ImplInfo* k = FindImpl("f16/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  Case c;
  c.dtype = c.param_dtype = DType::kF16;
  c.d = 32;
  c.rows = 1;
  c.eps = 0x1p-126;
  c.x.assign(32, -0x1.4p-1);
  c.gamma.assign(32, 0x1.524p+0);
  c.beta.assign(32, 0.0);
  c.dy.assign(32, 0x1.3d8p+1);
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(*k, c, opt);
  EXPECT_EQ(j.rows_out_of_range, 1);
  ASSERT_TRUE(j[Output::kDx].present);
  EXPECT_EQ(j[Output::kDx].verdict, Verdict::kOutOfRange) << Summarize(j);
  EXPECT_EQ(j[Output::kDbeta].verdict, Verdict::kPass) << Summarize(j);
  EXPECT_EQ(j.verdict, Verdict::kOutOfRange) << Summarize(j);
  const ElementResult& e = j[Output::kDx].elements[0];
  if (std::isinf(e.kernel)) {
    EXPECT_EQ(
        JudgeElement(0, e.kernel, e.exact, std::numeric_limits<double>::infinity(), kBinary16, true)
            .verdict,
        Verdict::kNotFinite);
  }
}

// Two dy near FLT_MAX overflow the float row sum of g = dy * gamma: outside
// the backward's claimed weight (impls/cpu/valid_range.h) that is no broken
// claim; the same kernel with no backward limit is caught (the check can fail).
TEST_F(JudgeTest, ABackwardRowBeyondTheClaimedWeightIsOutOfRange) {
  const ImplInfo* k = FindImpl("f32/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  Case c;
  c.d = 4;
  c.rows = 1;
  c.eps = 1e-5;
  c.x = {0.0, 1.0, 2.0, 3.0};
  c.dy = {0x1.fep+127, 0x1.fep+127, 0.0, 0.0};
  const Judgement j = Judge(*k, c);
  EXPECT_EQ(j[Output::kDx].verdict, Verdict::kOutOfRange) << Summarize(j);
  EXPECT_FALSE(IsFailure(j.verdict)) << Summarize(j);
  ImplInfo unlimited = *k;
  unlimited.max_backward_weight = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(IsFailure(Judge(unlimited, c)[Output::kDx].verdict));
}

// A row of x holding +inf has xhat NaN, so the column weight sum |dy| (1 +
// |xhat|) was NaN and kept the dbeta column in range; dbeta = sum dy has no
// xhat, and two dy near -FLT_MAX overflow the kernel's float sum where the
// exact dbeta (one of them, the third row cancelling the other) is finite.
// The column is out of range now; the same kernel with no backward limit is
// caught (the check can fail). Found by fuzz_ln (CI's configuration),
// fuzz/regressions/dbeta-weight-of-a-non-finite-row.case.
TEST_F(JudgeTest, ADbetaColumnBeyondTheClaimedWeightIsOutOfRangeBesideARowHoldingAnInfinity) {
  const ImplInfo* k = FindImpl("f32/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  Case c;
  c.d = 2;
  c.rows = 3;
  c.eps = 1e-5;
  c.x = {1.0, 2.0, std::numeric_limits<double>::infinity(), 1.0, 3.0, 5.0};
  c.dy = {-0x1.96eap+127, 0.0, -0x1.96eap+127, 0.0, 0x1.96eap+127, 0.0};
  const Judgement j = Judge(*k, c);
  ASSERT_TRUE(j[Output::kDbeta].present);
  EXPECT_EQ(j[Output::kDbeta].verdict, Verdict::kOutOfRange) << Summarize(j);
  EXPECT_FALSE(IsFailure(j.verdict)) << Summarize(j);
  ImplInfo unlimited = *k;
  unlimited.max_backward_weight = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(IsFailure(Judge(unlimited, c)[Output::kDbeta].verdict)) << Summarize(j);
}

// dx = rstd ((g - a) - xhat b): the bracket is bounded by a multiple of the
// row weight W, the product by rstd W. fuzz_ln found an f64 row (kappa ~
// 2^40, rstd 2^43, dy up to 2^967) whose W is within the limit but rstd W is
// not: the kernel's dx overflowed where the exact dx (-1.1e302) does not. dx
// is out of range there, dgamma and dbeta (no rstd) are not; the same kernel
// with no backward limit is caught (the check can fail).
TEST_F(JudgeTest, ADxRowWhoseRstdTimesWeightIsBeyondTheClaimIsOutOfRange) {
  Case c;
  std::string error;
  ASSERT_TRUE(ReadCaseFile(std::string(LNV_SOURCE_DIR) +
                               "/fuzz/regressions/backward-rstd-times-weight-beyond-claim.case",
                           &c, &error))
      << error;
  const ImplInfo* k = FindImpl(c.kernel);
  ASSERT_NE(k, nullptr);
  const Judgement j = Judge(*k, c);
  EXPECT_EQ(j[Output::kDx].verdict, Verdict::kOutOfRange) << Summarize(j);
  EXPECT_EQ(j[Output::kDx].out_of_range, c.d);
  EXPECT_EQ(j[Output::kDgamma].out_of_range, 0);
  EXPECT_FALSE(IsFailure(j.verdict)) << Summarize(j);
  ImplInfo unlimited = *k;
  unlimited.max_backward_weight = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Judge(unlimited, c)[Output::kDx].verdict, Verdict::kNotFinite);
}

// One binary64 LayerNorm row x = 0, 1, 2, 3 (xhat = -+1.34, -+0.447) with
// the given gamma and beta, eps a binary32 value as the kernel receives it.
Case F64LayerNormRow(std::vector<double> gamma, std::vector<double> beta) {
  Case c;
  c.dtype = c.param_dtype = DType::kF64;
  c.d = 4;
  c.rows = 1;
  c.eps = 0x1p-17;
  c.x = {0.0, 1.0, 2.0, 3.0};
  c.gamma = std::move(gamma);
  c.beta = std::move(beta);
  return c;
}

// y = gamma xhat + beta: with gamma = DBL_MAX and |xhat| = 1.34 the product
// overflows binary64 while beta = -DBL_MAX/2 keeps the exact y[3] finite
// (0.84 DBL_MAX). Past |gamma xhat| = MAX/2 a kernel stating a range claims
// no y (found by review: f64 LayerNorm kernels gave +inf there); the same
// kernel with no stated range is caught (the check can fail).
TEST_F(JudgeTest, AYElementWhoseGammaTimesXhatIsBeyondTheClaimIsOutOfRange) {
  const ImplInfo* k = FindImpl("f64/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  const double max = std::numeric_limits<double>::max();
  const Case c = F64LayerNormRow({max, max, max, max}, {-max / 2, -max / 2, -max / 2, -max / 2});
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(*k, c, opt);
  EXPECT_FALSE(IsFailure(j[Output::kY].verdict)) << Summarize(j);
  EXPECT_EQ(j[Output::kY].out_of_range, 2) << "the two |xhat| = 1.34 elements";
  ImplInfo unlimited = *k;
  unlimited.max_row_sumsq = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Judge(unlimited, c)[Output::kY].verdict, Verdict::kNotFinite);
}

// An exact binary64 y past DBL_MAX (beta = 0.9 DBL_MAX, gamma xhat = 0.335
// DBL_MAX, within the product's range) keeps a finite bound although its
// hi + lo is infinite (a review asked whether any finite kernel value then
// passes: it does not). The kernel's own +inf (the correct rounding) passes;
// DBL_MAX, 0.235 DBL_MAX off, and 0 do not.
TEST_F(JudgeTest, AFiniteYFarFromAnExactValuePastBinary64Fails) {
  const ImplInfo* k = FindImpl("f64/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  const double max = std::numeric_limits<double>::max();
  const Case c = F64LayerNormRow({max / 4, max / 4, max / 4, max / 4}, {0.0, 0.0, 0.0, 0.9 * max});
  const Reference ref = ComputeReference(c);
  ASSERT_EQ(ref.forward.y[3].rounded, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(std::isfinite(ref.forward.y[3].lo));
  const Judgement own = Judge(*k, c);
  EXPECT_FALSE(IsFailure(own.verdict)) << Summarize(own);
  KernelOutputs out;
  for (std::int64_t i = 0; i < c.d; ++i) out.y.push_back(ref.forward.y[i].rounded);
  EXPECT_FALSE(IsFailure(JudgeOutputs(*k, c, ref, out).verdict));
  for (const double wrong : {max, 0.0}) {
    out.y[3] = wrong;
    EXPECT_EQ(JudgeOutputs(*k, c, ref, out)[Output::kY].verdict, Verdict::kBoundExceeded) << wrong;
  }
}

TEST_F(JudgeTest, AgreesWithNanForNanAndFlagsAKernelThatDropsIt) {
  FamilyParams p;
  p.rows = 10;
  const Case c = GenerateCase(*FindFamily("nan_inf_rows"), p);
  const Judgement ok = Judge(PreciseImpl(), c);
  EXPECT_EQ(ok.verdict, Verdict::kPass) << Summarize(ok);
  g_perturb.drop_nans = true;
  EXPECT_EQ(Judge(PreciseImpl(), c).verdict, Verdict::kNanMismatch);
}

TEST_F(JudgeTest, ReportsAKernelError) {
  g_perturb.forward_rc = 3;
  const Judgement j = Judge(PreciseImpl(), Normal());
  EXPECT_EQ(j.verdict, Verdict::kKernelError);
  EXPECT_NE(j.message.find("forward returned 3"), std::string::npos);
}

TEST_F(JudgeTest, JudgesOnlyTheNanContractOutsideTheClaimedRange) {
  ImplInfo impl = PreciseImpl();
  impl.max_row_sumsq = 1.0;  // every standard-normal row of d = 64 is beyond it
  g_perturb.y_ulps = 1000;   // would exceed the bound in range
  const Judgement j = Judge(impl, Normal());
  EXPECT_EQ(j.verdict, Verdict::kOutOfRange) << Summarize(j);
  EXPECT_EQ(j.rows_out_of_range, 4);
  EXPECT_EQ(j[Output::kY].out_of_range, 256);
}

TEST_F(JudgeTest, ReusesOneReferenceAcrossKernels) {
  const Case c = Normal();
  const Reference ref = ComputeReference(c);
  const Judgement a = JudgeWithReference(PreciseImpl(), c, ref);
  const Judgement b = Judge(PreciseImpl(), c);
  EXPECT_EQ(Summarize(a), Summarize(b));
}

TEST_F(JudgeTest, KeepsEveryElementForReplay) {
  JudgeOptions o;
  o.keep_elements = true;
  const Judgement j = Judge(PreciseImpl(), Normal(8, 2), o);
  EXPECT_EQ(j[Output::kY].elements.size(), 16u);
  for (const ElementResult& e : j[Output::kY].elements) {
    EXPECT_LE(e.error, e.bound);
    EXPECT_EQ(e.ulps, e.error / UlpOf(e.exact.hi + e.exact.lo, kBinary32));
  }
}

TEST_F(JudgeTest, RefusesAMismatchedKernel) {
  Case c = Normal();
  EXPECT_TRUE(IsCompatible(PreciseImpl(), c));
  EXPECT_EQ(CheckCompatible(PreciseImpl(), c), "");
  c.dtype = c.param_dtype = DType::kBF16;
  EXPECT_FALSE(IsCompatible(PreciseImpl(), c));
  EXPECT_NE(CheckCompatible(PreciseImpl(), c).find("takes f32/f32"), std::string::npos);
  c.norm = Norm::kRmsNorm;
  EXPECT_FALSE(IsCompatible(PreciseImpl(), c));
  EXPECT_NE(CheckCompatible(PreciseImpl(), c).find("layer_norm"), std::string::npos);
  ImplInfo no_forward = PreciseImpl();
  no_forward.forward = nullptr;
  EXPECT_FALSE(IsCompatible(no_forward, Normal()));
  EXPECT_NE(CheckCompatible(no_forward, Normal()).find("has no forward"), std::string::npos);
}

// The registry's scalar references, every dtype and norm, on typical inputs.
TEST_F(JudgeTest, PassesEveryRegisteredClaimsBoundKernelOnStandardNormalRows) {
  for (const ImplInfo& impl : AllImpls()) {
    if (impl.status != ImplStatus::kClaimsBound) continue;
    FamilyParams p;
    p.norm = impl.norm;
    p.dtype = impl.x_dtype;
    p.param_dtype = impl.param_dtype;
    p.d = 100;
    p.rows = 4;
    const Judgement j = Judge(impl, GenerateCase(*FindFamily("standard_normal"), p));
    EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << ": " << Summarize(j);
  }
}

// ---- The special-value table (oracle.h): values IEEE rules alone decide ----

ExactValue TableValue(double v, bool nan_accepted) {
  ExactValue e{v, v, 0.0, ValueStatus::kDecided};
  e.by_table = true;
  e.nan_accepted = nan_accepted;
  return e;
}

// y at a finite element of an RMSNorm row holding +-inf: (x 0) gamma = -0,
// or NaN from a max|x|-scaled order; no rounding error, whatever the bound.
TEST(JudgeElement, ATableZeroAcceptsEitherZeroAndAnAcceptedNanButNoNonzeroValue) {
  const double inf = std::numeric_limits<double>::infinity();
  const ExactValue zero = TableValue(-0.0, true);
  for (double k : {0.0, -0.0, std::nan("")}) {
    EXPECT_EQ(JudgeElement(0, k, zero, inf, kBinary32, true).verdict, Verdict::kPass) << k;
  }
  const ElementResult tiny = JudgeElement(0, 0x1p-149, zero, inf, kBinary32, true);
  EXPECT_EQ(tiny.verdict, Verdict::kBoundExceeded);  // the negative controls
  EXPECT_EQ(tiny.bound, 0.0);
  EXPECT_EQ(tiny.ulps, 1.0);
  EXPECT_EQ(JudgeElement(0, 1.0, zero, inf, kBinary32, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, -inf, zero, inf, kBinary32, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, std::nan(""), TableValue(0.0, false), inf, kBinary32, true).verdict,
            Verdict::kNanMismatch);
}

// A table NaN (e.g. y at the infinity itself, inf * 0) is NaN in every
// order: unlike a NaN from inf * (an exact 0), it accepts no infinity.
TEST(JudgeElement, ATableNanAcceptsOnlyNan) {
  const double inf = std::numeric_limits<double>::infinity();
  const ExactValue nan = TableValue(std::nan(""), false);
  EXPECT_EQ(JudgeElement(0, std::nan(""), nan, inf, kBinary32, true).verdict, Verdict::kPass);
  for (double k : {inf, -inf, 0.0, 2.0}) {
    EXPECT_EQ(JudgeElement(0, k, nan, inf, kBinary32, true).verdict, Verdict::kNanMismatch) << k;
  }
  ExactValue not_table = nan;
  not_table.by_table = false;
  EXPECT_EQ(JudgeElement(0, inf, not_table, inf, kBinary32, true).verdict, Verdict::kPass);
}

// The mean of a LayerNorm row holding +inf: its IEEE sum, +inf, or NaN
// (Welford's order); the other infinity or a finite value is wrong.
TEST(JudgeElement, ATableInfinityAcceptsItselfAndAnAcceptedNan) {
  const double inf = std::numeric_limits<double>::infinity();
  const ExactValue mean = TableValue(inf, true);
  EXPECT_EQ(JudgeElement(0, inf, mean, 0.0, kBinary32, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, std::nan(""), mean, 0.0, kBinary32, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, -inf, mean, 0.0, kBinary32, true).verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(JudgeElement(0, 0x1.fffffep127, mean, 0.0, kBinary32, true).verdict,
            Verdict::kBoundExceeded);
}

// dgamma of a column crossing an RMSNorm row with +-inf: the other rows' sum
// within its bound, or NaN; a NaN is still refused where it is not accepted.
TEST(JudgeElement, AnAcceptedNanBesideAValueJudgedWithinItsBound) {
  ExactValue v{2.0, 2.0, 0.0, ValueStatus::kDecided};
  v.nan_accepted = true;
  EXPECT_EQ(JudgeElement(0, std::nan(""), v, 0.5, kBinary32, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, 2.25, v, 0.5, kBinary32, true).verdict, Verdict::kPass);
  EXPECT_EQ(JudgeElement(0, 3.0, v, 0.5, kBinary32, true).verdict, Verdict::kBoundExceeded);
  v.nan_accepted = false;
  EXPECT_EQ(JudgeElement(0, std::nan(""), v, 0.5, kBinary32, true).verdict, Verdict::kNanMismatch);
}

// A textbook fp32 RMSNorm with double sums and no special-casing: on a row
// holding +-inf, r = 1/sqrt(+inf) = +0, y = +-0 at the finite elements and
// NaN at the infinite one, dx NaN (b holds inf * 0). `g_rms_garbage` turns it
// into the negative control: that row normalized as if its infinity were
// FLT_MAX, finite and nonzero everywhere.
bool g_rms_garbage = false;

// Scales the textbook kernel's dgamma (1: correct).
double g_dgamma_scale = 1.0;

double RmsRstd(const float* x, std::int64_t d, float eps) {
  double s = 0;
  for (std::int64_t i = 0; i < d; ++i) {
    const double v = g_rms_garbage && std::isinf(x[i]) ? std::copysign(FLT_MAX, x[i]) : x[i];
    s += v * v;
  }
  return 1.0 / std::sqrt(s / static_cast<double>(d) + eps);
}

double RmsLoad(const float* x, std::int64_t i) {
  return g_rms_garbage && std::isinf(x[i]) ? std::copysign(FLT_MAX, x[i]) : x[i];
}

int TextbookRmsForward(const ForwardArgs* a) {
  const auto* gamma = static_cast<const float*>(a->gamma);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* x = static_cast<const float*>(a->x) + r * a->d;
    const double rs = RmsRstd(x, a->d, a->eps);
    for (std::int64_t i = 0; i < a->d; ++i) {
      static_cast<float*>(a->y)[r * a->d + i] =
          static_cast<float>(RmsLoad(x, i) * rs * (gamma ? gamma[i] : 1.0));
    }
    if (a->rstd) a->rstd[r] = static_cast<float>(rs);
  }
  return 0;
}

int TextbookRmsBackward(const BackwardArgs* a) {
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* dy = static_cast<const float*>(a->dy);
  std::vector<double> dg(a->d, 0), xh(a->d);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* x = static_cast<const float*>(a->x) + r * a->d;
    const double rs = RmsRstd(x, a->d, a->eps);
    double b = 0;
    for (std::int64_t i = 0; i < a->d; ++i) {
      xh[i] = RmsLoad(x, i) * rs;
      b += dy[r * a->d + i] * (gamma ? gamma[i] : 1.0) * xh[i];
      dg[i] += dy[r * a->d + i] * xh[i];
    }
    b /= static_cast<double>(a->d);
    for (std::int64_t i = 0; i < a->d; ++i) {
      static_cast<float*>(a->dx)[r * a->d + i] =
          static_cast<float>(rs * (dy[r * a->d + i] * (gamma ? gamma[i] : 1.0) - xh[i] * b));
    }
  }
  for (std::int64_t i = 0; i < a->d; ++i) {
    if (a->dgamma) static_cast<float*>(a->dgamma)[i] = static_cast<float>(dg[i] * g_dgamma_scale);
  }
  return 0;
}

ImplInfo TextbookRmsImpl() {
  ImplInfo i;
  i.name = "f32/textbook_rms/test";
  i.norm = Norm::kRmsNorm;
  i.x_dtype = i.param_dtype = DType::kF32;
  i.acc_dtype = DType::kF64;
  i.algorithm = i.bound_algorithm = Algorithm::kSumOfSquares;
  i.forward = &TextbookRmsForward;
  i.backward = &TextbookRmsBackward;
  return i;
}

class JudgeRmsInfTest : public ::testing::Test {
 protected:
  void TearDown() override {
    g_rms_garbage = false;
    g_dgamma_scale = 1.0;
  }
  // nan_inf_rows (a finite row, then NaN, +inf, -inf, both infinities), as RMSNorm with gamma.
  static Case InfRows() {
    FamilyParams p;
    p.d = 16;
    p.rows = 10;
    Case c = GenerateCase(*FindFamily("nan_inf_rows"), p);
    c.norm = Norm::kRmsNorm;
    c.beta.clear();
    c.gamma.assign(static_cast<std::size_t>(c.d), 0.75);
    return c;
  }
};

// Issue 15 section 1: what every straightforward RMSNorm returns on a row
// holding +-inf is the table's IEEE result, not a NaN mismatch.
TEST_F(JudgeRmsInfTest, PassesATextbookRmsNormOnRowsHoldingInfinities) {
  const Case c = InfRows();
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(TextbookRmsImpl(), c, opt);
  EXPECT_EQ(j.verdict, Verdict::kPass) << Summarize(j);
  int zeros = 0;  // the IEEE zeros were there to judge, not NaNs
  for (const ElementResult& e : j[Output::kY].elements) zeros += e.kernel == 0 && e.exact.by_table;
  EXPECT_GT(zeros, 0);
  // The registry's RMSNorm kernels write NaN rows instead: the accepted alternative.
  const ImplInfo* nan_rows = FindImpl("f32/rms_serial/cpu-scalar");
  ASSERT_NE(nan_rows, nullptr);
  EXPECT_EQ(Judge(*nan_rows, c).verdict, Verdict::kPass);
}

TEST_F(JudgeRmsInfTest, CatchesFiniteNonzeroGarbageOnARowHoldingAnInfinity) {
  g_rms_garbage = true;
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(TextbookRmsImpl(), InfRows(), opt);
  EXPECT_TRUE(IsFailure(j.verdict)) << Summarize(j);
  int caught_zeros = 0;  // the finite elements, each caught on its own
  for (const ElementResult& e : j[Output::kY].elements) {
    if (e.exact.by_table && e.exact.rounded == 0 && e.kernel != 0) {
      EXPECT_EQ(e.verdict, Verdict::kBoundExceeded) << e.index;
      ++caught_zeros;
    }
  }
  EXPECT_GT(caught_zeros, 0);
  EXPECT_EQ(j[Output::kY].verdict, Verdict::kNanMismatch) << Summarize(j);  // at the infinity
  EXPECT_EQ(j[Output::kRstd].verdict, Verdict::kBoundExceeded) << Summarize(j);
  EXPECT_EQ(j[Output::kDx].verdict, Verdict::kNanMismatch) << Summarize(j);
}

// A row holding +-inf contributes exactly dy * (+-0) to every dgamma column
// but its infinity's: the finite rows still bound those columns (the row's
// non-finite statistics used to make every column's bound +inf, so dgamma
// was judged by the NaN contract alone there).
TEST_F(JudgeRmsInfTest, TheFiniteRowsStillBoundTheDgammaColumnsBesideAnInfiniteRow) {
  FamilyParams p;
  p.norm = Norm::kRmsNorm;
  p.d = 16;
  p.rows = 2;
  Case c = GenerateCase(*FindFamily("standard_normal"), p);
  c.x[static_cast<std::size_t>(c.d + 3)] = std::numeric_limits<double>::infinity();
  JudgeOptions opt;
  opt.keep_elements = true;
  const Judgement j = Judge(TextbookRmsImpl(), c, opt);
  EXPECT_EQ(j.verdict, Verdict::kPass) << Summarize(j);
  for (const ElementResult& e : j[Output::kDgamma].elements) {
    if (e.index == 3) {
      EXPECT_TRUE(std::isnan(e.exact.rounded));
    } else {
      EXPECT_TRUE(std::isfinite(e.bound)) << "dgamma[" << e.index << "] has no claim";
    }
  }
  g_dgamma_scale = 1 + 0x1p-12;  // far beyond a double-accumulated sum of two terms
  const Judgement off = Judge(TextbookRmsImpl(), c, opt);
  EXPECT_EQ(off[Output::kDgamma].verdict, Verdict::kBoundExceeded) << Summarize(off);
}

}  // namespace
}  // namespace lnv

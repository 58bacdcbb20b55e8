#include "fuzz/target.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "harness/check.h"
#include "harness/families.h"

namespace lnv::fuzz {
namespace {

namespace fs = std::filesystem;

const ImplInfo& Kernel(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "no kernel " << name;
  return AllImpls().front();
}

// The f32 two-pass kernel, with y[row, 0] pushed 1.0 away on every row whose
// first x is g_bad_x0 (by content, so that the row alone still fails).
float g_bad_x0 = std::numeric_limits<float>::quiet_NaN();
int BrokenForward(const ForwardArgs* a) {
  const int rc = Kernel("f32/two_pass/cpu-scalar").forward(a);
  const auto* x = static_cast<const float*>(a->x);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    if (x[r * a->d] == g_bad_x0) static_cast<float*>(a->y)[r * a->d] += 1.0f;
  }
  return rc;
}

ImplInfo Broken(ImplStatus status) {
  ImplInfo info = Kernel("f32/two_pass/cpu-scalar");
  info.name = "f32/broken_for_test/cpu-scalar";
  info.forward = &BrokenForward;
  info.backward = nullptr;
  info.status = status;
  return info;
}

Case Family(const char* name, std::int64_t d, std::int64_t rows) {
  FamilyParams p;
  p.d = d;
  p.rows = rows;
  return GenerateCase(*FindFamily(name), p);
}

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(testing::TempDir()) / ("lnv_fuzz_target_test_" + name);
  fs::remove_all(dir);
  return dir.string();
}

TEST(FuzzTarget, TheOnePassControlIsCaughtOnLargeMeanRowsAndTwoPassIsNot) {
  const Case c = Family("large_mean", 64, 8);
  FuzzConfig one_pass, two_pass;
  ASSERT_EQ(SelectKernels(AllImpls(), "f32/one_pass/cpu-scalar", &one_pass), "");
  ASSERT_EQ(SelectKernels(AllImpls(), "f32/two_pass/cpu-scalar", &two_pass), "");
  const RunResult caught = RunCase(one_pass, c, CompatibleKernels(one_pass, c), false);
  ASSERT_FALSE(caught.findings.empty());
  EXPECT_EQ(caught.findings[0].kernel, "f32/one_pass/cpu-scalar");
  EXPECT_TRUE(caught.findings[0].traps);
  EXPECT_TRUE(IsFailure(caught.findings[0].verdict));
  const RunResult clean = RunCase(two_pass, c, CompatibleKernels(two_pass, c), false);
  EXPECT_TRUE(clean.findings.empty()) << clean.findings[0].detail;
}

TEST(FuzzTarget, TheDefaultSelectionLeavesOutNegativeControlsAndAGlobCanNameThem) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "", &config), "");
  for (const ImplInfo& i : config.impls)
    EXPECT_NE(i.status, ImplStatus::kNegativeControl) << i.name;
  EXPECT_FALSE(config.decode.signatures.empty());
  ASSERT_EQ(SelectKernels(AllImpls(), "*/one_pass/*", &config), "");
  EXPECT_EQ(config.impls.size(), 4u);  // one per dtype
}

TEST(FuzzTarget, AGlobThatMatchesNoKernelIsAnError) {
  FuzzConfig config;
  EXPECT_NE(
      SelectKernels(AllImpls(), "no/such/kernel", &config).find("matches no registered kernel"),
      std::string::npos);
}

TEST(FuzzTarget, ABrokenClaimsBoundKernelTrapsWithAOneRowCaseThatLnCheckReplays) {
  const ImplInfo broken = Broken(ImplStatus::kClaimsBound);
  FuzzConfig config;
  ASSERT_EQ(SelectKernels({broken}, "", &config), "");
  config.cases_dir = FreshDir("broken");
  const Case c = Family("standard_normal", 16, 4);
  g_bad_x0 = static_cast<float>(c.x[2 * 16]);
  const RunResult r = RunCase(config, c, CompatibleKernels(config, c), false);
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_TRUE(f.traps);
  EXPECT_EQ(f.verdict, Verdict::kBoundExceeded);
  EXPECT_EQ(f.output, Output::kY);
  EXPECT_EQ(f.c.rows, 1) << "reduced to the failing row";
  EXPECT_EQ(f.key.rfind(broken.name + "|bound_exceeded|y|layer_norm/f32/", 0), 0u) << f.key;
  std::string error;
  const std::string path = WriteFindingCase(config, f, &error);
  ASSERT_FALSE(path.empty()) << error;
  const std::string printed = FormatFinding(f, path);
  EXPECT_NE(printed.find("ln_check --replay " + path), std::string::npos);
  EXPECT_NE(printed.find("x "), std::string::npos) << "the case in hex floats";
  Case back;
  ASSERT_TRUE(ReadCaseFile(path, &back, &error)) << error;
  EXPECT_EQ(back.kernel, broken.name);
  EXPECT_EQ(back.provenance.replay, "ln_check --replay " + path);
  EXPECT_FALSE(back.provenance.found_by.empty());
  // The replay reproduces the failure (1: not as expected for claims_bound) ...
  std::ostringstream out, err;
  EXPECT_EQ(ReplayCase(path, {broken}, out, err), 1) << err.str();
  // ... and it is the kernel, not the case, that fails: the unbroken kernel passes it.
  g_bad_x0 = std::numeric_limits<float>::quiet_NaN();
  std::ostringstream out2, err2;
  EXPECT_EQ(ReplayCase(path, {broken}, out2, err2), 0) << out2.str() << err2.str();
}

TEST(FuzzTarget, ACaughtNegativeControlReplaysAsCaught) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "f32/one_pass/cpu-scalar", &config), "");
  config.cases_dir = FreshDir("control");
  const Case c = Family("large_mean", 64, 8);
  const RunResult r = RunCase(config, c, CompatibleKernels(config, c), false);
  ASSERT_FALSE(r.findings.empty());
  std::string error;
  const std::string path = WriteFindingCase(config, r.findings[0], &error);
  ASSERT_FALSE(path.empty()) << error;
  std::ostringstream out, err;
  EXPECT_EQ(ReplayCase(path, AllImpls(), out, err), 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("as expected"), std::string::npos);
}

// The observed broken kernel's finding on row 2 of 4 (y[2, 0] off by 1.0),
// x scaled by `scale`, with a baseline whose failing outputs are `failing`
// (none loaded when with_baseline is false).
RunResult RunObserved(const std::set<std::string>& failing, double scale = 1.0,
                      bool with_baseline = true) {
  ImplInfo observed = Broken(ImplStatus::kObserved);
  // Judged as they are, like the third-party kernels: no claimed range.
  observed.max_row_sumsq = observed.max_backward_weight = std::numeric_limits<double>::infinity();
  FuzzConfig config;
  EXPECT_EQ(SelectKernels({observed}, "", &config), "");
  if (with_baseline) config.baselines[observed.name].failing = failing;
  Case c = Family("standard_normal", 8, 4);
  for (double& x : c.x) x = static_cast<float>(x * scale);
  g_bad_x0 = static_cast<float>(c.x[2 * 8]);
  const RunResult r = RunCase(config, c, CompatibleKernels(config, c), false);
  g_bad_x0 = std::numeric_limits<float>::quiet_NaN();
  return r;
}

TEST(FuzzTarget, AnObservedFindingOnAnOutputItsBaselineHasFailingIsRecordedButDoesNotTrap) {
  const RunResult r = RunObserved({"y"});  // any verdict of y, in any family
  ASSERT_EQ(r.findings.size(), 1u);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.verdict, Verdict::kBoundExceeded);
  EXPECT_FALSE(f.traps) << f.detail;
  EXPECT_EQ(f.c.rows, 1) << "reduced to the failing row";
  EXPECT_NE(f.detail.find("baseline within its recorded classes"), std::string::npos) << f.detail;
  EXPECT_NE(f.c.provenance.why.find("within its recorded baseline's classes"), std::string::npos);
}

TEST(FuzzTarget, AnObservedFindingOnAnOutputNoFamilyHasSeenFailTraps) {
  RunResult r = RunObserved({"mean", "dx", "call crashed"});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(r.findings[0].traps);
  EXPECT_EQ(r.findings[0].c.rows, 1) << "the row alone is outside too";
  EXPECT_NE(r.findings[0].detail.find("baseline OUTSIDE its recorded classes: y bound_exceeded on "
                                      "layer_norm/f32/x:finite/params:finite/"),
            std::string::npos)
      << r.findings[0].detail;
  EXPECT_NE(r.findings[0].detail.find("y fails in no family of the baseline"), std::string::npos);
  EXPECT_NE(r.findings[0].c.provenance.why.find("observed kernel outside its recorded baseline"),
            std::string::npos);
  // No baseline loaded: nothing is known of the kernel.
  r = RunObserved({}, 1.0, false);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_TRUE(r.findings[0].traps);
  EXPECT_NE(r.findings[0].detail.find("no baseline loaded"), std::string::npos);
}

TEST(FuzzTarget, AnObservedFindingBeyondTheClaimedRangeIsRecordedButDoesNotTrap) {
  // Rows whose sum of squares exceeds the f32 max / 8: no family speaks for
  // them, and no claims_bound kernel claims them.
  const RunResult r = RunObserved({"mean"}, std::ldexp(1.0, 62));
  ASSERT_FALSE(r.findings.empty());
  for (const Finding& f : r.findings) {
    EXPECT_FALSE(f.traps) << f.detail;
    EXPECT_NE(f.key.find("/x:huge/"), std::string::npos) << f.key;
  }
}

TEST(FuzzTarget, ACallThatDidNotReturnIsInsideOnlyWithItsVerdictRecorded) {
  Baseline b;
  b.runs.push_back({"quick", 1, {{"f", "y", "bound_exceeded"}, {"g", "call", "timed_out"}}, {}});
  const ObservedClasses classes = ClassesOf(b);
  EXPECT_EQ(classes.failing, (std::set<std::string>{"y", "call timed_out"}));
  Judgement j;
  const Case c = Family("standard_normal", 8, 1);
  const Reference ref = ComputeReference(c);
  j.verdict = Verdict::kTimedOut;
  EXPECT_EQ(OutsideClasses(classes, c, ref, j, kBinary32), "");
  j.verdict = Verdict::kCrashed;
  EXPECT_EQ(OutsideClasses(classes, c, ref, j, kBinary32),
            "call crashed: no family of the baseline ends so");
}

TEST(FuzzTarget, TheObservedKernelsBaselinesAreLoadedAndAMissingOneIsAnError) {
  const ImplInfo observed = Broken(ImplStatus::kObserved);
  FuzzConfig config;
  ASSERT_EQ(SelectKernels({observed, Kernel("f32/two_pass/cpu-scalar")}, "", &config), "");
  const std::string dir = FreshDir("baselines");
  EXPECT_NE(LoadBaselines(dir, &config).find("observed kernel " + observed.name + ": "),
            std::string::npos);
  Baseline b;
  b.kernel = observed.name;
  b.runs.push_back({"quick", 1, {{"f", "y", "bound_exceeded"}}, {{{"f", "y"}, {20, 12}}}});
  std::string error;
  ASSERT_TRUE(WriteBaseline(BaselinePath(dir, observed.name), b, &error)) << error;
  ASSERT_EQ(LoadBaselines(dir, &config), "");
  ASSERT_EQ(config.baselines.size(), 1u) << "the claims_bound kernel has none";
  EXPECT_EQ(config.baselines.at(observed.name).failing, (std::set<std::string>{"y"}));
  // The old format has no magnitudes to hold a finding to.
  std::ofstream(BaselinePath(dir, observed.name))
      << "lnv-baseline 1\nkernel " << observed.name << "\nrun quick 1\nend\n";
  EXPECT_NE(LoadBaselines(dir, &config).find("is format 1, without magnitudes: re-record it"),
            std::string::npos);
}

TEST(FuzzTarget, EveryRegisteredObservedKernelHasARecordedBaseline) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "", &config), "");
  ASSERT_EQ(LoadBaselines(DefaultBaselinesDir(), &config), "");
  for (const ImplInfo& i : config.impls) {
    EXPECT_EQ(config.baselines.contains(i.name), i.status == ImplStatus::kObserved) << i.name;
  }
}

TEST(FuzzTarget, TheSelectorPicksExactlyOneCompatibleKernelOrEveryOneOnRequest) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "", &config), "");
  const Case c = Family("standard_normal", 8, 2);
  const auto all = CompatibleKernels(config, c);
  ASSERT_GT(all.size(), 1u);
  for (const ImplInfo* k : all) EXPECT_EQ(CheckCompatible(*k, c), "");
  for (std::size_t s = 0; s < 256; ++s) {
    const auto one = ChosenKernels(config, c, static_cast<std::uint8_t>(s));
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], all[s % all.size()]);
  }
  config.every_kernel = true;
  EXPECT_EQ(ChosenKernels(config, c, 7), all);
}

TEST(FuzzTarget, APrewrittenCaseIsDeletedWhenTheKernelReturns) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "f32/two_pass/cpu-scalar", &config), "");
  config.cases_dir = FreshDir("prewrite");
  config.prewrite = true;
  const Case c = Family("standard_normal", 8, 2);
  const RunResult r = RunCase(config, c, CompatibleKernels(config, c), false);
  EXPECT_TRUE(r.findings.empty());
  ASSERT_TRUE(fs::is_directory(config.cases_dir)) << "the case was written";
  EXPECT_TRUE(fs::is_empty(config.cases_dir)) << "and removed";
}

TEST(FuzzTarget, TheOracleCrossCheckPassesOnTheFamiliesAndCatchesATamperedAnswer) {
  for (const char* name : {"standard_normal", "large_mean", "tiny_magnitude", "near_constant",
                           "nan_inf_rows", "beta_cancels"}) {
    const Case c = Family(name, 16, 4);
    const Reference ref = ComputeReference(c);
    EXPECT_EQ(CrossCheckOracle(c, ref), "") << name;
  }
  // The negative control: a one-bit change in one exact value is a difference.
  const Case c = Family("standard_normal", 8, 2);
  const Reference a = ComputeReference(c);
  Reference b = a;
  EXPECT_EQ(CompareReferences(a, b, "a", "b", true), "");
  std::uint64_t bits;
  std::memcpy(&bits, &b.forward.y[3].hi, sizeof bits);
  bits ^= 1;
  std::memcpy(&b.forward.y[3].hi, &bits, sizeof bits);
  EXPECT_EQ(CompareReferences(a, b, "a", "b", true).rfind("y[3]:", 0), 0u);
  EXPECT_EQ(CompareReferences(a, b, "a", "b", false), "") << "only the rounded values compared";
  b.forward.rstd[1].status = ValueStatus::kUndecided;
  EXPECT_EQ(CompareReferences(a, b, "a", "b", false).rfind("rstd[1]:", 0), 0u);
}

TEST(FuzzTarget, RunInputJudgesTheKernelsTheSelectorChose) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "", &config), "");
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF32, DType::kF32};
  in.d = in.cols = 8;
  in.rows = 2;
  in.kernel_selector = 0;
  Normalize(&in);
  for (std::size_t i = 0; i < in.x.size(); ++i)
    in.x[i] = ToBits(static_cast<double>(i), DType::kF32);
  auto bytes = EncodeInput(in);
  const RunResult one = RunInput(config, bytes.data(), bytes.size());
  EXPECT_EQ(one.stats.kernels_judged, 1);
  EXPECT_TRUE(one.findings.empty());
  EXPECT_FALSE(one.features.ids().empty());
  config.every_kernel = true;
  const RunResult all = RunInput(config, bytes.data(), bytes.size());
  EXPECT_EQ(all.stats.kernels_judged,
            static_cast<std::int64_t>(CompatibleKernels(config, Materialize(in)).size()));
  EXPECT_GT(all.stats.kernels_judged, 1);
  EXPECT_TRUE(all.findings.empty());
}

TEST(FuzzTarget, TheCrossCheckRateComesFromTheEnvironmentAndBadValuesAreErrors) {
  FuzzConfig config;
  EXPECT_EQ(config.cross_check_every, kCrossCheckEvery);
  setenv("LNV_FUZZ_CROSS_CHECK_EVERY", "1", 1);
  EXPECT_EQ(ConfigFromEnv(&config), "");
  EXPECT_EQ(config.cross_check_every, 1);
  for (const char* bad : {"0", "-3", "8x", "many"}) {
    setenv("LNV_FUZZ_CROSS_CHECK_EVERY", bad, 1);
    FuzzConfig other;
    EXPECT_NE(ConfigFromEnv(&other).find("LNV_FUZZ_CROSS_CHECK_EVERY"), std::string::npos) << bad;
  }
  unsetenv("LNV_FUZZ_CROSS_CHECK_EVERY");
}

// FNV-1a modulo a power of two sees only the low bits of each byte: inputs
// that differ only in their bytes' top bits would all share one choice.
TEST(FuzzTarget, CrossCheckSamplingDependsOnTheTopBitsOfTheBytesToo) {
  std::vector<std::uint8_t> bytes(16);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(3 * i + 1);
  int sampled = 0, sampled_by_plain_modulo = 0;
  for (int mask = 0; mask < 256; ++mask) {
    std::vector<std::uint8_t> v = bytes;
    for (int b = 0; b < 8; ++b) {
      if ((mask >> b) & 1) v[static_cast<std::size_t>(b)] ^= 0x80;
    }
    const std::uint64_t h = InputHash(v.data(), v.size());
    sampled += CrossCheckSampled(h, kCrossCheckEvery);
    sampled_by_plain_modulo += h % kCrossCheckEvery == 0;
  }
  EXPECT_GT(sampled, 0);
  EXPECT_LT(sampled, 256);
  // The unmixed hash gives all 256 variants one choice (the reason for mixing).
  EXPECT_TRUE(sampled_by_plain_modulo == 0 || sampled_by_plain_modulo == 256);
  EXPECT_TRUE(CrossCheckSampled(InputHash(bytes.data(), bytes.size()), 1));
}

TEST(FuzzTarget, FlaggedInputsAreCrossCheckedWhenTheirHashIsSampled) {
  FuzzConfig config;
  ASSERT_EQ(SelectKernels(AllImpls(), "f32/two_pass/cpu-scalar", &config), "");
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF32, DType::kF32};
  in.d = in.cols = 4;
  Normalize(&in);
  // Inputs that differ in the fill seed only: some hashes are sampled, most not.
  int sampled = 0, checked = 0, flagged_off = 0;
  constexpr int kSeeds = 256;
  for (int seed = 0; seed < kSeeds; ++seed) {
    in.fill_seed = static_cast<std::uint8_t>(seed);
    in.cross_check_oracle = true;
    const auto bytes = EncodeInput(in);
    const bool hit = CrossCheckSampled(InputHash(bytes.data(), bytes.size()), kCrossCheckEvery);
    sampled += hit;
    const RunResult r = RunInput(config, bytes.data(), bytes.size());
    EXPECT_EQ(r.stats.cross_checked, hit) << seed;
    checked += r.stats.cross_checked;
    in.cross_check_oracle = false;
    const auto plain = EncodeInput(in);
    flagged_off += RunInput(config, plain.data(), plain.size()).stats.cross_checked;
  }
  EXPECT_GT(sampled, 0);
  EXPECT_LT(sampled, kSeeds);
  EXPECT_EQ(checked, sampled);
  EXPECT_EQ(flagged_off, 0) << "no flag, no cross-check";
  // The replay's setting: every flagged input.
  config.cross_check_every = 1;
  in.cross_check_oracle = true;
  const auto bytes = EncodeInput(in);
  EXPECT_TRUE(RunInput(config, bytes.data(), bytes.size()).stats.cross_checked);
}

// float rounded toward zero from a double (chops the low bits).
float Chop(double v) {
  float f = static_cast<float>(v);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) {
    f = std::nextafter(f, 0.0f);
  }
  return f;
}

// An f32 two-pass LayerNorm whose variance sum rounds each addition toward
// zero instead of to nearest (an accumulator with the wrong rounding, as a
// truncating software conversion gives). Every error is within the serial
// model's worst case (u per addition), but they all have one sign: the sum
// of squares, which only grows, loses about u d/4 relative, far beyond the
// statistical tier's lambda sqrt(d) u at long rows.
int TruncatingVarianceForward(const ForwardArgs* a) {
  const auto* x = static_cast<const float*>(a->x);
  const auto* gamma = static_cast<const float*>(a->gamma);
  const auto* beta = static_cast<const float*>(a->beta);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    const float* row = x + r * a->d;
    float sum = 0;
    for (std::int64_t i = 0; i < a->d; ++i) sum += row[i];
    const float mean = sum / static_cast<float>(a->d);
    float sq = 0;
    for (std::int64_t i = 0; i < a->d; ++i) {
      const float t = row[i] - mean;
      sq = Chop(static_cast<double>(sq) + static_cast<double>(t * t));
    }
    const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(a->d) + a->eps);
    float* y = static_cast<float*>(a->y) + r * a->d;
    for (std::int64_t i = 0; i < a->d; ++i) {
      const float xhat = (row[i] - mean) * rstd;
      y[i] = (gamma ? gamma[i] : 1.0f) * xhat + (beta ? beta[i] : 0.0f);
    }
    if (a->mean) a->mean[r] = mean;
    if (a->rstd) a->rstd[r] = rstd;
  }
  return 0;
}

// A random-data input (byte 8 bit 3) is judged under the statistical tier,
// as ln_check judges its family: a control whose error hides under the
// worst-case bound is caught there, beyond_typical, and passes when the same
// case is judged under the deterministic tier alone.
TEST(FuzzTarget, ARandomDataInputCatchesAControlOnlyTheStatisticalTierSees) {
  ImplInfo control = Kernel("f32/two_pass/cpu-scalar");
  control.name = "f32/truncating_variance/test-fake";
  control.forward = &TruncatingVarianceForward;
  control.backward = nullptr;
  control.status = ImplStatus::kNegativeControl;
  FuzzConfig config;
  ASSERT_EQ(SelectKernels({control}, "*", &config), "");
  config.decode.max_d = kMaxMaxD;
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF32, DType::kF32};
  in.d = kMaxMaxD;
  in.cols = 1;
  in.rows = 2;
  in.random_family = 0;  // standard_normal
  Normalize(&in);
  const auto bytes = EncodeInput(in);
  const Case c = Materialize(DecodeInput(bytes.data(), bytes.size(), config.decode));
  ASSERT_EQ(c.provenance.family, "standard_normal");
  const RunResult r = RunInput(config, bytes.data(), bytes.size());
  ASSERT_EQ(r.findings.size(), 1u)
      << "d " << c.d << ", kernels " << r.stats.kernels_judged << ", typical "
      << r.stats.typical_elements << ", beyond " << r.stats.beyond_typical_elements;
  EXPECT_EQ(r.findings[0].verdict, Verdict::kBeyondTypical) << r.findings[0].detail;
  EXPECT_GT(r.stats.beyond_typical_elements, 0);
  EXPECT_EQ(r.stats.beyond_typical_reported, 0);  // a control's are findings, not reports
  EXPECT_EQ(r.stats.typical_elements, r.stats.judged_elements);
  EXPECT_EQ(r.findings[0].c.provenance.family, "standard_normal");  // the replay's tier

  // The same kernel as an observed one: its elements beyond the tier are
  // counted as reported, and are no finding.
  ImplInfo observed = control;
  observed.status = ImplStatus::kObserved;
  FuzzConfig oc;
  ASSERT_EQ(SelectKernels({observed}, "*", &oc), "");
  oc.decode.max_d = kMaxMaxD;
  const RunResult o = RunInput(oc, bytes.data(), bytes.size());
  EXPECT_TRUE(o.findings.empty());
  EXPECT_GT(o.stats.beyond_typical_reported, 0);
  EXPECT_EQ(o.stats.beyond_typical_reported, o.stats.beyond_typical_elements);

  Case deterministic_only = c;
  deterministic_only.provenance.family = "fuzz";
  const RunResult d = RunCase(config, deterministic_only, CompatibleKernels(config, c), false);
  EXPECT_TRUE(d.findings.empty()) << d.findings[0].detail;
  EXPECT_EQ(d.stats.typical_elements, 0);
}

}  // namespace
}  // namespace lnv::fuzz

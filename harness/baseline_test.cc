#include "harness/baseline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>

#include "harness/families.h"

namespace lnv {
namespace {

Baseline Example() {
  Baseline b;
  b.kernel = "f32/some_library/cpu";
  b.runs.push_back({"quick",
                    20240611,
                    {{"d_one", "y", "bound_exceeded"}, {"huge_magnitude", "call", "crashed"}},
                    {{{"d_one", "y"}, {3, 0}},
                     {{"d_one", "mean"}, {kBinadeOfZero, kBinadeOfZero}},
                     {{"huge_magnitude", "dx"}, {-1074, kBinadeOfInf}}}});
  b.runs.push_back({"full", 7, {{"d_one", "y", "bound_exceeded"}}, {{{"d_one", "y"}, {4, -2}}}});
  b.cases[{"d_one", "y", "bound_exceeded"}] = "a.case";
  return b;
}

// A judgement with the given outputs present, each with its verdict and maxima.
struct OutputSpec {
  Output output;
  Verdict verdict;
  double max_ulp, max_bound_use;
};
Judgement JudgementOf(const std::vector<OutputSpec>& specs) {
  Judgement j;
  for (Output o : kAllOutputs) j[o].output = o;
  for (const OutputSpec& s : specs) {
    j[s.output].present = true;
    j[s.output].verdict = s.verdict;
    j[s.output].max_ulp = s.max_ulp;
    j[s.output].max_bound_use = s.max_bound_use;
    j.verdict = std::max(j.verdict, s.verdict);
  }
  return j;
}

TEST(Baseline, FormattingThenParsingGivesTheSameBaseline) {
  const Baseline b = Example();
  Baseline back;
  std::string error;
  ASSERT_TRUE(ParseBaseline(FormatBaseline(b), &back, &error)) << error;
  EXPECT_EQ(back.kernel, b.kernel);
  ASSERT_EQ(back.runs.size(), 2u);
  EXPECT_EQ(back.version, kBaselineVersion);
  EXPECT_EQ(back.runs[0].findings, b.runs[0].findings);
  EXPECT_EQ(back.runs[0].magnitudes, b.runs[0].magnitudes);  // 0, inf and subnormal binades too
  EXPECT_EQ(back.runs[1].magnitudes, b.runs[1].magnitudes);
  EXPECT_EQ(back.runs[1].budget, "full");
  EXPECT_EQ(back.runs[1].seed, 7u);
  EXPECT_EQ(back.cases, b.cases);  // "-" (no case) is not a case
  EXPECT_NE(back.FindRun("quick", 20240611), nullptr);
  EXPECT_EQ(back.FindRun("quick", 7), nullptr);
}

TEST(Baseline, ParsingRejectsMalformedFilesWithTheLine) {
  const auto reject = [](const std::string& text, const std::string& why) {
    Baseline b;
    std::string error;
    EXPECT_FALSE(ParseBaseline(text, &b, &error)) << text;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  const std::string head = "lnv-baseline 2\nkernel k\n";
  reject("", "empty file");
  reject("lnv-baseline 3\n", "line 1: want 'lnv-baseline 2'");
  reject(head + "finding a y bound_exceeded x.case\nend\n", "line 3: finding before any 'run'");
  reject(head + "run slow 1\nend\n", "budget must be quick or full");
  reject(head + "run quick x\nend\n", "bad seed");
  reject(head + "run quick 1\nfinding a z bound_exceeded x.case\nend\n", "unknown output 'z'");
  reject(head + "run quick 1\nfinding a y pass x.case\nend\n", "'pass' is not a failing verdict");
  reject(head + "run quick 1\nfinding a y bound_exceeded x.case\n", "no 'end' line");
  reject(head + "run quick 1\nrun quick 1\nend\n", "twice");
  reject("lnv-baseline 1\nrun quick 1\nend\n", "no 'kernel' line");
  const std::string run = head + "run quick 1\n";
  reject(head + "magnitude a y ulp 2^1 use 0\nend\n", "line 3: magnitude before any 'run'");
  reject(run + "magnitude a z ulp 2^1 use 0\nend\n", "line 4: unknown output 'z'");
  reject(run + "magnitude a call ulp 2^1 use 0\nend\n", "unknown output 'call'");
  reject(run + "magnitude a y ulp 2 use 0\nend\n", "bad binade '2'");
  reject(run + "magnitude a y ulp 2^1 use 2^1024\nend\n", "bad binade '2^1024'");
  reject(run + "magnitude a y ulp 2^1 use 2^-1075\nend\n", "bad binade '2^-1075'");
  reject(run + "magnitude a y use 2^1 ulp 0\nend\n", "want 'magnitude FAMILY OUTPUT ulp X use Y'");
  reject(run + "magnitude a y ulp 2^1 use 0\nmagnitude a y ulp 0 use 0\nend\n", "listed twice");
  reject("lnv-baseline 1\nkernel k\nrun quick 1\nmagnitude a y ulp 0 use 0\nend\n",
         "a magnitude in a version 1 file");
}

TEST(Baseline, AVersionOneFileIsReadAsFindingsWithoutMagnitudes) {
  Baseline b;
  std::string error;
  ASSERT_TRUE(
      ParseBaseline("lnv-baseline 1\nkernel k\nrun quick 1\n"
                    "finding a y bound_exceeded a.case\nend\n",
                    &b, &error))
      << error;
  EXPECT_EQ(b.version, 1);
  ASSERT_EQ(b.runs.size(), 1u);
  EXPECT_EQ(b.runs[0].findings.size(), 1u);
  EXPECT_TRUE(b.runs[0].magnitudes.empty());
}

TEST(Baseline, ABinadeIsFloorLog2WithZeroAndInfinityBeyondEveryOther) {
  EXPECT_EQ(Binade(1.0), 0);
  EXPECT_EQ(Binade(1.999), 0);
  EXPECT_EQ(Binade(0.75), -1);
  EXPECT_EQ(Binade(4096.5), 12);
  EXPECT_EQ(Binade(std::numeric_limits<double>::denorm_min()), -1074);
  EXPECT_EQ(Binade(std::numeric_limits<double>::max()), 1023);
  EXPECT_EQ(Binade(0.0), kBinadeOfZero);
  EXPECT_EQ(Binade(std::numeric_limits<double>::infinity()), kBinadeOfInf);
  EXPECT_EQ(Binade(std::numeric_limits<double>::quiet_NaN()), kBinadeOfInf);
  for (int b : {kBinadeOfZero, -1074, -3, 0, 12, 1023, kBinadeOfInf}) {
    int back = 0;
    ASSERT_TRUE(ParseBinade(BinadeText(b), &back)) << BinadeText(b);
    EXPECT_EQ(back, b);
  }
  EXPECT_EQ(BinadeText(-3), "2^-3");
  EXPECT_EQ(BinadeText(kBinadeOfZero), "0");
  EXPECT_EQ(BinadeText(kBinadeOfInf), "inf");
  int b = 0;
  for (const char* bad : {"", "2^", "2^x", "2^1.5", "4^2", "-inf", "nan", "2^+-1"}) {
    EXPECT_FALSE(ParseBinade(bad, &b)) << bad;
  }
}

TEST(Baseline, MoreThanOneBinadeApartIsAChangeInEitherDirection) {
  EXPECT_FALSE(BinadesDiffer(3, 3));
  EXPECT_FALSE(BinadesDiffer(3, 4));
  EXPECT_FALSE(BinadesDiffer(3, 2));
  EXPECT_TRUE(BinadesDiffer(3, 5));
  EXPECT_TRUE(BinadesDiffer(3, 1));
  // Exact becoming inexact (or the reverse), finite becoming unbounded: changes.
  EXPECT_TRUE(BinadesDiffer(kBinadeOfZero, -1074));
  EXPECT_TRUE(BinadesDiffer(kBinadeOfInf, 1023));
  EXPECT_FALSE(BinadesDiffer(kBinadeOfZero, kBinadeOfZero));
  EXPECT_FALSE(BinadesDiffer(kBinadeOfInf, kBinadeOfInf));
}

TEST(Baseline, AMagnitudeComparisonNamesWhatMovedAndWhichWay) {
  const Magnitudes recorded = {
      {{"a", "y"}, {3, 0}}, {{"a", "dx"}, {3, 0}}, {{"b", "y"}, {3, 0}}, {{"c", "mean"}, {3, 0}}};
  const Magnitudes observed = {{{"a", "y"}, {4, -1}},     // within one binade: no change
                               {{"a", "dx"}, {5, 0}},     // ulp two up
                               {{"b", "y"}, {3, -2}},     // use two down
                               {{"d", "rstd"}, {0, 0}}};  // not recorded
  const std::vector<MagnitudeChange> changes = CompareMagnitudes(recorded, observed, "*");
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(MagnitudeChangeText(changes[0]), "a dx: ulp 2^3 -> 2^5 (worse)");
  EXPECT_EQ(MagnitudeChangeText(changes[1]), "b y: use 2^0 -> 2^-2 (better)");
  EXPECT_EQ(MagnitudeChangeText(changes[2]),
            "c mean: recorded ulp 2^3 use 2^0, not judged in this run");
  EXPECT_EQ(MagnitudeChangeText(changes[3]), "d rstd: none recorded, this run ulp 2^0 use 2^0");
  MagnitudeChange both{{"e", "y"}, Magnitude{0, 0}, Magnitude{2, kBinadeOfZero}};
  EXPECT_EQ(MagnitudeChangeText(both), "e y: ulp 2^0 -> 2^2 (worse), use 2^0 -> 0 (better)");
  // A run over family a alone sees only a's magnitudes.
  const std::vector<MagnitudeChange> only_a = CompareMagnitudes(recorded, observed, "a");
  ASSERT_EQ(only_a.size(), 1u);
  EXPECT_EQ(only_a[0].at, (FamilyOutput{"a", "dx"}));
  EXPECT_TRUE(CompareMagnitudes(recorded, recorded, "*").empty());
}

TEST(Baseline, AnObservedRunKeepsTheLargestMagnitudesOfEveryJudgedOutput) {
  ObservedRun run;
  Case c;
  run.Observe("f", c,
              JudgementOf({{Output::kY, Verdict::kPass, 0.75, 0.01},
                           {Output::kMean, Verdict::kPass, 0.0, 0.0}}));
  run.Observe("f", c,
              JudgementOf({{Output::kY, Verdict::kBoundExceeded, 40.0, 3.0},
                           {Output::kMean, Verdict::kPass, 0.25, 0.5}}));
  run.Observe("g", c, JudgementOf({{Output::kY, Verdict::kPass, 0.5, 0.001}}));
  EXPECT_EQ(run.magnitudes(),
            (Magnitudes{{{"f", "y"}, {5, 1}}, {{"f", "mean"}, {-2, -1}}, {{"g", "y"}, {-1, -10}}}));
  EXPECT_EQ(run.max_ulp({"f", "y"}), 40.0);
  EXPECT_EQ(run.max_bound_use({"f", "mean"}), 0.5);
  ASSERT_EQ(run.findings().size(), 1u);
  EXPECT_EQ(run.findings().begin()->first, (Finding{"f", "y", "bound_exceeded"}));
}

TEST(Baseline, FindingsAreTheFailingOutputsAndAFailedCall) {
  Judgement j;
  for (Output o : kAllOutputs) j[o].output = o;
  EXPECT_TRUE(FindingsOf("f", j).empty());  // nothing present, pass
  j[Output::kY].present = true;
  j[Output::kY].verdict = Verdict::kBoundExceeded;
  j[Output::kMean].present = true;
  j[Output::kMean].verdict = Verdict::kOutOfRange;  // not a failure
  j[Output::kDx].present = true;
  j[Output::kDx].verdict = Verdict::kNanMismatch;
  j.verdict = Verdict::kNanMismatch;
  EXPECT_EQ(FindingsOf("f", j),
            (std::set<Finding>{{"f", "y", "bound_exceeded"}, {"f", "dx", "nan_mismatch"}}));
  j.verdict = Verdict::kCrashed;  // the backward crashed after the forward was judged
  EXPECT_TRUE(FindingsOf("f", j).contains({"f", "call", "crashed"}));
  EXPECT_EQ(FindingsOf("f", j).size(), 3u);
}

TEST(Baseline, AComparisonNamesNewAndVanishedFindingsWithinTheFamiliesRun) {
  const std::set<Finding> recorded = {{"a", "y", "bound_exceeded"}, {"b", "y", "nan_mismatch"}};
  const std::set<Finding> observed = {{"a", "y", "bound_exceeded"}, {"a", "dx", "bound_exceeded"}};
  const BaselineDiff all = CompareFindings(recorded, observed, "*");
  EXPECT_TRUE(all.Changed());
  EXPECT_EQ(all.added, (std::vector<Finding>{{"a", "dx", "bound_exceeded"}}));
  EXPECT_EQ(all.vanished, (std::vector<Finding>{{"b", "y", "nan_mismatch"}}));
  // A run over family a alone cannot see b's finding: not vanished.
  EXPECT_TRUE(CompareFindings(recorded, observed, "a").vanished.empty());
  EXPECT_FALSE(CompareFindings(recorded, recorded, "*").Changed());
}

// The f32 two-pass reference, judged as an observed kernel on one family,
// and a setting that records it in a fresh directory.
struct ObservedFixture {
  ImplInfo impl;
  ObservedRun run;
  BaselineSetting setting;
  std::string path;
};
ObservedFixture MakeObserved(const std::string& name) {
  ObservedFixture o;
  o.impl = *FindImpl("f32/two_pass/cpu-scalar");
  o.impl.status = ImplStatus::kObserved;
  FamilyParams p;
  p.d = 16;
  p.rows = 4;
  const Case c = GenerateCase(*FindFamily("standard_normal"), p);
  o.run.Observe("standard_normal", c, Judge(o.impl, c));
  const std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / ("lnv_baseline_test_" + name);
  std::filesystem::remove_all(dir);
  o.setting.dir = o.setting.case_ref_dir = dir.string();
  o.setting.budget = "quick";
  o.setting.seed = 1;
  o.setting.found_by = "ln_check --budget quick --seed 1 --write-baselines";
  o.path = BaselinePath(o.setting.dir, o.impl.name);
  return o;
}

// Moves the recorded ulp binade of standard_normal y by `by`.
void MoveRecordedUlp(const std::string& path, int by) {
  Baseline b;
  std::string error;
  ASSERT_TRUE(ReadBaseline(path, &b, &error)) << error;
  b.runs.at(0).magnitudes.at({"standard_normal", "y"}).ulp += by;
  ASSERT_TRUE(WriteBaseline(path, b, &error)) << error;
}

TEST(Baseline, ARecordedRunMatchesItselfAndAMagnitudeMovedByTwoBinadesIsAChange) {
  ObservedFixture o = MakeObserved("moved");
  std::ostringstream out;
  std::string status;
  ASSERT_TRUE(RecordBaseline(o.setting, o.impl, o.run, &status, out)) << out.str();
  const int ulp = o.run.magnitudes().at({"standard_normal", "y"}).ulp;
  ASSERT_GT(ulp, kBinadeOfZero + 10) << "a two-pass y is off by something";
  ASSERT_TRUE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr)) << out.str();
  EXPECT_EQ(status.rfind("matches, 0 finding(s), ", 0), 0u) << status;

  MoveRecordedUlp(o.path, 1);  // within one binade
  EXPECT_TRUE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr)) << out.str();
  MoveRecordedUlp(o.path, 1);  // two above this run: this run is better
  out.str("");
  EXPECT_FALSE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr));
  EXPECT_EQ(status, "CHANGED: 0 new, 0 vanished, 1 moved");
  EXPECT_NE(out.str().find("BASELINE f32/two_pass/cpu-scalar: MAGNITUDE standard_normal y: ulp " +
                           BinadeText(ulp + 2) + " -> " + BinadeText(ulp) + " (better)"),
            std::string::npos)
      << out.str();
  MoveRecordedUlp(o.path, -4);  // two below: worse
  out.str("");
  EXPECT_FALSE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr));
  EXPECT_NE(out.str().find("(worse)"), std::string::npos) << out.str();
}

TEST(Baseline, AVersionOneBaselineIsNotComparedAndReRecordingUpgradesIt) {
  ObservedFixture o = MakeObserved("v1");
  std::filesystem::create_directories(o.setting.dir);
  std::ofstream(o.path) << "lnv-baseline 1\nkernel " << o.impl.name
                        << "\nrun full 7\nrun quick 1\nend\n";
  std::ostringstream out;
  std::string status;
  EXPECT_FALSE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr));
  EXPECT_EQ(status, "OLD FORMAT");
  EXPECT_NE(out.str().find("is format 1, without the magnitudes this run is compared on: "
                           "re-record it with\n  " +
                           o.setting.found_by),
            std::string::npos)
      << out.str();
  // Over some families only, the upgrade would leave findings without magnitudes.
  o.setting.families_glob = "standard_*";
  out.str("");
  EXPECT_FALSE(RecordBaseline(o.setting, o.impl, o.run, &status, out));
  EXPECT_NE(out.str().find("re-record it over every family"), std::string::npos) << out.str();
  o.setting.families_glob = "*";
  out.str("");
  ASSERT_TRUE(RecordBaseline(o.setting, o.impl, o.run, &status, out)) << out.str();
  EXPECT_NE(out.str().find("format 1 run full 7 dropped"), std::string::npos) << out.str();
  Baseline b;
  std::string error;
  ASSERT_TRUE(ReadBaseline(o.path, &b, &error)) << error;
  EXPECT_EQ(b.version, kBaselineVersion);
  ASSERT_EQ(b.runs.size(), 1u);
  EXPECT_EQ(b.runs[0].magnitudes, o.run.magnitudes());
  EXPECT_TRUE(CompareWithBaseline(o.setting, o.impl, o.run, &status, out, nullptr)) << out.str();
}

TEST(Baseline, ShrinkingKeepsTheFailureAndDropsEverythingElse) {
  FamilyParams p;
  p.d = 16;
  p.rows = 8;
  Case c = GenerateCase(*FindFamily("standard_normal"), p);
  c.x[5 * 16 + 9] = 1000;  // row 5, column 9
  int calls = 0;
  const auto has_outlier = [&](const Case& cand) {
    ++calls;
    for (double v : cand.x) {
      if (v == 1000) return true;
    }
    return false;
  };
  const Case s = ShrinkCase(c, has_outlier, {5});
  EXPECT_EQ(s.rows, 1);
  EXPECT_EQ(s.d, 2);  // not below 2: d = 1 is a family of its own
  EXPECT_TRUE(s.x[0] == 1000 || s.x[1] == 1000);
  EXPECT_EQ(s.gamma.size(), 2u);
  EXPECT_EQ(s.dy.size(), 2u);
  EXPECT_EQ(ValidateCase(s), "");
  EXPECT_LT(calls, 40);

  // Without a hint the single rows are tried in order; the budget is kept.
  calls = 0;
  EXPECT_EQ(ShrinkCase(c, has_outlier, {}, 3).rows, 8);  // row 5 is the 6th try
  EXPECT_EQ(calls, 3);
}

TEST(Baseline, ACaseWithOneColumnShrinksOnlyItsRows) {
  FamilyParams p;
  p.rows = 6;
  const Case c = GenerateCase(*FindFamily("d_one"), p);
  const Case s = ShrinkCase(c, [](const Case&) { return true; });
  EXPECT_EQ(s.d, 1);
  EXPECT_EQ(s.rows, 1);
}

TEST(Baseline, EveryRecordedBaselineParsesAndListsOnlyCasesThatExistBesideIt) {
  namespace fs = std::filesystem;
  const fs::path dir = DefaultBaselinesDir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::set<std::string> listed, present;
  int baselines = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path p = entry.path();
    if (p.extension() == ".case") present.insert(p.filename().string());
    if (p.extension() != ".baseline") continue;
    ++baselines;
    Baseline b;
    std::string error;
    ASSERT_TRUE(ReadBaseline(p.string(), &b, &error)) << error;
    EXPECT_EQ(BaselinePath(dir.string(), b.kernel), p.string());
    EXPECT_EQ(b.version, kBaselineVersion) << p << ": re-record it (ln_check --write-baselines)";
    for (const BaselineRun& r : b.runs) {
      for (const Finding& f : r.findings) {
        ASSERT_TRUE(b.cases.contains(f)) << p << ": " << FindingText(f) << " has no case";
        EXPECT_EQ(b.cases.at(f), FindingCaseName(b.kernel, f));
        // Every output judged has a magnitude, a failing one above all.
        if (f.output != "call") {
          EXPECT_TRUE(r.magnitudes.contains({f.family, f.output})) << p << ": " << FindingText(f);
        }
      }
    }
    for (const auto& [f, name] : b.cases) {
      listed.insert(name);
      Case c;
      ASSERT_TRUE(ReadCaseFile((dir / name).string(), &c, &error)) << error;
      EXPECT_EQ(c.kernel, b.kernel) << name;
      EXPECT_EQ(c.provenance.family, f.family) << name;
      EXPECT_FALSE(c.provenance.found_by.empty()) << name;
      EXPECT_EQ(c.provenance.replay, "ln_check --replay impls/thirdparty/baselines/" + name);
    }
  }
  EXPECT_GE(baselines, 1);
  EXPECT_EQ(listed, present) << "a case file beside the baselines that none lists, or the reverse";
}

}  // namespace
}  // namespace lnv

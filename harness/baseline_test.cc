#include "harness/baseline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "harness/families.h"

namespace lnv {
namespace {

Baseline Example() {
  Baseline b;
  b.kernel = "f32/some_library/cpu";
  b.runs.push_back({"quick", 20240611, {{"d_one", "y", "bound_exceeded"},
                                         {"huge_magnitude", "call", "crashed"}}});
  b.runs.push_back({"full", 7, {{"d_one", "y", "bound_exceeded"}}});
  b.cases[{"d_one", "y", "bound_exceeded"}] = "a.case";
  return b;
}

TEST(Baseline, FormattingThenParsingGivesTheSameBaseline) {
  const Baseline b = Example();
  Baseline back;
  std::string error;
  ASSERT_TRUE(ParseBaseline(FormatBaseline(b), &back, &error)) << error;
  EXPECT_EQ(back.kernel, b.kernel);
  ASSERT_EQ(back.runs.size(), 2u);
  EXPECT_EQ(back.runs[0].findings, b.runs[0].findings);
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
  const std::string head = "lnv-baseline 1\nkernel k\n";
  reject("", "empty file");
  reject("lnv-baseline 2\n", "line 1: want 'lnv-baseline 1'");
  reject(head + "finding a y bound_exceeded x.case\nend\n", "line 3: finding before any 'run'");
  reject(head + "run slow 1\nend\n", "budget must be quick or full");
  reject(head + "run quick x\nend\n", "bad seed");
  reject(head + "run quick 1\nfinding a z bound_exceeded x.case\nend\n", "unknown output 'z'");
  reject(head + "run quick 1\nfinding a y pass x.case\nend\n", "'pass' is not a failing verdict");
  reject(head + "run quick 1\nfinding a y bound_exceeded x.case\n", "no 'end' line");
  reject(head + "run quick 1\nrun quick 1\nend\n", "twice");
  reject("lnv-baseline 1\nrun quick 1\nend\n", "no 'kernel' line");
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
  EXPECT_EQ(FindingsOf("f", j), (std::set<Finding>{{"f", "y", "bound_exceeded"},
                                                     {"f", "dx", "nan_mismatch"}}));
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
    for (const BaselineRun& r : b.runs) {
      for (const Finding& f : r.findings) {
        ASSERT_TRUE(b.cases.contains(f)) << p << ": " << FindingText(f) << " has no case";
        EXPECT_EQ(b.cases.at(f), FindingCaseName(b.kernel, f));
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

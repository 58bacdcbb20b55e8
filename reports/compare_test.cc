#include "reports/compare.h"

#include <gtest/gtest.h>

#include "harness/errors_json.h"

namespace lnv::report {
namespace {

using nlohmann::json;

json Impl(const std::string& name, const std::string& status, const std::string& verdict,
          bool expected, double use) {
  return {{"name", name},
          {"status", status},
          {"verdict", verdict},
          {"expected", expected},
          {"outputs",
           {{"y",
             {{"max_bound_use", use},
              {"max_bound_use_hex", Hex(use)},
              {"max_ulp", 1.0},
              {"max_ulp_hex", Hex(1.0)}}}}}};
}

json Report(std::vector<json> impls) {
  return {{"schema_version", kSchemaVersion},
          {"context", {{"git_commit", "c0"}, {"budget", "quick"}, {"seed", 1}}},
          {"plan", json::array()},
          {"findings", json::array()},
          {"impls", impls}};
}

TEST(CompareReports, TheSameReportHasNoChanges) {
  const json r = Report({Impl("a", "claims_bound", "pass", true, 0.5)});
  const Comparison c = CompareReports(r, r);
  EXPECT_TRUE(c.changes.empty());
  EXPECT_TRUE(c.same_inputs);
}

TEST(CompareReports, AHigherBoundUseIsWorseAndALowerOneBetter) {
  const json old = Report(
      {Impl("a", "claims_bound", "pass", true, 0.5), Impl("b", "claims_bound", "pass", true, 0.5)});
  const json now = Report({Impl("a", "claims_bound", "pass", true, 0.75),
                           Impl("b", "claims_bound", "pass", true, 0.25)});
  const Comparison c = CompareReports(old, now);
  EXPECT_EQ(c.worse, 1);
  EXPECT_EQ(c.better, 1);
  EXPECT_NE(FormatComparison(c).find("worse: a y max_bound_use 0.5 -> 0.75"), std::string::npos);
}

TEST(CompareReports, ABrokenClaimIsWorseAndAControlsLargerErrorIsNeither) {
  const json old = Report({Impl("a", "claims_bound", "pass", true, 0.5),
                           Impl("n", "negative_control", "fail", true, 10)});
  const json now = Report({Impl("a", "claims_bound", "fail", false, 2),
                           Impl("n", "negative_control", "fail", true, 20)});
  const Comparison c = CompareReports(old, now);
  EXPECT_EQ(c.worse, 2);  // a's verdict and a's bound use
  EXPECT_EQ(c.better, 0);
  EXPECT_EQ(c.other, 1);  // n's bound use
}

TEST(CompareReports, AddedAndRemovedKernelsAreListed) {
  const Comparison c = CompareReports(Report({Impl("a", "claims_bound", "pass", true, 0.5)}),
                                      Report({Impl("b", "claims_bound", "pass", true, 0.5)}));
  ASSERT_EQ(c.changes.size(), 2u);
  EXPECT_EQ(c.changes[0].new_value, "added");
  EXPECT_EQ(c.changes[1].new_value, "removed");
}

TEST(CompareReports, SaysWhenTheInputsDiffer) {
  json other = Report({});
  other["context"]["seed"] = 2;
  EXPECT_FALSE(CompareReports(Report({}), other).same_inputs);
}

}  // namespace
}  // namespace lnv::report

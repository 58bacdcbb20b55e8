#include "harness/errors_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/sweep_test_support.h"

namespace lnv {
namespace {

using nlohmann::json;

const json& SmallReport() {
  static const json j = [] {
    ReportInputs in;
    in.context = {{"seed", kDefaultSeed}, {"budget", "quick"}};
    return ToJson(SmallSweep(), in);
  }();
  return j;
}

TEST(ErrorsJson, NonFiniteNumbersAreStringsThatReadBack) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Num(inf), json("inf"));
  EXPECT_EQ(Num(-inf), json("-inf"));
  EXPECT_EQ(Num(std::nan("")), json("nan"));
  EXPECT_EQ(Num(0.5), json(0.5));
  EXPECT_EQ(ReadNum(json("inf")), inf);
  EXPECT_TRUE(std::isnan(ReadNum(json("nan"))));
  EXPECT_TRUE(std::isnan(ReadNum(json("not a number"))));
}

TEST(ErrorsJson, HexFloatsReadBackBitForBit) {
  for (double v : {0.1, -0x1.fffffep+127, 0x1p-1074, 1.0 / 3.0}) {
    EXPECT_EQ(ReadNum(json(Hex(v))), v) << Hex(v);
  }
}

TEST(ErrorsJson, EveryImplHasItsStatusVerdictAndPerOutputNumbers) {
  const json& j = SmallReport();
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  ASSERT_EQ(j["impls"].size(), 3u);
  const json& two = j["impls"][0];
  EXPECT_EQ(two["name"], "f32/two_pass/cpu-scalar");
  EXPECT_EQ(two["status"], "claims_bound");
  EXPECT_EQ(two["verdict"], "pass");
  EXPECT_EQ(two["expected"], true);
  for (const char* out : {"y", "mean", "rstd", "dx", "dgamma", "dbeta"}) {
    ASSERT_TRUE(two["outputs"].contains(out)) << out;
    const json& o = two["outputs"][out];
    for (const char* key : {"max_ulp", "max_ulp_hex", "p99_ulp", "max_bound_use",
                            "max_bound_use_hex", "worst", "worst_case_file", "histogram"}) {
      EXPECT_TRUE(o.contains(key)) << out << "." << key;
    }
    EXPECT_EQ(ReadNum(o["max_bound_use_hex"]), ReadNum(o["max_bound_use"]));
    EXPECT_LE(ReadNum(o["max_bound_use"]), 1.0);
  }
  EXPECT_TRUE(two["outputs"]["y"].contains("points"));
  EXPECT_FALSE(two["outputs"]["mean"].contains("points"));
  const json& one = j["impls"][1];
  EXPECT_EQ(one["status"], "negative_control");
  EXPECT_EQ(one["verdict"], "fail");
  EXPECT_EQ(one["expected"], true);
  EXPECT_TRUE(one["valid_range"]["kappa_fail_min"].is_number());
}

TEST(ErrorsJson, FindingsNameTheirKernelCaseAndBrokenBound) {
  const json& j = SmallReport();
  ASSERT_FALSE(j["findings"].empty());
  for (const json& f : j["findings"]) {
    EXPECT_EQ(f["kernel"], "f32/one_pass/cpu-scalar");
    EXPECT_EQ(f["what"], "negative control caught");
    EXPECT_NE(f["bound"].get<std::string>().find("two_pass bound"), std::string::npos);
    EXPECT_TRUE(f["worst"].is_object());
  }
  EXPECT_EQ(j["summary"]["exit_status"], 0);
}

TEST(ErrorsJson, AnyKernelNotAsItsStatusExpectsMakesTheExitStatusOne) {
  json j = SmallReport();
  EXPECT_EQ(ExitStatusOf(j), 0);
  j["impls"][0]["expected"] = false;  // the negative control of this check
  EXPECT_EQ(ExitStatusOf(j), 1);
  json k = SmallReport();
  k["load_errors"].push_back("plugin x.so: cannot load");
  EXPECT_EQ(ExitStatusOf(k), 1);
}

TEST(ErrorsJson, CheckReportRefusesOtherSchemasAndMissingKeys) {
  EXPECT_EQ(CheckReport(SmallReport()), "");
  json j = SmallReport();
  j["schema_version"] = kSchemaVersion + 1;
  EXPECT_NE(CheckReport(j).find("schema_version"), std::string::npos);
  json k = SmallReport();
  k.erase("impls");
  EXPECT_NE(CheckReport(k), "");
  EXPECT_NE(CheckReport(json::array()), "");
}

TEST(ErrorsJson, LoadReportSaysWhyAFileIsUnreadable) {
  json j;
  EXPECT_NE(LoadReport("/nonexistent/errors.json", &j).find("cannot read"), std::string::npos);
}

TEST(RunSweep, TheResultDoesNotDependOnTheNumberOfJobs) {
  ReportInputs in;
  in.context = {{"seed", kDefaultSeed}};
  const nlohmann::json one = ToJson(SmallSweep(1), in);
  const nlohmann::json three = ToJson(SmallSweep(3), in);
  EXPECT_EQ(one["impls"], three["impls"]);
  EXPECT_EQ(one["findings"], three["findings"]);
}

}  // namespace
}  // namespace lnv

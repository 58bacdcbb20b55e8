#include "reports/html.h"

#include <gtest/gtest.h>

#include "harness/errors_json.h"
#include "harness/sweep_test_support.h"
#include "reports/browser_check.h"

namespace lnv::report {
namespace {

using nlohmann::json;

const json& SmallReport() {
  static const json j = [] {
    ReportInputs in;
    in.context = {{"seed", kDefaultSeed}, {"budget", "quick"}, {"git_commit", "abc"}};
    return ToJson(SmallSweep(), in);
  }();
  return j;
}

TEST(RenderHtml, IsOnePageWithoutExternalResources) {
  const std::string html = RenderHtml(SmallReport(), nullptr);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* external : {"http://", "https://", "src=", "<link", "@import", "url("}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  EXPECT_NE(html.find("<meta name=\"viewport\""), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
}

TEST(RenderHtml, EveryChartHasAnSvgWithDataPoints) {
  const std::string html = RenderHtml(SmallReport(), nullptr);
  const DomCheck c = CheckDom(html);
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
  // Per kernel: y and dx against kappa and magnitude, use vs d, the
  // histogram; plus the overlays of each (dtype, norm) for y and dx.
  EXPECT_EQ(c.charts, 3 * 6 + 2 * 2);
}

TEST(RenderHtml, EmbedsTheDataItWasRenderedFrom) {
  const std::string html = RenderHtml(SmallReport(), nullptr);
  const std::string open = "<script type=\"application/json\" id=\"lnv-data\">";
  const auto a = html.find(open) + open.size();
  const auto b = html.find("</script>", a);
  EXPECT_EQ(json::parse(html.substr(a, b - a)), SmallReport());
}

TEST(RenderHtml, TablesAreInTheHtmlNotBuiltByScript) {
  const std::string html = RenderHtml(SmallReport(), nullptr);
  EXPECT_EQ(html.find("<script>"), std::string::npos);  // only the JSON data block
  for (const json& i : SmallReport()["impls"]) {
    EXPECT_NE(html.find(">" + i["name"].get<std::string>() + "</a></td>"), std::string::npos);
  }
  EXPECT_NE(html.find("id=\"how\""), std::string::npos);
  EXPECT_NE(html.find("negative control caught"), std::string::npos);
}

TEST(RenderHtml, TheBannerSaysWhetherEveryClaimHolds) {
  EXPECT_NE(RenderHtml(SmallReport(), nullptr).find("banner ok"), std::string::npos);
  json bad = SmallReport();
  bad["impls"][0]["expected"] = false;
  EXPECT_NE(RenderHtml(bad, nullptr).find("banner bad"), std::string::npos);
}

TEST(RenderHtml, ObservedAndPluginKernelsAreShownByTheirStatus) {
  json j = SmallReport();
  j["impls"][1]["status"] = "observed";
  j["impls"][0]["status"] = "plugin";
  const std::string html = RenderHtml(j, nullptr);
  EXPECT_NE(html.find("findings recorded"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"status\">plugin</td>"), std::string::npos);
}

TEST(RenderHtml, AKernelThatNeverRanIsShownWithoutCharts) {
  json j = SmallReport();
  j["impls"][0]["outputs"] = json::object();
  j["impls"][0]["use_by_d"]["rows"] = json::array();
  j["impls"][0]["verdict"] = "error";
  j["impls"][0]["first_error"] = "crashed: signal 11 (Segmentation fault)";
  const std::string html = RenderHtml(j, nullptr);
  EXPECT_NE(html.find("No charted rows"), std::string::npos);
  EXPECT_NE(html.find("crashed: signal 11"), std::string::npos);
  EXPECT_TRUE(CheckDom(html).problems.empty());
}

TEST(RenderHtml, AComparisonGetsItsOwnSection) {
  json old = SmallReport();
  old["impls"][0]["verdict"] = "fail";
  old["impls"][0]["expected"] = false;
  const Comparison c = CompareReports(old, SmallReport());
  const std::string html = RenderHtml(SmallReport(), &c);
  EXPECT_NE(html.find("id=\"compare\""), std::string::npos);
  EXPECT_NE(html.find("better"), std::string::npos);
}

}  // namespace
}  // namespace lnv::report

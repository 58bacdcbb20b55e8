// ln_report as a user runs it: usage errors, a plugin's kernels with
// verdicts, and --render / --compare of what a run wrote.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/errors_json.h"

namespace lnv::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Ran {
  int rc = 0;
  std::string out;
};

Ran RunReport(const std::string& args) {
  // One log per test and process: ctest runs these tests in parallel.
  const std::string log = ::testing::TempDir() + "ln_report_cli_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                          std::to_string(getpid()) + ".log";
  const int rc = std::system(
      (std::string("'") + LNV_LN_REPORT + "' " + args + " > '" + log + "' 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, s.str()};
}

TEST(LnReportCli, BadUsageExitsTwoWithOneLine) {
  for (const char* args : {"--budget slow", "--render /nonexistent/errors.json",
                           "--plugin /nonexistent/plugin.so", "--impls 'no/such/*'", "extra"}) {
    const Ran r = RunReport(args);
    EXPECT_EQ(r.rc, 2) << args << ": " << r.out;
    EXPECT_EQ(r.out.rfind("ln_report: ", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  }
}

TEST(LnReportCli, HelpExitsZero) {
  const Ran r = RunReport("--help");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("usage: ln_report"), std::string::npos);
}

// One quick sweep of the test plugin, shared by the tests below.
const fs::path& PluginReport() {
  static const fs::path dir = [] {
    // Per process: ctest runs the tests that share it in parallel processes.
    const fs::path d =
        fs::path(::testing::TempDir()) / ("ln_report_plugin_" + std::to_string(getpid()));
    fs::remove_all(d);
    const Ran r = RunReport(std::string("--plugin '") + LNV_TEST_PLUGIN + "' --impls 'plugin:*' " +
                            "--out '" + d.string() + "' --jobs 2 --quiet --seed 5");
    // The broken plugin kernel is a finding: exit 1.
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("seed 5"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("open " + (d / "index.html").string()), std::string::npos) << r.out;
    return d;
  }();
  return dir;
}

TEST(LnReportCli, APluginsKernelsGetVerdictsUnderTheGenericBound) {
  json j;
  ASSERT_EQ(LoadReport((PluginReport() / "errors.json").string(), &j), "");
  ASSERT_EQ(j["impls"].size(), 3u);
  std::map<std::string, json> by_name;
  for (const json& i : j["impls"]) by_name[i["name"]] = i;
  const json& good = by_name["plugin:report_test_plugin/f32/two_pass_double/cpu"];
  const json& bad = by_name["plugin:report_test_plugin/f32/mean_off_by_one/cpu"];
  EXPECT_EQ(good["status"], "plugin");
  EXPECT_EQ(good["verdict"], "pass");
  EXPECT_EQ(good["expected"], true);
  EXPECT_EQ(bad["status"], "plugin");
  EXPECT_EQ(bad["verdict"], "fail");
  EXPECT_EQ(bad["expected"], false);
  EXPECT_FALSE(good["outputs"].contains("dx"));  // forward only
  ASSERT_FALSE(j["findings"].empty());
  const json& f = j["findings"][0];
  EXPECT_EQ(f["kernel"], "plugin:report_test_plugin/f32/mean_off_by_one/cpu");
  EXPECT_EQ(f["what"], "claim broken");
  EXPECT_NE(f["replay"].get<std::string>().find(" --plugin "), std::string::npos);
  EXPECT_TRUE(fs::exists(PluginReport() / f["case_file"].get<std::string>()));
  EXPECT_TRUE(fs::exists(PluginReport() / "index.html"));
}

// A kernel whose statistics drop the tail of rows longer than 2^16 - 1 is
// caught by the quick report, on one_outlier's row past 2^16 with its
// outlier last, and only on rows that long.
TEST(LnReportCli, AKernelDroppingTheTailOfRowsPast65535IsCaughtAtTheQuickBudget) {
  json j;
  ASSERT_EQ(LoadReport((PluginReport() / "errors.json").string(), &j), "");
  const std::string name = "plugin:report_test_plugin/f32/drops_tail_past_65535/cpu";
  bool listed = false;
  for (const json& i : j["impls"]) {
    if (i["name"] != name) continue;
    listed = true;
    EXPECT_EQ(i["verdict"], "fail");
    EXPECT_EQ(i["expected"], false);
  }
  EXPECT_TRUE(listed);
  int caught = 0;
  for (const json& f : j["findings"]) {
    if (f["kernel"] != name) continue;
    ++caught;
    EXPECT_GT(f["d"].get<std::int64_t>(), 65535) << f.dump();
  }
  EXPECT_GT(caught, 0);
}

TEST(LnReportCli, RenderAndCompareRedrawWhatARunWrote) {
  const fs::path out =
      fs::path(::testing::TempDir()) / ("ln_report_rerender_" + std::to_string(getpid()));
  fs::remove_all(out);
  const std::string json_path = (PluginReport() / "errors.json").string();
  const Ran r = RunReport("--render '" + json_path + "' --compare '" + json_path + "' --out '" +
                          out.string() + "'");
  EXPECT_EQ(r.rc, 1) << r.out;  // the data's status: the broken plugin kernel
  EXPECT_NE(r.out.find("0 worse, 0 better"), std::string::npos) << r.out;
  std::ifstream in(out / "index.html");
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_NE(s.str().find("id=\"compare\""), std::string::npos);
  EXPECT_NE(s.str().find("plugin:report_test_plugin/f32/mean_off_by_one/cpu"), std::string::npos);
}

}  // namespace
}  // namespace lnv::report

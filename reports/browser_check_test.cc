#include "reports/browser_check.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace lnv::report {
namespace {

const char* kGoodChart =
    "<figure class=\"chart\" id=\"c\"><svg viewBox=\"0 0 10 10\" role=\"img\"><title>t</title>"
    "<text class=\"al\">x</text><text class=\"al\">y</text><g class=\"series\">"
    "<circle class=\"pt\"></circle></g><g class=\"legend\"></g></svg></figure>";
const char* kPageEnd =
    "<table></table><script type=\"application/json\" id=\"lnv-data\">{}</script>";

TEST(ConsoleMessages, PicksTheConsoleLinesOutOfAChromiumLog) {
  const std::string log =
      "[1:1:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n"
      "[1:1:INFO:CONSOLE:1] \"Uncaught ReferenceError: f is not defined\", source: x (1)\n";
  const auto m = ConsoleMessages(log);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NE(m[0].find("ReferenceError"), std::string::npos);
  EXPECT_TRUE(ConsoleMessages("[1:1:WARNING:x] nothing\n").empty());
}

TEST(CheckDom, AcceptsAChartWithEverything) {
  const DomCheck c = CheckDom(std::string(kGoodChart) + kPageEnd);
  EXPECT_EQ(c.charts, 1);
  EXPECT_TRUE(c.problems.empty()) << c.problems.front();
}

TEST(CheckDom, FlagsEachMissingPieceOfAChart) {
  const std::vector<std::pair<std::string, std::string>> cuts = {
      {"<circle class=\"pt\"></circle>", "no data points"},
      {" viewBox=\"0 0 10 10\"", "without viewBox"},
      {"<title>t</title>", "no <title>"},
      {"<text class=\"al\">y</text>", "axis labels"},
      {"<g class=\"legend\"></g>", "no legend"},
  };
  for (const auto& [cut, why] : cuts) {
    std::string page = std::string(kGoodChart) + kPageEnd;
    page.erase(page.find(cut), cut.size());
    const DomCheck c = CheckDom(page);
    ASSERT_EQ(c.problems.size(), 1u) << why;
    EXPECT_NE(c.problems[0].find(why), std::string::npos) << c.problems[0];
  }
}

TEST(CheckDom, FlagsAPageWithoutTablesOrDataBlock) {
  EXPECT_EQ(CheckDom(kGoodChart).problems.size(), 2u);
}

TEST(FindChromium, HonoursLnvChromiumAndRefusesANonExecutable) {
  setenv("LNV_CHROMIUM", "/nonexistent/chromium", 1);
  EXPECT_EQ(FindChromium(), "");
  setenv("LNV_CHROMIUM", "/bin/sh", 1);
  EXPECT_EQ(FindChromium(), "/bin/sh");
  unsetenv("LNV_CHROMIUM");
}

}  // namespace
}  // namespace lnv::report

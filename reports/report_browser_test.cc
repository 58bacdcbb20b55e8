// ReportRendersInHeadlessChromium: renders a fixed small errors.json with
// ln_report --render, loads the page in headless Chromium, and checks that it
// logs no console message, that every chart has an <svg> with data points,
// and writes screenshots (desktop and phone width) into the build directory.
// Two negative controls prove the checks can fail: a page with a script error
// must show a console message, and a chart stripped of its points must be
// flagged. Exits 77 (skipped) when Chromium is not installed.
//
// usage: report_browser_test LN_REPORT FIXTURE_JSON WORK_DIR
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "reports/browser_check.h"

namespace {

namespace fs = std::filesystem;
using lnv::report::CheckDom;
using lnv::report::ConsoleMessages;

constexpr int kSkipped = 77;
constexpr int kBrowserTimeoutSeconds = 120;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

int Run(const std::string& command) {
  const int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

struct Loaded {
  int rc = 0;
  std::string dom, log;
};

// Loads a page; its DOM after load on stdout, the browser's log on stderr.
Loaded Load(const std::string& chromium, const fs::path& page, const fs::path& work,
            const std::string& name) {
  const fs::path dom = work / (name + ".dom.html"), log = work / (name + ".log");
  Loaded l;
  l.rc = Run("timeout " + std::to_string(kBrowserTimeoutSeconds) + " '" + chromium + "' " +
             lnv::report::HeadlessFlags((work / ("profile-" + name)).string()) +
             " --enable-logging=stderr --v=0 --dump-dom 'file://" + page.string() + "' > '" +
             dom.string() + "' 2> '" + log.string() + "'");
  l.dom = Read(dom);
  l.log = Read(log);
  return l;
}

bool Screenshot(const std::string& chromium, const fs::path& page, const fs::path& png,
                const fs::path& work, const std::string& size) {
  fs::remove(png);
  Run("timeout " + std::to_string(kBrowserTimeoutSeconds) + " '" + chromium + "' " +
      lnv::report::HeadlessFlags((work / ("profile-shot-" + size)).string()) +
      " --hide-scrollbars --window-size=" + size + " --screenshot='" + png.string() + "' 'file://" +
      page.string() + "' > /dev/null 2>&1");
  const std::string bytes = Read(png);
  return bytes.size() > 1000 && bytes.compare(0, 4, "\x89PNG") == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: report_browser_test LN_REPORT FIXTURE_JSON WORK_DIR\n";
    return 2;
  }
  const std::string ln_report = argv[1];
  const fs::path fixture = fs::absolute(argv[2]);
  const fs::path work = fs::absolute(argv[3]);
  const std::string chromium = lnv::report::FindChromium();
  if (chromium.empty()) {
    std::cout << "SKIPPED: no chromium (set LNV_CHROMIUM, or install Debian's chromium with "
                 "scripts/install-deps)\n";
    return kSkipped;
  }
  std::cout << "chromium: " << chromium << "\n";
  fs::remove_all(work);
  fs::create_directories(work);
  int failures = 0;
  auto fail = [&](const std::string& why) {
    std::cout << "FAIL: " << why << "\n";
    ++failures;
  };

  // The report itself.
  const fs::path out = work / "report";
  if (const int rc = Run("'" + ln_report + "' --render '" + fixture.string() + "' --out '" +
                         out.string() + "' > '" + (work / "render.log").string() + "' 2>&1");
      rc != 0) {
    fail("ln_report --render exited " + std::to_string(rc) + ": " + Read(work / "render.log"));
    return 1;
  }
  const fs::path page = out / "index.html";
  const std::string source = Read(page);
  int source_charts = 0;
  for (std::size_t p = source.find("<figure class=\"chart\""); p != std::string::npos;
       p = source.find("<figure class=\"chart\"", p + 1)) {
    ++source_charts;
  }
  const Loaded loaded = Load(chromium, page, work, "report");
  if (loaded.rc != 0) fail("chromium exited " + std::to_string(loaded.rc) + "\n" + loaded.log);
  for (const std::string& m : ConsoleMessages(loaded.log)) fail("console: " + m);
  const auto dom = CheckDom(loaded.dom);
  for (const std::string& p : dom.problems) fail(p);
  if (dom.charts == 0 || dom.charts != source_charts) {
    fail("the page has " + std::to_string(source_charts) + " charts, the browser's DOM " +
         std::to_string(dom.charts));
  }
  std::cout << "report: " << dom.charts << " charts, " << dom.tables << " tables, "
            << ConsoleMessages(loaded.log).size() << " console messages\n";
  for (const auto& [size, name] :
       {std::pair<std::string, std::string>{"1280,2400", "desktop"}, {"390,2400", "phone"}}) {
    const fs::path png = work / ("report-screenshot-" + name + ".png");
    if (Screenshot(chromium, page, png, work, size)) {
      std::cout << "screenshot: " << png.string() << "\n";
    } else {
      fail("no screenshot at " + png.string());
    }
  }

  // Negative control 1: a script error must reach the console check.
  const fs::path bad_script = work / "control-console.html";
  Write(bad_script,
        "<!DOCTYPE html><html><body><p>control</p><script>"
        "no_such_function();</script></body></html>\n");
  if (ConsoleMessages(Load(chromium, bad_script, work, "control-console").log).empty()) {
    fail(
        "negative control: a page with a script error logged no console message, so the "
        "console check cannot fail");
  }
  // Negative control 2: a chart without points must be flagged in the browser's DOM.
  std::string stripped = source;
  const std::size_t fig = stripped.find("<figure class=\"chart\"");
  const std::size_t fig_end = stripped.find("</figure>", fig);
  for (std::size_t p = stripped.find("class=\"pt", fig); p != std::string::npos && p < fig_end;
       p = stripped.find("class=\"pt", p)) {
    stripped.replace(p, 9, "class=\"xx");
  }
  const fs::path bad_chart = out / "control-no-points.html";
  Write(bad_chart, stripped);
  if (CheckDom(Load(chromium, bad_chart, work, "control-chart").dom).problems.empty()) {
    fail("negative control: a chart without data points was not flagged");
  }

  std::cout << (failures == 0 ? "PASS" : "FAILED") << ": " << failures << " failure(s)\n";
  return failures == 0 ? 0 : 1;
}

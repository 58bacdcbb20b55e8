// Checking a rendered report in a real browser (headless Chromium): running
// it, and reading what it says. The analysis functions work on text (the
// browser's log and its serialized DOM), so they are unit-tested without a
// browser; report_browser_test drives Chromium itself.
#ifndef LNV_REPORTS_BROWSER_CHECK_H_
#define LNV_REPORTS_BROWSER_CHECK_H_

#include <string>
#include <vector>

namespace lnv::report {

// The console messages in a Chromium log written with --enable-logging=stderr
// (lines holding ":CONSOLE"). The report has no script, so any message is an error.
std::vector<std::string> ConsoleMessages(const std::string& chromium_log);

struct DomCheck {
  int charts = 0;  // <figure class="chart"> elements
  int tables = 0;
  bool data_block = false;            // <script type="application/json" id="lnv-data">
  std::vector<std::string> problems;  // one line per chart (or page) that fails a check
};

// Every chart must hold an <svg> with a viewBox, a <title>, both axis labels,
// a legend and at least one data point (an element of class "pt").
DomCheck CheckDom(const std::string& dom);

// The path of the Chromium binary: $LNV_CHROMIUM, else the first of
// chromium, chromium-browser on PATH; "" when there is none.
std::string FindChromium();

// The flags headless Chromium needs here (no sandbox, no GPU, no network
// services), with a fresh profile directory.
std::string HeadlessFlags(const std::string& profile_dir);

}  // namespace lnv::report

#endif  // LNV_REPORTS_BROWSER_CHECK_H_

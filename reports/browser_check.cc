#include "reports/browser_check.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace lnv::report {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

std::vector<std::string> ConsoleMessages(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos) out.push_back(line);
  }
  return out;
}

DomCheck CheckDom(const std::string& dom) {
  DomCheck c;
  c.tables = Count(dom, "<table");
  c.data_block =
      dom.find("<script type=\"application/json\" id=\"lnv-data\">") != std::string::npos;
  if (!c.data_block) c.problems.push_back("page: no embedded JSON data block (id=lnv-data)");
  if (c.tables == 0) c.problems.push_back("page: no table");
  const std::string open = "<figure class=\"chart\"";
  for (std::size_t p = dom.find(open); p != std::string::npos; p = dom.find(open, p + 1)) {
    ++c.charts;
    const std::size_t end = dom.find("</figure>", p);
    const std::string fig = dom.substr(p, end == std::string::npos ? std::string::npos : end - p);
    std::string id = "chart " + std::to_string(c.charts);
    if (const auto q = fig.find("id=\""); q != std::string::npos) {
      id = fig.substr(q + 4, fig.find('"', q + 4) - q - 4);
    }
    const std::size_t svg = fig.find("<svg");
    if (svg == std::string::npos) {
      c.problems.push_back(id + ": no <svg>");
      continue;
    }
    const std::string head = fig.substr(svg, fig.find('>', svg) - svg);
    if (head.find("viewBox=") == std::string::npos)
      c.problems.push_back(id + ": <svg> without viewBox");
    if (fig.find("<title") == std::string::npos) c.problems.push_back(id + ": no <title>");
    if (Count(fig, "class=\"al\"") < 2) c.problems.push_back(id + ": axis labels missing");
    if (fig.find("class=\"legend\"") == std::string::npos) c.problems.push_back(id + ": no legend");
    if (Count(fig, "class=\"pt") == 0) c.problems.push_back(id + ": no data points");
  }
  return c;
}

std::string FindChromium() {
  if (const char* env = std::getenv("LNV_CHROMIUM"); env != nullptr && *env != '\0') {
    return access(env, X_OK) == 0 ? env : "";
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::vector<std::string> list;
  for (std::string d; std::getline(dirs, d, ':');) list.push_back(d.empty() ? "." : d);
  for (const char* name : {"chromium", "chromium-browser"}) {
    for (const std::string& d : list) {
      const std::string p = d + "/" + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "";
}

std::string HeadlessFlags(const std::string& profile_dir) {
  return "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking --disable-component-update --disable-sync "
         "--user-data-dir='" +
         profile_dir + "'";
}

}  // namespace lnv::report

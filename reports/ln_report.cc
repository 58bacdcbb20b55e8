// ln_report: sweeps the registered kernels over the input families, writes
// errors.json and a self-contained index.html. See ReportUsage() (--help).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "harness/errors_json.h"
#include "harness/isolate.h"
#include "harness/run_context.h"
#include "harness/sweep.h"
#include "harness/write_cases.h"
#include "impls/plugin/loader.h"
#include "reports/compare.h"
#include "reports/html.h"
#include "reports/options.h"

namespace lnv::report {
namespace {

namespace fs = std::filesystem;

// A plugin kernel's call still running after this is killed and reported
// as hung (a case of the full budget takes well under a minute).
constexpr double kPluginTimeoutSeconds = 300;

bool WriteText(const fs::path& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    *error = "cannot write " + path.string();
    return false;
  }
  return true;
}

// ln_check from the same build (build/<preset>/harness/ln_check), as a path
// from the working directory; "ln_check" when it is not there.
std::string LnCheckPath() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "ln_check";
  const fs::path candidate = self.parent_path().parent_path() / "harness" / "ln_check";
  if (!fs::exists(candidate, ec)) return "ln_check";
  const fs::path rel = fs::relative(candidate, fs::current_path(), ec);
  if (ec || rel.empty() || rel.string().rfind("..", 0) == 0) return candidate.string();
  return rel.string();
}

std::string FileUrl(const fs::path& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec);
  return "file://" + (ec ? p : abs.lexically_normal()).string();
}

std::string CommandLine(int argc, char** argv) {
  std::string s = "ln_report";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = a.find_first_of(" '\"*?$\\") == std::string::npos && !a.empty();
    s += " " + (plain ? a : "'" + a + "'");
  }
  return s;
}

class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}
  void operator()(double fraction, std::int64_t done, std::int64_t total) {
    if (quiet_ || finished_) return;
    finished_ = done == total;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!tty_ && done < total && elapsed - last_ < 5.0) return;
    last_ = elapsed;
    const double eta = fraction > 0.02 ? elapsed * (1 - fraction) / fraction : -1;
    char line[160];
    std::snprintf(line, sizeof line, "ln_report: %3.0f%%  %lld/%lld cases  %.0f s elapsed%s",
                  100 * fraction, static_cast<long long>(done), static_cast<long long>(total),
                  elapsed, eta >= 0 ? "" : "  ETA --");
    std::string s = line;
    if (eta >= 0) {
      char b[48];
      std::snprintf(b, sizeof b, "  ETA %.0f s", eta);
      s += b;
    }
    std::fprintf(stderr, tty_ ? "\r%-72s" : "%s\n", s.c_str());
    if (tty_ && done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  bool quiet_, tty_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_ = -1e9;
};

int Render(const ReportOptions& o) {
  nlohmann::json report;
  if (const std::string e = LoadReport(o.render, &report); !e.empty()) {
    std::cerr << "ln_report: " << e << "\n";
    return 2;
  }
  std::optional<Comparison> cmp;
  if (!o.compare.empty()) {
    nlohmann::json old;
    if (const std::string e = LoadReport(o.compare, &old); !e.empty()) {
      std::cerr << "ln_report: --compare: " << e << "\n";
      return 2;
    }
    cmp = CompareReports(old, report);
    std::cout << FormatComparison(*cmp);
  }
  const fs::path dir = o.out_given ? fs::path(o.out_dir) : fs::path(o.render).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  const fs::path html = (dir.empty() ? fs::path(".") : dir) / "index.html";
  std::string error;
  if (!WriteText(html, RenderHtml(report, cmp ? &*cmp : nullptr), &error)) {
    std::cerr << "ln_report: " << error << "\n";
    return 2;
  }
  std::cout << "ln_report: rendered " << o.render << "\nopen " << html.string() << "  ("
            << FileUrl(html) << ")\n";
  return ExitStatusOf(report);
}

int Sweep(const ReportOptions& o, int argc, char** argv) {
  for (const std::string& p : o.plugins) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      std::cerr << "ln_report: --plugin " << p << ": no such file\n";
      return 2;
    }
  }
  std::optional<nlohmann::json> old;
  if (!o.compare.empty()) {
    old.emplace();
    if (const std::string e = LoadReport(o.compare, &*old); !e.empty()) {
      std::cerr << "ln_report: --compare: " << e << "\n";
      return 2;
    }
  }
  PluginLoad load = ImplsWithPlugins(o.plugins);
  for (const std::string& e : load.errors) std::cerr << "ln_report: " << e << "\n";
  SweepOptions so;
  so.budget = o.budget;
  so.seed = o.seed;
  so.typical = o.typical;
  so.jobs =
      o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const ImplInfo& i : load.impls) {
    if (GlobMatch(o.impls_glob, i.name)) so.impls.push_back(i);
  }
  if (so.impls.empty()) {
    std::cerr << "ln_report: no kernel matches --impls '" << o.impls_glob << "'\n";
    return 2;
  }
  // Plugin kernels run in a child process (harness/isolate.h), made now,
  // after the plugins are loaded and before any kernel has run.
  std::vector<const ImplInfo*> selected;
  for (const ImplInfo& i : so.impls) selected.push_back(&i);
  std::string isolator_error;
  const std::unique_ptr<Isolator> isolator =
      MakePluginIsolator(selected, kPluginTimeoutSeconds, &isolator_error);
  if (!isolator_error.empty()) {
    std::cerr << "ln_report: cannot run plugin kernels in a child process: " << isolator_error
              << "\n";
    return 2;
  }
  so.plugin_runner = isolator.get();
  std::vector<std::string> plugin_paths = PluginPathsFromEnv();
  plugin_paths.insert(plugin_paths.end(), o.plugins.begin(), o.plugins.end());
  std::cout << "ln_report: seed " << o.seed << ", budget " << BudgetName(o.budget) << ", "
            << so.impls.size() << " kernel(s) matching '" << o.impls_glob << "', " << so.jobs
            << " job(s), writing " << o.out_dir << "/" << std::endl;
  Progress progress(o.quiet);
  so.progress = [&progress](double f, std::int64_t a, std::int64_t b) { progress(f, a, b); };
  SweepResult result = RunSweep(so);

  std::error_code ec;
  fs::create_directories(fs::path(o.out_dir) / "cases", ec);
  if (ec) {
    std::cerr << "ln_report: cannot create " << o.out_dir << "/cases: " << ec.message() << "\n";
    return 2;
  }
  // Case files of an earlier run in the same directory would read as this
  // run's.
  for (const auto& entry : fs::directory_iterator(fs::path(o.out_dir) / "cases", ec)) {
    if (entry.path().extension() == ".case") fs::remove(entry.path(), ec);
  }
  CaseWriteOptions cw;
  cw.out_dir = o.out_dir;
  cw.found_by = "ln_report --budget " + BudgetName(o.budget) + " --seed " + std::to_string(o.seed) +
                (o.impls_glob == "*" ? "" : " --impls '" + o.impls_glob + "'");
  cw.replay_program = LnCheckPath();
  cw.seed = o.seed;
  cw.plugin_runner = isolator.get();
  cw.typical = o.typical;
  ReportInputs in;
  in.write_errors = WriteCaseFiles(cw, &result);
  for (const std::string& e : in.write_errors) std::cerr << "ln_report: " << e << "\n";
  in.load_errors = load.errors;
  RunFacts facts;
  facts.command = CommandLine(argc, argv);
  facts.budget = o.budget;
  facts.seed = o.seed;
  facts.impls_glob = o.impls_glob;
  facts.seconds = result.seconds;
  facts.jobs = so.jobs;
  facts.plugin_paths = plugin_paths;
  in.context = CollectContext(facts, so.impls);
  const nlohmann::json report = ToJson(result, in);

  std::optional<Comparison> cmp;
  if (old) cmp = CompareReports(*old, report);
  std::string error;
  const fs::path json_path = fs::path(o.out_dir) / "errors.json";
  const fs::path html_path = fs::path(o.out_dir) / "index.html";
  if (!WriteText(json_path, report.dump() + "\n", &error) ||
      !WriteText(html_path, RenderHtml(report, cmp ? &*cmp : nullptr), &error)) {
    std::cerr << "ln_report: " << error << "\n";
    return 2;
  }

  const int status = ExitStatusOf(report);
  int expected = 0;
  for (const KernelReport& k : result.kernels) {
    const bool ok = MeetsExpectation(k);
    expected += ok;
    if (!ok) {
      std::cout << "NOT AS EXPECTED  " << k.info.name << " (" << StatusWord(k.info)
                << "): " << KernelVerdictWord(k) << "\n";
    }
  }
  for (const KernelReport& k : result.kernels) {
    for (const FamilyFinding& f : k.findings) {
      if (k.info.status == ImplStatus::kClaimsBound) {
        std::cout << "FINDING " << k.info.name << " on " << result.plan[f.item].family << ": "
                  << f.summary << "\n  replay " << f.replay << "\n";
      }
    }
  }
  if (cmp) std::cout << FormatComparison(*cmp);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", result.seconds);
  std::cout << (status == 0 ? "ok" : "FINDINGS") << ": " << expected << "/" << result.kernels.size()
            << " kernels as their status expects; " << report["findings"].size()
            << " finding(s) (negative controls included); seed " << o.seed << "; " << secs
            << " s\nwrote " << json_path.string() << "\nopen " << html_path.string() << "  ("
            << FileUrl(html_path) << ")\n";
  return status;
}

}  // namespace
}  // namespace lnv::report

int main(int argc, char** argv) {
  using lnv::report::ReportOptions;
  ReportOptions o;
  if (const std::string e = lnv::report::ParseReportArgs({argv + 1, argv + argc}, &o); !e.empty()) {
    std::cerr << "ln_report: " << e << " (see --help)\n";
    return 2;
  }
  if (o.help) {
    std::cout << lnv::report::ReportUsage();
    return 0;
  }
  if (!o.render.empty()) return lnv::report::Render(o);
  return lnv::report::Sweep(o, argc, argv);
}

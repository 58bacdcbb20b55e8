// ln_report: see ReportUsage() (--help).
#include <cstdio>
#include <iostream>
#include <thread>

#include "impls/plugin/loader.h"
#include "reports/options.h"
#include "reports/sweep.h"

int main(int argc, char** argv) {
  using namespace lnv::report;
  ReportOptions o;
  if (const std::string e = ParseReportArgs({argv + 1, argv + argc}, &o); !e.empty()) {
    std::cerr << "ln_report: " << e << " (see --help)\n";
    return 2;
  }
  if (o.help) {
    std::cout << ReportUsage();
    return 0;
  }
  lnv::PluginLoad load = lnv::ImplsWithPlugins(o.plugins);
  SweepOptions so;
  so.budget = o.budget;
  so.seed = o.seed;
  so.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::thread::hardware_concurrency());
  for (auto& i : load.impls) if (lnv::GlobMatch(o.impls_glob, i.name)) so.impls.push_back(i);
  so.progress = [](double f, std::int64_t a, std::int64_t b) {
    std::fprintf(stderr, "\r%.0f%% %lld/%lld", 100 * f, (long long)a, (long long)b);
  };
  SweepResult r = RunSweep(so);
  std::printf("\n%zu kernels, %lld judgements, %.1f s\n", r.kernels.size(), (long long)r.cases_judged, r.seconds);
  for (auto& k : r.kernels) {
    std::printf("%-32s %s %zu findings use y %.3g dx %.3g\n", k.info.name.c_str(), KernelVerdictWord(k).c_str(), k.findings.size(), k.outputs[0].max_bound_use, k.outputs[3].max_bound_use);
  }
  return 0;
}

#include "harness/check.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <thread>
#include <tuple>

#include "harness/baseline.h"
#include "harness/errors_json.h"
#include "harness/families.h"
#include "harness/formats.h"
#include "harness/isolate.h"
#include "harness/run_context.h"
#include "harness/sweep.h"
#include "harness/text_columns.h"
#include "harness/write_cases.h"
#include "impls/plugin/loader.h"

namespace lnv {
namespace {

// How `impl` is judged on a case of `family`: in a child process for a
// plugin, and with the statistical tier where the family's data is random.
JudgeOptions OptionsFor(const ImplInfo& impl, Isolator* isolator, std::string_view family,
                        TypicalTier typical) {
  JudgeOptions jo;
  if (isolator != nullptr && IsPluginImpl(impl)) jo.runner = isolator;
  jo.typical = TypicalTierFor(impl, family, typical);
  return jo;
}

// An isolator when any of the kernels is a plugin's (made before any kernel runs).
std::unique_ptr<Isolator> MakeIsolator(const std::vector<const ImplInfo*>& impls, bool isolate,
                                       double timeout_seconds, std::ostream& out) {
  if (!isolate) return nullptr;
  std::string error;
  std::unique_ptr<Isolator> isolator = MakePluginIsolator(impls, timeout_seconds, &error);
  if (!error.empty()) {
    out << "ln_check: cannot run plugin kernels in a child process (" << error
        << "): they run in this one\n";
  }
  return isolator;
}

std::string CommandLine(const CheckOptions& o) {
  std::string s =
      o.program + " --budget " + BudgetName(o.budget) + " --seed " + std::to_string(o.seed);
  if (o.impls_glob != "*") s += " --impls '" + o.impls_glob + "'";
  if (o.families_glob != "*") s += " --families '" + o.families_glob + "'";
  for (const std::string& p : o.plugins) s += " --plugin '" + p + "'";
  return s;
}

// How the baselines of observed kernels are found and named (harness/baseline.h).
BaselineSetting BaselineSettingFor(const CheckOptions& opt) {
  BaselineSetting b;
  b.dir = opt.baselines_dir.empty() ? DefaultBaselinesDir() : opt.baselines_dir;
  b.case_ref_dir = opt.baselines_dir.empty() ? "impls/thirdparty/baselines" : opt.baselines_dir;
  b.budget = BudgetName(opt.budget);
  b.seed = opt.seed;
  b.families_glob = opt.families_glob;
  b.program = opt.program;
  b.found_by = CommandLine(opt) + " --write-baselines";
  return b;
}

// How many cases run at once: one per hardware thread.
int DefaultJobs() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// Progress of a long run, about every 10 s (a quick run says nothing).
std::function<void(double, std::int64_t, std::int64_t)> ProgressPrinter(std::ostream& out) {
  auto start = std::chrono::steady_clock::now();
  auto last = start;
  return [&out, start, last](double fraction, std::int64_t done, std::int64_t total) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (done == total || now - last < std::chrono::seconds(10)) return;
    last = now;
    out << "ln_check: " << Fmt("%.0f", 100 * fraction) << "% of the work, " << done << "/" << total
        << " cases, " << Fmt("%.0f", std::chrono::duration<double>(now - start).count()) << " s\n"
        << std::flush;
  };
}

// Where and how ln_check writes its case files (harness/write_cases.h): in
// cases_dir itself; a negative control's first catch only, to show its
// replay; observed kernels' new findings only, after the baseline comparison.
CaseWriteOptions CaseOptionsFor(const CheckOptions& opt, KernelRunner* plugin_runner) {
  CaseWriteOptions cw;
  cw.out_dir = opt.cases_dir;
  cw.subdir = "";
  cw.found_by = CommandLine(opt);
  cw.replay_program = opt.program;
  cw.seed = opt.seed;
  cw.plugin_runner = plugin_runner;
  cw.typical = opt.typical;
  cw.every_control_finding = false;
  cw.observed_findings = false;
  cw.worst_cases = false;
  return cw;
}

// A written case's path, as the replay command names it.
std::string CasePath(const CaseWriteOptions& cw, const std::string& rel) {
  return (std::filesystem::path(cw.out_dir) / rel).string();
}

// Writes the findings' cases and prints each with its replay command.
// Returns the files that could not be written.
std::vector<std::string> WriteFindingCases(const CaseWriteOptions& cw, bool write,
                                           SweepResult* sweep, std::ostream& out) {
  if (!write) return {};
  const std::vector<std::string> errors = WriteCaseFiles(cw, sweep);
  for (const std::string& e : errors) out << "ln_check: " << e << "\n";
  for (const KernelReport& k : sweep->kernels) {
    for (const FamilyFinding& f : k.findings) {
      if (f.case_file.empty()) continue;
      out << (k.info.status == ImplStatus::kNegativeControl ? "caught  " : "FINDING ")
          << k.info.name << " on " << sweep->plan[f.item].family << " (d=" << f.d << ")\n"
          << "  case   " << CasePath(cw, f.case_file) << "\n  replay " << f.replay << "\n  result "
          << f.case_result << "\n";
    }
  }
  return errors;
}

// ln_check's line of a kernel, from its sweep.
KernelSummary SummaryOf(const SweepResult& sweep, const KernelReport& k,
                        const CaseWriteOptions& cw) {
  KernelSummary s;
  s.name = k.info.name;
  s.dtype = k.info.x_dtype;
  s.status = k.info.status;
  s.cases = k.cases;
  s.verdict = k.verdict;
  for (Output o : kAllOutputs) {
    const OutputSummary& x = k.outputs[static_cast<int>(o)];
    if (!x.present) continue;
    if (x.max_ulp > s.max_ulp) {
      s.max_ulp = x.max_ulp;
      s.max_ulp_output = o;
    }
    if (x.max_bound_use > s.max_bound_use) {
      s.max_bound_use = x.max_bound_use;
      s.max_use_output = o;
    }
    s.unclaimed += x.unclaimed;
    s.out_of_range += x.out_of_range;
    s.beyond_typical += x.beyond_typical;
    s.undecided += x.undecided;
  }
  s.random_count = k.random_count;
  s.random_unclaimed = k.random_unclaimed;
  s.not_judged = k.not_judged;
  s.ok = MeetsExpectation(k);
  if (!k.findings.empty()) {
    const FamilyFinding& f = k.findings.front();
    s.first_failure = sweep.plan[f.item].family + ": " + f.summary;
  }
  for (const FamilyFinding& f : k.findings) {
    if (!f.case_file.empty()) s.case_files.push_back(CasePath(cw, f.case_file));
  }
  return s;
}

// An observed kernel's findings and magnitudes against its baseline (or
// recorded as it, with --write-baselines); a new finding gets a case file.
bool CompareObserved(const CheckOptions& opt, const CaseWriteOptions& cw, const KernelReport& k,
                     KernelSummary* s, std::ostream& out) {
  const BaselineSetting setting = BaselineSettingFor(opt);
  if (opt.write_baselines) return RecordBaseline(setting, k.info, k.observed, &s->baseline, out);
  const auto write_new = [&](const Finding& f, const ObservedCase& oc) {
    s->baseline_new.push_back({FindingText(f), ""});
    if (!opt.write_cases) return;
    std::string error, result;
    const std::string rel = WriteJudgedCase(cw, k.info, oc.c, oc.j, &error, &result);
    if (rel.empty()) {
      out << "  cannot write its case: " << error << "\n";
      return;
    }
    s->case_files.push_back(CasePath(cw, rel));
    s->baseline_new.back().second = CasePath(cw, rel);
    out << "  case   " << CasePath(cw, rel) << "\n  replay " << CaseReplayCommand(cw, k.info, rel)
        << "\n  result " << result << "\n";
  };
  return CompareWithBaseline(setting, k.info, k.observed, &s->baseline, out, write_new);
}

}  // namespace

CheckResult RunCheck(const CheckOptions& opt, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  CheckResult result;
  SweepOptions so;
  for (const ImplInfo& i : opt.impls.empty() ? AllImpls() : opt.impls) {
    if (GlobMatch(opt.impls_glob, i.name)) so.impls.push_back(i);
  }
  out << "ln_check: seed " << opt.seed << ", budget " << BudgetName(opt.budget) << ", "
      << so.impls.size() << " kernel(s) matching '" << opt.impls_glob << "'\n";
  if (so.impls.empty()) {
    out << "ln_check: no kernel matches --impls '" << opt.impls_glob << "'\n";
    result.exit_code = 2;
    return result;
  }
  // A selection that judges nothing must never read as a pass.
  so.plan = SelectPlan(opt.budget, opt.families_glob);
  if (so.plan.empty()) {
    out << "ln_check: no input family matches --families '" << opt.families_glob
        << "'; the families are:";
    for (const Family& f : AllFamilies()) out << ' ' << f.name;
    out << '\n';
    result.exit_code = 2;
    return result;
  }
  so.budget = opt.budget;
  so.seed = opt.seed;
  so.typical = opt.typical;
  so.jobs = opt.jobs > 0 ? opt.jobs : DefaultJobs();
  std::vector<const ImplInfo*> selected;
  for (const ImplInfo& i : so.impls) selected.push_back(&i);
  const std::unique_ptr<Isolator> isolator =
      MakeIsolator(selected, opt.isolate_plugins, opt.timeout_seconds, out);
  so.plugin_runner = isolator.get();
  so.progress = ProgressPrinter(out);
  result.sweep = RunSweep(so);
  const CaseWriteOptions cw = CaseOptionsFor(opt, isolator.get());
  result.write_errors = WriteFindingCases(cw, opt.write_cases, &result.sweep, out);
  int failed = 0;
  for (const KernelReport& k : result.sweep.kernels) {
    KernelSummary s = SummaryOf(result.sweep, k, cw);
    if (k.info.status == ImplStatus::kObserved) s.ok = CompareObserved(opt, cw, k, &s, out);
    if (!s.ok) ++failed;
    result.kernels.push_back(std::move(s));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.exit_code = failed == 0 ? 0 : 1;
  return result;
}

std::string WriteCheckJson(const CheckOptions& opt, const CheckResult& result,
                           const std::string& command,
                           const std::vector<std::string>& load_errors) {
  namespace fs = std::filesystem;
  const fs::path json_dir = fs::absolute(opt.output_json).parent_path();
  // Case paths relative to the file, as ln_report's are to its directory.
  SweepResult sweep = result.sweep;
  for (KernelReport& k : sweep.kernels) {
    for (FamilyFinding& f : k.findings) {
      if (f.case_file.empty()) continue;
      f.case_file =
          fs::proximate(fs::absolute(fs::path(opt.cases_dir) / f.case_file), json_dir).string();
    }
  }
  ReportInputs in;
  const auto relative = [&](const std::string& path) {
    return path.empty() ? path : fs::proximate(fs::absolute(path), json_dir).string();
  };
  in.load_errors = load_errors;
  in.write_errors = result.write_errors;
  // As the tool exits: 2 when a plugin did not load (ln_check's main).
  in.exit_status = load_errors.empty() ? result.exit_code : 2;
  for (std::size_t k = 0; k < result.kernels.size(); ++k) {
    const KernelSummary& s = result.kernels[k];
    if (s.status != ImplStatus::kObserved) continue;
    ReportInputs::Baseline b{s.baseline, s.ok, {}};
    for (const auto& [text, path] : s.baseline_new)
      b.new_findings.push_back({text, relative(path)});
    in.baselines[k] = std::move(b);
  }
  RunFacts facts;
  facts.tool = "ln_check";
  facts.command = command;
  facts.budget = opt.budget;
  facts.seed = opt.seed;
  facts.impls_glob = opt.impls_glob;
  facts.families_glob = opt.families_glob;
  facts.seconds = result.seconds;
  facts.jobs = opt.jobs > 0 ? opt.jobs : DefaultJobs();
  // As loaded: LNV_PLUGINS, then --plugin (impls/plugin/loader.h).
  facts.plugin_paths = PluginPathsFromEnv();
  facts.plugin_paths.insert(facts.plugin_paths.end(), opt.plugins.begin(), opt.plugins.end());
  std::vector<ImplInfo> impls;
  for (const KernelReport& k : sweep.kernels) impls.push_back(k.info);
  in.context = CollectContext(facts, impls);
  std::error_code ec;
  fs::create_directories(json_dir, ec);
  std::ofstream out(opt.output_json, std::ios::binary);
  out << ToJson(sweep, in).dump() << "\n";
  out.close();
  return out ? "" : "cannot write " + opt.output_json;
}

int ReplayCase(const std::string& path, const std::vector<ImplInfo>& impls, std::ostream& out,
               std::ostream& err, double timeout_seconds) {
  Case c;
  std::string error;
  if (!ReadCaseFile(path, &c, &error)) {
    err << "ln_check: " << error << "\n";
    return 2;
  }
  const ImplInfo* impl = nullptr;
  for (const ImplInfo& i : impls) {
    if (i.name == c.kernel) impl = &i;
  }
  if (impl == nullptr) {
    err << "ln_check: " << path << ": no registered kernel named '" << c.kernel << "'\n";
    return 2;
  }
  if (const std::string why = CheckCompatible(*impl, c); !why.empty()) {
    err << "ln_check: " << path << ": " << why << "\n";
    return 2;
  }
  const std::unique_ptr<Isolator> isolator = MakeIsolator({impl}, true, timeout_seconds, err);
  // The tier the run that wrote the case applied (a beyond_typical finding
  // replays as one); --typical=report runs write no case for it.
  JudgeOptions jo = OptionsFor(*impl, isolator.get(), c.provenance.family, TypicalTier::kFail);
  jo.keep_elements = true;
  const Judgement j = Judge(*impl, c, jo);
  out << "case    " << path << "\nkernel  " << impl->name << " (" << StatusName(impl->status)
      << ", bound model " << AlgorithmName(impl->bound_algorithm) << ")\n"
      << "shape   " << NormName(c.norm) << ", " << DTypeName(c.dtype) << "/"
      << DTypeName(c.param_dtype) << ", d=" << c.d << ", rows=" << c.rows
      << ", eps=" << FormatValue(c.eps) << "\n";
  if (!c.provenance.family.empty()) out << "family  " << c.provenance.family << "\n";
  if (!c.provenance.found_by.empty()) out << "found   " << c.provenance.found_by << "\n";
  if (!c.provenance.why.empty()) out << "why     " << c.provenance.why << "\n";
  constexpr std::int64_t kMaxPrinted = 4096;
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    const bool wide = o.format.precision > 24;
    const char* vf = wide ? "%.17g" : "%.9g";
    out << "\n"
        << OutputName(o.output) << ": " << o.count << " elements, max " << Fmt("%.4g", o.max_ulp)
        << " ulp, bound use " << Fmt("%.4g", o.max_bound_use) << ", verdict "
        << VerdictName(o.verdict);
    if (o.worst) out << ", worst element " << *o.worst;
    out << "\n  " << PadLeft("index", 7) << PadLeft("row", 6) << PadLeft("col", 6)
        << PadLeft("oracle", 26) << PadLeft("exact", 26) << PadLeft("kernel", 26)
        << PadLeft("err ulp", 12) << PadLeft("bound ulp", 12) << PadLeft("use", 11)
        << "  verdict\n";
    std::int64_t printed = 0;
    for (const ElementResult& e : o.elements) {
      if (printed++ == kMaxPrinted) {
        out << "  ... " << o.elements.size() - kMaxPrinted << " more\n";
        break;
      }
      const bool per_elem = o.output == Output::kY || o.output == Output::kDx;
      const std::int64_t row = per_elem ? e.index / c.d : (IsRowOutput(o.output) ? e.index : -1);
      const std::int64_t col = per_elem ? e.index % c.d : (IsRowOutput(o.output) ? -1 : e.index);
      const double ulp = FormatUlp(e.exact.hi + e.exact.lo, o.format);
      out << "  " << PadLeft(std::to_string(e.index), 7)
          << PadLeft(row >= 0 ? std::to_string(row) : "-", 6)
          << PadLeft(col >= 0 ? std::to_string(col) : "-", 6)
          << PadLeft(Fmt(vf, e.exact.rounded), 26)
          << PadLeft(Fmt("%.17g", e.exact.hi + e.exact.lo), 26) << PadLeft(Fmt(vf, e.kernel), 26)
          << PadLeft(Fmt("%.4g", e.ulps), 12) << PadLeft(Fmt("%.4g", e.bound / ulp), 12)
          << PadLeft(Fmt("%.4g", e.bound_use), 11) << "  " << VerdictName(e.verdict) << "\n";
    }
  }
  const bool failure = IsFailure(j.verdict);
  const bool expected = MeetsExpectation(impl->status, failure);
  out << "\nresult " << Summarize(j) << "\n"
      << (expected ? "as expected" : "NOT as expected") << " for a " << StatusName(impl->status)
      << " kernel\n";
  return expected ? 0 : 1;
}

}  // namespace lnv

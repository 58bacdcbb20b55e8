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
#include "harness/write_cases.h"
#include "impls/plugin/loader.h"

namespace lnv {
namespace {

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string Pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string PadLeft(std::string s, std::size_t w) {
  if (s.size() < w) s.insert(0, w - s.size(), ' ');
  return s;
}

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

// The largest fraction of an output's elements judged without a claim on the
// random-data families, and which output (*worst) has it.
double MaxUnclaimedFraction(const KernelSummary& k, Output* worst) {
  double max = 0.0;
  for (Output o : kAllOutputs) {
    const int i = static_cast<int>(o);
    if (k.random_count[i] == 0) continue;
    const double f = static_cast<double>(k.random_unclaimed[i]) / k.random_count[i];
    if (f > max) {
      max = f;
      *worst = o;
    }
  }
  return max;
}

void PrintTable(const std::vector<KernelSummary>& ks, std::ostream& out) {
  std::size_t wn = 6;
  for (const KernelSummary& k : ks) wn = std::max(wn, k.name.size());
  out << Pad("kernel", wn) << "  dtype  " << Pad("status", 16) << PadLeft("cases", 5)
      << PadLeft("max ULP", 11) << "  " << Pad("(of)", 7) << PadLeft("bound use", 10) << "  "
      << Pad("(of)", 7) << PadLeft("no claim", 8) << "  " << Pad("(of)", 7) << "verdict\n";
  for (const KernelSummary& k : ks) {
    Output worst = Output::kY;
    std::string verdict(VerdictName(k.verdict));
    if (k.status == ImplStatus::kNegativeControl)
      verdict += k.ok ? " (caught)" : " (NOT CAUGHT)";
    else if (k.status == ImplStatus::kObserved)
      verdict += " (baseline " + k.baseline + ")";
    else if (!k.not_judged.empty())
      verdict = "not_judged (FAILED)";
    else if (!k.ok)
      verdict += " (FAILED)";
    out << Pad(k.name, wn) << "  " << Pad(std::string(DTypeName(k.dtype)), 5) << "  "
        << Pad(std::string(StatusName(k.status)), 16) << PadLeft(std::to_string(k.cases), 5)
        << PadLeft(Fmt("%.4g", k.max_ulp), 11) << "  "
        << Pad(std::string(OutputName(k.max_ulp_output)), 7)
        << PadLeft(Fmt("%.4g", k.max_bound_use), 10) << "  "
        << Pad(std::string(OutputName(k.max_use_output)), 7)
        << PadLeft(Fmt("%.2g%%", 100 * MaxUnclaimedFraction(k, &worst)), 8) << "  "
        << Pad(std::string(OutputName(worst)), 7) << verdict << "\n";
  }
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
void WriteFindingCases(const CaseWriteOptions& cw, bool write, SweepResult* sweep,
                       std::ostream& out) {
  if (!write) return;
  for (const std::string& e : WriteCaseFiles(cw, sweep)) out << "ln_check: " << e << "\n";
  for (const KernelReport& k : sweep->kernels) {
    for (const FamilyFinding& f : k.findings) {
      if (f.case_file.empty()) continue;
      out << (k.info.status == ImplStatus::kNegativeControl ? "caught  " : "FINDING ")
          << k.info.name << " on " << sweep->plan[f.item].family << " (d=" << f.d << ")\n"
          << "  case   " << CasePath(cw, f.case_file) << "\n  replay " << f.replay << "\n  result "
          << f.case_result << "\n";
    }
  }
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
  const auto write_new = [&](const Finding&, const ObservedCase& oc) {
    if (!opt.write_cases) return;
    std::string error;
    const std::string rel = WriteJudgedCase(cw, k.info, oc.c, oc.j, &error);
    if (rel.empty()) {
      out << "  cannot write its case: " << error << "\n";
      return;
    }
    s->case_files.push_back(CasePath(cw, rel));
    out << "  case   " << CasePath(cw, rel) << "\n  replay " << CaseReplayCommand(cw, k.info, rel)
        << "\n  result " << Summarize(oc.j) << "\n";
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
  WriteFindingCases(cw, opt.write_cases, &result.sweep, out);
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
  in.load_errors = load_errors;
  for (std::size_t k = 0; k < result.kernels.size(); ++k) {
    if (result.kernels[k].status == ImplStatus::kObserved) {
      in.baselines[k] = {result.kernels[k].baseline, result.kernels[k].ok};
    }
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
  facts.plugin_paths = opt.plugins;
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

void PrintCheckReport(const CheckOptions& opt, const CheckResult& result, std::ostream& out) {
  out << "\n";
  PrintTable(result.kernels, out);
  const std::size_t total = result.kernels.size();
  const std::size_t failed = static_cast<std::size_t>(std::count_if(
      result.kernels.begin(), result.kernels.end(), [](const KernelSummary& s) { return !s.ok; }));
  out << "\n"
      << (failed == 0 ? "ok" : "FAILED") << ": " << total - failed << "/" << total
      << " kernels as expected (claims_bound within bound, negative controls "
      << "caught, observed matching their baselines); seed " << opt.seed << "; "
      << Fmt("%.1f", result.seconds) << " s\n";
  std::int64_t unclaimed = 0, out_of_range = 0, undecided = 0;
  for (const KernelSummary& s : result.kernels) {
    unclaimed += s.unclaimed;
    out_of_range += s.out_of_range;
    undecided += s.undecided;
  }
  if (unclaimed > 0 || out_of_range > 0 || undecided > 0) {
    out << "  (elements without a claim: " << unclaimed << " with bound +inf (e.g. k u >= 1), "
        << out_of_range << " outside the claimed range (sum x^2, backward weight, or variance "
        << "error >= sigma^2 + eps); " << undecided << " left undecided by the oracle; the "
        << "\"no claim\" column is the largest share of an output on the random-data families)\n";
  }
  for (const KernelSummary& s : result.kernels) {
    if (s.beyond_typical == 0 || s.status == ImplStatus::kNegativeControl) continue;
    out << "  " << s.name << ": " << s.beyond_typical << " element(s) beyond the typical bound "
        << "(statistical tier"
        << (opt.typical == TypicalTier::kFail && s.status == ImplStatus::kClaimsBound
                ? ")"
                : ", reported only)")
        << "\n";
  }
  for (const KernelSummary& s : result.kernels) {
    if (s.ok) continue;
    out << "  " << s.name << ": "
        << (s.status == ImplStatus::kNegativeControl ? "negative control NOT caught"
            : s.status == ImplStatus::kObserved      ? "baseline " + s.baseline
            : !s.not_judged.empty()                  ? "not judged: " + s.not_judged
                                                     : s.first_failure)
        << "\n";
  }
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

std::string CheckUsage() {
  return "usage: ln_check [options]\n"
         "       ln_check --replay FILE\n"
         "\n"
         "Runs every registered LayerNorm/RMSNorm kernel over the seeded input families,\n"
         "judges each output against the exact oracle and the kernel's derived error\n"
         "bound, prints a table (kernel, dtype, max ULP, max bound use, verdict) and\n"
         "writes a case file for each failure.\n"
         "\n"
         "  --impls GLOB       only kernels whose registry name matches (*, ?); default *\n"
         "  --families GLOB    only input families matching; default *\n"
         "  --budget B         quick (default, seconds) or full (longer: more d, rows, seeds)\n"
         "  --seed N           base seed of the families (default " +
         std::to_string(kDefaultSeed) +
         "); always printed\n"
         "  --cases-dir DIR    where failing cases are written (default lnv-cases/)\n"
         "  --no-cases         do not write case files\n"
         "  --jobs N           cases judged at once (default: one per hardware thread);\n"
         "                     the results do not depend on it\n"
         "  --replay FILE      judge the case in FILE again, element by element\n"
         "  --plugin PATH      also check the kernels of this plugin (a shared library\n"
         "                     exporting lnv_plugin_get, impls/plugin/lnv_plugin.h);\n"
         "                     repeatable, after those in LNV_PLUGINS (colon-separated)\n"
         "  --timeout S        seconds a plugin kernel call may take (default 60)\n"
         "  --typical T        the statistical tier on the random-data families: fail\n"
         "                     (default: an error beyond Higham & Mary's probabilistic\n"
         "                     bound is a finding, beyond_typical), report (counted and\n"
         "                     printed only), or off\n"
         "  --no-isolation     run plugin kernels in this process (for a debugger)\n"
         "  --baselines DIR    the observed kernels' baselines (default: the source\n"
         "                     tree's impls/thirdparty/baselines)\n"
         "  --write-baselines  record this run's findings of the observed kernels as\n"
         "                     their baselines (for this budget and seed), with the\n"
         "                     smallest case of each, instead of comparing\n"
         "  --output-json FILE also write the run as errors.json (reports/SCHEMA.md, as\n"
         "                     ln_report writes it; context.tool is \"ln_check\")\n"
         "  --list             print the kernels --impls selects (name, status, dtypes,\n"
         "                     algorithm, the bound each is held to, its claimed range)\n"
         "                     and run nothing; --format json for the same as JSON\n"
         "  --help             this text\n"
         "\n"
         "Plugin kernels run in a child process: one that crashes, hangs, returns\n"
         "non-zero or writes outside its buffers is a finding with its case.\n"
         "Observed (third-party) kernels are compared with their recorded findings:\n"
         "a new finding or a vanished one is a change.\n"
         "\n"
         "Exit status: 0 every claims_bound kernel within its bound, every\n"
         "negative_control caught and every observed kernel matching its baseline;\n"
         "1 otherwise (a finding); 2 bad usage, unreadable input, or a plugin that\n"
         "could not be loaded (the other kernels are still checked). A replay exits 0\n"
         "when its verdict is what the kernel's status expects.\n";
}

int ParseCheckArgs(const std::vector<std::string>& args, CheckOptions* o, bool* help,
                   std::string* replay, std::string* error) {
  bool format_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_value = false;
    if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto take = [&](std::string* dst) {
      if (!has_value) {
        if (i + 1 >= args.size()) {
          *error = a + " needs a value";
          return false;
        }
        value = args[++i];
      }
      if (value.empty()) {
        *error = a + " needs a non-empty value";
        return false;
      }
      *dst = value;
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      *help = true;
    } else if (a == "--impls") {
      if (!take(&o->impls_glob)) return 2;
    } else if (a == "--families") {
      if (!take(&o->families_glob)) return 2;
    } else if (a == "--budget") {
      if (!take(&v)) return 2;
      if (v == "quick")
        o->budget = Budget::kQuick;
      else if (v == "full")
        o->budget = Budget::kFull;
      else {
        *error = "--budget: want quick or full, got '" + v + "'";
        return 2;
      }
    } else if (a == "--seed") {
      if (!take(&v)) return 2;
      std::uint64_t s = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
      if (ec != std::errc() || p != v.data() + v.size()) {
        *error = "--seed: '" + v + "' is not an unsigned 64-bit integer";
        return 2;
      }
      o->seed = s;
    } else if (a == "--cases-dir") {
      if (!take(&o->cases_dir)) return 2;
    } else if (a == "--no-cases") {
      o->write_cases = false;
    } else if (a == "--replay") {
      if (!take(replay)) return 2;
    } else if (a == "--plugin") {
      if (!take(&v)) return 2;
      o->plugins.push_back(v);
    } else if (a == "--timeout") {
      if (!take(&v)) return 2;
      double t = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), t);
      if (ec != std::errc() || p != v.data() + v.size() || !(t > 0) || !std::isfinite(t)) {
        *error = "--timeout: '" + v + "' is not a positive number of seconds";
        return 2;
      }
      o->timeout_seconds = t;
    } else if (a == "--jobs") {
      if (!take(&v)) return 2;
      int n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size() || n < 1 || n > 1024) {
        *error = "--jobs: '" + v + "' is not a number of jobs from 1 to 1024";
        return 2;
      }
      o->jobs = n;
    } else if (a == "--output-json") {
      if (!take(&o->output_json)) return 2;
    } else if (a == "--no-isolation") {
      o->isolate_plugins = false;
    } else if (a == "--baselines") {
      if (!take(&o->baselines_dir)) return 2;
    } else if (a == "--write-baselines") {
      o->write_baselines = true;
    } else if (a == "--list") {
      o->list = true;
    } else if (a == "--format") {
      if (!take(&v)) return 2;
      if (v != "text" && v != "json") {
        *error = "--format: want text or json, got '" + v + "'";
        return 2;
      }
      o->list_json = v == "json";
      format_given = true;
    } else if (a == "--typical") {
      if (!take(&v)) return 2;
      if (!ParseTypicalTier(v, &o->typical)) {
        *error = "--typical: want fail, report or off, got '" + v + "'";
        return 2;
      }
    } else {
      *error = "unknown argument '" + args[i] + "'";
      return 2;
    }
    if (has_value && (a == "--help" || a == "-h" || a == "--no-cases" || a == "--no-isolation" ||
                      a == "--write-baselines" || a == "--list")) {
      *error = a + " takes no value";
      return 2;
    }
  }
  if (format_given && !o->list) {
    *error = "--format applies to --list only";
    return 2;
  }
  if (!o->output_json.empty() && (o->list || !replay->empty())) {
    *error = "--output-json applies to a run, not to --list or --replay";
    return 2;
  }
  if (o->list && !replay->empty()) {
    *error = "--list and --replay do not go together";
    return 2;
  }
  return 0;
}

}  // namespace lnv

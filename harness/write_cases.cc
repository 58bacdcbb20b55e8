#include "harness/write_cases.h"

#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

#include "harness/baseline.h"
#include "harness/isolate.h"
#include "harness/judge.h"
#include "impls/plugin/loader.h"

namespace lnv {
namespace {

bool IsCallFailure(Verdict v) {
  return v == Verdict::kCrashed || v == Verdict::kBufferOverrun || v == Verdict::kKernelError;
}

// What a case reproduces: the single worst row when it alone gives the same
// verdict (a failure) or the same bound use on the output; for a plugin
// call that failed (no worst element), fewer rows that fail the same way
// (not for a hang: every try would cost the timeout); else the whole case.
// A plugin kernel is re-run where the tool runs it: in its child process, or
// in this one (no runner: --no-isolation). *summary: the
// judgement of a smaller case that is returned (untouched otherwise).
Case Shrink(const CaseWriteOptions& opt, const ImplInfo& impl, const Case& c, Output o,
            std::int64_t row, Verdict verdict, double bound_use, std::int64_t* kept_row,
            std::string* summary) {
  *kept_row = -1;
  const bool plugin = IsPluginImpl(impl);
  if (c.rows <= 1) return c;
  JudgeOptions jo;
  jo.runner = plugin ? opt.plugin_runner : nullptr;
  jo.typical = TypicalTierFor(impl, c.provenance.family, opt.typical);
  if (plugin && IsCallFailure(verdict)) {
    const auto fails = [&](const Case& cand) { return Judge(impl, cand, jo).verdict == verdict; };
    Case fewer = ShrinkCase(c, fails, {}, 64);
    if (fewer.rows < c.rows) *summary = Summarize(Judge(impl, fewer, jo));
    return fewer;
  }
  if (row < 0 || row >= c.rows || !IsRowOutput(o)) return c;
  Case one = SelectRows(c, {row});
  const Judgement j = Judge(impl, one, jo);
  const OutputResult& r = j[o];
  const bool same =
      r.present && (IsFailure(verdict) ? IsFailure(j.verdict) : r.max_bound_use == bound_use);
  if (!same) return c;
  *kept_row = row;
  *summary = Summarize(j);
  return one;
}

// What a written case says it reproduces.
struct CaseText {
  std::string why;      // appended to the family's why
  std::string summary;  // the result
};

struct Writer {
  const CaseWriteOptions& opt;
  std::map<std::pair<std::string, std::string>, std::string> written;
  std::vector<std::string> errors;

  // Returns the path relative to out_dir, or "" (too large, or not
  // written); *result: the written case's result.
  std::string Write(const ImplInfo& impl, const Case& full, Output o, std::int64_t row,
                    Verdict verdict, double bound_use, const CaseText& text,
                    std::int64_t max_values, std::string* result = nullptr) {
    std::int64_t kept_row = -1;
    std::string summary = text.summary;  // the whole case's, unless shrunk
    Case c = Shrink(opt, impl, full, o, row, verdict, bound_use, &kept_row, &summary);
    if (static_cast<std::int64_t>(c.x.size()) > max_values) return "";
    // Named by the planned case (two shapes of a family may differ in rows
    // only) and the row kept.
    std::string name = FileSafeName(impl.name) + "__" + full.provenance.family + "_d" +
                       std::to_string(full.d) + "_n" + std::to_string(full.rows) + "_s" +
                       std::to_string(full.provenance.seed.value_or(0));
    if (kept_row >= 0) name += "_r" + std::to_string(kept_row);
    const auto key = std::make_pair(impl.name, name);
    if (auto it = written.find(key); it != written.end()) return it->second;
    const std::filesystem::path dir = std::filesystem::path(opt.out_dir) / opt.subdir;
    const std::string rel = (std::filesystem::path(opt.subdir) / (name + ".case")).string();
    c.kernel = impl.name;
    c.provenance.found_by = opt.found_by;
    c.provenance.why += "; " + text.why;
    std::string status = "status " + std::string(StatusName(impl.status)) +
                         (impl.status == ImplStatus::kNegativeControl ? ": must be caught"
                          : impl.status == ImplStatus::kObserved ? ": compared with its baseline"
                                                                 : ": must meet its bound");
    if (kept_row >= 0) {
      status +=
          "; row " + std::to_string(kept_row) + " of a " + std::to_string(full.rows) + "-row case";
    } else if (c.rows < full.rows) {
      status += "; " + std::to_string(c.rows) + " of a " + std::to_string(full.rows) + "-row case";
    }
    c.provenance.notes.push_back(status);
    c.provenance.notes.push_back("result " + summary);
    if (result != nullptr) *result = summary;
    const std::string error =
        WriteReplayableCase((dir / (name + ".case")).string(), c, &impl, "", opt.replay_program);
    if (!error.empty()) {
      errors.push_back("cannot write " + rel + ": " + error);
      return "";
    }
    written[key] = rel;
    return rel;
  }
};

Case PlannedCaseOf(const ImplInfo& impl, const PlannedRun& run, std::uint64_t seed) {
  Case c = PlannedCase(run, FamilyParamsFor(impl), seed);
  c.kernel = impl.name;
  return c;
}

bool WritesFindings(const CaseWriteOptions& opt, const ImplInfo& impl) {
  return impl.status != ImplStatus::kObserved || opt.observed_findings;
}

void WriteFindings(const CaseWriteOptions& opt, const SweepResult& r, KernelReport* k, Writer* w) {
  if (!WritesFindings(opt, k->info)) return;
  for (FamilyFinding& f : k->findings) {
    const Case full = PlannedCaseOf(k->info, r.plan[f.item], opt.seed);
    const double use = f.worst ? f.worst->bound_use : 0.0;
    const CaseText text{
        std::string(VerdictName(f.verdict)) + " on " + std::string(OutputName(f.output)),
        f.summary};
    f.case_file = w->Write(k->info, full, f.output, f.worst_row, f.verdict, use, text,
                           std::numeric_limits<std::int64_t>::max(), &f.case_result);
    if (!f.case_file.empty()) f.replay = CaseReplayCommand(opt, k->info, f.case_file);
    if (k->info.status == ImplStatus::kNegativeControl && !opt.every_control_finding) break;
  }
}

void WriteWorstCases(const SweepResult& r, std::uint64_t seed, KernelReport* k, Writer* w) {
  for (int o = 0; o < 6; ++o) {
    OutputSummary& s = k->outputs[o];
    if (!s.present || !s.worst || s.worst_item < 0) continue;
    const std::string out(OutputName(static_cast<Output>(o)));
    char summary[160];
    std::snprintf(summary, sizeof summary,
                  "worst %s over the report: %.4g ulp, bound use %.4g (%s)", out.c_str(),
                  s.worst->ulps, s.worst->bound_use,
                  std::string(VerdictName(s.worst->verdict)).c_str());
    const Case full = PlannedCaseOf(k->info, r.plan[s.worst_item], seed);
    s.worst_case_file = w->Write(
        k->info, full, static_cast<Output>(o), s.worst_row, s.worst->verdict, s.worst->bound_use,
        {"worst " + out + " of this kernel in the report", summary}, kMaxWorstCaseValues);
  }
}

}  // namespace

std::string WriteReplayableCase(const std::string& path, Case c, const ImplInfo* impl,
                                const std::string& replay, const std::string& program) {
  if (!replay.empty()) {
    c.provenance.replay = replay;
  } else if (impl != nullptr) {
    c.provenance.replay = ReplayCommand(*impl, path, program);
  } else {
    c.provenance.replay = program + " --replay " + ShellQuote(path);
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::string error;
  if (WriteCaseFile(path, c, &error)) return "";
  return error.empty() ? "cannot write " + path : error;
}

std::string CaseReplayCommand(const CaseWriteOptions& opt, const ImplInfo& impl,
                              const std::string& relative_case_path) {
  return ReplayCommand(impl, (std::filesystem::path(opt.out_dir) / relative_case_path).string(),
                       opt.replay_program);
}

std::vector<std::string> WriteCaseFiles(const CaseWriteOptions& opt, SweepResult* result) {
  Writer w{opt, {}, {}};
  for (KernelReport& k : result->kernels) {
    WriteFindings(opt, *result, &k, &w);
    if (opt.worst_cases) WriteWorstCases(*result, opt.seed, &k, &w);
  }
  return w.errors;
}

std::string WriteJudgedCase(const CaseWriteOptions& opt, const ImplInfo& impl, const Case& c,
                            const Judgement& j, std::string* error, std::string* result) {
  Writer w{opt, {}, {}};
  const Output o = DecidingOutput(j);
  const OutputResult& r = j[o];
  const std::int64_t row = r.worst ? RowOfIndex(o, *r.worst, c.d) : -1;
  const CaseText text{std::string(VerdictName(j.verdict)) + " on " + std::string(OutputName(o)),
                      Summarize(j)};
  const std::string rel = w.Write(impl, c, o, row, j.verdict, r.max_bound_use, text,
                                  std::numeric_limits<std::int64_t>::max(), result);
  if (rel.empty() && !w.errors.empty()) *error = w.errors.front();
  return rel;
}

}  // namespace lnv

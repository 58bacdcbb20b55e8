#include "reports/cases.h"

#include <filesystem>
#include <limits>
#include <map>
#include <tuple>

#include "harness/isolate.h"
#include "harness/judge.h"
#include "impls/plugin/loader.h"

namespace lnv::report {
namespace {

// What the case reproduces: the shrunk single row when it alone gives the
// same verdict and the same bound use on the output, else the whole case.
Case Shrink(const ImplInfo& impl, const Case& c, Output o, std::int64_t row, Verdict verdict,
            double bound_use, KernelRunner* plugin_runner, std::int64_t* kept_row) {
  *kept_row = -1;
  // A plugin kernel is re-run only in its child process.
  const bool plugin = IsPluginImpl(impl);
  if (c.rows <= 1 || row < 0 || row >= c.rows || !IsRowOutput(o) ||
      (plugin && plugin_runner == nullptr)) {
    return c;
  }
  Case one = SelectRows(c, {row});
  JudgeOptions jo;
  jo.runner = plugin ? plugin_runner : nullptr;
  const Judgement j = Judge(impl, one, jo);
  const OutputResult& r = j[o];
  const bool same =
      r.present && (IsFailure(verdict) ? IsFailure(j.verdict) : r.max_bound_use == bound_use);
  if (!same) return c;
  *kept_row = row;
  return one;
}

struct Writer {
  const CaseWriteOptions& opt;
  std::map<std::tuple<std::string, std::int32_t, std::int64_t>, std::string> written;
  std::vector<std::string> errors;

  // Returns the path relative to out_dir, or "" on failure.
  std::string Write(const ImplInfo& impl, const PlannedRun& item, std::int32_t item_index, Output o,
                    std::int64_t row, Verdict verdict, double bound_use, const std::string& why,
                    const std::string& summary, std::int64_t max_values) {
    Case full = PlannedCase(item, FamilyParamsFor(impl), opt.seed);
    full.kernel = impl.name;
    std::int64_t kept_row = -1;
    Case c = Shrink(impl, full, o, row, verdict, bound_use, opt.plugin_runner, &kept_row);
    if (static_cast<std::int64_t>(c.x.size()) > max_values) return "";
    const auto key = std::make_tuple(impl.name, item_index, kept_row);
    if (auto it = written.find(key); it != written.end()) return it->second;
    std::string name = FileSafeName(impl.name) + "__" + item.family + "_d" +
                       std::to_string(full.d) + "_s" +
                       std::to_string(full.provenance.seed.value_or(0));
    if (kept_row >= 0) name += "_r" + std::to_string(kept_row);
    const std::string rel = "cases/" + name + ".case";
    c.kernel = impl.name;
    c.provenance.found_by = opt.found_by;
    c.provenance.why += "; " + why;
    c.provenance.replay = ReplayCommand(opt, impl, rel);
    c.provenance.notes.push_back("status " + std::string(StatusName(impl.status)) +
                                 (kept_row >= 0 ? "; row " + std::to_string(kept_row) + " of a " +
                                                      std::to_string(full.rows) + "-row case"
                                                : ""));
    c.provenance.notes.push_back("result " + summary);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(opt.out_dir) / "cases", ec);
    std::string error;
    if (!WriteCaseFile((std::filesystem::path(opt.out_dir) / rel).string(), c, &error)) {
      errors.push_back("cannot write " + rel + ": " + error);
      return "";
    }
    written[key] = rel;
    return rel;
  }
};

}  // namespace

std::string ReplayCommand(const CaseWriteOptions& opt, const ImplInfo& impl,
                          const std::string& relative_case_path) {
  return lnv::ReplayCommand(
      impl, (std::filesystem::path(opt.out_dir) / relative_case_path).string(), opt.replay_program);
}

std::vector<std::string> WriteCaseFiles(const CaseWriteOptions& opt, SweepResult* result) {
  Writer w{opt, {}, {}};
  for (KernelReport& k : result->kernels) {
    for (Finding& f : k.findings) {
      const PlannedRun& item = result->plan[f.item];
      const double use = f.worst ? f.worst->bound_use : 0.0;
      f.case_file =
          w.Write(k.info, item, f.item, f.output, f.worst_row, f.verdict, use,
                  std::string(VerdictName(f.verdict)) + " on " + std::string(OutputName(f.output)),
                  f.summary, std::numeric_limits<std::int64_t>::max());
      if (!f.case_file.empty()) f.replay = ReplayCommand(opt, k.info, f.case_file);
    }
    for (int o = 0; o < 6; ++o) {
      OutputSummary& s = k.outputs[o];
      if (!s.present || !s.worst || s.worst_item < 0) continue;
      const PlannedRun& item = result->plan[s.worst_item];
      char summary[160];
      std::snprintf(summary, sizeof summary,
                    "worst %s over the report: %.4g ulp, bound use %.4g (%s)",
                    std::string(OutputName(static_cast<Output>(o))).c_str(), s.worst->ulps,
                    s.worst->bound_use, std::string(VerdictName(s.worst->verdict)).c_str());
      s.worst_case_file = w.Write(k.info, item, s.worst_item, static_cast<Output>(o), s.worst_row,
                                  s.worst->verdict, s.worst->bound_use,
                                  "worst " + std::string(OutputName(static_cast<Output>(o))) +
                                      " of this kernel in the report",
                                  summary, kMaxWorstCaseValues);
    }
  }
  return w.errors;
}

}  // namespace lnv::report

#include "harness/errors_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "harness/case_file.h"

namespace lnv {
namespace {

using nlohmann::json;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

json RolesJson(unsigned roles) {
  json r = json::array();
  if (roles & kRoleKappa) r.push_back("kappa");
  if (roles & kRoleMagnitude) r.push_back("magnitude");
  if (roles & kRoleDSweep) r.push_back("d_sweep");
  return r;
}

std::string PointKindName(PointKind k) {
  switch (k) {
    case PointKind::kJudged:
      return "judged";
    case PointKind::kOutOfRange:
      return "out_of_range";
    case PointKind::kNonFinite:
      return "non_finite";
  }
  return "?";
}

json ElementJson(const ElementResult& e, std::int32_t item, const std::vector<PlannedRun>& plan,
                 std::int64_t row) {
  const double exact = e.exact.hi + e.exact.lo;
  return {
      {"case", item},
      {"family", item >= 0 ? plan[item].family : ""},
      {"row", row >= 0 ? json(row) : json(nullptr)},
      {"index", e.index},
      {"verdict", std::string(VerdictName(e.verdict))},
      {"kernel", Num(e.kernel)},
      {"kernel_hex", Hex(e.kernel)},
      {"exact", Num(exact)},
      {"exact_hex", Hex(e.exact.hi)},
      {"exact_lo_hex", Hex(e.exact.lo)},
      {"rounded_hex", Hex(e.exact.rounded)},
      {"error", Num(e.error)},
      {"error_hex", Hex(e.error)},
      {"bound", Num(e.bound)},
      {"bound_hex", Hex(e.bound)},
      {"ulps", Num(e.ulps)},
      {"bound_use", Num(e.bound_use)},
      {"bound_use_hex", Hex(e.bound_use)},
  };
}

json HistogramJson(const UlpHistogram& h) {
  json bins = json::array();
  for (const auto& [b, n] : h.bins) bins.push_back({b, n});
  return {{"bins_per_octave", UlpHistogram::kBinsPerOctave},
          {"zeros", h.zeros},
          {"nonfinite", h.nonfinite},
          {"bins", bins}};
}

json PointsJson(const std::vector<RowPoint>& pts) {
  json rows = json::array();
  for (const RowPoint& p : pts) {
    rows.push_back({Num(p.kappa), Num(p.log2_mag), Num(p.err), Num(p.bound), Num(p.pbound),
                    PointKindName(p.kind), p.failed, p.item, p.row});
  }
  return {
      {"columns", {"kappa", "log2_mag", "err", "bound", "pbound", "kind", "failed", "case", "row"}},
      {"rows", rows}};
}

json ValidRangeJson(const KernelReport& k, const std::vector<PlannedRun>& plan) {
  double mag_lo = kInf, mag_hi = -kInf, oor_from = kInf, fail_lo = kInf, fail_hi = -kInf;
  double kappa_fail = kInf;
  std::vector<double> kappa_pass;
  for (Output o : {Output::kY, Output::kDx}) {
    for (const RowPoint& p : k.outputs[static_cast<int>(o)].points) {
      const bool kappa_case = plan[p.item].roles & kRoleKappa;
      if (p.kind == PointKind::kOutOfRange) {
        oor_from = std::min(oor_from, p.log2_mag);
        continue;
      }
      if (p.failed) {
        fail_lo = std::min(fail_lo, p.log2_mag);
        fail_hi = std::max(fail_hi, p.log2_mag);
        if (kappa_case && std::isfinite(p.kappa)) kappa_fail = std::min(kappa_fail, p.kappa);
      } else {
        mag_lo = std::min(mag_lo, p.log2_mag);
        mag_hi = std::max(mag_hi, p.log2_mag);
        if (kappa_case && std::isfinite(p.kappa)) kappa_pass.push_back(p.kappa);
      }
    }
  }
  // The kappa up to which every charted row met its bound.
  double kappa_ok = -kInf;
  for (double kp : kappa_pass) {
    if (kp < kappa_fail) kappa_ok = std::max(kappa_ok, kp);
  }
  auto opt = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {
      {"log2_mag_pass", mag_lo <= mag_hi ? json({mag_lo, mag_hi}) : json(nullptr)},
      {"log2_mag_fail", fail_lo <= fail_hi ? json({fail_lo, fail_hi}) : json(nullptr)},
      {"log2_mag_out_of_range_from", opt(oor_from)},
      {"kappa_pass_max", opt(kappa_ok)},
      {"kappa_fail_min", opt(kappa_fail)},
  };
}

std::string ExpectationText(const std::string& status) {
  if (status == "negative_control") return "must be caught: some case must break its bound";
  if (status == "observed")
    return "third-party, judged as it is: compared with its recorded baseline";
  if (status == "plugin") return "must meet the generic bound of its accumulation dtype";
  return "must meet its bound on every case";
}

json OutputJson(const KernelReport& k, Output o, const std::vector<PlannedRun>& plan) {
  const OutputSummary& s = k.outputs[static_cast<int>(o)];
  json j = {
      {"verdict", std::string(VerdictName(s.verdict))},
      {"max_ulp", Num(s.max_ulp)},
      {"max_ulp_hex", Hex(s.max_ulp)},
      {"p99_ulp", Num(s.hist.Quantile(0.99))},
      {"max_bound_use", Num(s.max_bound_use)},
      {"max_bound_use_hex", Hex(s.max_bound_use)},
      {"elements", s.count},
      {"unclaimed", s.unclaimed},
      {"out_of_range", s.out_of_range},
      {"undecided", s.undecided},
      {"random_data_elements", k.random_count[static_cast<int>(o)]},
      {"random_data_unclaimed", k.random_unclaimed[static_cast<int>(o)]},
      {"worst", s.worst ? ElementJson(*s.worst, s.worst_item, plan, s.worst_row) : json(nullptr)},
      {"worst_case_file", s.worst_case_file.empty() ? json(nullptr) : json(s.worst_case_file)},
      {"histogram", HistogramJson(s.hist)},
  };
  if (o == Output::kY || o == Output::kDx) j["points"] = PointsJson(s.points);
  return j;
}

}  // namespace

json Num(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

double ReadNum(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    double v = 0;
    if (ParseValue(j.get<std::string>(), &v)) return v;
  }
  return kNan;
}

std::string Hex(double v) { return FormatValue(v); }

std::string StatusWord(const ImplInfo& impl) {
  if (impl.name.rfind("plugin:", 0) == 0) return "plugin";
  return std::string(StatusName(impl.status));
}

json ToJson(const SweepResult& r, const ReportInputs& in) {
  json plan = json::array();
  const std::uint64_t seed = in.context.value("seed", std::uint64_t{0});
  for (std::size_t i = 0; i < r.plan.size(); ++i) {
    const PlannedRun& p = r.plan[i];
    plan.push_back({{"index", i},
                    {"family", p.family},
                    {"d", p.d},
                    {"rows", p.rows},
                    {"seed", seed + p.seed_offset},
                    {"large_d", p.large_d},
                    {"many_rows", p.many_rows},
                    {"case_d", i < r.shapes.size() ? r.shapes[i].first : 0},
                    {"case_rows", i < r.shapes.size() ? r.shapes[i].second : 0},
                    {"with_dy", p.with_dy},
                    {"roles", RolesJson(p.roles)}});
  }
  json impls = json::array(), findings = json::array();
  int as_expected = 0;
  for (std::size_t index = 0; index < r.kernels.size(); ++index) {
    const KernelReport& k = r.kernels[index];
    const ImplInfo& i = k.info;
    const std::string status = StatusWord(i);
    const auto baseline = in.baselines.find(index);
    const bool expected =
        baseline != in.baselines.end() ? baseline->second.ok : MeetsExpectation(k);
    json new_findings = json::array();
    std::map<std::string, std::string> new_case_by_family;  // a family with a new finding
    if (baseline != in.baselines.end()) {
      for (const auto& [text, case_file] : baseline->second.new_findings) {
        new_findings.push_back(
            {{"finding", text},
             {"case_file", case_file.empty() ? json(nullptr) : json(case_file)}});
        const std::string family = text.substr(0, text.find(' '));
        std::string& c = new_case_by_family[family];
        if (c.empty()) c = case_file;
      }
    }
    as_expected += expected;
    json outputs = json::object();
    for (Output o : kAllOutputs) {
      if (k.outputs[static_cast<int>(o)].present) {
        outputs[std::string(OutputName(o))] = OutputJson(k, o, r.plan);
      }
    }
    json by_d = json::array();
    for (const auto& [d, uses] : k.use_by_d) {
      json row = {d};
      for (double u : uses) row.push_back(std::isnan(u) ? json(nullptr) : Num(u));
      by_d.push_back(row);
    }
    impls.push_back({
        {"name", i.name},
        {"norm", std::string(NormName(i.norm))},
        {"x_dtype", std::string(DTypeName(i.x_dtype))},
        {"param_dtype", std::string(DTypeName(i.param_dtype))},
        {"acc_dtype", std::string(DTypeName(i.acc_dtype))},
        {"algorithm", std::string(AlgorithmName(i.algorithm))},
        {"bound_algorithm", std::string(AlgorithmName(i.bound_algorithm))},
        {"reduction", std::string(ReductionName(i.reduction))},
        {"chunk", i.chunk},
        {"bound", DescribeBound(i)},
        {"status", status},
        {"source", i.source},
        {"claimed_max_row_sumsq", Num(i.max_row_sumsq)},
        {"claimed_max_row_sumsq_hex", Hex(i.max_row_sumsq)},
        {"claimed_max_backward_weight", Num(i.max_backward_weight)},
        {"claimed_max_backward_weight_hex", Hex(i.max_backward_weight)},
        {"verdict", KernelVerdictWord(k)},
        {"worst_verdict", std::string(VerdictName(k.verdict))},
        {"expected", expected},
        {"expectation", ExpectationText(status)},
        {"baseline",
         baseline != in.baselines.end() ? json(baseline->second.status) : json(nullptr)},
        {"baseline_new", baseline != in.baselines.end() ? new_findings : json(nullptr)},
        {"cases", k.cases},
        {"kernel_errors", k.kernel_errors},
        {"first_error", k.first_error.empty() ? json(nullptr) : json(k.first_error)},
        {"findings", k.findings.size()},
        {"not_judged", k.not_judged.empty() ? json(nullptr) : json(k.not_judged)},
        {"valid_range", ValidRangeJson(k, r.plan)},
        {"outputs", outputs},
        {"use_by_d",
         {{"columns", {"d", "y", "mean", "rstd", "dx", "dgamma", "dbeta"}}, {"rows", by_d}}},
    });
    for (const FamilyFinding& f : k.findings) {
      const PlannedRun& p = r.plan[f.item];
      std::string what = "claim broken";
      if (status == "negative_control") what = "negative control caught";
      if (status == "observed") what = "third-party finding (observed)";
      // An observed kernel's finding is expected unless its family holds a
      // finding that its baseline does not record.
      const auto fresh = new_case_by_family.find(p.family);
      const bool recorded = fresh == new_case_by_family.end();
      std::string case_file = f.case_file;
      if (case_file.empty() && !recorded) case_file = fresh->second;
      findings.push_back({
          {"kind", std::string(VerdictName(f.verdict))},
          {"what", what},
          {"kernel", i.name},
          {"status", status},
          {"expected", status == "negative_control" || (status == "observed" && recorded)},
          {"output", std::string(OutputName(f.output))},
          {"case", f.item},
          {"family", p.family},
          {"d", f.d},
          {"rows", f.rows},
          {"row", f.worst_row >= 0 ? json(f.worst_row) : json(nullptr)},
          {"kappa", Num(f.kappa)},
          {"log2_mag", Num(f.log2_mag)},
          {"bound", DescribeBound(i)},
          {"summary", f.summary},
          {"worst", f.worst ? ElementJson(*f.worst, f.item, r.plan, f.worst_row) : json(nullptr)},
          {"case_file", case_file.empty() ? json(nullptr) : json(case_file)},
          {"replay", f.replay.empty() ? json(nullptr) : json(f.replay)},
      });
    }
  }
  json j = {
      {"schema_version", kSchemaVersion},
      {"context", in.context},
      {"plan", plan},
      {"impls", impls},
      {"findings", findings},
      {"load_errors", in.load_errors},
      {"write_errors", in.write_errors},
  };
  j["summary"] = {{"kernels", r.kernels.size()},
                  {"as_expected", as_expected},
                  {"findings", findings.size()},
                  {"judgements", r.cases_judged},
                  {"exit_status", 0}};
  j["summary"]["exit_status"] = in.exit_status ? *in.exit_status : ExitStatusOf(j);
  return j;
}

std::string CheckReport(const json& j) {
  if (!j.is_object()) return "not a JSON object";
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer()) {
    return "no schema_version: not an ln_report errors.json";
  }
  if (const int v = j["schema_version"].get<int>(); v != kSchemaVersion) {
    return "schema_version " + std::to_string(v) + ", this ln_report reads version " +
           std::to_string(kSchemaVersion);
  }
  for (const char* key : {"context", "impls", "findings", "plan"}) {
    if (!j.contains(key)) return std::string("missing \"") + key + "\"";
  }
  if (!j["impls"].is_array() || !j["findings"].is_array() || !j["plan"].is_array()) {
    return "\"impls\", \"findings\" and \"plan\" must be arrays";
  }
  for (const json& i : j["impls"]) {
    for (const char* key : {"name", "status", "verdict", "expected", "outputs"}) {
      if (!i.contains(key)) return std::string("an impl without \"") + key + "\"";
    }
  }
  return "";
}

std::string LoadReport(const std::string& path, json* out) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path;
  try {
    *out = json::parse(in);
  } catch (const json::parse_error& e) {
    return path + ": not JSON (" + std::string(e.what()) + ")";
  }
  if (const std::string why = CheckReport(*out); !why.empty()) return path + ": " + why;
  return "";
}

int ExitStatusOf(const json& report) {
  if (report.contains("load_errors") && !report["load_errors"].empty()) return 1;
  for (const json& i : report["impls"]) {
    if (!i.value("expected", false)) return 1;
  }
  return 0;
}

}  // namespace lnv

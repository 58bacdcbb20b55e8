#include "reports/compare.h"

#include <cmath>
#include <map>

#include "harness/errors_json.h"
#include "reports/svg_chart.h"

namespace lnv::report {
namespace {

using nlohmann::json;

// How good a kernel's verdict is for its status: 0 as expected, 1 not.
int Badness(const json& impl) { return impl.value("expected", false) ? 0 : 1; }

double Exact(const json& o, const char* key) {
  const std::string hex_key = std::string(key) + "_hex";
  if (o.contains(hex_key)) return ReadNum(o[hex_key]);
  return o.contains(key) ? ReadNum(o[key]) : std::nan("");
}

}  // namespace

Comparison CompareReports(const json& old_report, const json& new_report) {
  Comparison c;
  const json& oc = old_report["context"];
  const json& nc = new_report["context"];
  c.old_commit = oc.value("git_commit", "unknown");
  c.old_date = oc.value("date", "");
  c.old_budget = oc.value("budget", "");
  c.same_inputs = oc.value("budget", "") == nc.value("budget", "") &&
                  oc.value("seed", json()).dump() == nc.value("seed", json()).dump();
  std::map<std::string, const json*> old_by_name;
  for (const json& i : old_report["impls"]) old_by_name[i.value("name", "")] = &i;
  std::map<std::string, bool> seen;
  for (const json& now : new_report["impls"]) {
    const std::string name = now.value("name", "");
    seen[name] = true;
    auto it = old_by_name.find(name);
    if (it == old_by_name.end()) {
      c.changes.push_back({name, "", "kernel", "absent", "added", 0});
      continue;
    }
    const json& old = *it->second;
    const std::string ov = old.value("verdict", ""), nv = now.value("verdict", "");
    if (ov != nv || Badness(old) != Badness(now)) {
      const int dir = Badness(now) > Badness(old) ? 1 : Badness(now) < Badness(old) ? -1 : 0;
      c.changes.push_back({name, "", "verdict", ov, nv, dir});
    }
    const json& oo = old["outputs"];
    const json& no = now["outputs"];
    for (auto out = no.begin(); out != no.end(); ++out) {
      if (!oo.contains(out.key())) continue;
      for (const char* measure : {"max_bound_use", "max_ulp"}) {
        const double a = Exact(oo[out.key()], measure), b = Exact(out.value(), measure);
        if (a == b || (std::isnan(a) && std::isnan(b))) continue;
        // For a negative control a larger error is what catches it: neither.
        const bool control = now.value("status", "") == "negative_control";
        const int dir = control ? 0 : (b > a ? 1 : -1);
        c.changes.push_back({name, out.key(), measure, ShortNumber(a), ShortNumber(b), dir});
      }
    }
  }
  for (const auto& [name, impl] : old_by_name) {
    if (!seen.count(name)) c.changes.push_back({name, "", "kernel", "present", "removed", 0});
  }
  for (const Change& ch : c.changes) {
    if (ch.direction > 0)
      ++c.worse;
    else if (ch.direction < 0)
      ++c.better;
    else
      ++c.other;
  }
  return c;
}

std::string FormatComparison(const Comparison& c) {
  std::string s = "compared with " + c.old_commit + " (" + c.old_date + ", budget " + c.old_budget +
                  "): " + std::to_string(c.worse) + " worse, " + std::to_string(c.better) +
                  " better, " + std::to_string(c.other) + " other change(s)";
  if (!c.same_inputs) s += " [different budget or seed: the inputs differ too]";
  s += "\n";
  for (const Change& ch : c.changes) {
    if (ch.direction <= 0) continue;
    s += "  worse: " + ch.kernel + (ch.output.empty() ? "" : " " + ch.output) + " " + ch.measure +
         " " + ch.old_value + " -> " + ch.new_value + "\n";
  }
  return s;
}

json ComparisonJson(const Comparison& c) {
  json changes = json::array();
  for (const Change& ch : c.changes) {
    changes.push_back({{"kernel", ch.kernel},
                       {"output", ch.output},
                       {"measure", ch.measure},
                       {"old", ch.old_value},
                       {"new", ch.new_value},
                       {"direction", ch.direction > 0   ? "worse"
                                     : ch.direction < 0 ? "better"
                                                        : "changed"}});
  }
  return {{"old_commit", c.old_commit}, {"old_date", c.old_date},
          {"old_budget", c.old_budget}, {"same_inputs", c.same_inputs},
          {"worse", c.worse},           {"better", c.better},
          {"other", c.other},           {"changes", changes}};
}

}  // namespace lnv::report

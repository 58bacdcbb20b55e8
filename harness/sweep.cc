#include "harness/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <tuple>

#include "harness/families.h"
#include "harness/isolate.h"
#include "impls/plugin/loader.h"

namespace lnv {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Kernels sharing (norm, x dtype, param dtype): one case and one oracle answer.
struct Group {
  std::vector<std::size_t> members;  // indices into SweepOptions::impls
};

struct Unit {
  std::size_t group = 0;
  std::int32_t item = 0;
  double weight = 0.0;  // relative cost, for the progress fraction and scheduling
};

void MergeOutput(const OutputMeasure& m, std::int32_t item, OutputSummary* s) {
  if (!m.present) return;
  s->present = true;
  s->verdict = std::max(s->verdict, m.verdict);
  s->max_ulp = std::max(s->max_ulp, m.max_ulp);
  s->max_bound_use = std::max(s->max_bound_use, m.max_bound_use);
  s->count += m.count;
  s->unclaimed += m.unclaimed;
  s->out_of_range += m.out_of_range;
  s->undecided += m.undecided;
  s->beyond_typical += m.beyond_typical;
  if (m.worst && (!s->worst || WorseElement(*m.worst, *s->worst))) {
    s->worst = m.worst;
    s->worst_item = item;
    s->worst_row = m.worst_row;
  }
  s->hist.Merge(m.hist);
  s->points.insert(s->points.end(), m.points.begin(), m.points.end());
}

double FindingKey(const CaseMeasure& m) {
  return m.outputs[static_cast<int>(DecidingOutput(m))].max_bound_use;
}

void Merge(const CaseMeasure& m, const PlannedRun& item, std::int32_t item_index,
           std::vector<std::pair<std::int32_t, CaseMeasure>>* worst_failure_by_family,
           const std::vector<PlannedRun>& plan, KernelReport* k) {
  ++k->cases;
  k->verdict = std::max(k->verdict, m.verdict);
  // A call that gave no outputs at all: it returned an error, crashed, hung
  // or wrote outside its buffers (the last three only in a child process).
  if (m.verdict == Verdict::kKernelError || m.verdict == Verdict::kCrashed ||
      m.verdict == Verdict::kTimedOut || m.verdict == Verdict::kBufferOverrun) {
    ++k->kernel_errors;
    if (k->first_error.empty()) k->first_error = item.family + ": " + m.message;
  }
  for (int o = 0; o < 6; ++o) MergeOutput(m.outputs[o], item_index, &k->outputs[o]);
  if (IsRandomDataFamily(item.family)) {
    for (int o = 0; o < 6; ++o) {
      if (!m.outputs[o].present) continue;
      k->random_count[o] += m.outputs[o].count;
      k->random_unclaimed[o] += m.outputs[o].unclaimed + m.outputs[o].out_of_range;
    }
  }
  if (item.roles & kRoleDSweep) {
    auto [it, fresh] = k->use_by_d.try_emplace(m.d);
    if (fresh) it->second.fill(kNan);
    for (int o = 0; o < 6; ++o) {
      if (!m.outputs[o].present) continue;
      double& u = it->second[o];
      u = std::isnan(u) ? m.outputs[o].max_bound_use : std::max(u, m.outputs[o].max_bound_use);
    }
  }
  if (!IsFailure(m.verdict)) return;
  for (auto& [idx, prev] : *worst_failure_by_family) {
    if (plan[idx].family != item.family) continue;
    if (m.verdict > prev.verdict ||
        (m.verdict == prev.verdict && FindingKey(m) > FindingKey(prev))) {
      idx = item_index;
      prev = m;
    }
    return;
  }
  worst_failure_by_family->emplace_back(item_index, m);
}

// An observed kernel's case, without the judgement's per-element results
// (the baseline needs the verdicts and the worst elements only; the
// judgement is not used after this).
void Observe(const std::string& family, const Case& c, Judgement* j,
             std::vector<ObservedRun>* out) {
  for (OutputResult& o : j->outputs) o.elements = {};
  out->emplace_back().Observe(family, c, *j);
}

FamilyFinding MakeFinding(const CaseMeasure& m, std::int32_t item) {
  FamilyFinding f;
  f.item = item;
  f.d = m.d;
  f.rows = m.rows;
  f.output = DecidingOutput(m);
  const OutputMeasure& om = m.outputs[static_cast<int>(f.output)];
  f.verdict = m.verdict;
  f.worst = om.worst;
  f.worst_row = om.worst_row;
  f.kappa = f.log2_mag = kNan;
  // The same words as harness/judge's Summarize, from the measure.
  std::string s;
  char buf[160];
  for (int o = 0; o < 6; ++o) {
    const OutputMeasure& x = m.outputs[o];
    if (!x.present) continue;
    if (!s.empty()) s += "; ";
    std::snprintf(buf, sizeof buf, "%s %.4g ulp, use %.4g",
                  std::string(OutputName(static_cast<Output>(o))).c_str(), x.max_ulp,
                  x.max_bound_use);
    s += buf;
    if (x.verdict != Verdict::kPass) s += " " + std::string(VerdictName(x.verdict));
  }
  if (!m.message.empty()) s += (s.empty() ? "" : "; ") + m.message;
  f.summary = s + " -> " + std::string(VerdictName(m.verdict));
  return f;
}

}  // namespace

Output DecidingOutput(const CaseMeasure& m) {
  Output best = Output::kY;
  bool found = false;
  for (int o = 0; o < 6; ++o) {
    const OutputMeasure& x = m.outputs[o];
    if (!x.present) continue;
    const OutputMeasure& b = m.outputs[static_cast<int>(best)];
    if (!found || x.verdict > b.verdict ||
        (x.verdict == b.verdict && x.max_bound_use > b.max_bound_use)) {
      best = static_cast<Output>(o);
      found = true;
    }
  }
  return best;
}

bool MeetsExpectation(const KernelReport& k) {
  // "not judged" is no pass for a claims_bound kernel.
  if (k.info.status == ImplStatus::kClaimsBound && !k.not_judged.empty()) return false;
  return MeetsExpectation(k.info.status, IsFailure(k.verdict));
}

std::string KernelVerdictWord(const KernelReport& k) {
  if (k.cases > 0 && k.kernel_errors == k.cases) return "error";
  if (IsFailure(k.verdict)) return "fail";
  return k.not_judged.empty() ? "pass" : "not_judged";
}

SweepResult RunSweep(const SweepOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepResult result;
  result.plan = opt.plan.empty() ? BudgetPlan(opt.budget) : opt.plan;
  const std::vector<PlannedRun>& plan = result.plan;
  const std::vector<ImplInfo>& impls = opt.impls;

  std::vector<const ImplInfo*> impl_ptrs;
  for (const ImplInfo& i : impls) impl_ptrs.push_back(&i);
  std::vector<Group> groups;
  for (std::vector<std::size_t>& members : GroupBySignature(impl_ptrs)) {
    groups.push_back({std::move(members)});
  }

  // Units: one case of one group, weighted by their measured cost (in us,
  // on one core here): the oracle per element (f64 rarely takes its fast
  // path), each kernel's run and judgement per element, and the oracle's
  // grouping of dgamma's rows, which grows with rows^2.
  std::vector<Unit> units;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ImplInfo& first = impls[groups[g].members.front()];
    const double oracle_us = first.x_dtype == DType::kF64 ? 40.0 : 1.2;
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const PlannedRun& it = plan[i];
      const double rows = it.many_rows > 0 ? static_cast<double>(it.many_rows) : it.rows;
      // Only the large_d family states a large_d (harness/families.cc).
      const double d = static_cast<double>(it.large_d > 0 ? it.large_d : it.d);
      const double elements = rows * std::max(d, 1.0);
      const double dgamma = it.with_dy ? 0.027 * rows * rows * std::max(d / 16, 1.0) : 0.0;
      const double weight =
          elements * (oracle_us + 1.4 * groups[g].members.size()) * (it.with_dy ? 1.0 : 0.5) +
          dgamma;
      units.push_back({g, static_cast<std::int32_t>(i), weight});
    }
  }
  double total_weight = 0;
  for (const Unit& u : units) total_weight += u.weight;
  // Largest first, so that the last unit running alone is a small one.
  std::vector<std::size_t> order(units.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return units[a].weight > units[b].weight; });

  std::vector<std::vector<CaseMeasure>> measures(units.size());
  // Observed kernels' findings and magnitudes per unit, merged in plan order.
  std::vector<std::vector<ObservedRun>> observed(units.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> units_done{0};
  std::mutex mu;
  std::condition_variable cv;
  double weight_done = 0;  // guarded by mu
  auto work = [&] {
    JudgeOptions jo;
    jo.keep_elements = true;
    for (std::size_t n; (n = next.fetch_add(1)) < order.size();) {
      const Unit& u = units[order[n]];
      const Group& g = groups[u.group];
      const PlannedRun& item = plan[u.item];
      Case c = PlannedCase(item, FamilyParamsFor(impls[g.members.front()]), opt.seed);
      const Reference ref = ComputeReference(c, jo.oracle);
      std::vector<CaseMeasure>& out = measures[order[n]];
      const bool with_points = item.roles & (kRoleKappa | kRoleMagnitude);
      for (std::size_t k : g.members) {
        c.kernel = impls[k].name;
        jo.runner = IsPluginImpl(impls[k]) ? opt.plugin_runner : nullptr;
        jo.typical = TypicalTierFor(impls[k], item.family, opt.typical);
        Judgement j = JudgeWithReference(impls[k], c, ref, jo);
        out.push_back(Measure(impls[k], c, ref, j, with_points, u.item));
        if (impls[k].status == ImplStatus::kObserved) {
          Observe(item.family, c, &j, &observed[order[n]]);
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        weight_done += u.weight;
      }
      ++units_done;
      cv.notify_all();
    }
  };
  // A plugin kernel running in this process (no child process to run it)
  // is called from one thread: the plugin ABI does not ask for reentrancy.
  const bool plugin_in_process =
      opt.plugin_runner == nullptr &&
      std::any_of(impls.begin(), impls.end(), [](const ImplInfo& i) { return IsPluginImpl(i); });
  const int jobs = plugin_in_process ? 1 : std::max(1, opt.jobs);
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(work);
  {
    std::unique_lock<std::mutex> lock(mu);
    while (units_done.load() < static_cast<std::int64_t>(units.size())) {
      cv.wait_for(lock, std::chrono::milliseconds(500));
      if (opt.progress) {
        opt.progress(total_weight > 0 ? weight_done / total_weight : 1.0, units_done.load(),
                     static_cast<std::int64_t>(units.size()));
      }
    }
  }
  for (std::thread& t : threads) t.join();

  // Merge in plan order.
  result.kernels.resize(impls.size());
  std::vector<std::vector<std::pair<std::int32_t, CaseMeasure>>> failures(impls.size());
  for (std::size_t k = 0; k < impls.size(); ++k) result.kernels[k].info = impls[k];
  result.shapes.assign(plan.size(), {0, 0});
  for (std::size_t u = 0; u < units.size(); ++u) {
    const Group& g = groups[units[u].group];
    if (!measures[u].empty())
      result.shapes[units[u].item] = {measures[u][0].d, measures[u][0].rows};
    for (std::size_t m = 0; m < g.members.size(); ++m) {
      const std::size_t k = g.members[m];
      Merge(measures[u][m], plan[units[u].item], units[u].item, &failures[k], plan,
            &result.kernels[k]);
      if (impls[k].status == ImplStatus::kObserved) {
        result.kernels[k].observed.Merge(observed[u].front());
        observed[u].erase(observed[u].begin());
      }
      ++result.cases_judged;
    }
    measures[u].clear();
  }
  for (KernelReport& k : result.kernels) {
    if (k.info.status == ImplStatus::kClaimsBound) {
      k.not_judged = NotJudgedReason(k.random_count, k.random_unclaimed);
    }
  }
  // Findings need the worst row's kappa and magnitude: regenerate those cases.
  for (std::size_t k = 0; k < impls.size(); ++k) {
    for (const auto& [item, m] : failures[k]) {
      const Case c = PlannedCase(plan[item], FamilyParamsFor(impls[k]), opt.seed);
      FamilyFinding f = MakeFinding(m, item);
      if (f.worst_row >= 0 && f.worst_row < c.rows) {
        // The worst row alone: its kappa and magnitude (rows are independent).
        const Case one = SelectRows(c, {f.worst_row});
        const Reference ref = ComputeReference(one);
        f.kappa = RowKappa(one, ref, 0);
        const double a = ref.rows[0].max_abs;
        f.log2_mag = a > 0 ? std::log2(a) : -std::numeric_limits<double>::infinity();
      }
      result.kernels[k].findings.push_back(std::move(f));
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.progress) {
    opt.progress(1.0, static_cast<std::int64_t>(units.size()),
                 static_cast<std::int64_t>(units.size()));
  }
  return result;
}

}  // namespace lnv

#include "properties/property.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/bounds.h"
#include "harness/case_file.h"
#include "harness/driver.h"
#include "harness/formats.h"
#include "harness/isolate.h"
#include "harness/write_cases.h"
#include "impls/plugin/loader.h"
#include "properties/coverage.h"

namespace lnv::props {
namespace {

Budget g_budget = Budget::kDefault;

std::uint64_t SeedInUse() { return rc::detail::configuration().testParams.seed; }

// Writes c as a case file found by this property; returns the path or "".
std::string WriteCase(const std::string& path, const std::string& property, Case c,
                      const std::string& kernel, const std::string& status,
                      const std::string& what) {
  c.kernel = kernel;
  c.provenance.found_by = "properties_test --gtest_filter='*." + property +
                          "' (RapidCheck, budget " + BudgetName(CurrentBudget()) + ")";
  c.provenance.seed = SeedInUse();
  if (c.provenance.family.empty()) c.provenance.family = "rapidcheck";
  c.provenance.why = property + ": " + what;
  const auto& loaded = LoadedKernels();
  const auto impl = std::find_if(loaded.begin(), loaded.end(),
                                 [&](const ImplInfo& i) { return i.name == kernel; });
  c.provenance.notes.push_back("status " + status);
  c.provenance.notes.push_back(
      "the property's own check is stated in 'why'; ln_check --replay shows the judged "
      "numbers; RapidCheck prints RC_PARAMS=\"reproduce=...\" at the end of the test log");
  const std::string error =
      WriteReplayableCase(path, std::move(c), impl != loaded.end() ? &*impl : nullptr);
  if (!error.empty()) {
    std::fprintf(stderr, "properties: cannot write %s: %s\n", path.c_str(), error.c_str());
    return "";
  }
  return path;
}

class SilentListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

bool ParseBudget(const char* value, Budget* out) {
  if (value == nullptr || value[0] == '\0' || std::strcmp(value, "default") == 0) {
    *out = Budget::kDefault;
    return true;
  }
  if (std::strcmp(value, "long") == 0) {
    *out = Budget::kLong;
    return true;
  }
  return false;
}

Budget CurrentBudget() { return g_budget; }
void SetCurrentBudget(Budget b) { g_budget = b; }
const char* BudgetName(Budget b) { return b == Budget::kLong ? "long" : "default"; }

Limits CurrentLimits() {
  if (CurrentBudget() == Budget::kLong) return {8192, 8, 65536 + 17};
  return {1024, 4, 65536};
}

namespace {

struct Loaded {
  PluginLoad load;
  // The child process that runs plugin kernels (harness/isolate.h), made
  // with the kernel list: main() loads it before any kernel runs, while the
  // process is single-threaded. nullptr without plugins.
  std::unique_ptr<Isolator> isolator;
};

Loaded& LoadedOnce() {
  static Loaded loaded = [] {
    Loaded l;
    l.load = ImplsWithPlugins();
    std::vector<const ImplInfo*> all;
    for (const ImplInfo& i : l.load.impls) all.push_back(&i);
    std::string error;
    l.isolator = MakePluginIsolator(all, kDefaultCallSeconds, &error);
    if (!error.empty()) {
      l.load.errors.push_back("cannot start the child process for plugin kernels: " + error);
    }
    return l;
  }();
  return loaded;
}

}  // namespace

const std::vector<ImplInfo>& LoadedKernels() { return LoadedOnce().load.impls; }
const std::vector<std::string>& PluginLoadErrors() { return LoadedOnce().load.errors; }

Targets SuiteTargets() {
  Targets t;
  for (const ImplInfo& k : LoadedKernels()) {
    if (k.status != ImplStatus::kNegativeControl) t.kernels.push_back(&k);
  }
  return t;
}

bool PropertyApplies(const PropertyDef& p, const ImplInfo& k) {
  return k.forward != nullptr && (p.applies == nullptr || p.applies(k));
}

std::vector<std::string> NeverJudged(const PropertyDef& p, const Targets& targets,
                                     const Coverage& coverage) {
  std::vector<std::string> out;
  for (const ImplInfo* k : targets.kernels) {
    if (PropertyApplies(p, *k) && !coverage.Covered(k->name)) out.push_back(k->name);
  }
  return out;
}

Targets ControlTargets(const ImplInfo& kernel) {
  Targets t;
  t.kernels = {&kernel};
  t.judge_verdicts = false;
  t.cases_subdir = "controls";
  return t;
}

bool Judged::Claimed(Output o, std::int64_t i) const {
  const ElementResult& e = At(o, i);
  return e.verdict != Verdict::kOutOfRange && e.verdict != Verdict::kOracleUndecided &&
         std::isfinite(e.bound) && std::isfinite(e.exact.rounded) && std::isfinite(e.exact.hi);
}

std::string CompareElements(Output o, const Judged& a, std::int64_t ia, const Judged& b,
                            std::int64_t ib, double sa, double sb) {
  if (!a.Claimed(o, ia) || !b.Claimed(o, ib)) return "";
  const ElementResult& ea = a.At(o, ia);
  const ElementResult& eb = b.At(o, ib);
  const std::string where =
      std::string(OutputName(o)) + "[" + std::to_string(ia) + "] vs [" + std::to_string(ib) + "]";
  if (!std::isfinite(ea.kernel) || !std::isfinite(eb.kernel)) {
    return where + ": kernel gave " + Num(ea.kernel) + " and " + Num(eb.kernel) +
           " where the exact values are finite";
  }
  const Approx dk = Exact(sa) * Exact(ea.kernel) - Exact(sb) * Exact(eb.kernel);
  const Approx de = Exact(sa) * a.ExactOf(o, ia) - Exact(sb) * b.ExactOf(o, ib);
  const double allowed = std::fabs(sa) * ea.bound + std::fabs(sb) * eb.bound;
  if (Within(dk, de, allowed)) return "";
  return where + ": kernel difference " + Num(dk.v) + ", exact difference " + Num(de.v) +
         ", allowed " + Num(allowed) + " (the two bounds)";
}

std::string CompareSameIndex(const Judged& a, const Judged& b,
                             std::initializer_list<Output> outputs) {
  for (Output o : outputs) {
    if (!a.Has(o) || !b.Has(o)) continue;
    for (std::int64_t i = 0; i < a.Count(o) && i < b.Count(o); ++i) {
      if (std::string m = CompareElements(o, a, i, b, i); !m.empty()) return m;
    }
  }
  return "";
}

std::string BitwiseMismatch(const Judged& a, const Judged& b) {
  for (Output o : kAllOutputs) {
    if (a.Has(o) != b.Has(o)) return std::string(OutputName(o)) + " present in one run only";
    if (!a.Has(o)) continue;
    for (std::int64_t i = 0; i < a.Count(o); ++i) {
      if (!SameBits(a.Value(o, i), b.Value(o, i))) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s[%lld] = %a in one run, %a in the next",
                      std::string(OutputName(o)).c_str(), static_cast<long long>(i), a.Value(o, i),
                      b.Value(o, i));
        return buf;
      }
    }
  }
  return "";
}

const std::vector<ExactValue>* ExactValues(const Reference& r, Output o) {
  switch (o) {
    case Output::kY:
      return &r.forward.y;
    case Output::kMean:
      return r.forward.mean.empty() ? nullptr : &r.forward.mean;
    case Output::kRstd:
      return &r.forward.rstd;
    case Output::kDx:
      return r.backward ? &r.backward->dx : nullptr;
    case Output::kDgamma:
      return r.backward ? &r.backward->dgamma : nullptr;
    case Output::kDbeta:
      return r.backward && !r.backward->dbeta.empty() ? &r.backward->dbeta : nullptr;
  }
  return nullptr;
}

std::string ExactBitsMismatch(const Reference& a, const Reference& b,
                              std::initializer_list<Output> outputs) {
  for (Output o : outputs) {
    const auto* va = ExactValues(a, o);
    const auto* vb = ExactValues(b, o);
    if (va == nullptr || vb == nullptr) continue;
    const std::string name(OutputName(o));
    for (std::size_t i = 0; i < va->size() && i < vb->size(); ++i) {
      const auto n = static_cast<std::int64_t>(i);
      if (std::string m = CompareExactBits(name.c_str(), *va, n, *vb, n); !m.empty()) return m;
    }
  }
  return "";
}

std::string NonFiniteWhereExactIsFinite(const Judged& r, std::initializer_list<Output> outputs) {
  for (Output o : outputs) {
    if (!r.Has(o)) continue;
    for (std::int64_t i = 0; i < r.Count(o); ++i) {
      const ElementResult& e = r.At(o, i);
      if (e.verdict == Verdict::kOutOfRange || e.verdict == Verdict::kOracleUndecided) continue;
      if (std::isinf(e.bound)) continue;  // no claim there (e.g. eps = 0, underflowing squares)
      if (std::isfinite(e.exact.rounded) && !std::isfinite(e.kernel)) {
        return std::string(OutputName(o)) + "[" + std::to_string(i) + "] = " + Num(e.kernel) +
               " from finite inputs in range; the exact value rounds to " + Num(e.exact.rounded);
      }
    }
  }
  return "";
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

bool AffineIsFinite(const Case& c, std::int64_t i) {
  return (c.gamma.empty() || std::isfinite(c.gamma[i])) &&
         (c.beta.empty() || std::isfinite(c.beta[i]));
}

bool RowGIsFinite(const Case& c, std::int64_t r) {
  for (std::int64_t i = 0; i < c.d; ++i) {
    // Each factor, as the oracle does: a finite product beyond binary64 is exact there.
    if (!std::isfinite(c.dy[r * c.d + i]) || (!c.gamma.empty() && !std::isfinite(c.gamma[i]))) {
      return false;
    }
  }
  return true;
}

Reference PlainReference(const Case& c) {
  Case plain = c;
  plain.gamma.clear();
  plain.beta.clear();
  plain.dy.clear();
  return ComputeReference(plain);
}

bool IsUnresolvedXhatTimesInfiniteGamma(const ImplInfo& k, const Case& c, const Reference& ref,
                                        const ElementResult& e) {
  const std::int64_t r = e.index / c.d, i = e.index % c.d;
  if (c.gamma.empty() || !std::isinf(c.gamma[i]) || !std::isinf(e.exact.rounded) ||
      std::isfinite(e.kernel)) {
    return false;
  }
  const double xhat = ref.forward.xhat[e.index];
  const BoundModel model = ModelFor(k);
  const RowBound rb = ForwardRowBound(model, ref.rows[r]);
  return std::fabs(xhat) <= ForwardElementBound(model, ref.rows[r], rb, {xhat, 1.0, 0.0, xhat});
}

namespace {

// Every failing element of j is the known open finding above.
bool FailsOnTheOpenUnresolvedXhatFindingAlone(const ImplInfo& k, const Case& c,
                                              const Reference& ref, const Judgement& j) {
  for (const OutputResult& out : j.outputs) {
    if (!out.present || !IsFailure(out.verdict)) continue;
    if (out.output != Output::kY) return false;
    for (const ElementResult& e : out.elements) {
      if (IsFailure(e.verdict) && !IsUnresolvedXhatTimesInfiniteGamma(k, c, ref, e)) return false;
    }
  }
  return IsFailure(j.verdict) && j.message.empty();
}

}  // namespace

double IeeeAffineY(const Case& c, const Reference& plain, std::int64_t idx) {
  const std::int64_t i = idx % c.d;
  assert(!AffineIsFinite(c, i));
  const double gamma = c.gamma.empty() ? 1.0 : c.gamma[i];
  const double beta = c.beta.empty() ? 0.0 : c.beta[i];
  // A finite gamma gives a finite product (0 stands for it: the infinite beta
  // absorbs it); an infinite one gives +-inf, or NaN where xhat is 0 exactly.
  const double product = std::isfinite(gamma) ? 0.0 : gamma * plain.forward.y[idx].hi;
  return RoundToFormat(product + beta, FormatOf(c.dtype));
}

std::string CompareExactBits(const char* what, const std::vector<ExactValue>& a, std::int64_t ia,
                             const std::vector<ExactValue>& b, std::int64_t ib) {
  const double va = a[static_cast<std::size_t>(ia)].rounded;
  const double vb = b[static_cast<std::size_t>(ib)].rounded;
  if (SameBits(va, vb)) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s[%lld] = %a but [%lld] = %a", what, static_cast<long long>(ia),
                va, static_cast<long long>(ib), vb);
  return buf;
}

// sigma^2 >= 2^-100 (float accumulation) keeps q 2^26 above float's
// smallest normal and 2^50 above d 2^-150 (its underflow unit times d <=
// 2^16), and r = 1/sigma <= 2^50, far inside float; fp64 accumulation:
// 2^-1000 likewise for double.
void RequireEpsOrNoUnderflow(const Case& c, const Reference& ref) {
  if (c.eps != 0) return;
  const double floor = c.dtype == DType::kF64 ? 0x1p-1000 : 0x1p-100;
  for (const RowStats& s : ref.forward.stats) {
    if (s.finite && s.var < floor) {
      Coverage::Current().Skipped("(every kernel)",
                                  "eps = 0 rows with sigma^2 near the accumulation's underflow");
      RC_PRE(false);
    }
  }
}

std::string ExemptionFrom(const ImplInfo& k, std::string_view relation) {
  for (const std::string& e : k.exact_relation_exemptions) {
    if (e.size() > relation.size() && e.starts_with(relation) && e[relation.size()] == ':') {
      return e;
    }
  }
  return "";
}

bool HeldToExactRelation(const ImplInfo& k, std::string_view relation) {
  if (IsPluginImpl(k)) {
    Coverage::Current().Skipped(k.name, "plugin: held to the " + std::string(relation) +
                                            " relation within its bounds, not bit for bit");
    return false;
  }
  if (const std::string e = ExemptionFrom(k, relation); !e.empty()) {
    Coverage::Current().Skipped(k.name, "exempt from bit-for-bit " + e);
    return false;
  }
  return true;
}

namespace {

// Nonzero and finite, but subnormal or beyond the largest finite value of f.
bool OutsideNormalRange(double v, FloatFormat f) {
  if (v == 0 || !std::isfinite(v)) return false;
  const double a = std::fabs(v);
  return a < std::ldexp(1.0, f.emin) || a > MaxFinite(f);
}

}  // namespace

bool ScaleChangesRounding(double a, double b, int shift, FloatFormat f) {
  if (shift == 0) return false;
  // An overflow at one scale, an underflow to zero at the other.
  if ((a == 0 && std::isinf(b)) || (std::isinf(a) && b == 0)) return true;
  return OutsideNormalRange(a, f) || OutsideNormalRange(b, f) ||
         OutsideNormalRange(std::ldexp(a, shift), f) ||
         OutsideNormalRange(std::ldexp(b, -shift), f);
}

std::string CompareBits(Output o, const Judged& a, std::int64_t ia, const Judged& b,
                        std::int64_t ib, int shift) {
  if (a.At(o, ia).verdict == Verdict::kOutOfRange || b.At(o, ib).verdict == Verdict::kOutOfRange) {
    return "";
  }
  const double va = a.Value(o, ia);
  const double vb = b.Value(o, ib);
  if (ScaleChangesRounding(va, vb, shift, a.Format(o))) return "";
  const double expected = std::ldexp(va, shift);
  if (SameBits(expected, vb)) return "";
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s[%lld] = %a but [%lld] = %a, expected %a",
                std::string(OutputName(o)).c_str(), static_cast<long long>(ia), va,
                static_cast<long long>(ib), vb, expected);
  return buf;
}

PropertyCase::PropertyCase(std::string_view property, const Targets& targets)
    : property_(property), targets_(targets) {}

std::vector<const ImplInfo*> PropertyCase::KernelsFor(const KernelGroup& g) const {
  std::vector<const ImplInfo*> out;
  for (const ImplInfo* k : targets_.kernels) {
    if (GroupOf(*k) == g && k->forward != nullptr) out.push_back(k);
  }
  return out;
}

std::string PropertyCase::CasePath(const std::string& kernel) const {
  return std::filesystem::absolute(std::filesystem::path("lnv-cases") / "properties" /
                                   targets_.cases_subdir / property_ /
                                   (FileSafeName(kernel) + ".case"))
      .string();
}

void PropertyCase::OracleFails(const Case& c, const std::string& what) const {
  // Named after a compatible kernel, so that `ln_check --replay` prints the
  // oracle's values element by element (the oracle column is the subject).
  const KernelGroup g{c.norm, c.dtype, c.param_dtype};
  const auto kernels = KernelsFor(g);
  const std::string kernel = kernels.empty() ? "-" : kernels.front()->name;
  const std::string path =
      WriteCase(CasePath("oracle"), property_, c, kernel, "the oracle breaks the property", what);
  RC_FAIL("the oracle breaks " + property_ + ": " + what + "\n  case   " + path);
}

std::optional<Judged> PropertyCase::Run(const ImplInfo& k, const Case& c,
                                        const Reference& ref) const {
  Coverage::Current().Judged(k.name);
  JudgeOptions opt;
  opt.keep_elements = true;
  // The statistical tier, where the case is a random-data family's (as in
  // ln_check; the provenance survives the properties' exact transformations).
  opt.typical = TypicalTierFor(k, c.provenance.family, TypicalTier::kFail);
  // A plugin kernel runs in a child process: a crash, hang or overrun is a
  // finding with its case, as in ln_check, not a dead suite.
  if (IsPluginImpl(k)) opt.runner = LoadedOnce().isolator.get();
  Judged r;
  r.impl = &k;
  r.j = JudgeWithReference(k, c, ref, opt);
  if (r.j.verdict == Verdict::kKernelError) {
    KernelFails(k, c, "the kernel returned an error: " + r.j.message);
    return std::nullopt;
  }
  if (targets_.judge_verdicts && IsFailure(r.j.verdict)) {
    if (FailsOnTheOpenUnresolvedXhatFindingAlone(k, c, ref, r.j)) {
      Coverage::Current().Finding(
          k.name,
          "known open finding (fuzz/known_findings.txt, entry 1: inf * an xhat the "
          "kernel cannot resolve): judge: " +
              Summarize(r.j));
      return r;
    }
    KernelFails(k, c, "judge: " + Summarize(r.j));
    return std::nullopt;
  }
  return r;
}

void PropertyCase::KernelFails(const ImplInfo& k, const Case& c, const std::string& what) const {
  const std::string status(StatusName(k.status));
  const std::string path = WriteCase(CasePath(k.name), property_, c, k.name, status, what);
  const std::string report = k.name + " (" + status + "): " + what + "\n  case   " + path +
                             "\n  replay " + ReplayCommand(k, path);
  if (k.status == ImplStatus::kObserved) {
    Coverage::Current().Finding(k.name, what + " (case " + path + ")");
    return;
  }
  RC_FAIL(report);
}

QuietRun RunQuietly(const PropertyDef& p, const Targets& targets, int max_success,
                    std::uint64_t seed_offset) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = max_success;
  params.seed += seed_offset;
  params.disableShrinking = true;
  rc::detail::TestMetadata metadata;
  metadata.id = "quiet/" + std::string(p.name);
  metadata.description = std::string(p.name);
  SilentListener listener;
  const rc::detail::TestResult result = rc::detail::checkProperty(
      rc::detail::toProperty([&] { p.body(targets); }), metadata, params, listener, {});
  QuietRun out;
  if (result.is<rc::detail::FailureResult>()) {
    const auto& f = result.get<rc::detail::FailureResult>();
    out.failed = true;
    out.cases = f.numSuccess;
    out.message = f.description;
  } else if (result.is<rc::detail::SuccessResult>()) {
    out.cases = result.get<rc::detail::SuccessResult>().numSuccess;
  } else {
    out.message = "gave up (too many discarded cases)";
  }
  return out;
}

}  // namespace lnv::props

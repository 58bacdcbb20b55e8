#include "fuzz/target.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>

#include "fuzz/finding_class.h"
#include "harness/driver.h"
#include "harness/families.h"
#include "harness/formats.h"
#include "harness/text_columns.h"
#include "harness/write_cases.h"
#include "impls/plugin/loader.h"

namespace lnv::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

const char* ValueKind(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return "inf";
  return v == 0 ? "zero" : "finite";
}

std::string WorstLine(const Case& c, const OutputResult& o) {
  if (!o.worst) return "worst    -";
  const ElementResult* e = nullptr;
  for (const ElementResult& el : o.elements) {
    if (el.index == *o.worst) e = &el;
  }
  std::string s =
      "worst    " + std::string(OutputName(o.output)) + "[" + std::to_string(*o.worst) + "]";
  if (o.output == Output::kY || o.output == Output::kDx) {
    s +=
        " (row " + std::to_string(*o.worst / c.d) + ", col " + std::to_string(*o.worst % c.d) + ")";
  }
  if (e == nullptr) return s;
  s += ": kernel " + FormatValue(e->kernel) + ", exact " + FormatValue(e->exact.hi + e->exact.lo) +
       " (rounded " + FormatValue(e->exact.rounded) + "), error " + Fmt("%.6g", e->error) + " (" +
       Fmt("%.4g", e->ulps) + " ulp), bound " + Fmt("%.6g", e->bound) + ", use " +
       Fmt("%.4g", e->bound_use);
  return s;
}

// `outside`: for an observed kernel, why the finding is outside its
// baseline's classes, or "" when inside.
std::string WhyText(const ImplInfo& impl, Verdict v, Output o, const std::string& outside) {
  const std::string what = std::string(VerdictName(v)) + " on " + std::string(OutputName(o));
  switch (impl.status) {
    case ImplStatus::kClaimsBound:
      return "claims_bound kernel broke its contract (" + what + ")";
    case ImplStatus::kNegativeControl:
      return "negative control caught (" + what + "): the fuzzer finds what this bug gets wrong";
    case ImplStatus::kObserved:
      return outside.empty()
                 ? "observed kernel (" + what + "), within its recorded baseline's classes"
                 : "observed kernel outside its recorded baseline (" + what + "): " + outside;
  }
  return what;
}

// Why an observed kernel's failing judgement of c is outside its baseline's
// classes, or "" when inside.
std::string OutsideBaseline(const FuzzConfig& config, const ImplInfo& impl, const Case& c,
                            const Reference& ref, const Judgement& j) {
  const auto b = config.baselines.find(impl.name);
  if (b == config.baselines.end()) return "no baseline loaded for this kernel";
  return OutsideClasses(b->second, c, ref, j, FormatOf(impl.acc_dtype));
}

// The judge's options for impl on c: the statistical tier where c is a
// random-data family's case (fuzz_input.h, byte 8 bit 3), as in ln_check.
JudgeOptions OptionsFor(const FuzzConfig& config, const ImplInfo& impl, const Case& c) {
  JudgeOptions jo;
  jo.typical = TypicalTierFor(impl, c.provenance.family, TypicalTier::kFail);
  if (IsPluginImpl(impl)) jo.runner = config.isolator.get();  // nullptr: in this process
  return jo;
}

// Whether the one-row case `one` may stand for the whole input c: it still
// fails, and for an observed kernel it is on the same side of the baseline
// (the case file must show what trapped, or what did not).
bool RowStandsForInput(const FuzzConfig& config, const ImplInfo& impl, const Case& c,
                       const Reference& ref, const Judgement& whole, const Case& one) {
  if (impl.status != ImplStatus::kObserved)
    return IsFailure(Judge(impl, one, OptionsFor(config, impl, one)).verdict);
  const Reference one_ref = ComputeReference(one);
  const Judgement j1 = JudgeWithReference(impl, one, one_ref, OptionsFor(config, impl, one));
  if (!IsFailure(j1.verdict)) return false;
  return OutsideBaseline(config, impl, c, ref, whole).empty() ==
         OutsideBaseline(config, impl, one, one_ref, j1).empty();
}

Finding KernelFinding(const FuzzConfig& config, const ImplInfo& impl, const Case& c,
                      const Reference& ref, const Judgement& j) {
  Finding f;
  f.kind = FindingKind::kKernel;
  f.kernel = impl.name;
  f.impl = &impl;
  f.status = impl.status;
  Output o = DecidingOutput(j);
  std::optional<std::int64_t> class_row;
  if (IsRowOutput(o) && j[o].worst) class_row = RowOfIndex(o, *j[o].worst, c.d);
  std::string input_class = FindingClass(c, ref, o, class_row, FormatOf(impl.acc_dtype));
  // Rows are independent: a row output's failure replays from that row alone.
  Case w = c;
  if (c.rows > 1 && IsRowOutput(o) && j[o].worst) {
    Case one = SelectRows(c, {RowOfIndex(o, *j[o].worst, c.d)});
    if (RowStandsForInput(config, impl, c, ref, j, one)) w = std::move(one);
  }
  JudgeOptions keep = OptionsFor(config, impl, w);
  keep.keep_elements = true;
  const Judgement shown = Judge(impl, w, keep);
  o = DecidingOutput(shown);
  f.verdict = shown.verdict;
  f.output = o;
  // Whether the element that decides the verdict had a bound at all, and the
  // kinds of value on each side.
  for (const ElementResult& e : shown[o].elements) {
    if (!shown[o].worst || e.index != *shown[o].worst) continue;
    if (std::isinf(e.bound)) input_class += "/claim:none";
    input_class +=
        "/worst:" + std::string(ValueKind(e.kernel)) + "-vs-" + ValueKind(e.exact.rounded);
  }
  f.key = impl.name + "|" + std::string(VerdictName(f.verdict)) + "|" + std::string(OutputName(o)) +
          "|" + input_class;
  if (const KnownFinding* k = MatchKnownFinding(config.known, f.key)) f.known = k->reason;
  const bool observed = impl.status == ImplStatus::kObserved;
  // Judged on the case written, which RowStandsForInput keeps on the whole input's side.
  const std::string outside =
      observed
          ? OutsideBaseline(config, impl, w, w.rows == c.rows ? ref : ComputeReference(w), shown)
          : "";
  f.traps = f.known.empty() && (!observed || !outside.empty());
  f.detail = "kernel   " + impl.name + " (" + std::string(StatusName(impl.status)) +
             ", bound model " + std::string(AlgorithmName(impl.bound_algorithm)) + ")\n" +
             "verdict  " + std::string(VerdictName(f.verdict)) + " on " +
             std::string(OutputName(o)) + "\n" + WorstLine(w, shown[o]) + "\n" + "result   " +
             Summarize(shown) + (shown.message.empty() ? "" : "\nmessage  " + shown.message);
  if (observed) {
    f.detail += outside.empty()
                    ? "\nbaseline within its recorded classes (ObservedClasses, fuzz/target.h)"
                    : "\nbaseline OUTSIDE its recorded classes: " + outside;
  }
  f.c = w;
  f.c.kernel = impl.name;
  f.c.provenance.found_by = "fuzz_ln (libFuzzer differential fuzzing against the oracle)";
  // A random-data input keeps its family: the replay applies the same tier.
  if (f.c.provenance.family.empty()) f.c.provenance.family = "fuzz";
  f.c.provenance.why = WhyText(impl, f.verdict, o, outside);
  f.c.provenance.notes.push_back("input class " + input_class);
  if (!f.known.empty()) f.c.provenance.notes.push_back("known finding: " + f.known);
  f.c.provenance.notes.push_back("result " + Summarize(shown));
  f.c.provenance.notes.push_back("date " + Today());
  return f;
}

Finding OracleFinding(FindingKind kind, const Case& c, const std::string& what) {
  Finding f;
  f.kind = kind;
  f.kernel = "-";
  f.verdict = Verdict::kOracleUndecided;
  f.key = std::string("oracle|") +
          (kind == FindingKind::kOracleUndecided ? "undecided" : "backends_disagree") + "|" +
          what.substr(0, what.find('['));
  f.detail =
      std::string("oracle   ") +
      (kind == FindingKind::kOracleUndecided ? "returned undecided (its precision cap was reached)"
                                             : "its two backends (Boost, MPFR) disagree") +
      "\nwhere    " + what;
  f.c = c;
  f.c.kernel = "-";
  f.c.provenance.found_by = "fuzz_ln (libFuzzer, oracle self-check)";
  f.c.provenance.family = "fuzz";
  f.c.provenance.why = kind == FindingKind::kOracleUndecided
                           ? "the oracle must decide every element of an ordinary input"
                           : "the oracle's backends must agree bit for bit";
  f.c.provenance.notes.push_back("oracle " + what);
  f.c.provenance.notes.push_back("date " + Today());
  return f;
}

// The first undecided element, as "output[index]", or "".
std::string FirstUndecided(const Reference& ref) {
  auto scan = [](const std::vector<ExactValue>& v, const char* name) -> std::string {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i].status == ValueStatus::kUndecided)
        return std::string(name) + "[" + std::to_string(i) + "]";
    }
    return "";
  };
  for (const auto& [v, name] :
       {std::pair{&ref.forward.y, "y"}, std::pair{&ref.forward.mean, "mean"},
        std::pair{&ref.forward.rstd, "rstd"}}) {
    if (auto s = scan(*v, name); !s.empty()) return s;
  }
  if (ref.backward) {
    for (const auto& [v, name] :
         {std::pair{&ref.backward->dx, "dx"}, std::pair{&ref.backward->dgamma, "dgamma"},
          std::pair{&ref.backward->dbeta, "dbeta"}}) {
      if (auto s = scan(*v, name); !s.empty()) return s;
    }
  }
  return "";
}

std::string Describe(const ExactValue& v) {
  return FormatValue(v.rounded) + " (hi " + FormatValue(v.hi) + ", lo " + FormatValue(v.lo) + ", " +
         (v.status == ValueStatus::kDecided ? "decided" : "undecided") + ")";
}

// Compares two oracle answers: every field (exact = true) or the rounded
// value and status. Returns "" or "output[i]: a vs b".
std::string Compare(const std::vector<ExactValue>& a, const std::vector<ExactValue>& b,
                    const char* name, const char* a_name, const char* b_name, bool exact) {
  if (a.size() != b.size()) return std::string(name) + "[]: sizes differ";
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = SameBits(a[i].rounded, b[i].rounded) && a[i].status == b[i].status &&
                      (!exact || (SameBits(a[i].hi, b[i].hi) && SameBits(a[i].lo, b[i].lo)));
    if (!same) {
      return std::string(name) + "[" + std::to_string(i) + "]: " + a_name + " " + Describe(a[i]) +
             " vs " + b_name + " " + Describe(b[i]);
    }
  }
  return "";
}

}  // namespace

std::string CompareReferences(const Reference& a, const Reference& b, const char* a_name,
                              const char* b_name, bool every_field) {
  struct Pair {
    const std::vector<ExactValue>* a;
    const std::vector<ExactValue>* b;
    const char* name;
  };
  std::vector<Pair> pairs = {{&a.forward.y, &b.forward.y, "y"},
                             {&a.forward.mean, &b.forward.mean, "mean"},
                             {&a.forward.rstd, &b.forward.rstd, "rstd"}};
  if (a.backward.has_value() != b.backward.has_value()) return "backward: present on one side only";
  if (a.backward && b.backward) {
    pairs.push_back({&a.backward->dx, &b.backward->dx, "dx"});
    pairs.push_back({&a.backward->dgamma, &b.backward->dgamma, "dgamma"});
    pairs.push_back({&a.backward->dbeta, &b.backward->dbeta, "dbeta"});
  }
  for (const Pair& p : pairs) {
    if (auto s = Compare(*p.a, *p.b, p.name, a_name, b_name, every_field); !s.empty()) return s;
  }
  return "";
}

std::string CrossCheckOracle(const Case& c, const Reference& fast) {
  const Reference boost = ComputeReference(c, OracleOptions{OracleBackend::kBoost, 1 << 14, false});
  const Reference mpfr = ComputeReference(c, OracleOptions{OracleBackend::kMpfr, 1 << 14, false});
  if (auto s = CompareReferences(boost, mpfr, "boost", "mpfr", true); !s.empty()) return s;
  return CompareReferences(fast, boost, "fast path", "exact path", false);
}

std::string SelectKernels(const std::vector<ImplInfo>& all, const std::string& glob,
                          FuzzConfig* config) {
  config->impls.clear();
  config->impls_glob = glob;
  for (const ImplInfo& impl : all) {
    if (impl.forward == nullptr) continue;
    const bool take =
        glob.empty() ? impl.status != ImplStatus::kNegativeControl : GlobMatch(glob, impl.name);
    if (take) config->impls.push_back(impl);
  }
  config->decode.signatures.clear();
  for (const ImplInfo& impl : config->impls) {
    const Signature s{impl.norm, impl.x_dtype, impl.param_dtype};
    if (std::find(config->decode.signatures.begin(), config->decode.signatures.end(), s) ==
        config->decode.signatures.end()) {
      config->decode.signatures.push_back(s);
    }
  }
  if (config->impls.empty()) {
    return glob.empty() ? "no kernel is registered"
                        : "LNV_FUZZ_IMPLS='" + glob + "' matches no registered kernel";
  }
  return "";
}

namespace {

bool IsCallVerdict(Verdict v) {
  return v == Verdict::kKernelError || v == Verdict::kCrashed || v == Verdict::kTimedOut ||
         v == Verdict::kBufferOverrun;
}

// Whether a FindingClass names rows within the range the project's own
// kernels claim: x finite or subnormal, finite parameters, and for the
// backward finite dy and g ok.
bool WithinClaimedRange(const std::string& input_class) {
  const auto has = [&](const char* part) {
    return input_class.find(std::string("/") + part) != std::string::npos;
  };
  const bool backward = has("dy:");
  return (has("x:finite/") || has("x:subnormal/")) && has("params:finite/") &&
         (!backward || (has("dy:finite/") && has("g:ok/")));
}

}  // namespace

ObservedClasses ClassesOf(const Baseline& b) {
  ObservedClasses classes;
  for (const BaselineRun& r : b.runs) {
    for (const lnv::Finding& f : r.findings) {
      classes.failing.insert(f.output == "call" ? "call " + f.verdict : f.output);
    }
  }
  return classes;
}

std::string OutsideClasses(const ObservedClasses& classes, const Case& c, const Reference& ref,
                           const Judgement& j, FloatFormat acc) {
  if (IsCallVerdict(j.verdict)) {
    const std::string call = "call " + std::string(VerdictName(j.verdict));
    if (!classes.failing.contains(call)) return call + ": no family of the baseline ends so";
  }
  for (const OutputResult& o : j.outputs) {
    if (!o.present || !IsFailure(o.verdict)) continue;
    const std::string output(OutputName(o.output));
    if (classes.failing.contains(output)) continue;
    std::optional<std::int64_t> row;
    if (IsRowOutput(o.output) && o.worst) row = RowOfIndex(o.output, *o.worst, c.d);
    const std::string input_class = FindingClass(c, ref, o.output, row, acc);
    if (!WithinClaimedRange(input_class)) continue;
    return output + " " + std::string(VerdictName(o.verdict)) + " on " + input_class + ": " +
           output + " fails in no family of the baseline";
  }
  return "";
}

std::string LoadBaselines(const std::string& dir, FuzzConfig* config) {
  config->baselines.clear();
  for (const ImplInfo& impl : config->impls) {
    if (impl.status != ImplStatus::kObserved) continue;
    const std::string path = BaselinePath(dir, impl.name);
    const std::string tail =
        " (record it with ln_check --write-baselines, or leave the kernel out "
        "with LNV_FUZZ_IMPLS)";
    Baseline b;
    std::string error;
    if (!ReadBaseline(path, &b, &error))
      return "observed kernel " + impl.name + ": " + error + tail;
    if (b.version < kBaselineVersion) {
      return "observed kernel " + impl.name + ": " + path + " is format " +
             std::to_string(b.version) + ", without magnitudes: re-record it" + tail;
    }
    config->baselines[impl.name] = ClassesOf(b);
  }
  return "";
}

namespace {

// Sets *out from the environment variable `name` when it is set and not
// empty: an integer in [1, max], else a one-line error (*out unchanged).
std::string IntegerFromEnv(const char* name, std::int64_t max, std::int64_t* out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return "";
  std::int64_t n = 0;
  const auto [p, ec] = std::from_chars(v, v + std::strlen(v), n);
  if (ec != std::errc() || *p != '\0' || n < 1 || n > max) {
    const bool unbounded = max == std::numeric_limits<std::int64_t>::max();
    return std::string(name) + "='" + v + "' is not " +
           (unbounded ? "a positive integer" : "an integer in [1, " + std::to_string(max) + "]");
  }
  *out = n;
  return "";
}

}  // namespace

std::string ConfigFromEnv(FuzzConfig* config) {
  const PluginLoad load = ImplsWithPlugins();
  if (!load.errors.empty()) return "LNV_PLUGINS: " + load.errors.front();
  if (std::string error = IntegerFromEnv("LNV_FUZZ_MAX_D", kMaxMaxD, &config->decode.max_d);
      !error.empty()) {
    return error;
  }
  if (std::string error =
          IntegerFromEnv("LNV_FUZZ_CROSS_CHECK_EVERY", std::numeric_limits<std::int64_t>::max(),
                         &config->cross_check_every);
      !error.empty()) {
    return error;
  }
  if (const char* v = std::getenv("LNV_FUZZ_CASES_DIR"); v != nullptr && *v != '\0')
    config->cases_dir = v;
  if (const char* v = std::getenv("LNV_FUZZ_PREWRITE"); v != nullptr)
    config->prewrite = std::string(v) == "1";
  if (const char* v = std::getenv("LNV_FUZZ_KNOWN_FINDINGS"); v != nullptr && *v != '\0') {
    std::string error;
    if (!ReadKnownFindings(v, &config->known, &error)) return "LNV_FUZZ_KNOWN_FINDINGS: " + error;
  }
  const char* glob = std::getenv("LNV_FUZZ_IMPLS");
  if (std::string error = SelectKernels(load.impls, glob == nullptr ? "" : glob, config);
      !error.empty()) {
    return error;
  }
  if (const char* v = std::getenv("LNV_FUZZ_ISOLATE"); v != nullptr && *v != '\0') {
    if (std::string(v) != "0" && std::string(v) != "1") {
      return "LNV_FUZZ_ISOLATE='" + std::string(v) + "' is not 0 or 1";
    }
    if (std::string(v) == "1") {
      std::vector<const ImplInfo*> selected;
      for (const ImplInfo& i : config->impls) selected.push_back(&i);
      std::string error;
      config->isolator = MakePluginIsolator(selected, kDefaultCallSeconds, &error);
      if (!error.empty()) return "LNV_FUZZ_ISOLATE: " + error;
    }
  }
  return LoadBaselines(DefaultBaselinesDir(), config);
}

std::vector<const ImplInfo*> CompatibleKernels(const FuzzConfig& config, const Case& c) {
  std::vector<const ImplInfo*> out;
  for (const ImplInfo& impl : config.impls) {
    if (IsCompatible(impl, c)) out.push_back(&impl);
  }
  return out;
}

std::vector<const ImplInfo*> ChosenKernels(const FuzzConfig& config, const Case& c,
                                           std::uint8_t selector) {
  std::vector<const ImplInfo*> all = CompatibleKernels(config, c);
  if (config.every_kernel || all.empty()) return all;
  return {all[selector % all.size()]};
}

RunResult RunCase(const FuzzConfig& config, const Case& c,
                  const std::vector<const ImplInfo*>& kernels, bool cross_check_oracle) {
  RunResult res;
  res.stats.elements = c.rows * c.d;
  auto t0 = Clock::now();
  OracleOptions sampled;
  sampled.recheck_every = kRecheckEvery;
  const Reference ref = ComputeReference(c, sampled);
  res.stats.rechecked = ref.forward.rechecked + (ref.backward ? ref.backward->rechecked : 0);
  res.stats.slow_path = ref.forward.slow_path + (ref.backward ? ref.backward->slow_path : 0);
  res.stats.recheck_disagreements =
      ref.forward.recheck_disagreements + (ref.backward ? ref.backward->recheck_disagreements : 0);
  if (res.stats.recheck_disagreements > 0) {
    const std::string diff = CrossCheckOracle(c, ref);
    res.findings.push_back(OracleFinding(
        FindingKind::kOracleBackends, c,
        diff.empty() ? "a sampled re-decision of a fast decision differs from the exact path's"
                     : diff));
  }
  res.stats.oracle_seconds += Seconds(t0, Clock::now());
  AddInputFeatures(c, ref.forward.stats, &res.features);
  const std::int64_t undecided =
      ref.forward.undecided + (ref.backward ? ref.backward->undecided : 0);
  AddOracleFeatures(res.stats.slow_path, undecided, &res.features);
  if (undecided > 0)
    res.findings.push_back(OracleFinding(FindingKind::kOracleUndecided, c, FirstUndecided(ref)));
  if (cross_check_oracle && c.d <= kCrossCheckMaxElements) {
    // The exact paths cost far more than the fast one: check the leading rows
    // that fit in kCrossCheckMaxElements (a smaller problem, still a problem).
    t0 = Clock::now();
    const std::int64_t k = std::min<std::int64_t>(c.rows, kCrossCheckMaxElements / c.d);
    std::string diff;
    Case sub;
    if (k == c.rows) {
      diff = CrossCheckOracle(c, ref);
    } else {
      std::vector<std::int64_t> rows(static_cast<std::size_t>(k));
      for (std::int64_t r = 0; r < k; ++r) rows[static_cast<std::size_t>(r)] = r;
      sub = SelectRows(c, rows);
      diff = CrossCheckOracle(sub, ComputeReference(sub));
    }
    res.stats.cross_checked = true;
    res.stats.cross_check_seconds = Seconds(t0, Clock::now());
    res.stats.oracle_seconds += res.stats.cross_check_seconds;
    if (!diff.empty()) {
      res.findings.push_back(
          OracleFinding(FindingKind::kOracleBackends, k == c.rows ? c : sub, diff));
    }
  }
  for (const ImplInfo* impl : kernels) {
    std::string prewritten;
    if (config.prewrite) {
      Finding pre;
      pre.kernel = impl->name;
      pre.impl = impl;
      pre.c = c;
      pre.c.kernel = impl->name;
      pre.c.provenance.found_by = "fuzz_ln (libFuzzer), written before the kernel ran";
      pre.c.provenance.family = "fuzz";
      pre.c.provenance.why =
          "the kernel crashed or hung on this input (the file is deleted when it returns)";
      pre.key = "prewrite";
      std::string error;
      prewritten = WriteFindingCase(config, pre, &error);
    }
    t0 = Clock::now();
    const JudgeOptions jo = OptionsFor(config, *impl, c);
    const Judgement j = JudgeWithReference(*impl, c, ref, jo);
    res.stats.kernel_seconds += Seconds(t0, Clock::now());
    ++res.stats.kernels_judged;
    for (const OutputResult& o : j.outputs) {
      if (!o.present) continue;
      res.stats.judged_elements += o.count;
      res.stats.unclaimed_elements += o.unclaimed + o.out_of_range;
      if (jo.typical != TypicalTier::kOff) res.stats.typical_elements += o.count;
      res.stats.beyond_typical_elements += o.beyond_typical;
      if (jo.typical == TypicalTier::kReport) res.stats.beyond_typical_reported += o.beyond_typical;
    }
    if (!prewritten.empty()) std::filesystem::remove(prewritten);
    AddJudgementFeatures(static_cast<std::size_t>(impl - config.impls.data()), j, &res.features);
    if (IsFailure(j.verdict)) res.findings.push_back(KernelFinding(config, *impl, c, ref, j));
  }
  return res;
}

RunResult RunInput(const FuzzConfig& config, const std::uint8_t* data, std::size_t size) {
  const FuzzInput in = DecodeInput(data, size, config.decode);
  const Case c = Materialize(in);
  const std::uint64_t hash = InputHash(data, size);
  const bool cross = in.cross_check_oracle && CrossCheckSampled(hash, config.cross_check_every);
  RunResult r = RunCase(config, c, ChosenKernels(config, c, in.kernel_selector), cross);
  char note[96];
  std::snprintf(note, sizeof note, "fuzz input fnv1a64 %016llx (%zu bytes)",
                static_cast<unsigned long long>(hash), size);
  for (Finding& f : r.findings) f.c.provenance.notes.push_back(note);
  return r;
}

// The command that replays a finding's case: ln_check for a kernel's (with
// its plugin, for a plugin kernel), fuzz_ln_replay for the oracle's.
std::string ReplayCommandOf(const Finding& f, const std::string& path) {
  if (f.kind != FindingKind::kKernel) return "fuzz_ln_replay " + ShellQuote(path);
  if (f.impl != nullptr) return ReplayCommand(*f.impl, path);
  return "ln_check --replay " + ShellQuote(path);
}

std::string WriteFindingCase(const FuzzConfig& config, const Finding& f, std::string* error) {
  const std::string text = FormatCase(f.c);
  char hash[24];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(
                    InputHash(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())));
  const std::string what = f.key == "prewrite" ? std::string("crash")
                                               : std::string(VerdictName(f.verdict)) + "_" +
                                                     std::string(OutputName(f.output));
  const std::string stem =
      f.kind == FindingKind::kKernel
          ? FileSafeName(f.kernel) + "__" + what
          : std::string(f.kind == FindingKind::kOracleUndecided ? "oracle__undecided"
                                                                : "oracle__backends");
  const std::string path =
      (std::filesystem::path(config.cases_dir) / ("fuzz__" + stem + "__" + hash + ".case"))
          .string();
  *error = WriteReplayableCase(path, f.c, nullptr, ReplayCommandOf(f, path));
  return error->empty() ? path : "";
}

std::string FormatFinding(const Finding& f, const std::string& case_path) {
  std::ostringstream o;
  o << "==lnv-finding== " << f.key << "\n" << f.detail << "\n";
  if (case_path.empty()) {
    o << "case     (not written)\n";
  } else {
    o << "case     " << case_path << "\n"
      << "replay   " << ReplayCommandOf(f, case_path) << "\n";
  }
  // The case in hex floats, cut after 40 lines (the file has all of it).
  const std::string text = FormatCase(f.c);
  std::istringstream lines(text);
  std::string line;
  int n = 0, total = 0;
  std::string shown;
  while (std::getline(lines, line)) {
    ++total;
    if (n < 40) {
      shown += "  " + line + "\n";
      ++n;
    }
  }
  o << "case as hex floats:\n" << shown;
  if (total > n) o << "  ... " << total - n << " more lines in the case file\n";
  return o.str();
}

std::uint64_t InputHash(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool CrossCheckSampled(std::uint64_t input_hash, std::int64_t every) {
  // A 64-bit finalizer (xor-shifts and odd multipliers): every output bit
  // depends on every input bit.
  std::uint64_t h = input_hash;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h % static_cast<std::uint64_t>(std::max<std::int64_t>(1, every)) == 0;
}

}  // namespace lnv::fuzz

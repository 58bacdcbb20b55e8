#include "harness/baseline.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <ostream>
#include <sstream>

#include "harness/text_columns.h"
#include "harness/write_cases.h"

#ifndef LNV_DEFAULT_BASELINES_DIR
#error "LNV_DEFAULT_BASELINES_DIR (the source tree's impls/thirdparty/baselines) must be defined"
#endif

namespace lnv {
namespace {

bool KnownOutput(const std::string& s) {
  if (s == "call") return true;
  for (Output o : kAllOutputs) {
    if (OutputName(o) == s) return true;
  }
  return false;
}

bool KnownFailureVerdict(const std::string& s) {
  for (int v = 0; v <= static_cast<int>(Verdict::kBufferOverrun); ++v) {
    if (VerdictName(static_cast<Verdict>(v)) == s) return IsFailure(static_cast<Verdict>(v));
  }
  return false;
}

bool IsCallVerdict(Verdict v) {
  return v == Verdict::kKernelError || v == Verdict::kCrashed || v == Verdict::kTimedOut ||
         v == Verdict::kBufferOverrun;
}

// The Output named `name`, or nullopt ("call", or not an output).
std::optional<Output> OutputNamed(const std::string& name) {
  for (Output o : kAllOutputs) {
    if (OutputName(o) == name) return o;
  }
  return std::nullopt;
}

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> t;
  std::istringstream in(line.substr(0, line.find('#')));
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

}  // namespace

std::string FindingText(const Finding& f) { return f.family + " " + f.output + " " + f.verdict; }

int Binade(double v) {
  if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) return kBinadeOfInf;
  if (v <= 0) return kBinadeOfZero;
  return std::ilogb(v);  // floor(log2 v), exact, for subnormals too
}

std::string BinadeText(int binade) {
  if (binade == kBinadeOfZero) return "0";
  if (binade == kBinadeOfInf) return "inf";
  return "2^" + std::to_string(binade);
}

bool ParseBinade(const std::string& text, int* binade) {
  if (text == "0" || text == "inf") {
    *binade = text == "0" ? kBinadeOfZero : kBinadeOfInf;
    return true;
  }
  if (text.rfind("2^", 0) != 0) return false;
  int n = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data() + 2, end, n);
  // The binades of positive doubles, subnormals included.
  if (ec != std::errc() || p != end || n < -1074 || n > 1023) return false;
  *binade = n;
  return true;
}

bool BinadesDiffer(int recorded, int observed) { return std::abs(recorded - observed) > 1; }

std::string MagnitudeText(const Magnitude& m) {
  return "ulp " + BinadeText(m.ulp) + " use " + BinadeText(m.use);
}

const BaselineRun* Baseline::FindRun(const std::string& budget, std::uint64_t seed) const {
  for (const BaselineRun& r : runs) {
    if (r.budget == budget && r.seed == seed) return &r;
  }
  return nullptr;
}

std::string DefaultBaselinesDir() { return LNV_DEFAULT_BASELINES_DIR; }

std::string BaselinePath(const std::string& dir, const std::string& kernel) {
  return (std::filesystem::path(dir) / (FileSafeName(kernel) + ".baseline")).string();
}

std::string FindingCaseName(const std::string& kernel, const Finding& f) {
  return FileSafeName(kernel) + "__" + f.family + "__" + f.output + "__" + f.verdict + ".case";
}

std::string FormatBaseline(const Baseline& b) {
  std::ostringstream o;
  o << "# Recorded findings and magnitudes of " << b.kernel << " (status observed).\n"
    << "# A finding: where it breaks the generic bound or the contract (finite in ->\n"
    << "# finite out, NaN in -> NaN out); each names the smallest case found that\n"
    << "# shows it, stored beside this file (replay: ln_check --replay <case>).\n"
    << "# A magnitude, for every output judged in every family, failing or not:\n"
    << "#   magnitude FAMILY OUTPUT ulp 2^A use 2^B\n"
    // No brackets: CMake (changed_baseline_test.cmake) reads these lines as a list.
    << "# the largest error is 2^A ULPs or more, below 2^(A+1), and the largest\n"
    << "# error/bound 2^B or more, below 2^(B+1), over the elements with a finite\n"
    << "# error (0: none above zero; a NaN or infinity mismatch is its finding's\n"
    << "# verdict, not a magnitude).\n"
    << "# ln_check fails when a run finds a finding not listed here, no longer finds\n"
    << "# one that is, or lands more than one binade away from a magnitude, better\n"
    << "# or worse. Rewrite after a deliberate change with the thread count of the\n"
    << "# tests (impls/thirdparty/CMakeLists.txt: the column sums depend on it):\n"
    << "#   OMP_NUM_THREADS=1 ln_check --impls '" << b.kernel
    << "' --budget <budget> --write-baselines\n"
    << "lnv-baseline " << kBaselineVersion << "\n"
    << "kernel " << b.kernel << "\n";
  for (const BaselineRun& r : b.runs) {
    o << "run " << r.budget << " " << r.seed << "\n";
    for (const Finding& f : r.findings) {
      const auto c = b.cases.find(f);
      o << "finding " << FindingText(f) << " " << (c != b.cases.end() ? c->second : "-") << "\n";
    }
    for (const auto& [at, m] : r.magnitudes) {
      o << "magnitude " << at.family << " " << at.output << " " << MagnitudeText(m) << "\n";
    }
  }
  o << "end\n";
  return o.str();
}

namespace {

// One "magnitude FAMILY OUTPUT ulp X use Y" line into the last run; "" or why not.
std::string ParseMagnitude(const std::vector<std::string>& t, Baseline* b) {
  if (b->version < 2) return "a magnitude in a version 1 file";
  if (b->runs.empty()) return "magnitude before any 'run' line";
  if (t[3] != "ulp" || t[5] != "use") return "want 'magnitude FAMILY OUTPUT ulp X use Y'";
  if (!OutputNamed(t[2])) return "unknown output '" + t[2] + "'";
  Magnitude m;
  if (!ParseBinade(t[4], &m.ulp)) return "bad binade '" + t[4] + "' (want 2^N, 0 or inf)";
  if (!ParseBinade(t[6], &m.use)) return "bad binade '" + t[6] + "' (want 2^N, 0 or inf)";
  if (!b->runs.back().magnitudes.emplace(FamilyOutput{t[1], t[2]}, m).second) {
    return "magnitude of " + t[1] + " " + t[2] + " listed twice";
  }
  return "";
}

}  // namespace

bool ParseBaseline(const std::string& text, Baseline* out, std::string* error) {
  Baseline b;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool magic = false, ended = false;
  const auto fail = [&](const std::string& why) {
    *error = "line " + std::to_string(n) + ": " + why;
    return false;
  };
  while (std::getline(in, line)) {
    ++n;
    const std::vector<std::string> t = Tokens(line);
    if (t.empty()) continue;
    if (ended) return fail("text after 'end'");
    if (!magic) {
      if (t.size() != 2 || t[0] != "lnv-baseline" || (t[1] != "1" && t[1] != "2")) {
        return fail("want 'lnv-baseline 2' (or the older 1)");
      }
      b.version = t[1][0] - '0';
      magic = true;
    } else if (t[0] == "kernel" && t.size() == 2 && b.kernel.empty()) {
      b.kernel = t[1];
    } else if (t[0] == "run" && t.size() == 3) {
      if (t[1] != "quick" && t[1] != "full") return fail("budget must be quick or full");
      std::uint64_t seed = 0;
      const auto [p, ec] = std::from_chars(t[2].data(), t[2].data() + t[2].size(), seed);
      if (ec != std::errc() || p != t[2].data() + t[2].size())
        return fail("bad seed '" + t[2] + "'");
      if (b.FindRun(t[1], seed) != nullptr) return fail("run " + t[1] + " " + t[2] + " twice");
      b.runs.push_back({t[1], seed, {}, {}});
    } else if (t[0] == "finding" && t.size() == 5) {
      if (b.runs.empty()) return fail("finding before any 'run' line");
      const Finding f{t[1], t[2], t[3]};
      if (!KnownOutput(f.output)) return fail("unknown output '" + f.output + "'");
      if (!KnownFailureVerdict(f.verdict))
        return fail("'" + f.verdict + "' is not a failing verdict");
      if (!b.runs.back().findings.insert(f).second) return fail("finding listed twice");
      if (t[4] != "-") {
        const auto [it, inserted] = b.cases.emplace(f, t[4]);
        if (!inserted && it->second != t[4]) return fail("one finding, two case files");
      }
    } else if (t[0] == "magnitude" && t.size() == 7) {
      if (const std::string why = ParseMagnitude(t, &b); !why.empty()) return fail(why);
    } else if (t[0] == "end" && t.size() == 1) {
      ended = true;
    } else {
      return fail("cannot read '" + line + "'");
    }
  }
  if (!magic) return fail("empty file");
  if (b.kernel.empty()) return fail("no 'kernel' line");
  if (!ended) return fail("no 'end' line (truncated?)");
  *out = std::move(b);
  return true;
}

bool ReadBaseline(const std::string& path, Baseline* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = path + ": cannot open";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (!ParseBaseline(text.str(), out, error)) {
    *error = path + ": " + *error;
    return false;
  }
  return true;
}

bool WriteBaseline(const std::string& path, const Baseline& b, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream out(path);
  out << FormatBaseline(b);
  if (!out) {
    *error = path + ": cannot write";
    return false;
  }
  return true;
}

std::set<Finding> FindingsOf(const std::string& family, const Judgement& j) {
  std::set<Finding> found;
  if (!IsFailure(j.verdict)) return found;
  for (const OutputResult& o : j.outputs) {
    if (o.present && IsFailure(o.verdict)) {
      found.insert(
          {family, std::string(OutputName(o.output)), std::string(VerdictName(o.verdict))});
    }
  }
  if (IsCallVerdict(j.verdict)) found.insert({family, "call", std::string(VerdictName(j.verdict))});
  return found;
}

BaselineDiff CompareFindings(const std::set<Finding>& recorded, const std::set<Finding>& observed,
                             const std::string& families_glob) {
  BaselineDiff diff;
  for (const Finding& f : observed) {
    if (GlobMatch(families_glob, f.family) && !recorded.contains(f)) diff.added.push_back(f);
  }
  for (const Finding& f : recorded) {
    if (GlobMatch(families_glob, f.family) && !observed.contains(f)) diff.vanished.push_back(f);
  }
  return diff;
}

namespace {

// "ulp 2^3 -> 2^6 (worse)" when the measure moved, else "".
std::string MeasureChange(const char* name, int recorded, int observed) {
  if (!BinadesDiffer(recorded, observed)) return "";
  return std::string(name) + " " + BinadeText(recorded) + " -> " + BinadeText(observed) +
         (observed > recorded ? " (worse)" : " (better)");
}

}  // namespace

std::string MagnitudeChangeText(const MagnitudeChange& c) {
  const std::string at = c.at.family + " " + c.at.output + ": ";
  if (!c.observed)
    return at + "recorded " + MagnitudeText(*c.recorded) + ", not judged in this run";
  if (!c.recorded) return at + "none recorded, this run " + MagnitudeText(*c.observed);
  std::string text = MeasureChange("ulp", c.recorded->ulp, c.observed->ulp);
  const std::string use = MeasureChange("use", c.recorded->use, c.observed->use);
  if (!text.empty() && !use.empty()) text += ", ";
  return at + text + use;
}

std::vector<MagnitudeChange> CompareMagnitudes(const Magnitudes& recorded,
                                               const Magnitudes& observed,
                                               const std::string& families_glob) {
  std::map<FamilyOutput, MagnitudeChange> both;
  for (const auto& [at, m] : recorded) {
    if (GlobMatch(families_glob, at.family)) both[at].recorded = m;
  }
  for (const auto& [at, m] : observed) {
    if (GlobMatch(families_glob, at.family)) both[at].observed = m;
  }
  std::vector<MagnitudeChange> changes;
  for (auto& [at, c] : both) {
    c.at = at;
    const bool moved = !c.recorded || !c.observed ||
                       BinadesDiffer(c.recorded->ulp, c.observed->ulp) ||
                       BinadesDiffer(c.recorded->use, c.observed->use);
    if (moved) changes.push_back(c);
  }
  return changes;
}

void ObservedRun::Observe(const std::string& family, const Case& c, const Judgement& j) {
  // A NaN magnitude would be a judge bug; counted as inf, it can never read as better.
  const auto larger = [](double a, double b) {
    return std::isnan(b) ? std::numeric_limits<double>::infinity() : std::max(a, b);
  };
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    Max& m = max_[{family, std::string(OutputName(o.output))}];
    m.ulp = larger(m.ulp, o.max_ulp);
    m.use = larger(m.use, o.max_bound_use);
  }
  for (const Finding& f : FindingsOf(family, j)) {
    if (!findings_.contains(f)) findings_.emplace(f, ObservedCase{c, j});
  }
}

void ObservedRun::Merge(const ObservedRun& later) {
  for (const auto& [f, oc] : later.findings_) findings_.try_emplace(f, oc);
  for (const auto& [at, m] : later.max_) {
    Max& mine = max_[at];
    mine.ulp = std::max(mine.ulp, m.ulp);
    mine.use = std::max(mine.use, m.use);
  }
}

Magnitudes ObservedRun::magnitudes() const {
  Magnitudes out;
  for (const auto& [at, m] : max_) out[at] = {Binade(m.ulp), Binade(m.use)};
  return out;
}

double ObservedRun::max_ulp(const FamilyOutput& at) const {
  const auto m = max_.find(at);
  return m == max_.end() ? 0.0 : m->second.ulp;
}

double ObservedRun::max_bound_use(const FamilyOutput& at) const {
  const auto m = max_.find(at);
  return m == max_.end() ? 0.0 : m->second.use;
}

Case SelectColumns(const Case& c, const std::vector<std::int64_t>& cols) {
  Case o = c;
  o.d = static_cast<std::int64_t>(cols.size());
  const auto pick = [&](const std::vector<double>& v, std::int64_t rows) {
    std::vector<double> r;
    if (v.empty()) return r;
    for (std::int64_t row = 0; row < rows; ++row) {
      for (std::int64_t j : cols) r.push_back(v[row * c.d + j]);
    }
    return r;
  };
  o.x = pick(c.x, c.rows);
  o.dy = pick(c.dy, c.rows);
  o.gamma = pick(c.gamma, 1);
  o.beta = pick(c.beta, 1);
  return o;
}

Case ShrinkCase(const Case& c, const std::function<bool(const Case&)>& still_fails,
                const std::vector<std::int64_t>& rows_first, int max_tries) {
  constexpr std::int64_t kMaxSingleRows = 48;
  Case best = c;
  int tries = 0;
  const auto test = [&](const Case& cand) {
    if (tries >= max_tries) return false;
    ++tries;
    return still_fails(cand);
  };
  // A single row is the most readable case: try the likely ones first.
  if (best.rows > 1) {
    std::vector<std::int64_t> order;
    for (std::int64_t r : rows_first) {
      if (r >= 0 && r < best.rows && std::find(order.begin(), order.end(), r) == order.end()) {
        order.push_back(r);
      }
    }
    for (std::int64_t r = 0;
         r < best.rows && static_cast<std::int64_t>(order.size()) < kMaxSingleRows; ++r) {
      if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
    }
    for (std::int64_t r : order) {
      Case one = SelectRows(best, {r});
      if (test(one)) {
        best = std::move(one);
        break;
      }
    }
  }
  // Delta debugging: drop chunks of rows, then of columns, halving the chunk.
  const std::int64_t min_d = c.d == 1 ? 1 : 2;
  const auto reduce = [&](bool rows) {
    bool changed = false;
    std::int64_t n = rows ? best.rows : best.d;
    const std::int64_t floor = rows ? 1 : min_d;
    for (std::int64_t chunk = n / 2; chunk >= 1 && n > floor && tries < max_tries;) {
      bool removed = false;
      for (std::int64_t start = 0; start < n && n > floor && tries < max_tries;) {
        std::vector<std::int64_t> keep;
        for (std::int64_t i = 0; i < n; ++i) {
          if (i < start || i >= start + chunk) keep.push_back(i);
        }
        if (static_cast<std::int64_t>(keep.size()) < floor) {
          start += chunk;
          continue;
        }
        Case cand = rows ? SelectRows(best, keep) : SelectColumns(best, keep);
        if (test(cand)) {
          best = std::move(cand);
          n = static_cast<std::int64_t>(keep.size());
          removed = changed = true;
        } else {
          start += chunk;
        }
      }
      if (!removed) chunk /= 2;
      chunk = std::min(chunk, n / 2 > 0 ? n / 2 : 1);
    }
    return changed;
  };
  for (bool changed = true; changed && tries < max_tries;) {
    changed = reduce(true);
    changed = reduce(false) || changed;
  }
  return best;
}

namespace {

// How replay commands name a case stored in the baselines directory.
std::string CaseRef(const std::string& case_ref_dir, const std::string& name) {
  return (std::filesystem::path(case_ref_dir) / name).string();
}

bool StillShows(const ImplInfo& impl, const Case& c, const Finding& f) {
  return FindingsOf(f.family, Judge(impl, c)).contains(f);
}

}  // namespace

namespace {

// Reads the kernel's baseline for a comparison; on a missing, unreadable or
// version 1 file prints why, sets *status and returns false.
bool ReadForComparison(const BaselineSetting& opt, const std::string& path, const std::string& tag,
                       std::size_t observed, Baseline* b, std::string* status, std::ostream& out) {
  std::string error;
  if (!std::filesystem::exists(path)) {
    *status = "MISSING";
    out << tag << "none recorded at " << path << "; this run found " << observed
        << " finding(s): record them with --write-baselines\n";
    return false;
  }
  if (!ReadBaseline(path, b, &error)) {
    *status = "UNREADABLE";
    out << tag << error << "\n";
    return false;
  }
  if (b->version < kBaselineVersion) {
    *status = "OLD FORMAT";
    out << tag << path << " is format " << b->version << ", without the magnitudes this run "
        << "is compared on: re-record it with\n  " << opt.found_by << "\n";
    return false;
  }
  return true;
}

// Prints the new and vanished findings (on_new for each new one) and the
// moved magnitudes; returns the status of the table.
std::string ReportChanges(const BaselineSetting& opt, const std::string& path,
                          const std::string& tag, const Baseline& b, const BaselineRun& run,
                          const ObservedRun& found, std::ostream& out,
                          const std::function<void(const Finding&, const ObservedCase&)>& on_new) {
  std::set<Finding> observed;
  for (const auto& [f, fc] : found.findings()) observed.insert(f);
  const BaselineDiff diff = CompareFindings(run.findings, observed, opt.families_glob);
  for (const Finding& f : diff.added) {
    out << tag << "NEW finding " << FindingText(f) << "\n";
    if (on_new) on_new(f, found.findings().at(f));
  }
  for (const Finding& f : diff.vanished) {
    out << tag << "VANISHED finding " << FindingText(f) << " (recorded in " << path << ")\n";
    if (const auto c = b.cases.find(f); c != b.cases.end()) {
      out << "  replay " << opt.program << " --replay " << CaseRef(opt.case_ref_dir, c->second)
          << "\n";
    }
  }
  const std::vector<MagnitudeChange> moved =
      CompareMagnitudes(run.magnitudes, found.magnitudes(), opt.families_glob);
  for (const MagnitudeChange& c : moved) {
    out << tag << "MAGNITUDE " << MagnitudeChangeText(c);
    if (c.observed) {
      out << " [this run: max " << Fmt("%.4g", found.max_ulp(c.at)) << " ulp, bound use "
          << Fmt("%.4g", found.max_bound_use(c.at)) << "]";
    }
    out << "\n";
  }
  if (!diff.Changed() && moved.empty()) {
    std::size_t findings = 0, magnitudes = 0;
    for (const Finding& f : run.findings) findings += GlobMatch(opt.families_glob, f.family);
    for (const auto& [at, m] : run.magnitudes) {
      magnitudes += GlobMatch(opt.families_glob, at.family);
    }
    return "matches, " + std::to_string(findings) + " finding(s), " + std::to_string(magnitudes) +
           " magnitude(s)";
  }
  return "CHANGED: " + std::to_string(diff.added.size()) + " new, " +
         std::to_string(diff.vanished.size()) + " vanished, " + std::to_string(moved.size()) +
         " moved";
}

// Every recorded case of the families run must still show its finding:
// prints each that does not; returns whether all do.
bool ReplayRecordedCases(const BaselineSetting& opt, const ImplInfo& impl, const Baseline& b,
                         const std::string& tag, std::ostream& out) {
  bool ok = true;
  for (const auto& [f, name] : b.cases) {
    if (!GlobMatch(opt.families_glob, f.family)) continue;
    const std::string cpath = (std::filesystem::path(opt.dir) / name).string();
    Case c;
    std::string error, why;
    if (!ReadCaseFile(cpath, &c, &error)) {
      why = error;
    } else if (c.kernel != impl.name) {
      why = cpath + ": a case of " + c.kernel;
    } else if (const std::string incompatible = CheckCompatible(impl, c); !incompatible.empty()) {
      why = cpath + ": " + incompatible;
    } else if (!StillShows(impl, c, f)) {
      why = "recorded case no longer shows " + FindingText(f) + "\n  replay " + opt.program +
            " --replay " + CaseRef(opt.case_ref_dir, name);
    }
    if (why.empty()) continue;
    out << tag << why << "\n";
    ok = false;
  }
  return ok;
}

}  // namespace

bool CompareWithBaseline(const BaselineSetting& opt, const ImplInfo& impl, const ObservedRun& found,
                         std::string* status, std::ostream& out,
                         const std::function<void(const Finding&, const ObservedCase&)>& on_new) {
  const std::string path = BaselinePath(opt.dir, impl.name);
  const std::string tag = "BASELINE " + impl.name + ": ";
  Baseline b;
  if (!ReadForComparison(opt, path, tag, found.findings().size(), &b, status, out)) return false;
  bool ok = true;
  if (const BaselineRun* run = b.FindRun(opt.budget, opt.seed); run == nullptr) {
    *status = "not compared";
    out << "baseline " << impl.name << ": no recorded run for budget " << opt.budget << ", seed "
        << opt.seed << ": findings not compared (recorded cases still replayed)\n";
  } else {
    *status = ReportChanges(opt, path, tag, b, *run, found, out, on_new);
    ok = status->rfind("matches", 0) == 0;
  }
  if (!ReplayRecordedCases(opt, impl, b, tag, out)) {
    if (ok) *status = "CHANGED: a recorded case";
    ok = false;
  }
  return ok;
}

namespace {

// A version 1 file has no magnitudes: its runs go (a run without them would
// read as "every magnitude new"), its cases stay for reuse. Over a subset of
// the families the file would keep findings without magnitudes: refused.
bool UpgradeFormat(const BaselineSetting& opt, const std::string& path, Baseline* b,
                   std::ostream& out) {
  if (opt.families_glob != "*") {
    out << "ln_check: " << path << " is format " << b->version
        << ": re-record it over every family (without --families): not overwritten\n";
    return false;
  }
  for (const BaselineRun& r : b->runs) {
    if (r.budget == opt.budget && r.seed == opt.seed) continue;
    out << "baseline " << b->kernel << ": format " << b->version << " run " << r.budget << " "
        << r.seed << " dropped (no magnitudes): re-record it with --budget " << r.budget
        << " --seed " << r.seed << " --write-baselines\n";
  }
  b->runs.clear();
  b->version = kBaselineVersion;
  return true;
}

// Writes the smallest case found that shows f (or keeps the recorded one if
// it still does) beside the baseline and records its name in b->cases.
// Returns false (with the reason printed) when it cannot be written.
bool RecordCase(const BaselineSetting& opt, const ImplInfo& impl, const std::string& path,
                const Finding& f, const ObservedCase& fc, Baseline* b, int* written,
                std::ostream& out) {
  std::string error;
  if (const auto c = b->cases.find(f); c != b->cases.end()) {
    Case old;
    if (ReadCaseFile((std::filesystem::path(opt.dir) / c->second).string(), &old, &error) &&
        CheckCompatible(impl, old).empty() && StillShows(impl, old, f)) {
      return true;  // keep the recorded case: stable diffs
    }
  }
  std::vector<std::int64_t> rows_first;
  if (const std::optional<Output> o = OutputNamed(f.output); o && fc.j[*o].worst) {
    const std::int64_t worst = *fc.j[*o].worst;
    if (*o == Output::kY || *o == Output::kDx) rows_first.push_back(worst / fc.c.d);
    if (*o == Output::kMean || *o == Output::kRstd) rows_first.push_back(worst);
  }
  Case w = ShrinkCase(
      fc.c, [&](const Case& cand) { return StillShows(impl, cand, f); }, rows_first);
  const std::string name = FindingCaseName(impl.name, f);
  w.kernel = impl.name;
  w.provenance.found_by = opt.found_by;
  w.provenance.why += "; " + f.verdict + " on " + f.output;
  w.provenance.notes.push_back(
      "status observed: a recorded finding of this third-party "
      "kernel, listed in " +
      std::filesystem::path(path).filename().string());
  w.provenance.notes.push_back("result " + Summarize(Judge(impl, w)));
  w.provenance.notes.push_back("shrunk from rows=" + std::to_string(fc.c.rows) +
                               ", d=" + std::to_string(fc.c.d) +
                               " to rows=" + std::to_string(w.rows) + ", d=" + std::to_string(w.d));
  // The replay names the case as the source tree does (opt.case_ref_dir).
  if (const std::string e =
          WriteReplayableCase((std::filesystem::path(opt.dir) / name).string(), w, nullptr,
                              opt.program + " --replay " + CaseRef(opt.case_ref_dir, name));
      !e.empty()) {
    out << "ln_check: " << e << "\n";
    return false;
  }
  b->cases[f] = name;
  ++*written;
  return true;
}

// Forgets (and deletes) the cases of findings no run lists any more.
void DropUnlistedCases(const std::string& dir, Baseline* b) {
  std::set<Finding> listed;
  for (const BaselineRun& r : b->runs) listed.insert(r.findings.begin(), r.findings.end());
  std::error_code ec;
  for (auto it = b->cases.begin(); it != b->cases.end();) {
    if (listed.contains(it->first)) {
      ++it;
      continue;
    }
    std::filesystem::remove(std::filesystem::path(dir) / it->second, ec);
    it = b->cases.erase(it);
  }
}

// The run of this budget and seed in b, added if missing.
BaselineRun* RunOf(const BaselineSetting& opt, Baseline* b) {
  for (BaselineRun& r : b->runs) {
    if (r.budget == opt.budget && r.seed == opt.seed) return &r;
  }
  b->runs.push_back({opt.budget, opt.seed, {}, {}});
  return &b->runs.back();
}

}  // namespace

bool RecordBaseline(const BaselineSetting& opt, const ImplInfo& impl, const ObservedRun& found,
                    std::string* status, std::ostream& out) {
  const std::string path = BaselinePath(opt.dir, impl.name);
  Baseline b;
  b.kernel = impl.name;
  std::string error;
  if (std::filesystem::exists(path) && !ReadBaseline(path, &b, &error)) {
    out << "ln_check: " << error << ": not overwritten\n";
    *status = "UNREADABLE";
    return false;
  }
  // What this run replaces, for the summary (a version 1 run: findings only).
  BaselineRun before;
  if (const BaselineRun* r = b.FindRun(opt.budget, opt.seed)) before = *r;
  if (b.version < kBaselineVersion && !UpgradeFormat(opt, path, &b, out)) {
    *status = "NOT WRITTEN";
    return false;
  }
  b.kernel = impl.name;
  std::error_code ec;
  std::filesystem::create_directories(opt.dir, ec);
  BaselineRun* run = RunOf(opt, &b);
  const auto in_run = [&](const std::string& family) {
    return GlobMatch(opt.families_glob, family);
  };
  std::erase_if(run->findings, [&](const Finding& f) { return in_run(f.family); });
  std::erase_if(run->magnitudes, [&](const auto& m) { return in_run(m.first.family); });
  for (const auto& [at, m] : found.magnitudes()) run->magnitudes[at] = m;
  int written = 0;
  for (const auto& [f, fc] : found.findings()) {
    run->findings.insert(f);
    if (!RecordCase(opt, impl, path, f, fc, &b, &written, out)) {
      *status = "NOT WRITTEN";
      return false;
    }
  }
  DropUnlistedCases(opt.dir, &b);
  if (!WriteBaseline(path, b, &error)) {
    out << "ln_check: " << error << "\n";
    *status = "NOT WRITTEN";
    return false;
  }
  const BaselineDiff diff = CompareFindings(before.findings, run->findings, "*");
  std::size_t moved = 0, added = 0, gone = 0;
  for (const MagnitudeChange& c : CompareMagnitudes(before.magnitudes, run->magnitudes, "*")) {
    if (!c.recorded) {
      ++added;
    } else if (!c.observed) {
      ++gone;
    } else {
      ++moved;
    }
  }
  out << "baseline " << impl.name << ": wrote " << path << " (" << opt.budget << ", seed "
      << opt.seed << "): " << run->findings.size() << " finding(s) (" << diff.added.size()
      << " new, " << diff.vanished.size() << " gone), " << run->magnitudes.size()
      << " magnitude(s) (" << added << " new, " << gone << " gone, " << moved << " moved); "
      << written << " case(s) written\n";
  *status = "written, " + std::to_string(run->findings.size()) + " finding(s), " +
            std::to_string(run->magnitudes.size()) + " magnitude(s)";
  return true;
}

}  // namespace lnv

#include "harness/baseline.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <ostream>
#include <sstream>

#ifndef LNV_DEFAULT_BASELINES_DIR
#error "LNV_DEFAULT_BASELINES_DIR (the source tree's impls/thirdparty/baselines) must be defined"
#endif

namespace lnv {
namespace {

std::string FileSafe(std::string_view s) {
  std::string o;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '-' || ch == '_';
    o += ok ? ch : '_';
  }
  return o;
}

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

std::vector<std::string> Tokens(const std::string& line) {
  std::vector<std::string> t;
  std::istringstream in(line.substr(0, line.find('#')));
  for (std::string w; in >> w;) t.push_back(w);
  return t;
}

}  // namespace

std::string FindingText(const Finding& f) { return f.family + " " + f.output + " " + f.verdict; }

const BaselineRun* Baseline::FindRun(const std::string& budget, std::uint64_t seed) const {
  for (const BaselineRun& r : runs) {
    if (r.budget == budget && r.seed == seed) return &r;
  }
  return nullptr;
}

std::string DefaultBaselinesDir() { return LNV_DEFAULT_BASELINES_DIR; }

std::string BaselinePath(const std::string& dir, const std::string& kernel) {
  return (std::filesystem::path(dir) / (FileSafe(kernel) + ".baseline")).string();
}

std::string FindingCaseName(const std::string& kernel, const Finding& f) {
  return FileSafe(kernel) + "__" + f.family + "__" + f.output + "__" + f.verdict + ".case";
}

std::string FormatBaseline(const Baseline& b) {
  std::ostringstream o;
  o << "# Recorded findings of " << b.kernel << " (status observed): where it breaks the\n"
    << "# generic bound or the contract (finite in -> finite out, NaN in -> NaN out).\n"
    << "# ln_check fails when a run finds one that is not listed here, or no longer\n"
    << "# finds one that is. Each finding names the smallest case found that shows it,\n"
    << "# stored beside this file; replay it with ln_check --replay <case>.\n"
    << "# Rewrite after a deliberate change with:\n"
    << "#   ln_check --impls '" << b.kernel << "' --budget <budget> --write-baselines\n"
    << "lnv-baseline 1\n"
    << "kernel " << b.kernel << "\n";
  for (const BaselineRun& r : b.runs) {
    o << "run " << r.budget << " " << r.seed << "\n";
    for (const Finding& f : r.findings) {
      const auto c = b.cases.find(f);
      o << "finding " << FindingText(f) << " " << (c != b.cases.end() ? c->second : "-") << "\n";
    }
  }
  o << "end\n";
  return o.str();
}

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
      if (t != std::vector<std::string>{"lnv-baseline", "1"}) return fail("want 'lnv-baseline 1'");
      magic = true;
    } else if (t[0] == "kernel" && t.size() == 2 && b.kernel.empty()) {
      b.kernel = t[1];
    } else if (t[0] == "run" && t.size() == 3) {
      if (t[1] != "quick" && t[1] != "full") return fail("budget must be quick or full");
      std::uint64_t seed = 0;
      const auto [p, ec] = std::from_chars(t[2].data(), t[2].data() + t[2].size(), seed);
      if (ec != std::errc() || p != t[2].data() + t[2].size()) return fail("bad seed '" + t[2] + "'");
      if (b.FindRun(t[1], seed) != nullptr) return fail("run " + t[1] + " " + t[2] + " twice");
      b.runs.push_back({t[1], seed, {}});
    } else if (t[0] == "finding" && t.size() == 5) {
      if (b.runs.empty()) return fail("finding before any 'run' line");
      const Finding f{t[1], t[2], t[3]};
      if (!KnownOutput(f.output)) return fail("unknown output '" + f.output + "'");
      if (!KnownFailureVerdict(f.verdict)) return fail("'" + f.verdict + "' is not a failing verdict");
      if (!b.runs.back().findings.insert(f).second) return fail("finding listed twice");
      if (t[4] != "-") {
        const auto [it, inserted] = b.cases.emplace(f, t[4]);
        if (!inserted && it->second != t[4]) return fail("one finding, two case files");
      }
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
      found.insert({family, std::string(OutputName(o.output)), std::string(VerdictName(o.verdict))});
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
    for (std::int64_t r = 0; r < best.rows && static_cast<std::int64_t>(order.size()) < kMaxSingleRows; ++r) {
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

bool CompareWithBaseline(const BaselineSetting& opt, const ImplInfo& impl,
                         const ObservedFindings& found, std::string* status, std::ostream& out,
                         const std::function<void(const Finding&, const ObservedCase&)>& on_new) {
  const std::string& dir = opt.dir;
  const std::string path = BaselinePath(dir, impl.name);
  const std::string tag = "BASELINE " + impl.name + ": ";
  std::set<Finding> observed;
  for (const auto& [f, fc] : found) observed.insert(f);
  Baseline b;
  std::string error;
  if (!std::filesystem::exists(path)) {
    *status = "MISSING";
    out << tag << "none recorded at " << path << "; this run found " << observed.size()
        << " finding(s): record them with --write-baselines\n";
    return false;
  }
  if (!ReadBaseline(path, &b, &error)) {
    *status = "UNREADABLE";
    out << tag << error << "\n";
    return false;
  }
  bool ok = true;
  const BaselineRun* run = b.FindRun(opt.budget, opt.seed);
  if (run == nullptr) {
    *status = "not compared";
    out << "baseline " << impl.name << ": no recorded run for budget " << opt.budget
        << ", seed " << opt.seed << ": findings not compared (recorded cases still replayed)\n";
  } else {
    const BaselineDiff diff = CompareFindings(run->findings, observed, opt.families_glob);
    for (const Finding& f : diff.added) {
      out << tag << "NEW finding " << FindingText(f) << "\n";
      if (on_new) on_new(f, found.at(f));
    }
    for (const Finding& f : diff.vanished) {
      out << tag << "VANISHED finding " << FindingText(f) << " (recorded in " << path << ")\n";
      if (const auto c = b.cases.find(f); c != b.cases.end()) {
        out << "  replay " << opt.program << " --replay " << CaseRef(opt.case_ref_dir, c->second) << "\n";
      }
    }
    ok = !diff.Changed();
    std::size_t compared = 0;
    for (const Finding& f : run->findings) compared += GlobMatch(opt.families_glob, f.family);
    *status = ok ? "matches, " + std::to_string(compared) + " finding(s)"
                     : "CHANGED: " + std::to_string(diff.added.size()) + " new, " +
                           std::to_string(diff.vanished.size()) + " vanished";
  }
  // Every recorded case must still show its finding.
  for (const auto& [f, name] : b.cases) {
    if (!GlobMatch(opt.families_glob, f.family)) continue;
    const std::string cpath = (std::filesystem::path(dir) / name).string();
    Case c;
    std::string why;
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
    if (ok) *status = "CHANGED: a recorded case";
    ok = false;
  }
  return ok;
}

bool RecordBaseline(const BaselineSetting& opt, const ImplInfo& impl,
                    const ObservedFindings& found, std::string* status, std::ostream& out) {
  const std::string& dir = opt.dir;
  const std::string path = BaselinePath(dir, impl.name);
  Baseline b;
  std::string error;
  if (std::filesystem::exists(path) && !ReadBaseline(path, &b, &error)) {
    out << "ln_check: " << error << ": not overwritten\n";
    *status = "UNREADABLE";
    return false;
  }
  b.kernel = impl.name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string& budget = opt.budget;
  BaselineRun* run = nullptr;
  for (BaselineRun& r : b.runs) {
    if (r.budget == budget && r.seed == opt.seed) run = &r;
  }
  if (run == nullptr) {
    b.runs.push_back({budget, opt.seed, {}});
    run = &b.runs.back();
  }
  const std::set<Finding> before = run->findings;
  std::erase_if(run->findings,
                [&](const Finding& f) { return GlobMatch(opt.families_glob, f.family); });
  int written = 0;
  for (const auto& entry : found) {
    // Named references, not a structured binding: clang 14 (the fuzz preset)
    // cannot capture a structured binding in a lambda.
    const auto& f = entry.first;
    const auto& fc = entry.second;
    run->findings.insert(f);
    if (const auto c = b.cases.find(f); c != b.cases.end()) {
      Case old;
      if (ReadCaseFile((std::filesystem::path(dir) / c->second).string(), &old, &error) &&
          CheckCompatible(impl, old).empty() && StillShows(impl, old, f)) {
        continue;  // keep the recorded case: stable diffs
      }
    }
    std::vector<std::int64_t> rows_first;
    if (const auto o = std::find_if(kAllOutputs.begin(), kAllOutputs.end(),
                                    [&](Output o) { return OutputName(o) == f.output; });
        o != kAllOutputs.end() && fc.j[*o].worst) {
      const std::int64_t worst = *fc.j[*o].worst;
      if (*o == Output::kY || *o == Output::kDx) rows_first.push_back(worst / fc.c.d);
      if (*o == Output::kMean || *o == Output::kRstd) rows_first.push_back(worst);
    }
    Case w = ShrinkCase(fc.c, [&](const Case& cand) { return StillShows(impl, cand, f); },
                        rows_first);
    const std::string name = FindingCaseName(impl.name, f);
    w.kernel = impl.name;
    w.provenance.found_by = opt.found_by;
    w.provenance.why += "; " + f.verdict + " on " + f.output;
    w.provenance.replay = opt.program + " --replay " + CaseRef(opt.case_ref_dir, name);
    w.provenance.notes.push_back("status observed: a recorded finding of this third-party "
                                 "kernel, listed in " +
                                 std::filesystem::path(path).filename().string());
    w.provenance.notes.push_back("result " + Summarize(Judge(impl, w)));
    w.provenance.notes.push_back("shrunk from rows=" + std::to_string(fc.c.rows) + ", d=" +
                                 std::to_string(fc.c.d) + " to rows=" + std::to_string(w.rows) +
                                 ", d=" + std::to_string(w.d));
    if (!WriteCaseFile((std::filesystem::path(dir) / name).string(), w, &error)) {
      out << "ln_check: " << error << "\n";
      *status = "NOT WRITTEN";
      return false;
    }
    b.cases[f] = name;
    ++written;
  }
  // Forget (and delete) the cases of findings no run lists any more.
  std::set<Finding> listed;
  for (const BaselineRun& r : b.runs) listed.insert(r.findings.begin(), r.findings.end());
  for (auto it = b.cases.begin(); it != b.cases.end();) {
    if (listed.contains(it->first)) {
      ++it;
      continue;
    }
    std::filesystem::remove(std::filesystem::path(dir) / it->second, ec);
    it = b.cases.erase(it);
  }
  if (!WriteBaseline(path, b, &error)) {
    out << "ln_check: " << error << "\n";
    *status = "NOT WRITTEN";
    return false;
  }
  const BaselineDiff diff = CompareFindings(before, run->findings, "*");
  out << "baseline " << impl.name << ": wrote " << path << " (" << budget << ", seed " << opt.seed
      << "): " << run->findings.size() << " finding(s), " << diff.added.size() << " new, "
      << diff.vanished.size() << " gone; " << written << " case(s) written\n";
  *status = "written, " + std::to_string(run->findings.size()) + " finding(s)";
  return true;
}


}  // namespace lnv

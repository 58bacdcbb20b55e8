// ln_check's command line (ParseCheckArgs, CheckUsage; harness/check.h).
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "harness/check.h"

namespace lnv {

std::string CheckUsage() {
  return "usage: ln_check [options]\n"
         "       ln_check --replay FILE\n"
         "\n"
         "Runs every registered LayerNorm/RMSNorm kernel over the seeded input families,\n"
         "judges each output against the exact oracle and the kernel's derived error\n"
         "bound, prints a table (kernel, dtype, max ULP, max bound use, verdict) and\n"
         "writes a case file for each finding: the worst case of each family a claim\n"
         "fails on (a negative control: its first catch), shrunk to its worst row when\n"
         "that row alone fails. The plan and the sweep are ln_report's.\n"
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

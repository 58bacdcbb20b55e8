#include "reports/options.h"

#include <charconv>

namespace lnv::report {
namespace {

template <typename T>
bool ParseInt(const std::string& s, T* v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::string ParseReportArgs(const std::vector<std::string>& args, ReportOptions* o) {
  bool measuring_option = false;  // options that only apply to a sweep
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool has_value = false;
    if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    std::string error;
    auto take = [&](std::string* dst) {
      if (!has_value) {
        if (i + 1 >= args.size()) {
          error = a + " needs a value";
          return false;
        }
        value = args[++i];
      }
      if (value.empty()) {
        error = a + " needs a non-empty value";
        return false;
      }
      *dst = value;
      return true;
    };
    const bool flag = a == "--help" || a == "-h" || a == "--quiet";
    if (flag && has_value) return a + " takes no value";
    std::string v;
    if (a == "--help" || a == "-h") {
      o->help = true;
    } else if (a == "--quiet") {
      o->quiet = true;
    } else if (a == "--out") {
      if (!take(&o->out_dir)) return error;
      o->out_given = true;
    } else if (a == "--impls") {
      if (!take(&o->impls_glob)) return error;
      measuring_option = true;
    } else if (a == "--plugin") {
      if (!take(&v)) return error;
      o->plugins.push_back(v);
      measuring_option = true;
    } else if (a == "--budget") {
      if (!take(&v)) return error;
      if (v == "quick") {
        o->budget = Budget::kQuick;
      } else if (v == "full") {
        o->budget = Budget::kFull;
      } else {
        return "--budget: want quick or full, got '" + v + "'";
      }
      measuring_option = true;
    } else if (a == "--seed") {
      if (!take(&v)) return error;
      if (!ParseInt(v, &o->seed)) return "--seed: '" + v + "' is not an unsigned 64-bit integer";
      measuring_option = true;
    } else if (a == "--jobs" || a == "-j") {
      if (!take(&v)) return error;
      if (!ParseInt(v, &o->jobs) || o->jobs < 1 || o->jobs > 1024) {
        return a + ": want a whole number from 1 to 1024, got '" + v + "'";
      }
      measuring_option = true;
    } else if (a == "--typical") {
      if (!take(&v)) return error;
      if (!ParseTypicalTier(v, &o->typical)) {
        return "--typical: want fail, report or off, got '" + v + "'";
      }
      measuring_option = true;
    } else if (a == "--render") {
      if (!take(&o->render)) return error;
    } else if (a == "--compare") {
      if (!take(&o->compare)) return error;
    } else {
      return "unknown argument '" + args[i] + "'";
    }
  }
  if (!o->render.empty() && measuring_option) {
    return "--render draws an existing errors.json; --impls, --plugin, --budget, --seed and "
           "--jobs only apply to a new sweep";
  }
  return "";
}

std::string ReportUsage() {
  return "usage: ln_report [--out DIR] [--impls GLOB] [--plugin PATH]... [--budget quick|full]\n"
         "                 [--seed N] [--jobs N] [--typical T] [--quiet] [--compare OLD.json]\n"
         "       ln_report --render errors.json [--out DIR] [--compare OLD.json]\n"
         "\n"
         "Sweeps input families x kernels x dtypes x d (1 ... 65536), forward and backward,\n"
         "judges every case against the exact oracle and each kernel's derived error\n"
         "bound (harness/judge), and writes DIR/errors.json (schema: reports/SCHEMA.md),\n"
         "DIR/index.html (one self-contained page) and DIR/cases/ (a case file for every\n"
         "finding and every kernel's worst case, replayed by ln_check --replay FILE).\n"
         "\n"
         "  --out DIR          where to write (default report/; with --render: the\n"
         "                     directory of the rendered file)\n"
         "  --impls GLOB       only kernels whose registry name matches (*, ?); default *\n"
         "  --plugin PATH      also judge the kernels of this plugin (repeatable); plugins\n"
         "                     in LNV_PLUGINS (colon-separated) are always added\n"
         "  --budget B         quick (default: about a minute on two cores) or full (the\n"
         "                     nightly sweep: more d, kappa, magnitudes and seeds)\n"
         "  --seed N           base seed of the input families (default " +
         std::to_string(kDefaultSeed) +
         "); always printed\n"
         "  --jobs N, -j N     cases judged in parallel (default: one per hardware thread)\n"
         "  --typical T        the statistical tier on the random-data families: fail\n"
         "                     (default; beyond Higham & Mary's probabilistic bound is a\n"
         "                     finding, beyond_typical), report (counted only), or off\n"
         "  --quiet            no progress line on stderr\n"
         "  --render FILE      only render FILE (an errors.json) into DIR/index.html\n"
         "  --compare FILE     show what got better or worse since FILE (an older\n"
         "                     errors.json), in the page and on stdout\n"
         "  --help             this text\n"
         "\n"
         "Exit status: 0 every claims_bound (and plugin) kernel within its bound, every\n"
         "negative_control caught, every observed kernel as its baseline; 1 otherwise;\n"
         "2 bad usage or an unreadable file. --render exits with the status of the data.\n";
}

}  // namespace lnv::report

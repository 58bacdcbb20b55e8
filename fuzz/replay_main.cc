// fuzz_ln_replay: fuzz_ln's inputs and regression case files, replayed by a
// plain program (any compiler, no libFuzzer): what ctest runs under the label
// fuzz-regression. See kUsage.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/target.h"
#include "impls/plugin/loader.h"

namespace {

// The usage text states kCrossCheckEvery's value.
static_assert(lnv::fuzz::kCrossCheckEvery == 32, "update kUsage's cross-check rate");
constexpr const char* kUsage =
    "usage: fuzz_ln_replay [--every-kernel] PATH...\n"
    "\n"
    "Replays without libFuzzer what fuzz_ln runs and finds. Each PATH is a file or\n"
    "a directory (every file below it, sorted; README* and dotfiles skipped):\n"
    "  *.case   a case file: the kernel it names, judged as fuzz_ln judges it (a\n"
    "           claims_bound kernel must pass or fail only on a known finding, a\n"
    "           negative control must be caught), and the oracle's self-checks\n"
    "           (never undecided; its two backends agree bit for bit); a case\n"
    "           whose kernel is '-' gets only the latter.\n"
    "  other    a fuzz_ln input, judged as fuzz_ln judges it: the kernel its\n"
    "           selector byte picks (every compatible one with --every-kernel),\n"
    "           and the oracle's backend cross-check on every input carrying the\n"
    "           flag (fuzz_ln samples one flagged input in 32 by its hash).\n"
    "The kernel selection and limits come from the same environment as fuzz_ln\n"
    "(LNV_FUZZ_IMPLS, LNV_PLUGINS, LNV_FUZZ_MAX_D, LNV_FUZZ_KNOWN_FINDINGS). Case\n"
    "files of findings go to\n"
    "LNV_FUZZ_CASES_DIR (default lnv-cases).\n"
    "\n"
    "Exit status: 0 every file as expected, 1 a finding, 2 bad usage or an\n"
    "unreadable file.\n";

namespace fs = std::filesystem;

bool Skipped(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name.rfind("README", 0) == 0;
}

// Files named by the arguments, directories expanded; "" + *error on a bad path.
bool CollectFiles(const std::vector<std::string>& args, std::vector<std::string>* files,
                  std::string* error) {
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(a, ec)) {
        if (e.is_regular_file() && !Skipped(e.path())) found.push_back(e.path().string());
      }
      std::sort(found.begin(), found.end());
      files->insert(files->end(), found.begin(), found.end());
    } else if (fs::is_regular_file(a, ec)) {
      files->push_back(a);
    } else {
      *error = a + ": no such file or directory";
      return false;
    }
  }
  return true;
}

// A case file: the kernel it names, judged as fuzz_ln judges it (a
// claims_bound kernel passes or fails only on a known finding; a negative
// control is caught), then the oracle's self-checks. 0 as expected, 1 a
// finding, 2 unreadable or naming no compatible kernel.
int ReplayCaseFile(const lnv::fuzz::FuzzConfig& config, const std::vector<lnv::ImplInfo>& all,
                   const std::string& path) {
  lnv::Case c;
  std::string error;
  if (!lnv::ReadCaseFile(path, &c, &error)) {
    std::cout << "error " << error << "\n";
    return 2;
  }
  std::vector<const lnv::ImplInfo*> kernel;
  if (c.kernel != "-") {
    for (const lnv::ImplInfo& i : all) {
      if (i.name == c.kernel) kernel.push_back(&i);
    }
    if (kernel.empty() || !lnv::CheckCompatible(*kernel[0], c).empty()) {
      std::cout << "error " << path << ": no registered kernel '" << c.kernel
                << "' that can run it\n";
      return 2;
    }
  }
  const bool cross = c.d <= lnv::fuzz::kCrossCheckMaxElements;
  const lnv::fuzz::RunResult r = lnv::fuzz::RunCase(config, c, kernel, cross);
  int rc = 0;
  bool caught = false;
  std::string note;
  for (const lnv::fuzz::Finding& f : r.findings) {
    if (f.kind == lnv::fuzz::FindingKind::kKernel &&
        f.status == lnv::ImplStatus::kNegativeControl) {
      caught = true;
    } else if (!f.known.empty()) {
      note = ", known open finding: " + f.known;
    } else if (f.traps) {
      std::cout << lnv::fuzz::FormatFinding(f, "");
      rc = 1;
    }
  }
  if (!kernel.empty() && kernel[0]->status == lnv::ImplStatus::kNegativeControl) {
    if (!caught) {
      std::cout << "negative control " << c.kernel << " NOT caught by " << path << "\n";
      rc = 1;
    }
    note = ", negative control caught";
  }
  std::cout << (rc == 0 ? "ok    " : "FAIL  ") << path << " (case, kernel " << c.kernel
            << (cross ? ", oracle backends cross-checked" : "") << note << ")\n";
  return rc;
}

int ReplayInput(const lnv::fuzz::FuzzConfig& config, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "error " << path << ": cannot read\n";
    return 2;
  }
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  const lnv::fuzz::RunResult r = lnv::fuzz::RunInput(config, bytes.data(), bytes.size());
  int rc = 0;
  for (const lnv::fuzz::Finding& f : r.findings) {
    if (!f.traps) {
      std::cout << "known " << f.key << (f.known.empty() ? "" : ": " + f.known) << "\n";
      continue;
    }
    std::string error;
    const std::string written = lnv::fuzz::WriteFindingCase(config, f, &error);
    std::cout << lnv::fuzz::FormatFinding(f, written);
    rc = 1;
  }
  std::cout << (rc == 0 ? "ok    " : "FAIL  ") << path << " (input, " << r.stats.kernels_judged
            << " kernel runs, " << r.stats.elements << " elements)\n";
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::cout << kUsage;
    return 0;
  }
  lnv::fuzz::FuzzConfig config;
  config.cross_check_every = 1;  // LNV_FUZZ_CROSS_CHECK_EVERY may still set it
  if (const auto every = std::find(args.begin(), args.end(), "--every-kernel");
      every != args.end()) {
    config.every_kernel = true;
    args.erase(every);
  }
  for (const std::string& a : args) {
    if (a.rfind("-", 0) == 0) {
      std::cerr << "fuzz_ln_replay: unknown option " << a << " (see --help)\n";
      return 2;
    }
  }
  if (args.empty()) {
    std::cerr << "fuzz_ln_replay: no PATH given (see --help)\n";
    return 2;
  }
  if (const std::string error = lnv::fuzz::ConfigFromEnv(&config); !error.empty()) {
    std::cerr << "fuzz_ln_replay: " << error << " (see --help)\n";
    return 2;
  }
  std::vector<std::string> files;
  std::string error;
  if (!CollectFiles(args, &files, &error)) {
    std::cerr << "fuzz_ln_replay: " << error << "\n";
    return 2;
  }
  const lnv::PluginLoad all = lnv::ImplsWithPlugins();
  int worst = 0, failed = 0;
  for (const std::string& f : files) {
    const int rc = fs::path(f).extension() == ".case" ? ReplayCaseFile(config, all.impls, f)
                                                      : ReplayInput(config, f);
    worst = std::max(worst, rc);
    failed += rc != 0;
  }
  std::cout << (worst == 0 ? "ok" : "FAILED") << ": " << files.size() - failed << "/"
            << files.size() << " files as expected\n";
  return worst;
}

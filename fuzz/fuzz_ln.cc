// fuzz_ln: the libFuzzer entry points around fuzz/target.h. Built only with
// a fuzzing engine (the clang `fuzz` preset, or $LIB_FUZZING_ENGINE under
// OSS-Fuzz/ClusterFuzzLite); the g++ build replays the same inputs with
// fuzz_ln_replay instead. Usage: see kUsage (fuzz_ln --help).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "fuzz/feedback.h"
#include "fuzz/mutator.h"
#include "fuzz/target.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// The usage text states kCrossCheckEvery's value.
static_assert(lnv::fuzz::kCrossCheckEvery == 32,
              "update kUsage's LNV_FUZZ_CROSS_CHECK_EVERY default");
constexpr const char* kUsage =
    "usage: fuzz_ln [libFuzzer flags] [CORPUS_DIR... | INPUT...]\n"
    "\n"
    "Differential fuzzing of LayerNorm/RMSNorm kernels against the exact oracle.\n"
    "Each input (format: fuzz/fuzz_input.h) is judged by harness/judge; the\n"
    "process stops (libFuzzer crash, exit 1) when a claims_bound kernel breaks\n"
    "its bound or contract, when a negative control named by LNV_FUZZ_IMPLS is\n"
    "caught, or when the oracle is undecided or its backends disagree. Each such\n"
    "finding is written as a case file first; `ln_check --replay FILE` replays it.\n"
    "\n"
    "Environment:\n"
    "  LNV_FUZZ_IMPLS=GLOB     kernels to fuzz (default: every registered kernel\n"
    "                          except the negative controls)\n"
    "  LNV_PLUGINS=P1:P2       plugin kernels to add to the registry\n"
    "  LNV_FUZZ_MAX_D=N        largest row length d (default 4096, at most 65535)\n"
    "  LNV_FUZZ_CROSS_CHECK_EVERY=N  cross-check the oracle's backends on one\n"
    "                          flagged input in N, by its hash (default 32; 1 to\n"
    "                          minimize a backend finding: -minimize_crash=1)\n"
    "  LNV_FUZZ_CASES_DIR=DIR  where case files go (default lnv-cases)\n"
    "  LNV_FUZZ_KNOWN_FINDINGS=FILE  open findings that are recorded, not trapped\n"
    "                          (fuzz/known_findings.txt; format: fuzz/known_findings.h);\n"
    "                          unset: <this binary>.known_findings if it exists\n"
    "  LNV_FUZZ_PREWRITE=1     write each kernel's case before running it (crash\n"
    "                          conversion: a crash or hang leaves the case behind)\n"
    "  LNV_FUZZ_ISOLATE=1      run plugin kernels in a child process (guard pages,\n"
    "                          timeout): a crash, hang or overrun is a finding\n"
    "                          with its case; costs a fork per call\n"
    "  LNV_FUZZ_KEEP_GOING=1   write each distinct finding's case once and keep\n"
    "                          fuzzing instead of stopping (exploration, timing)\n"
    "  LNV_FUZZ_STATS=1        print exec/s and the oracle's share of the time at exit\n"
    "\n"
    "Useful libFuzzer flags: -dict=fuzz/fuzz_ln.dict -max_len=16384 -seed=N\n"
    "-max_total_time=S -runs=N -fork=N -ignore_crashes=1 -help=1 (all flags).\n"
    "Exit status: 0 nothing found, 1 a finding, 2 bad usage.\n";

lnv::fuzz::FuzzConfig* g_config = nullptr;
bool g_keep_going = false;

// One counter per feature (fuzz/feedback.h). libFuzzer reads this section
// as extra coverage and clears it before every input.
__attribute__((used, section("__libfuzzer_extra_counters")))
uint8_t g_feature_counters[lnv::fuzz::kFeatureSpace];

struct Totals {
  std::int64_t inputs = 0, kernels = 0, elements = 0, judged = 0, unclaimed = 0;
  std::int64_t typical = 0, beyond_typical = 0, beyond_typical_reported = 0;
  std::int64_t rechecked = 0, recheck_disagreements = 0, slow_path = 0, cross_checks = 0;
  double cross_check = 0;
  double oracle = 0, kernel = 0, in_target = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
} g_totals;

void PrintStats() {
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - g_totals.start).count();
  const double cpu = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
  std::fprintf(
      stderr,
      "fuzz_ln stats: %lld inputs in %.1f s wall, %.1f s CPU (%.0f exec/s, %.0f per CPU second),"
      " %lld kernel runs, %.1f elements/input; time in the target %.1f s: oracle %.1f s"
      " (%.0f%% of the target, %.0f%% of wall), kernels+judge %.1f s (%.0f%%);"
      " %.3g%% of judged elements without a claim; %lld judged under the statistical"
      " tier (random-data inputs), %lld beyond it (%lld of observed kernels, reported only);"
      " %lld of the oracle's fast decisions re-decided exactly, %lld differ;"
      " %lld oracle outputs on its exact path (%.2f an element); %lld backend cross-checks"
      " (%.1f s)\n",
      static_cast<long long>(g_totals.inputs), wall, cpu, g_totals.inputs / std::max(wall, 1e-9),
      g_totals.inputs / std::max(cpu, 1e-9), static_cast<long long>(g_totals.kernels),
      static_cast<double>(g_totals.elements) / std::max<std::int64_t>(1, g_totals.inputs),
      g_totals.in_target, g_totals.oracle,
      100 * g_totals.oracle / std::max(g_totals.in_target, 1e-9),
      100 * g_totals.oracle / std::max(wall, 1e-9), g_totals.kernel,
      100 * g_totals.kernel / std::max(g_totals.in_target, 1e-9),
      100 * static_cast<double>(g_totals.unclaimed) /
          static_cast<double>(std::max<std::int64_t>(1, g_totals.judged)),
      static_cast<long long>(g_totals.typical), static_cast<long long>(g_totals.beyond_typical),
      static_cast<long long>(g_totals.beyond_typical_reported),
      static_cast<long long>(g_totals.rechecked),
      static_cast<long long>(g_totals.recheck_disagreements),
      static_cast<long long>(g_totals.slow_path),
      static_cast<double>(g_totals.slow_path) /
          static_cast<double>(std::max<std::int64_t>(1, g_totals.elements)),
      static_cast<long long>(g_totals.cross_checks), g_totals.cross_check);
}

bool HasFlag(int argc, char** argv, const char* prefix) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp((*argv)[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
  }
  // docs/DESIGN.md §6: a finding exits 1 (libFuzzer's default 77 means "skipped" here).
  static std::vector<char*> args;
  static char error_flag[] = "-error_exitcode=1";
  static char timeout_flag[] = "-timeout_exitcode=1";
  args.assign(*argv, *argv + *argc);
  if (!HasFlag(*argc, *argv, "-error_exitcode=")) args.insert(args.begin() + 1, error_flag);
  if (!HasFlag(*argc, *argv, "-timeout_exitcode=")) args.insert(args.begin() + 1, timeout_flag);
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size()) - 1;
  *argv = args.data();

  // ClusterFuzzLite and OSS-Fuzz ship files beside the target, not an
  // environment: without LNV_FUZZ_KNOWN_FINDINGS, use <target>.known_findings.
  if (std::getenv("LNV_FUZZ_KNOWN_FINDINGS") == nullptr) {
    const std::string beside = std::string((*argv)[0]) + ".known_findings";
    if (std::FILE* f = std::fopen(beside.c_str(), "r")) {
      std::fclose(f);
      setenv("LNV_FUZZ_KNOWN_FINDINGS", beside.c_str(), 0);
      std::fprintf(stderr, "fuzz_ln: known findings from %s\n", beside.c_str());
    }
  }
  g_config = new lnv::fuzz::FuzzConfig;
  if (const std::string error = lnv::fuzz::ConfigFromEnv(g_config); !error.empty()) {
    std::fprintf(stderr, "fuzz_ln: %s (see --help)\n", error.c_str());
    std::exit(2);
  }
  std::fprintf(stderr, "fuzz_ln: %zu kernels (%s), %zu signatures, d <= %lld, cases in %s\n",
               g_config->impls.size(),
               g_config->impls_glob.empty() ? "default: all but the negative controls"
                                            : ("LNV_FUZZ_IMPLS=" + g_config->impls_glob).c_str(),
               g_config->decode.signatures.size(), static_cast<long long>(g_config->decode.max_d),
               g_config->cases_dir.c_str());
  if (const char* s = std::getenv("LNV_FUZZ_KEEP_GOING"); s != nullptr)
    g_keep_going = std::string(s) == "1";
  if (const char* s = std::getenv("LNV_FUZZ_STATS"); s != nullptr && std::string(s) == "1") {
    std::atexit(PrintStats);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto t0 = std::chrono::steady_clock::now();
  const lnv::fuzz::RunResult r = lnv::fuzz::RunInput(*g_config, data, size);
  g_totals.in_target +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++g_totals.inputs;
  g_totals.kernels += r.stats.kernels_judged;
  g_totals.elements += r.stats.elements;
  g_totals.judged += r.stats.judged_elements;
  g_totals.unclaimed += r.stats.unclaimed_elements;
  g_totals.typical += r.stats.typical_elements;
  g_totals.beyond_typical += r.stats.beyond_typical_elements;
  g_totals.beyond_typical_reported += r.stats.beyond_typical_reported;
  g_totals.rechecked += r.stats.rechecked;
  g_totals.recheck_disagreements += r.stats.recheck_disagreements;
  g_totals.oracle += r.stats.oracle_seconds;
  g_totals.kernel += r.stats.kernel_seconds;
  g_totals.slow_path += r.stats.slow_path;
  g_totals.cross_check += r.stats.cross_check_seconds;
  g_totals.cross_checks += r.stats.cross_checked;
  for (std::uint32_t id : r.features.ids()) g_feature_counters[id] = 1;

  bool trap = false;
  static std::set<std::string> recorded;  // findings that do not trap, once per key
  for (const lnv::fuzz::Finding& f : r.findings) {
    const bool traps = f.traps && !g_keep_going;
    if (!traps && !recorded.insert(f.key).second) continue;
    std::string error;
    const std::string path = lnv::fuzz::WriteFindingCase(*g_config, f, &error);
    if (path.empty())
      std::fprintf(stderr, "fuzz_ln: cannot write the case file: %s\n", error.c_str());
    const std::string note = traps     ? ""
                             : f.traps ? "(LNV_FUZZ_KEEP_GOING: recorded, not trapped)\n"
                             : !f.known.empty()
                                 ? "(known finding: " + f.known + "; recorded, not trapped)\n"
                                 : "(observed kernel: recorded, not trapped)\n";
    std::fprintf(stderr, "%s%s", lnv::fuzz::FormatFinding(f, path).c_str(), note.c_str());
    trap |= traps;
  }
  if (trap) {
    std::fflush(stderr);
    std::abort();  // libFuzzer saves the input as crash-<sha1>
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return lnv::fuzz::MutateBytes(data, size, max_size, seed, g_config->decode, &LLVMFuzzerMutate);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed) {
  return lnv::fuzz::CrossOverBytes(data1, size1, data2, size2, out, max_out_size, seed,
                                   g_config->decode);
}

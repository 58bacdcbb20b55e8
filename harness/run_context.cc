#include "harness/run_context.h"

#include <gmp.h>
#include <mpfr.h>

#include <Eigen/Core>
#include <array>
#include <boost/version.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#if __has_include(<oneapi/dnnl/dnnl_version.h>)
#include <oneapi/dnnl/dnnl_version.h>
#define LNV_HAVE_DNNL_VERSION 1
#endif
#if __has_include(<torch/csrc/api/include/torch/version.h>)
#include <torch/csrc/api/include/torch/version.h>
#define LNV_HAVE_TORCH_VERSION 1
#endif

#ifndef LNV_SOURCE_DIR
#define LNV_SOURCE_DIR "."
#endif
#ifndef LNV_CXX_FLAGS
#define LNV_CXX_FLAGS ""
#endif

namespace lnv {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The first line a shell command prints, "" when it fails.
std::string FirstLine(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return "";
  std::array<char, 256> buf{};
  std::string line;
  if (std::fgets(buf.data(), buf.size(), p) != nullptr) line = buf.data();
  const int rc = pclose(p);
  return rc == 0 ? Trim(line) : "";
}

bool AnyImplNamed(const std::vector<ImplInfo>& impls, std::initializer_list<const char*> words) {
  for (const ImplInfo& i : impls) {
    for (const char* w : words) {
      if (i.name.find(w) != std::string::npos) return true;
    }
  }
  return false;
}

std::string UtcNow() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string CompilerName() {
#ifdef __clang__
  return std::string("clang++ ") + __clang_version__;
#else
  return std::string("g++ ") + __VERSION__;
#endif
}

}  // namespace

std::string GitCommit() {
  const std::string dir = LNV_SOURCE_DIR;
  const std::string commit = FirstLine("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string dirty =
      FirstLine("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? commit : commit + "-dirty";
}

nlohmann::json CpuFacts() {
  nlohmann::json cpu = {{"model", "unknown"},
                        {"features", nlohmann::json::array()},
                        {"hardware_threads", std::thread::hardware_concurrency()}};
  std::ifstream in("/proc/cpuinfo");
  static const std::set<std::string> kWanted = {
      "sse4_2",      "avx",      "avx2",     "fma",      "f16c",
      "avx512f",     "avx512bw", "avx512vl", "avx512dq", "avx512_bf16",
      "avx512_fp16", "amx_bf16", "amx_tile", "asimd",    "sve"};
  std::set<std::string> found;
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key.rfind("model name", 0) == 0 && cpu["model"] == "unknown") cpu["model"] = value;
    if (key.rfind("flags", 0) == 0 || key.rfind("Features", 0) == 0) {
      std::istringstream words(value);
      for (std::string w; words >> w;) {
        if (kWanted.count(w)) found.insert(w);
      }
    }
  }
  for (const std::string& f : found) cpu["features"].push_back(f);
  return cpu;
}

nlohmann::json CollectContext(const RunFacts& facts, const std::vector<ImplInfo>& impls) {
  nlohmann::json libs = {
      {"boost", std::to_string(BOOST_VERSION / 100000) + "." +
                    std::to_string(BOOST_VERSION / 100 % 1000) + "." +
                    std::to_string(BOOST_VERSION % 100)},
      {"mpfr", MPFR_VERSION_STRING},
      {"gmp", std::to_string(__GNU_MP_VERSION) + "." + std::to_string(__GNU_MP_VERSION_MINOR) +
                  "." + std::to_string(__GNU_MP_VERSION_PATCHLEVEL)},
      {"eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                    "." + std::to_string(EIGEN_MINOR_VERSION)},
  };
  // Third-party kernel libraries: their headers' versions, when kernels of theirs are judged.
#ifdef LNV_HAVE_DNNL_VERSION
  if (AnyImplNamed(impls, {"onednn", "dnnl"})) {
    libs["onednn"] = std::to_string(DNNL_VERSION_MAJOR) + "." + std::to_string(DNNL_VERSION_MINOR) +
                     "." + std::to_string(DNNL_VERSION_PATCH);
  }
#endif
#ifdef LNV_HAVE_TORCH_VERSION
  if (AnyImplNamed(impls, {"torch", "aten", "pytorch"})) libs["pytorch"] = TORCH_VERSION;
#endif
  nlohmann::json plugins = nlohmann::json::array();
  for (const std::string& p : facts.plugin_paths) plugins.push_back(p);
  return {
      {"tool", facts.tool},
      {"command", facts.command},
      {"git_commit", GitCommit()},
      {"date", UtcNow()},
      {"compiler", CompilerName()},
      {"compiler_flags", LNV_CXX_FLAGS},
      {"cpu", CpuFacts()},
      {"libraries", libs},
      {"seed", facts.seed},
      {"budget", BudgetName(facts.budget)},
      {"impls_glob", facts.impls_glob},
      {"families_glob", facts.families_glob},
      {"plugins", plugins},
      {"jobs", facts.jobs},
      {"seconds", facts.seconds},
      {"oracle",
       {{"backend", "boost"},
        {"fast_path", true},
        {"note", "exact rational statistics, Ziv loop on 1/sqrt(q), rounded once"}}},
  };
}

}  // namespace lnv

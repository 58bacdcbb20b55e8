// bench_oracle: the exact oracle's cost per element, measured in the same run
// as the cheapest honest reference: a plain double-precision two-pass
// LayerNorm. A naive 300-bit MPFR two-pass is measured too, as the obvious
// "just use more bits" alternative (which, unlike the oracle, is not exact).
//
// Every benchmark does the same job: LayerNorm forward of `rows` rows of
// length d (fp32 inputs drawn from a standard normal with a fixed seed, fp32
// gamma/beta), producing fp32 y, mean and rstd. items_per_second counts
// elements of x. After the run a summary prints, per d, the oracle's CPU time
// per element divided by the double two-pass's.
//
//   oracle_fast   OracleForward with the default options (fast path first)
//   oracle_exact  OracleForward with fast_path = false (every element exact)
//
// Flags: --seed N (default 1), plus Google Benchmark's own (--help lists them).
#include <benchmark/benchmark.h>
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/oracle.h"

namespace {

constexpr double kEps = 1e-5f;  // the float a kernel would use, as a double
constexpr std::int64_t kDims[] = {64, 768, 4096};
constexpr std::int64_t kElementsPerIteration = 16384;

struct Workload {
  std::int64_t rows = 0, d = 0;
  std::vector<double> x, gamma, beta;  // fp32 values, held as doubles
};

// Standard-normal rows rounded to fp32; gamma near 1, beta near 0.
Workload MakeWorkload(std::int64_t d, std::uint64_t seed) {
  Workload w;
  w.d = d;
  w.rows = std::max<std::int64_t>(4, kElementsPerIteration / d);
  std::mt19937_64 rng(seed ^ (static_cast<std::uint64_t>(d) * 0x9E3779B97F4A7C15ull));
  std::normal_distribution<double> normal(0.0, 1.0);
  auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  w.x.resize(static_cast<std::size_t>(w.rows * d));
  for (double& v : w.x) v = f32(normal(rng));
  w.gamma.resize(static_cast<std::size_t>(d));
  w.beta.resize(static_cast<std::size_t>(d));
  for (double& v : w.gamma) v = f32(1.0 + 0.25 * normal(rng));
  for (double& v : w.beta) v = f32(0.25 * normal(rng));
  return w;
}

void SetElementCounters(benchmark::State& state, const Workload& w) {
  const double elements = static_cast<double>(w.rows * w.d);
  state.SetItemsProcessed(state.iterations() * w.rows * w.d);
  // CPU seconds per element (printed with an SI prefix, e.g. 12.3n).
  state.counters["time/elem"] = benchmark::Counter(
      elements, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The reference: two passes in double, rounded once to fp32 at the end.
void BM_DoubleTwoPass(benchmark::State& state, const Workload* w) {
  const std::int64_t d = w->d;
  std::vector<float> y(w->x.size()), mean(static_cast<std::size_t>(w->rows)),
      rstd(static_cast<std::size_t>(w->rows));
  for (auto _ : state) {
    for (std::int64_t r = 0; r < w->rows; ++r) {
      const double* x = w->x.data() + r * d;
      double sum = 0.0;
      for (std::int64_t i = 0; i < d; ++i) sum += x[i];
      const double mu = sum / static_cast<double>(d);
      double ss = 0.0;
      for (std::int64_t i = 0; i < d; ++i) ss += (x[i] - mu) * (x[i] - mu);
      const double rs = 1.0 / std::sqrt(ss / static_cast<double>(d) + kEps);
      float* out = y.data() + r * d;
      for (std::int64_t i = 0; i < d; ++i)
        out[i] = static_cast<float>(w->gamma[i] * ((x[i] - mu) * rs) + w->beta[i]);
      mean[r] = static_cast<float>(mu);
      rstd[r] = static_cast<float>(rs);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::DoNotOptimize(mean.data());
    benchmark::DoNotOptimize(rstd.data());
    benchmark::ClobberMemory();
  }
  SetElementCounters(state, *w);
}

void BM_Oracle(benchmark::State& state, const Workload* w, bool fast_path) {
  lnv::OracleProblem p;
  p.norm = lnv::OracleNorm::kLayerNorm;
  p.rows = w->rows;
  p.d = w->d;
  p.x = w->x;
  p.gamma = w->gamma;
  p.beta = w->beta;
  p.eps = kEps;
  p.out_format = lnv::kBinary32;
  p.param_format = lnv::kBinary32;
  p.stat_format = lnv::kBinary32;
  lnv::OracleOptions o;
  o.fast_path = fast_path;
  std::int64_t slow = 0, undecided = 0;
  for (auto _ : state) {
    lnv::OracleForwardResult res = lnv::OracleForward(p, o);
    benchmark::DoNotOptimize(res.y.data());
    slow = res.slow_path;
    undecided = res.undecided;
  }
  SetElementCounters(state, *w);
  // Share of elements the fast path handed to the exact path (1 when it is off).
  state.counters["slow_frac"] = static_cast<double>(slow) / static_cast<double>(w->rows * w->d);
  if (undecided != 0) state.counters["undecided"] = static_cast<double>(undecided);
}

// "More bits" without exactness: the double algorithm at 300 bits, then
// rounded to fp32 (double rounding through no intermediate format).
void BM_Mpfr300TwoPass(benchmark::State& state, const Workload* w) {
  constexpr mpfr_prec_t kBits = 300;
  const std::int64_t d = w->d;
  mpfr_t sum, mu, dev, ss, rs, t;
  for (mpfr_ptr v : {sum, mu, dev, ss, rs, t}) mpfr_init2(v, kBits);
  std::vector<float> y(w->x.size()), mean(static_cast<std::size_t>(w->rows)),
      rstd(static_cast<std::size_t>(w->rows));
  for (auto _ : state) {
    for (std::int64_t r = 0; r < w->rows; ++r) {
      const double* x = w->x.data() + r * d;
      mpfr_set_zero(sum, 1);
      for (std::int64_t i = 0; i < d; ++i) mpfr_add_d(sum, sum, x[i], MPFR_RNDN);
      mpfr_div_si(mu, sum, static_cast<long>(d), MPFR_RNDN);
      mpfr_set_zero(ss, 1);
      for (std::int64_t i = 0; i < d; ++i) {
        mpfr_d_sub(dev, x[i], mu, MPFR_RNDN);
        mpfr_fma(ss, dev, dev, ss, MPFR_RNDN);
      }
      mpfr_div_si(t, ss, static_cast<long>(d), MPFR_RNDN);
      mpfr_add_d(t, t, kEps, MPFR_RNDN);
      mpfr_rec_sqrt(rs, t, MPFR_RNDN);
      float* out = y.data() + r * d;
      for (std::int64_t i = 0; i < d; ++i) {
        mpfr_d_sub(dev, x[i], mu, MPFR_RNDN);
        mpfr_mul(t, dev, rs, MPFR_RNDN);
        mpfr_mul_d(t, t, w->gamma[i], MPFR_RNDN);
        mpfr_add_d(t, t, w->beta[i], MPFR_RNDN);
        out[i] = mpfr_get_flt(t, MPFR_RNDN);
      }
      mean[r] = mpfr_get_flt(mu, MPFR_RNDN);
      rstd[r] = mpfr_get_flt(rs, MPFR_RNDN);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  for (mpfr_ptr v : {sum, mu, dev, ss, rs, t}) mpfr_clear(v);
  SetElementCounters(state, *w);
}

// Forwards everything to the display reporter that --benchmark_format picked,
// and keeps each run's elements per CPU second for the summary.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit CollectingReporter(benchmark::BenchmarkReporter* display) : display_(display) {}

  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    display_->ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto it = run.counters.find("items_per_second");
      if (it == run.counters.end()) continue;
      // Name is "<kind>/<d>"; with repetitions the last one wins.
      const std::string name = run.benchmark_name();
      const auto slash = name.find('/');
      if (slash == std::string::npos) continue;
      rate_[std::atoll(name.c_str() + slash + 1)][name.substr(0, slash)] = it->second.value;
    }
  }
  void Finalize() override { display_->Finalize(); }

  // Per d: time per element of each kind, relative to the double two-pass.
  void PrintSummary(std::FILE* out) const {
    static constexpr const char* kKinds[] = {"oracle_fast", "oracle_exact", "mpfr300_two_pass"};
    std::fprintf(out,
                 "\nCPU time per element relative to double_two_pass "
                 "(LayerNorm forward, fp32 in/out):\n");
    std::fprintf(out, "%6s %18s", "d", "double ns/elem");
    for (const char* k : kKinds) std::fprintf(out, " %17s", k);
    std::fprintf(out, "\n");
    for (const auto& [d, by_kind] : rate_) {
      auto base = by_kind.find("double_two_pass");
      if (base == by_kind.end() || base->second <= 0) continue;
      std::fprintf(out, "%6lld %18.3f", static_cast<long long>(d), 1e9 / base->second);
      for (const char* k : kKinds) {
        auto it = by_kind.find(k);
        if (it == by_kind.end() || it->second <= 0) {
          std::fprintf(out, " %17s", "-");
        } else {
          std::fprintf(out, " %16.1fx", base->second / it->second);
        }
      }
      std::fprintf(out, "\n");
    }
  }

 private:
  benchmark::BenchmarkReporter* display_;
  std::map<std::int64_t, std::map<std::string, double>> rate_;
};

// Removes "--seed N" / "--seed=N" from argv; returns false on a malformed value.
bool TakeSeed(int& argc, char** argv, std::uint64_t& seed) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const char* value = nullptr;
    if (a == "--seed" && i + 1 < argc) {
      value = argv[++i];
    } else if (a.rfind("--seed=", 0) == 0) {
      value = argv[i] + 7;
    } else if (a == "--seed") {
      return false;
    } else {
      argv[out++] = argv[i];
      continue;
    }
    char* end = nullptr;
    seed = std::strtoull(value, &end, 10);
    if (*value == '\0' || *end != '\0') return false;
  }
  argc = out;
  argv[argc] = nullptr;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "bench_oracle: the exact oracle's cost per element (LayerNorm forward, fp32,\n"
          "d = 64, 768, 4096) next to a double two-pass and a 300-bit MPFR two-pass.\n"
          "  --seed N   seed of the standard-normal inputs (default 1)\n"
          "Google Benchmark flags follow (e.g. --benchmark_min_time=0.2,\n"
          "--benchmark_filter=REGEX, --benchmark_out=FILE --benchmark_out_format=json).\n\n");
      break;  // benchmark::Initialize prints its flags and exits
    }
  }
  bool console_format = true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--benchmark_format=", 0) == 0) console_format = a.substr(19) == "console";
  }
  std::uint64_t seed = 1;
  if (!TakeSeed(argc, argv, seed)) {
    std::fprintf(stderr, "bench_oracle: --seed needs a non-negative integer\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("seed", std::to_string(seed));

  std::vector<Workload> workloads;
  workloads.reserve(std::size(kDims));
  for (std::int64_t d : kDims) workloads.push_back(MakeWorkload(d, seed));

  for (const Workload& w : workloads) {
    auto name = [&w](const char* kind) {
      std::string s = kind;
      s += '/';
      s += std::to_string(w.d);
      return s;
    };
    benchmark::RegisterBenchmark(name("double_two_pass").c_str(), BM_DoubleTwoPass, &w);
    benchmark::RegisterBenchmark(name("oracle_fast").c_str(), BM_Oracle, &w, true);
    benchmark::RegisterBenchmark(name("oracle_exact").c_str(), BM_Oracle, &w, false);
    benchmark::RegisterBenchmark(name("mpfr300_two_pass").c_str(), BM_Mpfr300TwoPass, &w);
  }

  CollectingReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // Beside the console table on stdout; on stderr when stdout carries JSON/CSV.
  std::cout.flush();
  reporter.PrintSummary(console_format ? stdout : stderr);
  benchmark::Shutdown();
  return 0;
}

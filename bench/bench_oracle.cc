// bench_oracle: the exact oracle's cost per element, measured in the same run
// as the cheapest honest reference for each computation it decides: a plain
// double-precision implementation of that computation (its "peer"). A naive
// 300-bit MPFR two-pass LayerNorm is measured too, as the obvious "just use
// more bits" alternative (which, unlike the oracle, is not exact).
//
// Inputs: `rows` rows of length d of fp32 x and dy drawn from a standard
// normal with a fixed seed, fp32 gamma/beta. Outputs are fp32. Every benchmark
// does one of three jobs, and items_per_second counts elements of x:
//
//   LayerNorm forward (y, mean, rstd):
//     double_two_pass      peer: two passes in double, rounded once to fp32
//     oracle_fast          OracleForward with the default options (fast path first)
//     oracle_exact         OracleForward with fast_path = false (every element exact)
//     mpfr300_two_pass     the double_two_pass algorithm at 300 bits
//   RMSNorm forward (y, rstd):
//     double_rms           peer: one pass sum(x^2) in double, rounded once to fp32
//     oracle_rms_fast      OracleForward, kRmsNorm, default options
//   LayerNorm backward (dx, dgamma, dbeta; mean and rstd recomputed):
//     double_two_pass_bwd  peer: two-pass statistics and the backward in double
//     oracle_bwd_fast      OracleBackward with the default options
//     oracle_bwd_exact     OracleBackward with fast_path = false (every element exact)
//
// Before timing, each peer's outputs are compared with the oracle's correctly
// rounded ones on the same workload: a peer more than kMaxPeerUlps fp32 ulps
// away from them anywhere stops the run (a ratio to a wrong peer means
// nothing). After the run a summary prints, per d and oracle kind, its CPU
// time per element divided by its peer's, the share of its outputs that took
// the exact (slow) path, and the peer's largest distance from the oracle.
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
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/oracle.h"

namespace {

constexpr double kEps = 1e-5f;  // the float a kernel would use, as a double
constexpr std::int64_t kDims[] = {64, 768, 4096};
constexpr std::int64_t kElementsPerIteration = 16384;
// A double peer rounds once to fp32 after an error of a few double ulps: it
// can miss the correctly rounded value by 1 ulp near a midpoint, not more.
constexpr double kMaxPeerUlps = 2.0;

struct Workload {
  std::int64_t rows = 0, d = 0;
  std::vector<double> x, gamma, beta, dy;  // fp32 values, held as doubles
};

// Standard-normal rows of x and dy rounded to fp32; gamma near 1, beta near 0.
// dy is drawn last, so x, gamma and beta are those of earlier versions.
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
  w.dy.resize(w.x.size());
  for (double& v : w.dy) v = f32(normal(rng));
  return w;
}

void SetElementCounters(benchmark::State& state, const Workload& w) {
  const double elements = static_cast<double>(w.rows * w.d);
  state.SetItemsProcessed(state.iterations() * w.rows * w.d);
  // CPU seconds per element (printed with an SI prefix, e.g. 12.3n).
  state.counters["time/elem"] = benchmark::Counter(
      elements, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A forward peer's outputs (mean stays empty for RMSNorm).
struct ForwardOut {
  std::vector<float> y, mean, rstd;
};

ForwardOut MakeForwardOut(const Workload& w, bool with_mean) {
  ForwardOut o;
  o.y.resize(w.x.size());
  if (with_mean) o.mean.resize(static_cast<std::size_t>(w.rows));
  o.rstd.resize(static_cast<std::size_t>(w.rows));
  return o;
}

// A backward peer's outputs, and its double scratch (allocated once).
struct BackwardOut {
  std::vector<float> dx, dgamma, dbeta;
  std::vector<double> xhat, dgamma_acc, dbeta_acc;
};

BackwardOut MakeBackwardOut(const Workload& w) {
  const auto d = static_cast<std::size_t>(w.d);
  BackwardOut o;
  o.dx.resize(w.x.size());
  o.dgamma.resize(d);
  o.dbeta.resize(d);
  o.xhat.resize(d);
  o.dgamma_acc.resize(d);
  o.dbeta_acc.resize(d);
  return o;
}

// LayerNorm forward: two passes in double, rounded once to fp32 at the end.
void DoubleTwoPass(const Workload& w, ForwardOut* out) {
  const std::int64_t d = w.d;
  for (std::int64_t r = 0; r < w.rows; ++r) {
    const double* x = w.x.data() + r * d;
    double sum = 0.0;
    for (std::int64_t i = 0; i < d; ++i) sum += x[i];
    const double mu = sum / static_cast<double>(d);
    double ss = 0.0;
    for (std::int64_t i = 0; i < d; ++i) ss += (x[i] - mu) * (x[i] - mu);
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(d) + kEps);
    float* y = out->y.data() + r * d;
    for (std::int64_t i = 0; i < d; ++i)
      y[i] = static_cast<float>(w.gamma[i] * ((x[i] - mu) * rs) + w.beta[i]);
    out->mean[r] = static_cast<float>(mu);
    out->rstd[r] = static_cast<float>(rs);
  }
}

// RMSNorm forward: one pass sum(x^2) in double, rounded once to fp32.
void DoubleRms(const Workload& w, ForwardOut* out) {
  const std::int64_t d = w.d;
  for (std::int64_t r = 0; r < w.rows; ++r) {
    const double* x = w.x.data() + r * d;
    double ss = 0.0;
    for (std::int64_t i = 0; i < d; ++i) ss += x[i] * x[i];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(d) + kEps);
    float* y = out->y.data() + r * d;
    for (std::int64_t i = 0; i < d; ++i) y[i] = static_cast<float>(w.gamma[i] * (x[i] * rs));
    out->rstd[r] = static_cast<float>(rs);
  }
}

// LayerNorm backward: mean and rstd recomputed in two passes, then, with
// g = gamma dy, dx = rstd (g - mean(g) - xhat mean(g xhat)), dgamma = sum_rows
// dy xhat and dbeta = sum_rows dy, all in double, rounded once to fp32.
void DoubleTwoPassBwd(const Workload& w, BackwardOut* out) {
  const std::int64_t d = w.d;
  const double inv_d = 1.0 / static_cast<double>(d);
  std::fill(out->dgamma_acc.begin(), out->dgamma_acc.end(), 0.0);
  std::fill(out->dbeta_acc.begin(), out->dbeta_acc.end(), 0.0);
  double* xhat = out->xhat.data();
  for (std::int64_t r = 0; r < w.rows; ++r) {
    const double* x = w.x.data() + r * d;
    const double* dy = w.dy.data() + r * d;
    double sum = 0.0;
    for (std::int64_t i = 0; i < d; ++i) sum += x[i];
    const double mu = sum * inv_d;
    double ss = 0.0;
    for (std::int64_t i = 0; i < d; ++i) ss += (x[i] - mu) * (x[i] - mu);
    const double rs = 1.0 / std::sqrt(ss * inv_d + kEps);
    double sum_g = 0.0, sum_gx = 0.0;
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = (x[i] - mu) * rs;
      const double g = w.gamma[i] * dy[i];
      sum_g += g;
      sum_gx += g * xhat[i];
      out->dgamma_acc[i] += dy[i] * xhat[i];
      out->dbeta_acc[i] += dy[i];
    }
    const double a = sum_g * inv_d, b = sum_gx * inv_d;
    float* dx = out->dx.data() + r * d;
    for (std::int64_t i = 0; i < d; ++i)
      dx[i] = static_cast<float>(rs * (w.gamma[i] * dy[i] - a - xhat[i] * b));
  }
  for (std::int64_t i = 0; i < d; ++i) {
    out->dgamma[i] = static_cast<float>(out->dgamma_acc[i]);
    out->dbeta[i] = static_cast<float>(out->dbeta_acc[i]);
  }
}

void BM_DoubleTwoPass(benchmark::State& state, const Workload* w) {
  ForwardOut out = MakeForwardOut(*w, true);
  for (auto _ : state) {
    DoubleTwoPass(*w, &out);
    benchmark::DoNotOptimize(out.y.data());
    benchmark::DoNotOptimize(out.mean.data());
    benchmark::DoNotOptimize(out.rstd.data());
    benchmark::ClobberMemory();
  }
  SetElementCounters(state, *w);
}

void BM_DoubleRms(benchmark::State& state, const Workload* w) {
  ForwardOut out = MakeForwardOut(*w, false);
  for (auto _ : state) {
    DoubleRms(*w, &out);
    benchmark::DoNotOptimize(out.y.data());
    benchmark::DoNotOptimize(out.rstd.data());
    benchmark::ClobberMemory();
  }
  SetElementCounters(state, *w);
}

void BM_DoubleTwoPassBwd(benchmark::State& state, const Workload* w) {
  BackwardOut out = MakeBackwardOut(*w);
  for (auto _ : state) {
    DoubleTwoPassBwd(*w, &out);
    benchmark::DoNotOptimize(out.dx.data());
    benchmark::DoNotOptimize(out.dgamma.data());
    benchmark::DoNotOptimize(out.dbeta.data());
    benchmark::ClobberMemory();
  }
  SetElementCounters(state, *w);
}

// The workload as an oracle problem: fp32 in, out, parameters and statistics.
lnv::OracleProblem MakeProblem(const Workload& w, lnv::OracleNorm norm) {
  lnv::OracleProblem p;
  p.norm = norm;
  p.rows = w.rows;
  p.d = w.d;
  p.x = w.x;
  p.gamma = w.gamma;
  if (norm == lnv::OracleNorm::kLayerNorm) p.beta = w.beta;
  p.dy = w.dy;
  p.eps = kEps;
  p.out_format = lnv::kBinary32;
  p.param_format = lnv::kBinary32;
  p.stat_format = lnv::kBinary32;
  return p;
}

// Sets the run's share of outputs that the fast path handed to the exact path
// (1 when it is off) out of `outputs`, and flags undecided ones.
void SetSlowCounters(benchmark::State& state, std::int64_t slow, std::int64_t undecided,
                     std::int64_t outputs) {
  state.counters["slow_frac"] = static_cast<double>(slow) / static_cast<double>(outputs);
  if (undecided != 0) state.counters["undecided"] = static_cast<double>(undecided);
}

// slow_frac: of the y elements (OracleForwardResult::slow_path counts only y).
void BM_OracleForward(benchmark::State& state, const Workload* w, lnv::OracleNorm norm,
                      bool fast_path) {
  const lnv::OracleProblem p = MakeProblem(*w, norm);
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
  SetSlowCounters(state, slow, undecided, w->rows * w->d);
}

// slow_frac: of the dx and dgamma elements, the ones that
// OracleBackwardResult::slow_path counts (dbeta, a rational, is not counted).
void BM_OracleBackward(benchmark::State& state, const Workload* w, bool fast_path) {
  const lnv::OracleProblem p = MakeProblem(*w, lnv::OracleNorm::kLayerNorm);
  lnv::OracleOptions o;
  o.fast_path = fast_path;
  std::int64_t slow = 0, undecided = 0;
  for (auto _ : state) {
    lnv::OracleBackwardResult res = lnv::OracleBackward(p, o);
    benchmark::DoNotOptimize(res.dx.data());
    slow = res.slow_path;
    undecided = res.undecided;
  }
  SetElementCounters(state, *w);
  SetSlowCounters(state, slow, undecided, w->rows * w->d + w->d);
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

// The largest distance between a peer's fp32 outputs and the oracle's
// correctly rounded ones, in fp32 ulps of the latter; infinite when the sizes
// differ or a distance is not finite.
double MaxUlps(std::span<const float> peer, std::span<const lnv::ExactValue> exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (peer.size() != exact.size()) return kInf;
  double worst = 0.0;
  for (std::size_t i = 0; i < peer.size(); ++i) {
    const double dist = std::fabs(static_cast<double>(peer[i]) - exact[i].rounded);
    if (!std::isfinite(dist)) return kInf;
    worst = std::max(worst, dist / lnv::UlpOf(exact[i].rounded, lnv::kBinary32));
  }
  return worst;
}

// A value per d and benchmark kind (or peer).
using PerD = std::map<std::int64_t, std::map<std::string, double>>;

// The value of `kind` at d, or nullptr.
const double* Lookup(const PerD& m, std::int64_t d, const std::string& kind) {
  auto at_d = m.find(d);
  if (at_d == m.end()) return nullptr;
  auto it = at_d->second.find(kind);
  return it == at_d->second.end() ? nullptr : &it->second;
}

// Runs each peer once, outside any timed loop, next to the oracle (fast path)
// on the same workload, and records per d each peer's largest distance from
// the oracle over all its outputs.
void CheckPeers(const Workload& w, PerD* ulps) {
  std::map<std::string, double>& at_d = (*ulps)[w.d];
  const lnv::OracleProblem ln = MakeProblem(w, lnv::OracleNorm::kLayerNorm);
  const lnv::OracleProblem rms = MakeProblem(w, lnv::OracleNorm::kRmsNorm);

  ForwardOut f = MakeForwardOut(w, true);
  DoubleTwoPass(w, &f);
  const lnv::OracleForwardResult of = lnv::OracleForward(ln);
  at_d["double_two_pass"] =
      std::max({MaxUlps(f.y, of.y), MaxUlps(f.mean, of.mean), MaxUlps(f.rstd, of.rstd)});

  ForwardOut fr = MakeForwardOut(w, false);
  DoubleRms(w, &fr);
  const lnv::OracleForwardResult ofr = lnv::OracleForward(rms);
  at_d["double_rms"] = std::max(MaxUlps(fr.y, ofr.y), MaxUlps(fr.rstd, ofr.rstd));

  BackwardOut b = MakeBackwardOut(w);
  DoubleTwoPassBwd(w, &b);
  const lnv::OracleBackwardResult ob = lnv::OracleBackward(ln);
  at_d["double_two_pass_bwd"] =
      std::max({MaxUlps(b.dx, ob.dx), MaxUlps(b.dgamma, ob.dgamma), MaxUlps(b.dbeta, ob.dbeta)});
}

// One line of the summary: an oracle kind (or mpfr300) and the double peer
// that does the same computation.
struct SummaryRow {
  const char* computation;
  const char* kind;
  const char* peer;
};
constexpr SummaryRow kSummaryRows[] = {
    {"LN fwd", "oracle_fast", "double_two_pass"},
    {"LN fwd", "oracle_exact", "double_two_pass"},
    {"LN fwd", "mpfr300_two_pass", "double_two_pass"},
    {"RMS fwd", "oracle_rms_fast", "double_rms"},
    {"LN bwd", "oracle_bwd_fast", "double_two_pass_bwd"},
    {"LN bwd", "oracle_bwd_exact", "double_two_pass_bwd"},
};

// Forwards everything to the display reporter that --benchmark_format picked,
// and keeps each run's elements per CPU second and slow_frac for the summary.
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
      const std::int64_t d = std::atoll(name.c_str() + slash + 1);
      const std::string kind = name.substr(0, slash);
      rate_[d][kind] = it->second.value;
      auto slow = run.counters.find("slow_frac");
      if (slow != run.counters.end()) slow_frac_[d][kind] = slow->second.value;
    }
  }
  void Finalize() override { display_->Finalize(); }

  // Per d and kind: time per element relative to the kind's peer, the share
  // of outputs on the exact path, and the peer's distance from the oracle.
  void PrintSummary(std::FILE* out, const PerD& peer_ulps) const {
    std::fprintf(out,
                 "\nCPU time per element of each kind over that of its double peer (the same\n"
                 "computation, fp32 in/out). exact_frac: share of the kind's outputs that took\n"
                 "the exact (slow) path: y for the forward kinds, dx and dgamma for the\n"
                 "backward kinds (the oracle does not count dbeta); n/a: no such path.\n"
                 "peer_ulps: the peer's largest distance from the oracle's correctly rounded\n"
                 "outputs on the same inputs, in fp32 ulps (checked before timing).\n");
    std::fprintf(out, "%6s  %-8s %-17s %-20s %12s %12s %9s %10s %9s\n", "d", "comp", "kind", "peer",
                 "peer ns/elem", "kind ns/elem", "ratio", "exact_frac", "peer_ulps");
    for (const auto& at_d : rate_) {
      for (const SummaryRow& row : kSummaryRows) PrintRow(out, at_d.first, row, peer_ulps);
    }
  }

 private:
  void PrintRow(std::FILE* out, std::int64_t d, const SummaryRow& row,
                const PerD& peer_ulps) const {
    const double* kind_rate = Lookup(rate_, d, row.kind);
    if (kind_rate == nullptr || *kind_rate <= 0) return;  // not run (--benchmark_filter)
    const double* peer_rate = Lookup(rate_, d, row.peer);
    const bool have_peer = peer_rate != nullptr && *peer_rate > 0;
    std::fprintf(out, "%6lld  %-8s %-17s %-20s ", static_cast<long long>(d), row.computation,
                 row.kind, row.peer);
    if (have_peer) {
      std::fprintf(out, "%12.3f %12.3f %8.1fx ", 1e9 / *peer_rate, 1e9 / *kind_rate,
                   *peer_rate / *kind_rate);
    } else {
      std::fprintf(out, "%12s %12.3f %9s ", "-", 1e9 / *kind_rate, "-");
    }
    if (const double* slow = Lookup(slow_frac_, d, row.kind)) {
      std::fprintf(out, "%10.3g ", *slow);
    } else {
      std::fprintf(out, "%10s ", "n/a");
    }
    if (const double* ulps = Lookup(peer_ulps, d, row.peer)) {
      std::fprintf(out, "%9.3g\n", *ulps);
    } else {
      std::fprintf(out, "%9s\n", "-");
    }
  }

  benchmark::BenchmarkReporter* display_;
  PerD rate_;
  PerD slow_frac_;
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
          "bench_oracle: the exact oracle's cost per element (fp32, d = 64, 768, 4096),\n"
          "each computation next to a plain double peer doing the same one:\n"
          "  LayerNorm forward   oracle_fast, oracle_exact, mpfr300_two_pass\n"
          "                      vs double_two_pass\n"
          "  RMSNorm forward     oracle_rms_fast vs double_rms\n"
          "  LayerNorm backward  oracle_bwd_fast, oracle_bwd_exact vs double_two_pass_bwd\n"
          "Each peer is first checked against the oracle's correctly rounded outputs\n"
          "(the run stops if one is more than %g fp32 ulps away). The closing summary\n"
          "gives, per d, each kind's time per element over its peer's and the share of\n"
          "its outputs that took the exact path.\n"
          "  --seed N   seed of the standard-normal inputs (default 1)\n"
          "Google Benchmark flags follow (e.g. --benchmark_min_time=0.2,\n"
          "--benchmark_filter=REGEX, --benchmark_out=FILE --benchmark_out_format=json).\n\n",
          kMaxPeerUlps);
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

  // A ratio to a peer that computes something else means nothing: check them first.
  PerD peer_ulps;
  for (const Workload& w : workloads) CheckPeers(w, &peer_ulps);
  for (const auto& [d, by_peer] : peer_ulps) {
    for (const auto& [peer, ulps] : by_peer) {
      if (ulps <= kMaxPeerUlps) continue;
      std::fprintf(stderr, "bench_oracle: %s at d = %lld is %g fp32 ulps from the oracle\n",
                   peer.c_str(), static_cast<long long>(d), ulps);
      return 1;
    }
  }

  for (const Workload& w : workloads) {
    auto name = [&w](const char* kind) {
      std::string s = kind;
      s += '/';
      s += std::to_string(w.d);
      return s;
    };
    constexpr auto kLayer = lnv::OracleNorm::kLayerNorm;
    constexpr auto kRms = lnv::OracleNorm::kRmsNorm;
    benchmark::RegisterBenchmark(name("double_two_pass").c_str(), BM_DoubleTwoPass, &w);
    benchmark::RegisterBenchmark(name("oracle_fast").c_str(), BM_OracleForward, &w, kLayer, true);
    benchmark::RegisterBenchmark(name("oracle_exact").c_str(), BM_OracleForward, &w, kLayer, false);
    benchmark::RegisterBenchmark(name("mpfr300_two_pass").c_str(), BM_Mpfr300TwoPass, &w);
    benchmark::RegisterBenchmark(name("double_rms").c_str(), BM_DoubleRms, &w);
    benchmark::RegisterBenchmark(name("oracle_rms_fast").c_str(), BM_OracleForward, &w, kRms, true);
    benchmark::RegisterBenchmark(name("double_two_pass_bwd").c_str(), BM_DoubleTwoPassBwd, &w);
    benchmark::RegisterBenchmark(name("oracle_bwd_fast").c_str(), BM_OracleBackward, &w, true);
    benchmark::RegisterBenchmark(name("oracle_bwd_exact").c_str(), BM_OracleBackward, &w, false);
  }

  CollectingReporter reporter(benchmark::CreateDefaultDisplayReporter());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // Beside the console table on stdout; on stderr when stdout carries JSON/CSV.
  std::cout.flush();
  reporter.PrintSummary(console_format ? stdout : stderr, peer_ulps);
  benchmark::Shutdown();
  return 0;
}

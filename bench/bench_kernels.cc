// bench_kernels: throughput of the fast CPU LayerNorm kernels next to
// oneDNN, PyTorch ATen and a memcpy of the same bytes, in one run.
//
// Problems: rows x d with d in {64, 768, 4096, 16384} and rows = elements / d
// (--elements, default 2^22: 16 MiB of fp32 x), fp32 and bf16 storage,
// forward and backward, 1 and 2 OpenMP threads. Every implementation gets
// the same inputs (gamma and beta included).
//
//   fast    the best fast kernel this CPU runs (impls/cpu/fast, e.g.
//           f32/two_pass_tree/cpu-fast-avx512), called through its ABI entry;
//           for bf16 on a CPU with AVX512_BF16,
//           bf16/two_pass_tree/cpu-fast-avx512bf16 (forward and backward)
//   fast_hwy  the Highway kernel, where `fast` is the AVX512_BF16 one
//   onednn  oneDNN layer normalization (primitives created once)
//   torch   at::native_layer_norm / at::native_layer_norm_backward
//   memcpy  a parallel memcpy moving as many bytes as the kernel's rows do
//           (forward: x -> y; backward: 1.5x the data, as x and dy in, dx out)
//   memcpy_nt  the same copy with non-temporal stores, which write the
//           destination without reading it first: the least memory traffic
//           moving those bytes can take. A kernel reads its inputs and
//           writes its outputs at least once, so the faster of the two
//           copies estimates the most any kernel could reach; where even it
//           is short of the goal (kGoalVsOneDnn x oneDNN), the summary marks
//           the row: the goal is past what the machine gave a plain copy
//
// Counters: GB/s = bytes read + written per call (x, y or x, dy, dx, plus
// the statistics and parameters) / time; vs_onednn = oneDNN's time / this
// implementation's, both measured in the same benchmark loop, one call of
// each per iteration, so a noisy machine slows both alike (> 1: faster than
// oneDNN; past the last-level cache the two read separate copies of the
// inputs, exchanged call by call), and onednn_GB/s = oneDNN's rate in that
// loop. After the run a table prints the median of each over the
// repetitions (--benchmark_repetitions).
//
// Working-set sweep (--lnv_sweep): the same benchmarks at d = 768 and 4096
// with 1 and 2 threads (the goal cases: 2; --benchmark_filter picks), at
// working sets (bytes one call reads + writes) doubling
// from 1 MiB up to at least twice the last-level cache sysconf reports,
// capped at a tenth of the available memory. A VM guest may reach less
// cache than it reports, so the regimes are told by the curve: after the run
// it prints GB/s per size for memcpy and each kernel, then the table at the
// smallest size (cache-resident) and at the largest (memory-bound, if
// memcpy's GB/s has dropped there).
//
// Its first lines name the kernels and say how far apart the two threads
// are (bench/thread_distance.h): a two-thread result depends on it where
// the threads share data.
//
// Flags: --elements N, --lnv_sweep, plus Google Benchmark's own (--help
// lists them).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bench/kernel_runners.h"
#include "bench/thread_distance.h"
#include "impls/cpu/fast/avx512bf16_layer_norm.h"
#include "impls/cpu/fast/targets.h"
#include "impls/dtype.h"

namespace lnv::bench {
namespace {

constexpr std::int64_t kDims[] = {64, 768, 4096, 16384};
constexpr DType kDTypes[] = {DType::kF32, DType::kBF16};
constexpr int kThreads[] = {1, 2};
std::int64_t g_elements = std::int64_t{1} << 22;
bool g_sweep = false;
constexpr std::int64_t kSweepDims[] = {768, 4096};
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

enum class Impl { kOneDnn, kFast, kFastHwy, kTorch, kMemcpy, kMemcpyNt };
constexpr Impl kImpls[] = {Impl::kOneDnn, Impl::kFast,   Impl::kFastHwy,
                           Impl::kTorch,  Impl::kMemcpy, Impl::kMemcpyNt};

const char* ImplName(Impl i) {
  switch (i) {
    case Impl::kOneDnn:
      return "onednn";
    case Impl::kFast:
      return "fast";
    case Impl::kFastHwy:
      return "fast_hwy";
    case Impl::kTorch:
      return "torch";
    case Impl::kMemcpy:
      return "memcpy";
    case Impl::kMemcpyNt:
      return "memcpy_nt";
  }
  return "?";
}

void SetThreads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

// ---- Inputs ----

// Elements drawn at random per array; longer arrays (the sweep's) repeat
// them, which keeps making a GiB of inputs to seconds. The default problems
// are drawn whole.
constexpr std::int64_t kDrawnElements = std::int64_t{1} << 22;

Inputs MakeInputs(std::int64_t d, DType dtype, std::int64_t elements) {
  Inputs in;
  in.p.d = d;
  in.p.rows = std::max<std::int64_t>(1, elements / d);
  in.p.dtype = dtype;
  const std::int64_t n = in.p.rows * d;
  std::mt19937_64 rng(static_cast<std::uint64_t>(d) * 31 + static_cast<std::uint64_t>(dtype));
  std::normal_distribution<float> normal;
  const auto fill = [&](AlignedVector<unsigned char>& buf, std::int64_t count, float mean,
                        float spread, AlignedVector<float>* as_f32) {
    const std::size_t size = SizeOf(dtype);
    buf.assign(static_cast<std::size_t>(count) * size, 0);
    const std::int64_t drawn = std::min(count, kDrawnElements);
    for (std::int64_t i = 0; i < drawn; ++i) {
      StoreFromFloat(buf.data(), dtype, i, mean + spread * normal(rng));
      if (as_f32 != nullptr) as_f32->push_back(LoadAsFloat(buf.data(), dtype, i));
    }
    for (std::int64_t i = drawn; i < count; i += drawn) {
      const std::int64_t m = std::min(drawn, count - i);
      std::memcpy(buf.data() + static_cast<std::size_t>(i) * size, buf.data(),
                  static_cast<std::size_t>(m) * size);
    }
  };
  fill(in.x, n, 0.5f, 2.f, nullptr);
  fill(in.dy, n, 0.f, 1.f, nullptr);
  fill(in.gamma, d, 1.f, 0.25f, &in.gamma_f32);
  fill(in.beta, d, 0.f, 0.5f, &in.beta_f32);
  return in;
}

// The last-level cache sysconf reports (L3, else L2); 32 MiB if neither.
std::int64_t ReportedLlcBytes() {
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  return llc > 0 ? static_cast<std::int64_t>(llc) : 32 * kMiB;
}

// The inputs of the current problem; rebuilt when d, the dtype or the
// number of rows changes.
const Inputs& InputsFor(std::int64_t d, DType dtype, std::int64_t elements, int threads) {
  static std::unique_ptr<Inputs> cached;
  const std::int64_t rows = std::max<std::int64_t>(1, elements / d);
  if (!cached || cached->p.d != d || cached->p.dtype != dtype || cached->p.rows != rows) {
    cached.reset();  // free the old buffers first
    cached = std::make_unique<Inputs>(MakeInputs(d, dtype, elements));
  }
  cached->p.threads = threads;
  return *cached;
}

// The inputs of oneDNN's call beside another implementation: at working
// sets of at least the reported last-level cache, a copy of `in`, so that
// each call of the pair finds its inputs where a memory-bound call does, in
// memory. With one x for both, the second call found part of x still in the
// cache the first had left, how much depending on how the first stored its
// outputs: at 64 MiB on a guest reaching a 32 MiB L3 that moved fast/oneDNN
// by up to 0.3, up in some cases and down in others (bench/README.md).
// Below the last-level cache both calls share the arrays: a copy would
// double what the pair keeps in the cache and push the cache-resident
// sizes out of it.
const Inputs& ReferenceInputsFor(const Inputs& in, std::int64_t ws) {
  static std::unique_ptr<Inputs> copy;
  if (ws < ReportedLlcBytes()) {
    copy.reset();
    return in;
  }
  if (!copy || copy->p.d != in.p.d || copy->p.dtype != in.p.dtype || copy->p.rows != in.p.rows) {
    copy.reset();  // free the old buffers first
    copy = std::make_unique<Inputs>(in);
  }
  copy->p.threads = in.p.threads;
  return *copy;
}

// Bytes one call reads and writes.
double Bytes(const Problem& p, bool forward) {
  const double data = static_cast<double>(p.rows * p.d) * static_cast<double>(SizeOf(p.dtype));
  const double stats = 2.0 * 4.0 * static_cast<double>(p.rows);  // mean, rstd (or variance)
  const double param = static_cast<double>(p.d) * static_cast<double>(SizeOf(p.dtype));
  return forward
             ? 2 * data + stats + 2 * param   // x, gamma, beta in; y, mean, rstd out
             : 3 * data + stats + 3 * param;  // x, dy, mean, rstd, gamma in; dx, dgamma, dbeta out
}

// ---- Our kernel and memcpy ----

class FastRunner : public Runner {
 public:
  FastRunner(const Inputs& in, const fast::TargetKernels& t, bool native_bf16) {
    const Problem& p = in.p;
    const int k = fast::FastDTypeIndex(p.dtype);
    forward_fn_ = t.layer_norm.forward[k];
    backward_fn_ = t.layer_norm.backward[k];
    if (native_bf16) {
      forward_fn_ = &fast::Avx512Bf16LayerNormForward;
      backward_fn_ = t.layer_norm_bf16_native_backward;
    }
    y_.assign(in.x.size(), 0);
    dx_.assign(in.x.size(), 0);
    dgamma_.assign(in.gamma.size(), 0);
    dbeta_.assign(in.beta.size(), 0);
    mean_.assign(p.rows, 0.f);
    rstd_.assign(p.rows, 0.f);
    f_ = ForwardArgs{p.rows, p.d,       in.x.data(),  in.gamma.data(), in.beta.data(),
                     p.eps,  y_.data(), mean_.data(), rstd_.data()};
    b_ = BackwardArgs{p.rows,       p.d,   in.x.data(), in.gamma.data(), in.dy.data(), mean_.data(),
                      rstd_.data(), p.eps, dx_.data(),  dgamma_.data(),  dbeta_.data()};
    Forward();
  }
  void Forward() override {
    if (forward_fn_(&f_) != 0) std::abort();
  }
  void Backward() override {
    if (backward_fn_(&b_) != 0) std::abort();
  }

 private:
  ForwardFn forward_fn_ = nullptr;
  BackwardFn backward_fn_ = nullptr;
  AlignedVector<unsigned char> y_, dx_, dgamma_, dbeta_;
  AlignedVector<float> mean_, rstd_;
  ForwardArgs f_{};
  BackwardArgs b_{};
};

// n bytes from src to dst, the whole 16-byte pieces of dst with
// non-temporal stores (SSE2, every x86-64 CPU has it; elsewhere memcpy).
void CopyNonTemporal(unsigned char* dst, const unsigned char* src, std::size_t n) {
#if defined(__SSE2__)
  const std::size_t head =
      std::min<std::size_t>(n, (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  for (; i + 16 <= n; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
  }
  std::memcpy(dst + i, src + i, n - i);
  _mm_sfence();  // the non-temporal stores, done before the call returns
#else
  std::memcpy(dst, src, n);
#endif
}

// Copies as many bytes as the kernel moves through its rows, split over the
// threads like the kernels split rows: with memcpy, or with non-temporal
// stores (CopyNonTemporal).
class MemcpyRunner : public Runner {
 public:
  MemcpyRunner(const Inputs& in, bool non_temporal)
      : threads_(in.p.threads), non_temporal_(non_temporal) {
    const std::size_t data = in.x.size();
    src_.assign(data + data / 2, 1);
    dst_.assign(data + data / 2, 0);
    forward_bytes_ = data;              // x -> y
    backward_bytes_ = data + data / 2;  // 3 arrays' worth moved: 1.5 read + 1.5 written
  }
  void Forward() override { Copy(forward_bytes_); }
  void Backward() override { Copy(backward_bytes_); }

 private:
  void Copy(std::size_t bytes) {
    const int parts = threads_;
#ifdef _OPENMP
#pragma omp parallel for num_threads(parts) schedule(static)
#endif
    for (int t = 0; t < parts; ++t) {
      const std::size_t begin =
          bytes * static_cast<std::size_t>(t) / static_cast<std::size_t>(parts);
      const std::size_t end =
          bytes * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(parts);
      if (non_temporal_) {
        CopyNonTemporal(dst_.data() + begin, src_.data() + begin, end - begin);
      } else {
        std::memcpy(dst_.data() + begin, src_.data() + begin, end - begin);
      }
    }
  }
  int threads_;
  bool non_temporal_;
  std::size_t forward_bytes_ = 0, backward_bytes_ = 0;
  AlignedVector<unsigned char> src_, dst_;
};

// Whether `fast` runs the native AVX512_BF16 entry for p.
bool NativeBf16(const Problem& p) {
  return p.dtype == DType::kBF16 && fast::HaveAvx512Bf16LayerNorm();
}

std::unique_ptr<Runner> MakeRunner(Impl impl, const Inputs& in) {
  switch (impl) {
    case Impl::kOneDnn:
      return MakeOneDnnRunner(in);
    case Impl::kTorch:
      return MakeTorchRunner(in);
    case Impl::kMemcpy:
      return std::make_unique<MemcpyRunner>(in, false);
    case Impl::kMemcpyNt:
      return std::make_unique<MemcpyRunner>(in, true);
    case Impl::kFast:
      return std::make_unique<FastRunner>(in, fast::AvailableTargets().front(), NativeBf16(in.p));
    case Impl::kFastHwy:
      return std::make_unique<FastRunner>(in, fast::AvailableTargets().front(), false);
  }
  return nullptr;
}

// ---- Benchmarks and the summary ----

struct Config {
  bool forward;
  DType dtype;
  std::int64_t d;
  int threads;
  std::int64_t ws = 0;  // working-set bytes (sweep); 0: --elements
  std::int64_t Elements() const {
    return ws == 0 ? g_elements
                   : ws / ((forward ? 2 : 3) * static_cast<std::int64_t>(SizeOf(dtype)));
  }
  auto Key() const { return std::make_tuple(ws, !forward, dtype == DType::kBF16, d, threads); }
  std::string Name() const {
    return (ws == 0 ? std::string() : "ws:" + std::to_string(ws / kMiB) + "MiB/") +
           (forward ? "fwd" : "bwd") + "/" + std::string(DTypeName(dtype)) +
           "/d:" + std::to_string(d) + "/threads:" + std::to_string(threads);
  }
};

struct Sample {
  double gbps = 0;
  double vs_onednn = 0;  // 0: not measured
};
using Key = std::tuple<std::int64_t, bool, bool, std::int64_t, int>;
// The summary's samples: one per reported repetition (SummaryRecorder).
std::map<Key, std::map<Impl, std::vector<Sample>>> g_samples;
// Each registered benchmark's problem and implementation, by name.
std::map<std::string, std::pair<Key, Impl>> g_registered;
double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void Run(Runner& r, bool forward) {
  if (forward) {
    r.Forward();
  } else {
    r.Backward();
  }
}

// Seconds of one call, on cfg's thread count.
double TimedRun(Runner& r, const Config& cfg) {
  SetThreads(cfg.threads);
  const auto t0 = std::chrono::steady_clock::now();
  Run(r, cfg.forward);
  return Seconds(t0, std::chrono::steady_clock::now());
}

// The runners of one benchmark loop: the measured implementation's and
// oneDNN's beside it (none where oneDNN is the one measured). Past the
// last-level cache the two sides read separate copies of the inputs
// (ReferenceInputsFor), and where a copy's buffers lie made the same kernel
// on both sides 0.93-1.06 of itself with the copies one way round and
// 0.99-1.12 the other (bf16 at d = 768, 1024 MiB, bench/README.md). So
// there each side has a runner on each copy, and the iterations alternate
// them (BM_Kernel): in set s the implementation reads copy s and oneDNN the
// other, and both sides average the same two copies. A memcpy reads its own
// buffers and keeps one runner.
struct LoopRunners {
  std::unique_ptr<Runner> impl[2], onednn[2];
  int sets = 1;
  Runner& ImplAt(int s) const { return impl[s] ? *impl[s] : *impl[0]; }
};

LoopRunners MakeLoopRunners(Impl impl, const Inputs& in, std::int64_t ws) {
  LoopRunners r;
  r.impl[0] = MakeRunner(impl, in);
  if (!r.impl[0] || impl == Impl::kOneDnn) return r;
  const Inputs& copy = ReferenceInputsFor(in, ws);
  r.onednn[0] = MakeOneDnnRunner(copy);
  if (&copy == &in || !r.onednn[0]) return r;
  r.sets = 2;
  if (impl != Impl::kMemcpy && impl != Impl::kMemcpyNt) r.impl[1] = MakeRunner(impl, copy);
  r.onednn[1] = MakeOneDnnRunner(in);
  return r;
}

void BM_Kernel(benchmark::State& state, Config cfg, Impl impl) {
  SetThreads(cfg.threads);
  const Inputs& in = InputsFor(cfg.d, cfg.dtype, cfg.Elements(), cfg.threads);
  const LoopRunners runners = MakeLoopRunners(impl, in, cfg.ws);
  if (!runners.impl[0]) {
    state.SkipWithError((impl == Impl::kOneDnn ? OneDnnSkipReason(in) : TorchStatus()).c_str());
    return;
  }
  // oneDNN, run once per iteration beside the measured implementation. In
  // set 1 it goes first, so that two calls in a row never read the same
  // copy of the inputs (the second would find part of it in the cache), and
  // each side goes first in half the iterations.
  const bool reference = runners.onednn[0] != nullptr;
  double seconds = 0, reference_seconds = 0;
  std::int64_t calls = 0;
  for (auto _ : state) {
    const int set = static_cast<int>(calls % runners.sets);
    if (set == 1) reference_seconds += TimedRun(*runners.onednn[1], cfg);
    const double t = TimedRun(runners.ImplAt(set), cfg);
    state.SetIterationTime(t);
    seconds += t;
    ++calls;
    if (set == 0 && reference) reference_seconds += TimedRun(*runners.onednn[0], cfg);
  }
  const double bytes = Bytes(in.p, cfg.forward);
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes * static_cast<double>(calls)));
  const double vs_onednn = reference               ? reference_seconds / seconds
                           : impl == Impl::kOneDnn ? 1.0
                                                   : 0.0;
  state.counters["GB/s"] = bytes * static_cast<double>(calls) / seconds / 1e9;
  if (vs_onednn > 0) state.counters["vs_onednn"] = vs_onednn;
  if (reference) {  // oneDNN's own rate in this loop, beside its rate alone (its own benchmark)
    state.counters["onednn_GB/s"] = bytes * static_cast<double>(calls) / reference_seconds / 1e9;
  }
  state.counters["rows"] = static_cast<double>(in.p.rows);
}

// Passes the runs Google Benchmark reports on to the display reporter the
// flags ask for (--benchmark_format), and keeps their GB/s and ratio for the
// summary. Only these: in a benchmark's first repetition the library also
// runs BM_Kernel to size it (one iteration, then more), and does not report
// those runs. The summary once took them in too, so its medians mixed a few
// repetitions with shorter, noisier sizing runs and could differ from the
// median of the repetitions printed above it (bench/README.md).
class SummaryRecorder : public benchmark::BenchmarkReporter {
 public:
  SummaryRecorder() : display_(benchmark::CreateDefaultDisplayReporter()) {}
  bool ReportContext(const Context& context) override { return display_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) Record(run);
    display_->ReportRuns(runs);
  }
  void Finalize() override { display_->Finalize(); }

 private:
  // A repetition; or, where only aggregates are reported
  // (--benchmark_display_aggregates_only), the median of them.
  static void Record(const Run& run) {
    const auto it = g_registered.find(run.run_name.function_name);
    if (run.error_occurred || it == g_registered.end()) return;
    std::vector<Sample>& samples = g_samples[it->second.first][it->second.second];
    const bool repetition = run.run_type == Run::RT_Iteration;
    if (!repetition && !(run.aggregate_name == "median" && samples.empty())) return;
    const auto counter = [&](const char* name) {
      const auto c = run.counters.find(name);
      return c != run.counters.end() ? c->second.value : 0.0;
    };
    samples.push_back(Sample{counter("GB/s"), counter("vs_onednn")});
  }

  std::unique_ptr<benchmark::BenchmarkReporter> display_;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The median GB/s (or ratio to oneDNN) of `impl` over the repetitions; 0
// when not measured.
double MedianOf(const std::map<Impl, std::vector<Sample>>& by_impl, Impl impl, bool ratio) {
  const auto it = by_impl.find(impl);
  std::vector<double> v;
  if (it != by_impl.end()) {
    for (const Sample& s : it->second) {
      const double x = ratio ? s.vs_onednn : s.gbps;
      if (x > 0) v.push_back(x);
    }
  }
  return Median(v);
}

void PrintCell(double v, int width) {
  if (v > 0) {
    std::printf(" %*.2f", width, v);
  } else {
    std::printf(" %*s", width, "-");
  }
}

// The goal the summary marks rows against: the fast kernels at least this
// many times as fast as oneDNN (bench/README.md).
constexpr double kGoalVsOneDnn = 1.1;

// The table of every problem measured at working set `ws` (0: --elements).
// fast_hwy: the Highway kernel where `fast` is the AVX512_BF16 one. A row
// whose copies (memcpy, memcpy_nt) both ran, both short of kGoalVsOneDnn x
// oneDNN, is marked `*`: the copies estimate the most a kernel moving those
// bytes could reach, so there the goal is past what the machine gave them
// (bench/check_summary.py checks the mark against the medians).
void PrintTable(std::int64_t ws) {
  std::printf("%-4s %-5s %6s %3s | %8s %8s %8s %8s %8s %9s | %6s %6s %6s %7s %6s\n", "dir", "dtype",
              "d", "thr", "fast", "fast_hwy", "onednn", "torch", "memcpy", "memcpy_nt", "fast/",
              "hwy/", "torch/", "memcpy/", "nt/");
  std::printf("%-4s %-5s %6s %3s | %8s %8s %8s %8s %8s %9s | %6s %6s %6s %7s %6s\n", "", "", "", "",
              "GB/s", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s", "oneDNN", "oneDNN", "oneDNN",
              "oneDNN", "oneDNN");
  bool marked = false;
  for (const auto& [key, by_impl] : g_samples) {
    const auto& [key_ws, backward, bf16, d, threads] = key;
    if (key_ws != ws) continue;
    std::printf("%-4s %-5s %6lld %3d |", backward ? "bwd" : "fwd", bf16 ? "bf16" : "f32",
                static_cast<long long>(d), threads);
    for (const Impl impl :
         {Impl::kFast, Impl::kFastHwy, Impl::kOneDnn, Impl::kTorch, Impl::kMemcpy}) {
      PrintCell(MedianOf(by_impl, impl, false), 8);
    }
    PrintCell(MedianOf(by_impl, Impl::kMemcpyNt, false), 9);
    std::printf(" |");
    for (const Impl impl : {Impl::kFast, Impl::kFastHwy, Impl::kTorch}) {
      PrintCell(MedianOf(by_impl, impl, true), 6);
    }
    const double copy = MedianOf(by_impl, Impl::kMemcpy, true);
    const double copy_nt = MedianOf(by_impl, Impl::kMemcpyNt, true);
    PrintCell(copy, 7);
    PrintCell(copy_nt, 6);
    const bool past_copies = copy > 0 && copy_nt > 0 && std::max(copy, copy_nt) < kGoalVsOneDnn;
    marked = marked || past_copies;
    std::printf("%s\n", past_copies ? " *" : "");
  }
  if (marked) {
    std::printf(
        "* neither copy of the same bytes reached %.1fx oneDNN: at this size the goal is past "
        "what\n  this machine gave a plain copy, which moves only those bytes.\n",
        kGoalVsOneDnn);
  }
}

// The sweep's curve: one line per problem and working set.
void PrintCurve() {
  std::printf("\nbench_kernels sweep: GB/s per working set (bytes one call reads + writes)\n");
  std::printf("%-4s %-5s %6s %3s %7s | %8s %8s %8s %8s %8s %9s | %6s %6s\n", "dir", "dtype", "d",
              "thr", "ws MiB", "fast", "fast_hwy", "onednn", "torch", "memcpy", "memcpy_nt",
              "fast/", "hwy/");
  std::printf("%-4s %-5s %6s %3s %7s | %8s %8s %8s %8s %8s %9s | %6s %6s\n", "", "", "", "", "",
              "GB/s", "GB/s", "GB/s", "GB/s", "GB/s", "GB/s", "oneDNN", "oneDNN");
  std::map<std::tuple<bool, bool, std::int64_t, int, std::int64_t>, const Key*> by_problem;
  for (const auto& entry : g_samples) {
    const auto& [ws, backward, bf16, d, threads] = entry.first;
    by_problem[std::make_tuple(backward, bf16, d, threads, ws)] = &entry.first;
  }
  for (const auto& [problem, key] : by_problem) {
    const auto& [backward, bf16, d, threads, ws] = problem;
    const auto& by_impl = g_samples.at(*key);
    std::printf("%-4s %-5s %6lld %3d %7lld |", backward ? "bwd" : "fwd", bf16 ? "bf16" : "f32",
                static_cast<long long>(d), threads, static_cast<long long>(ws / kMiB));
    for (const Impl impl :
         {Impl::kFast, Impl::kFastHwy, Impl::kOneDnn, Impl::kTorch, Impl::kMemcpy}) {
      PrintCell(MedianOf(by_impl, impl, false), 8);
    }
    PrintCell(MedianOf(by_impl, Impl::kMemcpyNt, false), 9);
    std::printf(" |");
    PrintCell(MedianOf(by_impl, Impl::kFast, true), 6);
    PrintCell(MedianOf(by_impl, Impl::kFastHwy, true), 6);
    std::printf("\n");
  }
}

void PrintSummary() {
  if (g_samples.empty()) return;
  std::printf(
      "\nbench_kernels: medians over the repetitions. GB/s = bytes read + written per call / "
      "time;\n  x/oneDNN = oneDNN's time / x's time, both measured in the same loop (> 1: x is "
      "faster).\n");
  if (!g_sweep) {
    std::printf("\n");
    PrintTable(0);
    return;
  }
  PrintCurve();
  const std::int64_t smallest = std::get<0>(g_samples.begin()->first);
  const std::int64_t largest = std::get<0>(g_samples.rbegin()->first);
  if (smallest == largest) {  // a filter kept one working set: one table
    std::printf("\nAt the one working set measured, %lld MiB:\n",
                static_cast<long long>(smallest / kMiB));
    PrintTable(smallest);
    return;
  }
  std::printf("\nAt the smallest working set, %lld MiB:\n",
              static_cast<long long>(smallest / kMiB));
  PrintTable(smallest);
  std::printf("\nAt the largest working set, %lld MiB:\n", static_cast<long long>(largest / kMiB));
  PrintTable(largest);
}

// Removes "--elements N" / "--elements=N" from argv; false on a bad value.
bool TakeElements(int& argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* value = nullptr;
    int used = 0;
    if (a == "--elements" && i + 1 < argc) {
      value = argv[i + 1];
      used = 2;
    } else if (a.rfind("--elements=", 0) == 0) {
      value = argv[i] + std::strlen("--elements=");
      used = 1;
    } else if (a == "--elements") {
      return false;
    } else {
      continue;
    }
    char* end = nullptr;
    const long long v = std::strtoll(value, &end, 10);
    if (end == value || *end != '\0' || v < 1) return false;
    g_elements = v;
    for (int j = i; j + used < argc; ++j) argv[j] = argv[j + used];
    argc -= used;
    --i;
  }
  return true;
}

// Removes "--lnv_sweep" from argv; true if it was there.
bool TakeSweep(int& argc, char** argv) {
  bool found = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--lnv_sweep") != 0) continue;
    found = true;
    for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
    --argc;
    --i;
  }
  return found;
}

// MemAvailable from /proc/meminfo, else the free physical pages.
std::int64_t AvailableMemoryBytes() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib > 0) return static_cast<std::int64_t>(kib) * 1024;
  }
  return static_cast<std::int64_t>(sysconf(_SC_AVPHYS_PAGES)) * sysconf(_SC_PAGESIZE);
}

// 1 MiB, 2 MiB, ... up to the first size >= 2 x the reported LLC, none above
// a tenth of the available memory: past the LLC a loop holds the inputs and
// their copy and two runners a side (LoopRunners), each about a working set
// (6.5 GB at 1024 MiB, bf16 at d = 768), and the tenth leaves room for the
// rest of the process.
std::vector<std::int64_t> SweepSizes() {
  const std::int64_t cap = AvailableMemoryBytes() / 10;
  const std::int64_t goal = 2 * ReportedLlcBytes();
  std::vector<std::int64_t> sizes;
  for (std::int64_t ws = kMiB; ws <= cap; ws *= 2) {
    sizes.push_back(ws);
    if (ws >= goal) break;
  }
  return sizes;
}

void Register(const Config& cfg) {
  const bool native = cfg.dtype == DType::kBF16 && fast::HaveAvx512Bf16LayerNorm();
  for (const Impl impl : kImpls) {
    if (impl == Impl::kFastHwy && !native) continue;
    const std::string name = cfg.Name() + "/" + ImplName(impl);
    g_registered[name] = {cfg.Key(), impl};
    benchmark::RegisterBenchmark(name.c_str(), BM_Kernel, cfg, impl)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

void RegisterDefault() {
  for (const bool forward : {true, false}) {
    for (const DType dtype : kDTypes) {
      for (const std::int64_t d : kDims) {
        for (const int threads : kThreads) Register(Config{forward, dtype, d, threads});
      }
    }
  }
}

// Sizes outermost, so that each problem's inputs are made once.
void RegisterSweep() {
  const std::vector<std::int64_t> sizes = SweepSizes();
  std::printf(
      "bench_kernels sweep: reported LLC %lld MiB, available memory %lld MiB, "
      "working sets %lld to %lld MiB\n",
      static_cast<long long>(ReportedLlcBytes() / kMiB),
      static_cast<long long>(AvailableMemoryBytes() / kMiB),
      static_cast<long long>(sizes.front() / kMiB), static_cast<long long>(sizes.back() / kMiB));
  for (const std::int64_t ws : sizes) {
    for (const bool forward : {true, false}) {
      for (const DType dtype : kDTypes) {
        for (const std::int64_t d : kSweepDims) {
          for (const int threads : kThreads) Register(Config{forward, dtype, d, threads, ws});
        }
      }
    }
  }
}

// The median of TwoThreadRoundTripsNs' rounds, as printed.
std::string RoundTripText(const std::vector<double>& rounds_ns) {
  if (rounds_ns.empty())
    return "not measured (no OpenMP, one CPU, a region of one thread, or every round too slow)";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f ns", Median(rounds_ns));
  return text;
}

}  // namespace
}  // namespace lnv::bench

int main(int argc, char** argv) {
  using namespace lnv::bench;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf(
          "bench_kernels: fast CPU LayerNorm kernels vs oneDNN, PyTorch ATen and memcpy\n"
          "  --elements N   rows * d of every problem (default %lld)\n"
          "  --lnv_sweep    sweep the working set from 1 MiB to >= 2x the last-level cache\n"
          "                 (d = 768 and 4096, 1 and 2 threads); --elements does not apply\n"
          "Benchmark names: [ws:NMiB/]fwd|bwd/f32|bf16/d:D/threads:T/"
          "fast|fast_hwy|onednn|torch|memcpy|memcpy_nt.\n"
          "Google Benchmark's flags follow.\n\n",
          static_cast<long long>(g_elements));
      break;  // benchmark::Initialize prints its flags and exits
    }
  }
  g_sweep = TakeSweep(argc, argv);
  if (!TakeElements(argc, argv)) {
    std::fprintf(stderr, "bench_kernels: --elements needs a positive integer\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const std::string fast =
      lnv::fast::AvailableTargets().front().backend +
      (lnv::fast::HaveAvx512Bf16LayerNorm() ? " (bf16: cpu-fast-avx512bf16, fast_hwy: Highway's)"
                                            : "");
  std::printf("bench_kernels: fast = %s; %s; %s; elements per problem %lld\n", fast.c_str(),
              OneDnnStatus().c_str(), TorchStatus().c_str(), static_cast<long long>(g_elements));
  const std::string round_trip = RoundTripText(TwoThreadRoundTripsNs());
  std::printf("bench_kernels: a cache line between the two threads and back: %s\n",
              round_trip.c_str());
  benchmark::AddCustomContext("fast", fast);
  benchmark::AddCustomContext("two_thread_round_trip", round_trip);
  benchmark::AddCustomContext("onednn", OneDnnStatus());
  benchmark::AddCustomContext("torch", TorchStatus());
  benchmark::AddCustomContext("elements", std::to_string(g_elements));
  char goal[32];
  std::snprintf(goal, sizeof goal, "%.17g", kGoalVsOneDnn);
  benchmark::AddCustomContext("goal_vs_onednn", goal);  // the mark's rule (check_summary.py)
  if (g_sweep) {
    RegisterSweep();
  } else {
    RegisterDefault();
  }
  SummaryRecorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder);
  benchmark::Shutdown();
  PrintSummary();
  return 0;
}

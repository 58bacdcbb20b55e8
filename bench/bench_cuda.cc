// bench_cuda: GPU throughput of the CUDA LayerNorm/RMSNorm kernels
// (impls/cuda/kernels.cu) next to a device-to-device cudaMemcpy that moves
// the same bytes, in the same run. Built only with CUDA (LNV_CUDA_ENABLED);
// exits 77 (skipped) on a machine without a usable GPU.
//
// Cases: d = 768, 4096, 16384; fp32 and bf16 storage; forward and backward;
// LayerNorm and RMSNorm; rows chosen so x is about 256 MiB. Bytes counted are
// the ones a kernel must move at least: forward reads x and writes y (2 n e
// bytes, n = rows d elements of e bytes); backward reads x and dy and writes
// dx (3 n e; the kernels also re-read x and dy for dgamma/dbeta, which this
// does not count). gamma/beta and the statistics are O(d + rows) and ignored.
// The memcpy of each case copies half its bytes (a copy reads and writes
// each byte). Times come from CUDA events around each launch (manual time).
// After the run a table prints GB/s, the memcpy's GB/s, their ratio and the
// share of the H200's ~4.8 TB/s HBM3e peak.
//
// Flags: --seed N (default 1) for the inputs, plus Google Benchmark's own.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "impls/api.h"
#include "impls/cuda/device_api.h"
#include "impls/dtype.h"

namespace {

constexpr std::int64_t kDims[] = {768, 4096, 16384};
constexpr std::int64_t kTargetBytes = std::int64_t{256} << 20;  // of x
constexpr double kH200PeakGBs = 4800.0;

struct Spec {
  lnv::Norm norm;
  lnv::DType dtype;
  std::int64_t d;
  bool backward;
  std::string Name() const {
    return std::string(norm == lnv::Norm::kLayerNorm ? "layer_norm" : "rms_norm") + "_" +
           (backward ? "bwd" : "fwd") + "/" + std::string(lnv::DTypeName(dtype)) + "/" +
           std::to_string(d);
  }
  std::int64_t Rows() const {
    return kTargetBytes / (d * static_cast<std::int64_t>(lnv::SizeOf(dtype)));
  }
  // The bytes the kernel must move (see the header comment).
  double Bytes() const {
    const double x = static_cast<double>(Rows() * d) * static_cast<double>(lnv::SizeOf(dtype));
    return backward ? 3 * x : 2 * x;
  }
};

struct Result {
  double kernel_s = 0, memcpy_s = 0;  // seconds per iteration
};
std::map<std::string, Result>& Results() {
  static std::map<std::string, Result> r;
  return r;
}

std::uint64_t g_seed = 1;

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_cuda: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void* DeviceAlloc(std::size_t bytes) {
  void* p = nullptr;
  Check(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}

// Uniform values in [mean - 2, mean + 2) in the dtype, uploaded (a cheap
// generator: the bench needs ordinary inputs, not a distribution).
void* DeviceRandom(lnv::DType t, std::int64_t n, double mean, std::uint64_t salt) {
  std::vector<unsigned char> host(static_cast<std::size_t>(n) * lnv::SizeOf(t));
  std::uint64_t z = (g_seed * 0x9E3779B97F4A7C15ull + salt) | 1;  // xorshift: never 0
  for (std::int64_t i = 0; i < n; ++i) {
    z ^= z << 13;
    z ^= z >> 7;
    z ^= z << 17;
    const float u = static_cast<float>(z >> 40) * 0x1p-24f;  // [0, 1)
    lnv::StoreFromFloat(host.data(), t, i, static_cast<float>(mean) + 4 * u - 2);
  }
  void* p = DeviceAlloc(host.size());
  Check(cudaMemcpy(p, host.data(), host.size(), cudaMemcpyHostToDevice), "upload");
  return p;
}

// Times `launch` with CUDA events, one launch per iteration.
template <typename Launch>
double TimeLoop(benchmark::State& state, Launch launch) {
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "cudaEventCreate");
  Check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();  // warm-up: the first launch loads the module
  Check(cudaDeviceSynchronize(), "warm-up");
  double total = 0;
  std::int64_t iters = 0;
  for (auto _ : state) {
    Check(cudaEventRecord(start), "cudaEventRecord");
    launch();
    Check(cudaEventRecord(stop), "cudaEventRecord");
    Check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    state.SetIterationTime(ms / 1e3);
    total += ms / 1e3;
    ++iters;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return iters > 0 ? total / static_cast<double>(iters) : 0.0;
}

void BM_Kernel(benchmark::State& state, Spec s) {
  const std::int64_t rows = s.Rows(), n = rows * s.d;
  const std::size_t es = lnv::SizeOf(s.dtype), p_bytes = static_cast<std::size_t>(s.d) * es;
  const bool ln = s.norm == lnv::Norm::kLayerNorm;
  void* x = DeviceRandom(s.dtype, n, 0.5, 1);
  void* gamma = DeviceRandom(s.dtype, s.d, 1.0, 2);
  void* beta = ln ? DeviceRandom(s.dtype, s.d, 0.0, 3) : nullptr;
  void* y = DeviceAlloc(static_cast<std::size_t>(n) * es);
  auto* mean = static_cast<float*>(DeviceAlloc(static_cast<std::size_t>(rows) * 4));
  auto* rstd = static_cast<float*>(DeviceAlloc(static_cast<std::size_t>(rows) * 4));
  lnv::ForwardArgs fa{};
  fa.rows = rows;
  fa.d = s.d;
  fa.x = x;
  fa.gamma = gamma;
  fa.beta = beta;
  fa.eps = 1e-5f;
  fa.y = y;
  fa.mean = ln ? mean : nullptr;
  fa.rstd = rstd;
  void *dy = nullptr, *dgamma = nullptr, *dbeta = nullptr;
  lnv::BackwardArgs ba{};
  if (s.backward) {
    dy = DeviceRandom(s.dtype, n, 0.0, 4);
    dgamma = DeviceAlloc(p_bytes);
    dbeta = ln ? DeviceAlloc(p_bytes) : nullptr;
    if (lnv::cuda::DeviceForward(s.dtype, s.norm, &fa, nullptr) != 0) std::exit(1);
    ba.rows = rows;
    ba.d = s.d;
    ba.x = x;
    ba.gamma = gamma;
    ba.dy = dy;
    ba.mean = fa.mean;
    ba.rstd = rstd;
    ba.eps = fa.eps;
    ba.dx = y;  // dx reuses y's buffer
    ba.dgamma = dgamma;
    ba.dbeta = dbeta;
  }
  const double sec = TimeLoop(state, [&] {
    const int rc = s.backward ? lnv::cuda::DeviceBackward(s.dtype, s.norm, &ba, nullptr)
                              : lnv::cuda::DeviceForward(s.dtype, s.norm, &fa, nullptr);
    if (rc != 0) {
      std::fprintf(stderr, "bench_cuda: %s returned %d\n", s.Name().c_str(), rc);
      std::exit(1);
    }
  });
  Check(cudaGetLastError(), s.Name().c_str());
  state.counters["GB/s"] = sec > 0 ? s.Bytes() / sec / 1e9 : 0.0;
  Results()[s.Name()].kernel_s = sec;
  for (void* p :
       {x, gamma, beta, y, static_cast<void*>(mean), static_cast<void*>(rstd), dy, dgamma, dbeta}) {
    if (p != nullptr) cudaFree(p);
  }
}

void BM_Memcpy(benchmark::State& state, Spec s) {
  const auto bytes = static_cast<std::size_t>(s.Bytes() / 2);
  void* src = DeviceAlloc(bytes);
  void* dst = DeviceAlloc(bytes);
  Check(cudaMemset(src, 1, bytes), "cudaMemset");
  const double sec = TimeLoop(state, [&] {
    Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
  });
  state.counters["GB/s"] = sec > 0 ? s.Bytes() / sec / 1e9 : 0.0;
  Results()[s.Name()].memcpy_s = sec;
  cudaFree(src);
  cudaFree(dst);
}

void PrintSummary(const std::vector<Spec>& specs, std::FILE* out) {
  std::fprintf(out, "\n%-28s %12s %12s %8s %10s\n", "case", "kernel GB/s", "memcpy GB/s", "ratio",
               "of 4.8TB/s");
  for (const Spec& s : specs) {
    const auto it = Results().find(s.Name());
    if (it == Results().end() || it->second.kernel_s <= 0) continue;
    const double k = s.Bytes() / it->second.kernel_s / 1e9;
    const double m = it->second.memcpy_s > 0 ? s.Bytes() / it->second.memcpy_s / 1e9 : 0.0;
    std::fprintf(out, "%-28s %12.1f %12.1f %8.3f %9.1f%%\n", s.Name().c_str(), k, m,
                 m > 0 ? k / m : 0.0, 100 * k / kH200PeakGBs);
  }
}

bool TakeSeed(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--seed" && i + 1 < argc) {
      char* end = nullptr;
      g_seed = std::strtoull(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0') return false;
    } else if (a.rfind("--seed=", 0) == 0) {
      char* end = nullptr;
      g_seed = std::strtoull(argv[i] + 7, &end, 10);
      if (end == nullptr || *end != '\0') return false;
    } else {
      argv[out++] = argv[i];
    }
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
          "bench_cuda: GPU GB/s of the CUDA LayerNorm/RMSNorm kernels (d = 768, 4096,\n"
          "16384; fp32, bf16; forward, backward) next to a device-to-device memcpy of the\n"
          "same bytes. Exits 77 without a usable GPU.\n"
          "  --seed N   seed of the inputs (default 1)\n"
          "Google Benchmark flags follow (e.g. --benchmark_filter=REGEX).\n\n");
      break;  // benchmark::Initialize prints its flags and exits
    }
  }
  if (!TakeSeed(argc, argv)) {
    std::fprintf(stderr, "bench_cuda: --seed needs a non-negative integer\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (!lnv::cuda::DeviceAvailable()) {
    std::printf("bench_cuda: no usable CUDA device: skipped (exit 77)\n");
    return 77;
  }
  std::printf("bench_cuda: seed %llu\n", static_cast<unsigned long long>(g_seed));
  benchmark::AddCustomContext("seed", std::to_string(g_seed));
  std::vector<Spec> specs;
  for (lnv::Norm norm : {lnv::Norm::kLayerNorm, lnv::Norm::kRmsNorm}) {
    for (bool bwd : {false, true}) {
      for (lnv::DType t : {lnv::DType::kF32, lnv::DType::kBF16}) {
        for (std::int64_t d : kDims) specs.push_back({norm, t, d, bwd});
      }
    }
  }
  for (const Spec& s : specs) {
    benchmark::RegisterBenchmark(s.Name().c_str(), BM_Kernel, s)->UseManualTime();
    benchmark::RegisterBenchmark(("memcpy_d2d/" + s.Name()).c_str(), BM_Memcpy, s)->UseManualTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  std::cout.flush();
  PrintSummary(specs, stdout);
  benchmark::Shutdown();
  return 0;
}

// The real CUDA kernels on a GPU (ctest label gpu): each equals its host
// emulation bit for bit on every input family (odd d, d not a multiple of
// the granule, misaligned rows, rows >= 65536, and more than 2^31 elements
// where device memory allows), meets its bound against the oracle, and is
// deterministic run to run; the device's bf16/fp16 stores equal the host's.
// Without a usable GPU the binary exits 77 (ctest: skipped) before any test.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/families.h"
#include "impls/cuda/args.h"
#include "impls/cuda/device_api.h"
#include "impls/cuda/emulate.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_ops.h"
#include "impls/cuda/storage.h"
#include "impls/cuda/storage_for.h"
#include "impls/dtype.h"
#include "impls/registry.h"

namespace lnv::cuda {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// A device buffer of `bytes` usable bytes starting `offset` bytes into the
// allocation (offset 0: 256-byte aligned; offset 2 or 4: every granule of
// row 0 misaligned).
class DeviceBuffer {
 public:
  DeviceBuffer(std::size_t bytes, std::size_t offset) : bytes_(bytes) {
    if (cudaMalloc(&base_, bytes + offset + 16) != cudaSuccess) base_ = nullptr;
    ptr_ = base_ == nullptr ? nullptr : static_cast<char*>(base_) + offset;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (base_ != nullptr) cudaFree(base_);
  }
  bool ok() const { return base_ != nullptr; }
  void* get() const { return ptr_; }
  bool Upload(const void* host) const {
    return bytes_ == 0 || cudaMemcpy(ptr_, host, bytes_, cudaMemcpyHostToDevice) == cudaSuccess;
  }
  // An output before the kernel runs: all-ones bytes are a NaN in fp32, bf16
  // and fp16, so an element the kernel skips reads back as NaN, never as
  // what an earlier run left in recycled device memory.
  bool FillUnwritten() const {
    return bytes_ == 0 || cudaMemset(ptr_, 0xFF, bytes_) == cudaSuccess;
  }
  bool Download(void* host) const {
    return bytes_ == 0 || cudaMemcpy(host, ptr_, bytes_, cudaMemcpyDeviceToHost) == cudaSuccess;
  }

 private:
  void* base_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// A case's arrays in the kernel's storage (bytes), NaN-filled outputs.
struct HostCase {
  std::vector<unsigned char> x, gamma, beta, dy;
};

std::vector<unsigned char> ToStorage(const std::vector<double>& v, DType t) {
  std::vector<unsigned char> b(v.size() * SizeOf(t));
  for (std::size_t i = 0; i < v.size(); ++i)
    StoreExact(b.data(), t, static_cast<std::int64_t>(i), v[i]);
  return b;
}

HostCase ToHost(const Case& c) {
  return {
      ToStorage(c.x, c.dtype), ToStorage(c.gamma, c.param_dtype),
      c.norm == Norm::kLayerNorm ? ToStorage(c.beta, c.param_dtype) : std::vector<unsigned char>{},
      ToStorage(c.dy, c.dtype)};
}

const void* OrNull(const std::vector<unsigned char>& v) { return v.empty() ? nullptr : v.data(); }

struct Outputs {
  std::vector<unsigned char> y, dx, dgamma, dbeta;
  std::vector<float> mean, rstd;
};

Outputs EmptyOutputs(const Case& c) {
  const std::size_t n = c.x.size() * SizeOf(c.dtype),
                    p = static_cast<std::size_t>(c.d) * SizeOf(c.dtype);
  Outputs o;
  o.y.assign(n, 0xA5);
  o.dx.assign(n, 0xA5);
  o.dgamma.assign(p, 0xA5);
  o.dbeta.assign(c.norm == Norm::kLayerNorm ? p : 0, 0xA5);
  o.mean.assign(static_cast<std::size_t>(c.rows), -1.0f);
  o.rstd.assign(static_cast<std::size_t>(c.rows), -1.0f);
  return o;
}

using EmulatedFwd = int (*)(const ForwardArgs*);
using EmulatedBwd = int (*)(const BackwardArgs*);

template <DType kX, Norm kNorm>
constexpr std::pair<EmulatedFwd, EmulatedBwd> EmulationOf() {
  return {&EmulatedForward<kX, kNorm>, &EmulatedBackward<kX, kNorm>};
}

std::pair<EmulatedFwd, EmulatedBwd> Emulation(DType t, Norm n) {
  const bool ln = n == Norm::kLayerNorm;
  switch (t) {
    case DType::kF32:
      return ln ? EmulationOf<DType::kF32, Norm::kLayerNorm>()
                : EmulationOf<DType::kF32, Norm::kRmsNorm>();
    case DType::kBF16:
      return ln ? EmulationOf<DType::kBF16, Norm::kLayerNorm>()
                : EmulationOf<DType::kBF16, Norm::kRmsNorm>();
    default:
      return ln ? EmulationOf<DType::kF16, Norm::kLayerNorm>()
                : EmulationOf<DType::kF16, Norm::kRmsNorm>();
  }
}

Outputs RunEmulation(const Case& c, const HostCase& h) {
  Outputs o = EmptyOutputs(c);
  const auto [fwd, bwd] = Emulation(c.dtype, c.norm);
  const bool ln = c.norm == Norm::kLayerNorm;
  ForwardArgs fa{};
  fa.rows = c.rows;
  fa.d = c.d;
  fa.x = h.x.data();
  fa.gamma = OrNull(h.gamma);
  fa.beta = OrNull(h.beta);
  fa.eps = static_cast<float>(c.eps);
  fa.y = o.y.data();
  fa.mean = ln ? o.mean.data() : nullptr;
  fa.rstd = o.rstd.data();
  EXPECT_EQ(fwd(&fa), 0);
  if (c.dy.empty()) {
    o.dx.clear();
    o.dgamma.clear();
    o.dbeta.clear();
    return o;
  }
  BackwardArgs ba{};
  ba.rows = c.rows;
  ba.d = c.d;
  ba.x = h.x.data();
  ba.gamma = OrNull(h.gamma);
  ba.dy = h.dy.data();
  ba.mean = ln ? o.mean.data() : nullptr;
  ba.rstd = o.rstd.data();
  ba.eps = fa.eps;
  ba.dx = o.dx.data();
  ba.dgamma = o.dgamma.data();
  ba.dbeta = ln ? o.dbeta.data() : nullptr;
  EXPECT_EQ(bwd(&ba), 0);
  return o;
}

// The real kernels on device copies placed `offset_elems` elements past an
// aligned address (1: every 16-byte granule of row 0 misaligned).
Outputs RunDevice(const Case& c, const HostCase& h, std::size_t offset_elems) {
  Outputs o = EmptyOutputs(c);
  const std::size_t off = offset_elems * SizeOf(c.dtype);
  const bool ln = c.norm == Norm::kLayerNorm;
  DeviceBuffer x(h.x.size(), off), gamma(h.gamma.size(), off), beta(h.beta.size(), off),
      dy(h.dy.size(), off), y(o.y.size(), off), dx(o.dx.size(), off), dgamma(o.dgamma.size(), off),
      dbeta(o.dbeta.size(), off), mean(o.mean.size() * sizeof(float), 0),
      rstd(o.rstd.size() * sizeof(float), 0);
  EXPECT_TRUE(x.ok() && y.ok() && dx.ok() && dy.ok() && mean.ok() && rstd.ok());
  EXPECT_TRUE(x.Upload(h.x.data()) && gamma.Upload(h.gamma.data()) && beta.Upload(h.beta.data()) &&
              dy.Upload(h.dy.data()));
  EXPECT_TRUE(y.FillUnwritten() && dx.FillUnwritten() && dgamma.FillUnwritten() &&
              dbeta.FillUnwritten() && mean.FillUnwritten() && rstd.FillUnwritten());
  ForwardArgs fa{};
  fa.rows = c.rows;
  fa.d = c.d;
  fa.x = x.get();
  fa.gamma = h.gamma.empty() ? nullptr : gamma.get();
  fa.beta = h.beta.empty() ? nullptr : beta.get();
  fa.eps = static_cast<float>(c.eps);
  fa.y = y.get();
  fa.mean = ln ? static_cast<float*>(mean.get()) : nullptr;
  fa.rstd = static_cast<float*>(rstd.get());
  EXPECT_EQ(DeviceForward(c.dtype, c.norm, &fa, nullptr), 0);
  if (!c.dy.empty()) {
    BackwardArgs ba{};
    ba.rows = c.rows;
    ba.d = c.d;
    ba.x = x.get();
    ba.gamma = fa.gamma;
    ba.dy = dy.get();
    ba.mean = fa.mean;
    ba.rstd = fa.rstd;
    ba.eps = fa.eps;
    ba.dx = dx.get();
    ba.dgamma = dgamma.get();
    ba.dbeta = ln ? dbeta.get() : nullptr;
    EXPECT_EQ(DeviceBackward(c.dtype, c.norm, &ba, nullptr), 0);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(y.Download(o.y.data()) && rstd.Download(o.rstd.data()));
  if (ln) {
    EXPECT_TRUE(mean.Download(o.mean.data()));
  }
  if (!c.dy.empty()) {
    EXPECT_TRUE(dx.Download(o.dx.data()) && dgamma.Download(o.dgamma.data()));
    if (ln) {
      EXPECT_TRUE(dbeta.Download(o.dbeta.data()));
    }
  } else {
    o.dx.clear();
    o.dgamma.clear();
    o.dbeta.clear();
  }
  return o;
}

// "" when equal byte for byte, else where the first difference is.
std::string FirstDifference(const Outputs& a, const Outputs& b, std::size_t elem) {
  const auto cmp = [&](const char* what, const auto& u, const auto& v,
                       std::size_t size) -> std::string {
    if (u.size() != v.size()) return std::string(what) + ": sizes differ";
    const auto* pu = reinterpret_cast<const unsigned char*>(u.data());
    const auto* pv = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < u.size() * sizeof(u[0]); ++i) {
      if (pu[i] != pv[i]) return std::string(what) + "[" + std::to_string(i / size) + "] differs";
    }
    return "";
  };
  for (const std::string& s :
       {cmp("y", a.y, b.y, elem), cmp("mean", a.mean, b.mean, 4), cmp("rstd", a.rstd, b.rstd, 4),
        cmp("dx", a.dx, b.dx, elem), cmp("dgamma", a.dgamma, b.dgamma, elem),
        cmp("dbeta", a.dbeta, b.dbeta, elem)}) {
    if (!s.empty()) return s;
  }
  return "";
}

struct Kernel {
  DType dtype;
  Norm norm;
};
constexpr Kernel kKernels[] = {{DType::kF32, Norm::kLayerNorm},  {DType::kF32, Norm::kRmsNorm},
                               {DType::kBF16, Norm::kLayerNorm}, {DType::kBF16, Norm::kRmsNorm},
                               {DType::kF16, Norm::kLayerNorm},  {DType::kF16, Norm::kRmsNorm}};

std::string Name(const Kernel& k) {
  return std::string(DTypeName(k.dtype)) + "/" + std::string(NormName(k.norm));
}

Case FamilyCase(const Kernel& k, const Family& f, std::int64_t d, std::int64_t rows) {
  FamilyParams p;
  p.norm = k.norm;
  p.dtype = p.param_dtype = k.dtype;
  p.d = d;
  p.rows = rows;
  p.seed = 20240611;
  p.large_d = 65536 + 17;
  p.many_rows = 65536 + 3;
  return GenerateCase(f, p);
}

void ExpectEqualToEmulation(const Kernel& k, const Case& c, const char* what) {
  const HostCase h = ToHost(c);
  const Outputs emu = RunEmulation(c, h);
  const std::size_t elem = SizeOf(k.dtype);
  for (std::size_t offset : {0, 1}) {
    const Outputs dev = RunDevice(c, h, offset);
    EXPECT_EQ(FirstDifference(emu, dev, elem), "")
        << Name(k) << " " << what << " d=" << c.d << " rows=" << c.rows << " offset=" << offset;
  }
}

TEST(GpuKernels, EqualTheirEmulationBitForBitOnEveryFamily) {
  for (const Kernel& k : kKernels) {
    for (const Family& f : AllFamilies()) {
      const std::string name(f.name);
      // large_d and many_rows fix their own shape; the others run at the
      // warp/block edges, odd d and d not a multiple of the granule.
      const std::vector<std::int64_t> ds =
          (name == "large_d" || name == "many_rows" || name == "d_one")
              ? std::vector<std::int64_t>{64}
              : std::vector<std::int64_t>{7, 33, 64, 200, 768, 1024, 1025, 4096, 4099};
      for (std::int64_t d : ds) ExpectEqualToEmulation(k, FamilyCase(k, f, d, 9), f.name.data());
    }
  }
}

TEST(GpuKernels, EqualTheirEmulationOnRowsBeyond65535InBothKernelShapes) {
  for (const Kernel& k : kKernels) {
    for (std::int64_t d : {100, 1030}) {
      ExpectEqualToEmulation(k, FamilyCase(k, *FindFamily("standard_normal"), d, 70001),
                             "rows=70001");
    }
  }
}

TEST(GpuKernels, AreDeterministicRunToRun) {
  for (const Kernel& k : kKernels) {
    for (std::int64_t d : {768, 4096}) {
      const Case c = FamilyCase(k, *FindFamily("large_mean"), d, 4096);
      const HostCase h = ToHost(c);
      const Outputs first = RunDevice(c, h, 0);
      for (int rep = 0; rep < 2; ++rep) {
        EXPECT_EQ(FirstDifference(first, RunDevice(c, h, 0), SizeOf(k.dtype)), "")
            << Name(k) << " d=" << d << " repetition " << rep + 1;
      }
    }
  }
}

// The registry's <dtype>/.../cuda entries through ln_check's own run: every
// family, within bound against the oracle. The quick budget: the full one
// runs on the emulations in CI, and the tests above make the GPU equal them.
TEST(GpuKernels, MeetTheirBoundsAgainstTheOracle) {
  CheckOptions o;
  o.impls_glob = "*/cuda";
  o.budget = Budget::kQuick;
  o.write_cases = true;
  o.cases_dir = "lnv-cases-gpu";
  std::ostringstream out;
  const CheckResult r = RunCheck(o, out);
  PrintCheckReport(o, r, out);  // the table, for the log
  EXPECT_EQ(r.kernels.size(), 6u);
  EXPECT_EQ(r.exit_code, 0) << out.str();
  std::printf("%s", out.str().c_str());
}

TEST(GpuConversions, DeviceStoresEqualTheHostStoresOnSampledAndBoundaryFloats) {
  constexpr std::int64_t kChunk = std::int64_t{1} << 24;
  std::vector<float> in(kChunk);
  std::vector<std::uint16_t> out(kChunk);
  float* d_in = nullptr;
  std::uint16_t* d_out = nullptr;
  CUDA_OK(cudaMalloc(&d_in, kChunk * sizeof(float)));
  CUDA_OK(cudaMalloc(&d_out, kChunk * sizeof(std::uint16_t)));
  // Every 7th bit pattern (all exponents and both signs), and every pattern
  // whose low 16 bits are a bf16 tie or next to one.
  std::uint64_t next = 0;
  std::int64_t mismatches = 0;
  bool done = false;
  while (!done) {
    std::int64_t n = 0;
    for (; n < kChunk && next < (std::uint64_t{1} << 32); ++n, next += 7) {
      const auto b = static_cast<std::uint32_t>(next);
      std::memcpy(&in[n], &b, sizeof b);
    }
    if (next >= (std::uint64_t{1} << 32)) {
      for (std::uint32_t hi = 0; hi < 65536 && n + 4 < kChunk; ++hi) {
        for (std::uint32_t lo : {0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
          const std::uint32_t b = hi << 16 | lo;
          std::memcpy(&in[n++], &b, sizeof b);
        }
      }
      done = true;
    }
    CUDA_OK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    for (DType t : {DType::kBF16, DType::kF16}) {
      // A skipped element must not keep the previous dtype's result.
      CUDA_OK(cudaMemset(d_out, 0xFF, n * sizeof(std::uint16_t)));
      ASSERT_EQ(DeviceStoreFloats(t, d_in, d_out, n, nullptr), 0);
      CUDA_OK(cudaMemcpy(out.data(), d_out, n * sizeof(std::uint16_t), cudaMemcpyDeviceToHost));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint16_t host =
            t == DType::kBF16 ? Bf16Storage::FromFloat(in[i]) : F16Storage::FromFloat(in[i]);
        mismatches += host != out[i];
      }
    }
  }
  cudaFree(d_in);
  cudaFree(d_out);
  EXPECT_EQ(mismatches, 0);
}

// More than 2^31 elements (and 2^32 bytes): 64-bit offsets. x and dy follow
// a hash of the element index; the rows around each boundary are compared
// with the emulation of those rows alone (rows are independent), dgamma and
// dbeta with the emulated partial sums over every row.
float PatternValue(std::uint64_t i, std::uint64_t salt) {
  std::uint64_t z = i * 0x9e3779b97f4a7c15ULL + salt;
  z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
  z ^= z >> 29;
  return static_cast<float>(static_cast<std::int64_t>(z % 256) - 128) / 32.0f;  // exact in bf16
}

void CheckHuge(DType dtype, std::int64_t d) {
  const std::int64_t rows = CeilDiv((std::int64_t{1} << 31) + 3 * d, d);
  const std::size_t n = static_cast<std::size_t>(rows * d), es = SizeOf(dtype);
  std::size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  if (free_bytes < 4 * n * es + (std::size_t{1} << 30)) {
    GTEST_SKIP() << "needs " << 4 * n * es / (1 << 20) << " MiB of device memory";
  }
  std::vector<unsigned char> x(n * es), dy(n * es), gamma(static_cast<std::size_t>(d) * es);
  {
    std::vector<std::thread> fill;
    const std::size_t parts = 16;
    for (std::size_t t = 0; t < parts; ++t) {
      fill.emplace_back([&, t] {
        for (std::size_t i = t * n / parts; i < (t + 1) * n / parts; ++i) {
          StoreFromFloat(x.data(), dtype, static_cast<std::int64_t>(i), PatternValue(i, 1));
          StoreFromFloat(dy.data(), dtype, static_cast<std::int64_t>(i), PatternValue(i, 2));
        }
      });
    }
    for (auto& th : fill) th.join();
  }
  for (std::int64_t j = 0; j < d; ++j)
    StoreFromFloat(gamma.data(), dtype, j, 1 + PatternValue(j, 3) / 8);
  DeviceBuffer dx_in(n * es, 0), ddy(n * es, 0), dgam(gamma.size(), 0), dy_out(n * es, 0),
      ddx(n * es, 0), dmean(rows * 4, 0), drstd(rows * 4, 0), ddg(gamma.size(), 0),
      ddb(gamma.size(), 0);
  ASSERT_TRUE(dx_in.ok() && ddy.ok() && dy_out.ok() && ddx.ok());
  ASSERT_TRUE(dx_in.Upload(x.data()) && ddy.Upload(dy.data()) && dgam.Upload(gamma.data()));
  ASSERT_TRUE(dy_out.FillUnwritten() && ddx.FillUnwritten() && dmean.FillUnwritten() &&
              drstd.FillUnwritten() && ddg.FillUnwritten() && ddb.FillUnwritten());
  ForwardArgs fa{};
  fa.rows = rows;
  fa.d = d;
  fa.x = dx_in.get();
  fa.gamma = dgam.get();
  fa.eps = 1e-5f;
  fa.y = dy_out.get();
  fa.mean = static_cast<float*>(dmean.get());
  fa.rstd = static_cast<float*>(drstd.get());
  ASSERT_EQ(DeviceForward(dtype, Norm::kLayerNorm, &fa, nullptr), 0);
  BackwardArgs ba{};
  ba.rows = rows;
  ba.d = d;
  ba.x = fa.x;
  ba.gamma = fa.gamma;
  ba.dy = ddy.get();
  ba.mean = fa.mean;
  ba.rstd = fa.rstd;
  ba.eps = fa.eps;
  ba.dx = ddx.get();
  ba.dgamma = ddg.get();
  ba.dbeta = ddb.get();
  ASSERT_EQ(DeviceBackward(dtype, Norm::kLayerNorm, &ba, nullptr), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> mean(rows), rstd(rows);
  ASSERT_TRUE(dmean.Download(mean.data()) && drstd.Download(rstd.data()));
  std::vector<unsigned char> dgamma(gamma.size()), dbeta(gamma.size());
  ASSERT_TRUE(ddg.Download(dgamma.data()) && ddb.Download(dbeta.data()));

  // The rows holding elements 0, 2^31 - 1, 2^31, 2^32 / es (byte 2^32) and the last.
  const auto [fwd, bwd] = Emulation(dtype, Norm::kLayerNorm);
  for (std::int64_t e : {std::int64_t{0}, (std::int64_t{1} << 31) - 1, std::int64_t{1} << 31,
                         (std::int64_t{1} << 32) / static_cast<std::int64_t>(es),
                         static_cast<std::int64_t>(n) - 1}) {
    const std::int64_t r = std::min<std::int64_t>(e / d, rows - 1);
    std::vector<unsigned char> y_dev(d * es), dx_dev(d * es), y_emu(d * es), dx_emu(d * es);
    const std::size_t at = static_cast<std::size_t>(r * d) * es;
    ASSERT_EQ(cudaMemcpy(y_dev.data(), static_cast<char*>(dy_out.get()) + at, d * es,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dx_dev.data(), static_cast<char*>(ddx.get()) + at, d * es,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    float m = 0, s = 0;
    ForwardArgs f1 = fa;
    f1.rows = 1;
    f1.x = x.data() + at;
    f1.gamma = gamma.data();
    f1.y = y_emu.data();
    f1.mean = &m;
    f1.rstd = &s;
    ASSERT_EQ(fwd(&f1), 0);
    EXPECT_EQ(std::memcmp(&m, &mean[r], 4), 0) << "mean of row " << r;
    EXPECT_EQ(std::memcmp(&s, &rstd[r], 4), 0) << "rstd of row " << r;
    EXPECT_EQ(y_emu, y_dev) << "y of row " << r;
    BackwardArgs b1{};
    b1.rows = 1;
    b1.d = d;
    b1.x = f1.x;
    b1.gamma = gamma.data();
    b1.dy = dy.data() + at;
    b1.mean = &m;
    b1.rstd = &s;
    b1.eps = fa.eps;
    b1.dx = dx_emu.data();
    ASSERT_EQ(bwd(&b1), 0);
    EXPECT_EQ(dx_emu, dx_dev) << "dx of row " << r;
  }

  // dgamma/dbeta: the emulated chunks in parallel, then the serial final sum.
  const std::int64_t chunks = ParamChunks(rows), chunk_rows = ParamChunkRows(rows);
  std::vector<float> pg(static_cast<std::size_t>(chunks * d)), pb(pg.size());
  {
    std::vector<std::thread> work;
    const std::int64_t parts = 16;
    for (std::int64_t t = 0; t < parts; ++t) {
      work.emplace_back([&, t] {
        for (std::int64_t c = t; c < chunks; c += parts) {
          const std::int64_t r0 = c * chunk_rows, r1 = std::min(rows, r0 + chunk_rows);
          for (std::int64_t j = 0; j < d; ++j) {
            ColumnPartial p;
            if (dtype == DType::kBF16) {
              p = ParamPartialColumn<Bf16Storage, LayerNormPolicy>(
                  reinterpret_cast<const std::uint16_t*>(x.data()),
                  reinterpret_cast<const std::uint16_t*>(dy.data()), mean.data(), rstd.data(), d, j,
                  r0, r1);
            } else {
              p = ParamPartialColumn<F32Storage, LayerNormPolicy>(
                  reinterpret_cast<const float*>(x.data()),
                  reinterpret_cast<const float*>(dy.data()), mean.data(), rstd.data(), d, j, r0,
                  r1);
            }
            pg[c * d + j] = p.dgamma;
            pb[c * d + j] = p.dbeta;
          }
        }
      });
    }
    for (auto& th : work) th.join();
  }
  std::vector<unsigned char> dgamma_emu(gamma.size()), dbeta_emu(gamma.size());
  for (std::int64_t j = 0; j < d; ++j) {
    const float g = SumPartials(pg.data(), chunks, d, j), b = SumPartials(pb.data(), chunks, d, j);
    if (dtype == DType::kBF16) {
      reinterpret_cast<std::uint16_t*>(dgamma_emu.data())[j] = Bf16Storage::FromFloat(g);
      reinterpret_cast<std::uint16_t*>(dbeta_emu.data())[j] = Bf16Storage::FromFloat(b);
    } else {
      reinterpret_cast<float*>(dgamma_emu.data())[j] = F32Storage::FromFloat(g);
      reinterpret_cast<float*>(dbeta_emu.data())[j] = F32Storage::FromFloat(b);
    }
  }
  EXPECT_EQ(dgamma_emu, dgamma);
  EXPECT_EQ(dbeta_emu, dbeta);
}

TEST(GpuKernels, HandleMoreThan2To31ElementsInTheWarpKernel) { CheckHuge(DType::kBF16, 1024); }

TEST(GpuKernels, HandleMoreThan2To31ElementsInTheBlockKernel) { CheckHuge(DType::kBF16, 4100); }

}  // namespace
}  // namespace lnv::cuda

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Listing (ctest's test discovery at build time) needs no GPU; running does.
  if (!GTEST_FLAG_GET(list_tests) && !lnv::cuda::DeviceAvailable()) {
    std::printf("cuda_gpu_test: no usable CUDA device: skipped (exit 77)\n");
    return 77;
  }
  return RUN_ALL_TESTS();
}

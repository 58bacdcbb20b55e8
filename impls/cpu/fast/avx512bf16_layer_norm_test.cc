// The native AVX512_BF16 forward gives the Highway AVX-512 bf16 forward's
// bits: the same reduction shape and arithmetic, y rounded to nearest even
// (subnormal results too, which the bare instruction flushes to zero), and
// the fallback for rows whose statistics overflow or are NaN. Its backward
// (dx's lines rounded by the instruction) gives the Highway backward's
// dx, dgamma and dbeta. Skipped on a CPU without AVX512_BF16.
#include "impls/cpu/fast/avx512bf16_layer_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/targets.h"
#include "impls/registry.h"

namespace lnv::fast {
namespace {

std::uint16_t Bf16Bits(float f) {  // RNE; the inputs here are never NaN
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return static_cast<std::uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

struct Result {
  std::vector<std::uint16_t> y;
  std::vector<float> mean, rstd;
  int rc = -1;
};

Result Forward(ForwardFn fn, const std::vector<std::uint16_t>& x,
               const std::vector<std::uint16_t>* g, const std::vector<std::uint16_t>* b,
               std::int64_t rows, std::int64_t d) {
  Result r;
  r.y.assign(x.size(), 0xFFFF);
  r.mean.assign(rows, -1.f);
  r.rstd.assign(rows, -1.f);
  ForwardArgs a{};
  a.rows = rows;
  a.d = d;
  a.x = x.data();
  a.gamma = g != nullptr ? g->data() : nullptr;
  a.beta = b != nullptr ? b->data() : nullptr;
  a.eps = 1e-5f;
  a.y = r.y.data();
  a.mean = r.mean.data();
  a.rstd = r.rstd.data();
  r.rc = fn(&a);
  return r;
}

std::vector<std::uint16_t> Random(std::int64_t n, float mean, float spread, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
  for (auto& e : v) e = Bf16Bits(mean + spread * normal(rng));
  return v;
}

// Both kernels on the same inputs, with and without gamma and beta.
void ExpectHighwayBits(const std::vector<std::uint16_t>& x, const std::vector<std::uint16_t>& g,
                       const std::vector<std::uint16_t>& b, std::int64_t rows, std::int64_t d,
                       const std::string& what) {
  const ForwardFn highway =
      AvailableTargets().front().layer_norm.forward[FastDTypeIndex(DType::kBF16)];
  for (int mask = 0; mask < 4; ++mask) {
    const auto* gp = (mask & 1) != 0 ? &g : nullptr;
    const auto* bp = (mask & 2) != 0 ? &b : nullptr;
    const Result want = Forward(highway, x, gp, bp, rows, d);
    const Result got = Forward(&Avx512Bf16LayerNormForward, x, gp, bp, rows, d);
    const std::string at = what + " d=" + std::to_string(d) + " params=" + std::to_string(mask);
    ASSERT_EQ(got.rc, 0) << at;
    EXPECT_TRUE(got.y == want.y) << at << ": y";
    EXPECT_EQ(std::memcmp(got.mean.data(), want.mean.data(), rows * sizeof(float)), 0) << at;
    EXPECT_EQ(std::memcmp(got.rstd.data(), want.rstd.data(), rows * sizeof(float)), 0) << at;
  }
}

TEST(Avx512Bf16LayerNorm, IsRegisteredExactlyWhenTheCpuHasAvx512Bf16) {
  const ImplInfo* reg = FindImpl("bf16/two_pass_tree/cpu-fast-avx512bf16");
  EXPECT_EQ(reg != nullptr, HaveAvx512Bf16LayerNorm());
}

TEST(Avx512Bf16LayerNorm, GivesTheHighwayKernelsBitsOnEveryRowLength) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  for (const std::int64_t d : {1,   2,    15,   16,   17,   31,   32,   33,   127,  128,  129,
                               768, 1023, 1024, 1025, 2047, 2049, 3072, 4096, 5000, 7169, 9217}) {
    const std::int64_t rows = 5;
    const auto x = Random(rows * d, 3.f, 2.f, static_cast<std::uint64_t>(d));
    const auto g = Random(d, 1.f, 0.25f, 7);
    const auto b = Random(d, 0.f, 0.5f, 8);
    ExpectHighwayBits(x, g, b, rows, d, "normal");
  }
}

// Rows of signed zeros: every sum is a sum of zeros, whose sign the
// kernel's paired accumulators (BlockSum) must get as the plain shape does,
// also for the lanes a short last step fills with +0. Rows: all -0, all +0,
// alternating, and -0 with a +0 at the end.
TEST(Avx512Bf16LayerNorm, GivesTheHighwayKernelsBitsOnRowsOfSignedZeros) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  for (const std::int64_t d : {1, 2, 15, 16, 17, 32, 33, 48, 128, 129, 768, 1001, 1040, 2048}) {
    const std::int64_t rows = 4;
    std::vector<std::uint16_t> x(rows * d, 0x8000);
    for (std::int64_t j = 0; j < d; ++j) {
      x[d + j] = 0;
      x[2 * d + j] = j % 2 == 0 ? 0x8000 : 0;
    }
    x[4 * d - 1] = 0;
    const auto g = Random(d, 1.f, 0.25f, 11);
    const std::vector<std::uint16_t> b(d, 0x8000);
    ExpectHighwayBits(x, g, b, rows, d, "signed zeros");
  }
}

// Batches large enough to run on every thread, an odd count of rows (the
// last one alone): each row's bits are its own.
TEST(Avx512Bf16LayerNorm, GivesTheHighwayKernelsBitsOnLargeBatches) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  for (const std::int64_t d : {768, 4096}) {
    const std::int64_t rows = 301;
    const auto x = Random(rows * d, -1.f, 3.f, static_cast<std::uint64_t>(d) + 1);
    const auto g = Random(d, 1.f, 0.25f, 9);
    const auto b = Random(d, 0.f, 0.5f, 10);
    ExpectHighwayBits(x, g, b, rows, d, "large batch");
  }
}

// gamma ~ 2^-130: every y is an fp32 subnormal, which vcvtne2ps2bf16 alone
// would flush to zero.
TEST(Avx512Bf16LayerNorm, RoundsSubnormalResultsToNearestEven) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const std::int64_t d = 768;
  const std::int64_t rows = 3;
  const auto x = Random(rows * d, 0.f, 1.f, 3);
  auto g = Random(d, 1.f, 0.25f, 4);
  for (auto& e : g) e = Bf16Bits(std::ldexp(1.5f, -130));
  const std::vector<std::uint16_t> b(d, 0);
  const Result got = Forward(&Avx512Bf16LayerNormForward, x, &g, &b, rows, d);
  int subnormal = 0;
  for (const std::uint16_t y : got.y) subnormal += (y & 0x7F80u) == 0 && (y & 0x7Fu) != 0;
  EXPECT_GT(subnormal, rows * d / 2);  // not vacuous: most outputs are subnormal
  ExpectHighwayBits(x, g, b, rows, d, "subnormal y");
}

// Calls past a core's L2 with short rows prefetch the rows they write next
// (driver.h, PrefetchOutputsForWriting) and store them the ordinary way,
// even where every other call would stream: their loop, with rows on every
// thread, an odd count (the last alone) and a row for the fallback among
// them, gives the same bits, and streams no row. Not vacuous: the shape
// does take that path, with streaming forced for every size.
TEST(Avx512Bf16LayerNorm, GivesTheHighwayBitsWhenPrefetchingOutputs) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  struct Restore {
    ~Restore() { SetStreamingFootprintBytesForTest(-1); }
  } restore;
  SetStreamingFootprintBytesForTest(0);  // every other call with rows of >= 1 KiB streams
  for (const std::int64_t d : {768, 1001}) {
    const std::int64_t row_bytes = d * static_cast<std::int64_t>(sizeof(std::uint16_t));
    const std::int64_t rows = CoreL2Bytes() / (2 * row_bytes) / 2 * 2 + 3;  // past L2, odd
    const std::int64_t footprint = 2 * rows * row_bytes;
    ASSERT_TRUE(UseStreamingStores(footprint, row_bytes)) << "d=" << d;
    ASSERT_TRUE(Avx512Bf16PrefetchesOutputs(footprint, row_bytes)) << "d=" << d;
    auto x = Random(rows * d, 1.f, 2.f, static_cast<std::uint64_t>(d) + 2);
    x[(rows / 2) * d + 3] = Bf16Bits(std::numeric_limits<float>::infinity());
    const auto g = Random(d, 1.f, 0.25f, 13);
    const auto b = Random(d, 0.f, 0.5f, 14);
    const std::int64_t streamed_before = Avx512Bf16StreamedRowsForTest();
    ExpectHighwayBits(x, g, b, rows, d, "prefetching y");
    EXPECT_EQ(Avx512Bf16StreamedRowsForTest(), streamed_before) << "d=" << d << ": rows streamed";
  }
}

// Rows the fallback computes: fp32 sums that overflow, +-inf and NaN.
TEST(Avx512Bf16LayerNorm, GivesTheHighwayBitsOnOverflowingAndNonFiniteRows) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const std::int64_t d = 768;
  const std::int64_t rows = 4;
  auto x = Random(rows * d, 0.f, 1.f, 5);
  for (std::int64_t i = 0; i < d; i += 3) x[i] = Bf16Bits(i % 2 ? 3e38f : -2e38f);  // row 0
  x[d + 5] = Bf16Bits(std::numeric_limits<float>::infinity());                      // row 1
  x[2 * d + 7] = 0x7FC0;                                                            // row 2: NaN
  const auto g = Random(d, 1.f, 0.25f, 6);
  const auto b = Random(d, 0.f, 0.5f, 7);
  ExpectHighwayBits(x, g, b, rows, d, "non-finite statistics");
}

// Streaming stores (calls whose rows outgrow the cache; forced here for
// small calls) give the same bits as ordinary ones: the native kernel,
// streaming, against the Highway kernel, not streaming, with y (and x)
// starting anywhere in a cache line, odd d (two rows then start at
// different offsets within a line, so only a row written alone streams),
// rows the fallback computes and rows on every thread (long rows: short ones
// past a core's L2 never stream). Nothing outside y is written. Each call
// must have streamed some rows (not vacuous).
TEST(Avx512Bf16LayerNorm, GivesTheSameBitsWithStreamingStores) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  struct Restore {
    ~Restore() { SetStreamingFootprintBytesForTest(-1); }
  } restore;
  struct Shape {
    std::int64_t d, rows, y_offset, x_offset;  // offsets in elements from a 64-byte line
    bool non_finite;                           // row 1 holds an infinity: the fallback's
  };
  const ForwardFn highway =
      AvailableTargets().front().layer_norm.forward[FastDTypeIndex(DType::kBF16)];
  constexpr std::int64_t kGuard = 64;  // elements on either side of y
  for (const Shape& s :
       {Shape{768, 6, 0, 0, false}, Shape{768, 5, 1, 3, false}, Shape{4096, 3, 31, 0, false},
        Shape{512, 4, 5, 1, false}, Shape{1001, 5, 0, 0, false}, Shape{1001, 5, 7, 2, false},
        Shape{4097, 3, 13, 0, false}, Shape{768, 4, 9, 0, true}, Shape{4096, 31, 1, 0, false}}) {
    const std::int64_t n = s.rows * s.d;
    // 64-byte aligned buffers (the new[] of an over-aligned type).
    struct alignas(64) Line {
      std::uint16_t e[32];
    };
    const auto lines = [](std::int64_t elements) { return (elements + 31) / 32 + 1; };
    std::unique_ptr<Line[]> x_buf(new Line[lines(n + s.x_offset)]);
    std::unique_ptr<Line[]> y_buf(new Line[lines(n + s.y_offset + 2 * kGuard)]);
    std::uint16_t* x = x_buf[0].e + s.x_offset;
    std::uint16_t* y = y_buf[0].e + kGuard + s.y_offset;
    const auto xv = Random(n, 2.f, 3.f, static_cast<std::uint64_t>(s.d + s.y_offset));
    std::memcpy(x, xv.data(), n * sizeof(std::uint16_t));
    if (s.non_finite) x[s.d + 17] = Bf16Bits(std::numeric_limits<float>::infinity());
    const auto g = Random(s.d, 1.f, 0.25f, 11);
    const auto b = Random(s.d, 0.f, 0.5f, 12);
    for (int mask = 0; mask < 4; ++mask) {
      const std::string at = "d=" + std::to_string(s.d) + " rows=" + std::to_string(s.rows) +
                             " y_offset=" + std::to_string(s.y_offset) +
                             " params=" + std::to_string(mask);
      const auto* gp = (mask & 1) != 0 ? &g : nullptr;
      const auto* bp = (mask & 2) != 0 ? &b : nullptr;
      SetStreamingFootprintBytesForTest(-1);
      // the reference call does not stream
      ASSERT_GT(StreamingFootprintBytes() / 2, 2 * n * 2) << at;
      const std::vector<std::uint16_t> xs(x, x + n);
      const Result want = Forward(highway, xs, gp, bp, s.rows, s.d);
      ASSERT_EQ(want.rc, 0) << at;

      std::fill(y - kGuard, y + n + kGuard, std::uint16_t{0xFFFF});
      std::vector<float> mean(s.rows, -1.f), rstd(s.rows, -1.f);
      ForwardArgs a{};
      a.rows = s.rows;
      a.d = s.d;
      a.x = x;
      a.gamma = gp != nullptr ? gp->data() : nullptr;
      a.beta = bp != nullptr ? bp->data() : nullptr;
      a.eps = 1e-5f;
      a.y = y;
      a.mean = mean.data();
      a.rstd = rstd.data();
      SetStreamingFootprintBytesForTest(0);  // every call with rows of >= 1 KiB streams
      // but short rows past a core's L2 (GivesTheHighwayBitsWhenPrefetchingOutputs)
      ASSERT_FALSE(Avx512Bf16PrefetchesOutputs(2 * n * 2, 2 * s.d)) << at;
      const std::int64_t streamed_before = Avx512Bf16StreamedRowsForTest();
      ASSERT_EQ(Avx512Bf16LayerNormForward(&a), 0) << at;
      EXPECT_GT(Avx512Bf16StreamedRowsForTest(), streamed_before) << at << ": nothing streamed";
      SetStreamingFootprintBytesForTest(-1);
      EXPECT_TRUE(std::equal(y, y + n, want.y.begin())) << at << ": y";
      EXPECT_EQ(std::memcmp(mean.data(), want.mean.data(), s.rows * sizeof(float)), 0) << at;
      EXPECT_EQ(std::memcmp(rstd.data(), want.rstd.data(), s.rows * sizeof(float)), 0) << at;
      for (std::int64_t i = 0; i < kGuard; ++i) {
        EXPECT_EQ(y[-1 - i], 0xFFFF) << at << ": written before y";
        EXPECT_EQ(y[n + i], 0xFFFF) << at << ": written after y";
      }
    }
  }
}

// ---- Backward: the Highway backward's bits, dx's lines rounded natively ----

struct BackwardResult {
  std::vector<std::uint16_t> dx, dgamma, dbeta;
  int rc = -1;
};

// One backward call; stats: with the saved mean and rstd (the forward's) or
// without (the kernel computes its own). g: nullptr for gamma = 1. dx_at:
// where dx goes (nullptr: the result's dx), with streaming stores forced
// for this call alone when `stream` says so.
BackwardResult Backward(BackwardFn fn, const std::vector<std::uint16_t>& x,
                        const std::vector<std::uint16_t>& dy, const std::vector<std::uint16_t>* g,
                        std::int64_t rows, std::int64_t d, bool stats,
                        std::uint16_t* dx_at = nullptr, bool stream = false) {
  const ForwardFn highway_forward =
      AvailableTargets().front().layer_norm.forward[FastDTypeIndex(DType::kBF16)];
  const Result fwd = Forward(highway_forward, x, g, nullptr, rows, d);
  BackwardResult r;
  r.dx.assign(x.size(), 0xFFFF);
  r.dgamma.assign(d, 0xFFFF);
  r.dbeta.assign(d, 0xFFFF);
  BackwardArgs a{};
  a.rows = rows;
  a.d = d;
  a.x = x.data();
  a.gamma = g != nullptr ? g->data() : nullptr;
  a.dy = dy.data();
  a.mean = stats ? fwd.mean.data() : nullptr;
  a.rstd = stats ? fwd.rstd.data() : nullptr;
  a.eps = 1e-5f;
  a.dx = dx_at != nullptr ? dx_at : r.dx.data();
  a.dgamma = r.dgamma.data();
  a.dbeta = r.dbeta.data();
  if (stream) SetStreamingFootprintBytesForTest(0);
  r.rc = fn(&a);
  SetStreamingFootprintBytesForTest(-1);
  if (dx_at != nullptr) r.dx.assign(dx_at, dx_at + rows * d);
  return r;
}

// The registered entry's backward against the Highway AVX-512 one, with and
// without gamma and the saved statistics. Returns how many dx are +-0 or
// subnormal (lines the native rounding hands to the integer form).
int ExpectHighwayBackwardBits(const std::vector<std::uint16_t>& x,
                              const std::vector<std::uint16_t>& dy,
                              const std::vector<std::uint16_t>& g, std::int64_t rows,
                              std::int64_t d, const std::string& what) {
  const ImplInfo* entry = FindImpl("bf16/two_pass_tree/cpu-fast-avx512bf16");
  const BackwardFn highway =
      AvailableTargets().front().layer_norm.backward[FastDTypeIndex(DType::kBF16)];
  EXPECT_NE(entry, nullptr);
  if (entry == nullptr || entry->backward == nullptr) {
    ADD_FAILURE() << "no backward in the AVX512_BF16 entry";
    return 0;
  }
  EXPECT_NE(entry->backward, highway) << "the entry's backward is the Highway one itself";
  int tiny = 0;
  for (int mask = 0; mask < 4; ++mask) {
    const auto* gp = (mask & 1) != 0 ? &g : nullptr;
    const bool stats = (mask & 2) != 0;
    const BackwardResult want = Backward(highway, x, dy, gp, rows, d, stats);
    const BackwardResult got = Backward(entry->backward, x, dy, gp, rows, d, stats);
    const std::string at = what + " d=" + std::to_string(d) + " rows=" + std::to_string(rows) +
                           " gamma=" + std::to_string(mask & 1) + " stats=" + std::to_string(stats);
    EXPECT_EQ(want.rc, 0) << at;
    EXPECT_EQ(got.rc, 0) << at;
    EXPECT_TRUE(got.dx == want.dx) << at << ": dx";
    EXPECT_TRUE(got.dgamma == want.dgamma) << at << ": dgamma";
    EXPECT_TRUE(got.dbeta == want.dbeta) << at << ": dbeta";
    for (const std::uint16_t v : want.dx) tiny += (v & 0x7F80u) == 0;
  }
  return tiny;
}

// Row lengths around the 32-value line (whole lines, a partial vector, a
// partial line) and row counts from one row to several row blocks of
// several rows (driver.h: RowBlocks; one-row sibling blocks included).
TEST(Avx512Bf16LayerNorm, BackwardGivesTheHighwayKernelsBitsOnEveryShape) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  for (const std::int64_t d : {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 768, 1000, 4096, 4113}) {
    for (const std::int64_t rows : {1, 2, 3, 33, 70}) {
      const auto x = Random(rows * d, 1.f, 2.f, static_cast<std::uint64_t>(d * 131 + rows));
      const auto dy = Random(rows * d, 0.f, 1.f, static_cast<std::uint64_t>(d * 137 + rows));
      const auto g = Random(d, 1.f, 0.25f, 13);
      ExpectHighwayBackwardBits(x, dy, g, rows, d, "normal");
    }
  }
}

// dy ~ 2^-128: nearly every dx of rows 0 and 1 is an fp32 subnormal, which
// vcvtne2ps2bf16 alone flushes to zero; and a row with dy = 0, whose dx are
// exact zeros. (fast_conversions_test.cc checks the native line rounding
// itself, value by value.)
TEST(Avx512Bf16LayerNorm, BackwardRoundsSubnormalAndZeroDxAsHighway) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const std::int64_t d = 768;
  const std::int64_t rows = 4;
  const auto x = Random(rows * d, 0.f, 1.f, 21);
  auto dy = Random(rows * d, 0.f, 1.f, 22);
  for (std::int64_t i = 0; i < 2 * d; ++i) {
    dy[i] = Bf16Bits(std::ldexp(static_cast<float>(i % 7) - 3.f, -128));  // rows 0, 1: subnormal dx
  }
  for (std::int64_t i = 2 * d; i < 3 * d; ++i) dy[i] = 0;  // row 2: dx = 0
  const auto g = Random(d, 1.f, 0.25f, 23);
  const int tiny = ExpectHighwayBackwardBits(x, dy, g, rows, d, "tiny dx");
  EXPECT_GT(tiny, 4 * 2 * d);  // not vacuous: two rows' worth of zero or subnormal dx per call
}

// Non-finite dx: +-inf and NaN in x or dy, and a dy large enough that dx
// overflows.
TEST(Avx512Bf16LayerNorm, BackwardGivesTheHighwayBitsOnNonFiniteDx) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const std::int64_t d = 768;
  const std::int64_t rows = 5;
  auto x = Random(rows * d, 0.f, 1.f, 31);
  auto dy = Random(rows * d, 0.f, 1.f, 32);
  x[5] = Bf16Bits(std::numeric_limits<float>::infinity());               // row 0
  x[d + 9] = 0x7FC0;                                                     // row 1: NaN
  dy[2 * d + 3] = 0xFF80;                                                // row 2: dy = -inf
  for (std::int64_t i = 3 * d; i < 4 * d; ++i) dy[i] = Bf16Bits(3e38f);  // row 3: overflow
  const auto g = Random(d, 1.f, 0.25f, 33);
  ExpectHighwayBackwardBits(x, dy, g, rows, d, "non-finite dx");
}

// Rows of spread 2^100 (rstd below 2^-60: the backward's rescaled rows,
// fast_layer_norm.cc, one row a pass) among ordinary ones, in batches of 7
// (one-row sibling blocks), 70 rows (blocks of two and three rows) and 200
// rows (blocks of seven and six: runs of four, three and two rows).
TEST(Avx512Bf16LayerNorm, BackwardGivesTheHighwayBitsWithRescaledRowsAmongOrdinaryOnes) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const std::int64_t d = 768;
  for (const std::int64_t rows : {7, 70, 200}) {
    auto x = Random(rows * d, 0.f, 1.f, 41);
    const auto huge = Random(d, 0.f, 0x1p100f, 42);
    for (const std::int64_t r : {0, 2, 5, 6, 14, 15, 16, 17, 33, 34, 50, 69, 160, 199}) {
      if (r < rows) std::copy(huge.begin(), huge.end(), x.begin() + r * d);
    }
    const auto dy = Random(rows * d, 0.f, 1.f, 43);
    const auto g = Random(d, 1.f, 0.25f, 44);
    ExpectHighwayBackwardBits(x, dy, g, rows, d, "rescaled rows");
  }
}

// Streamed dx (forced for small calls) against the Highway backward not
// streaming, with dx starting anywhere in a cache line: 6 rows (one-row
// sibling blocks, two rows a pass) and 70 (blocks of two and three rows).
// At d = 1001 the two rows of a pass start at different offsets within a
// line, so they do not stream: the ordinary stores then.
TEST(Avx512Bf16LayerNorm, BackwardGivesTheSameBitsWithStreamingStores) {
  if (!HaveAvx512Bf16LayerNorm()) GTEST_SKIP() << "no AVX512_BF16";
  const ImplInfo* entry = FindImpl("bf16/two_pass_tree/cpu-fast-avx512bf16");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->backward, nullptr);
  const BackwardFn highway =
      AvailableTargets().front().layer_norm.backward[FastDTypeIndex(DType::kBF16)];
  for (const std::int64_t offset : {0, 1, 17, 31}) {
    for (const auto& [d, rows] : {std::pair<std::int64_t, std::int64_t>{768, 6},
                                  {1001, 6},
                                  {4096, 6},
                                  {768, 70},
                                  {4096, 70}}) {
      const std::int64_t n = rows * d;
      const auto x = Random(n, 1.f, 2.f, static_cast<std::uint64_t>(d + offset));
      const auto dy = Random(n, 0.f, 1.f, static_cast<std::uint64_t>(d + offset + 1));
      const auto g = Random(d, 1.f, 0.25f, 41);
      const std::string at = "d=" + std::to_string(d) + " offset=" + std::to_string(offset);
      const BackwardResult want = Backward(highway, x, dy, &g, rows, d, true);
      ASSERT_EQ(want.rc, 0) << at;
      struct alignas(64) Line {
        std::uint16_t e[32];
      };
      std::unique_ptr<Line[]> buf(new Line[(n + offset) / 32 + 2]);
      const BackwardResult got =
          Backward(entry->backward, x, dy, &g, rows, d, true, buf[0].e + offset, true);
      ASSERT_EQ(got.rc, 0) << at;
      EXPECT_TRUE(got.dx == want.dx) << at << ": dx";
      EXPECT_TRUE(got.dgamma == want.dgamma) << at << ": dgamma";
      EXPECT_TRUE(got.dbeta == want.dbeta) << at << ": dbeta";
    }
  }
}

}  // namespace
}  // namespace lnv::fast

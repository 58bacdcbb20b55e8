// The fast kernels, every SIMD target this CPU supports: within their bound
// on every row length around the vector and block sizes and on rows whose
// fp32 sums of squares overflow (where a scalar kernel, held to the same
// claim, fails: the negative control); independent of alignment, batch and
// thread count; their narrow-storage results are the fp32 results rounded
// once to nearest even.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "harness/families.h"
#include "harness/formats.h"
#include "harness/judge.h"
#include "impls/aligned_vector.h"
#include "impls/cpu/fast/driver.h"
#include "impls/cpu/fast/fast_layer_norm.h"
#include "impls/cpu/fast/fast_rms_norm.h"
#include "impls/cpu/fast/partials.h"
#include "impls/cpu/fast/row_scaling.h"
#include "impls/cpu/fast/targets.h"
#include "impls/dtype.h"
#include "impls/registry.h"

namespace lnv::fast {
namespace {

std::vector<ImplInfo> FastImpls() {
  std::vector<ImplInfo> out;
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : kFastDTypes) {
      out.push_back(FastLayerNormImpl(t, dtype));
      out.push_back(FastRmsNormImpl(t, dtype));
    }
  }
  return out;
}

const ImplInfo& Registered(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "not registered: " << name;
  static const ImplInfo none;
  return none;
}

// A typed copy of `values` that starts `offset` elements into its storage,
// which starts on a 64-byte boundary (offset 0: the kernels' aligned paths).
class Typed {
 public:
  Typed() = default;
  Typed(DType t, const std::vector<double>& values, std::int64_t offset = 0)
      : t_(t), offset_(offset), bytes_((values.size() + offset) * SizeOf(t)) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      StoreExact(bytes_.data(), t, offset + static_cast<std::int64_t>(i), values[i]);
    }
  }
  static Typed Zeros(DType t, std::int64_t n, std::int64_t offset = 0) {
    return Typed(t, std::vector<double>(static_cast<std::size_t>(n), 0.0), offset);
  }
  void* data() { return bytes_.empty() ? nullptr : bytes_.data() + offset_ * SizeOf(t_); }
  // The payload bytes only (for bitwise comparisons).
  std::vector<unsigned char> Payload() const {
    return {bytes_.begin() + offset_ * static_cast<std::int64_t>(SizeOf(t_)), bytes_.end()};
  }
  double At(std::int64_t i) const { return LoadAsDouble(bytes_.data(), t_, offset_ + i); }

 private:
  DType t_ = DType::kF32;
  std::int64_t offset_ = 0;
  AlignedVector<unsigned char> bytes_;
};

struct Outputs {
  int forward_rc = -1;
  int backward_rc = -1;
  Typed y, dx, dgamma, dbeta;
  std::vector<float> mean, rstd;
};

// Forward, then backward with the forward's mean/rstd; every buffer starts
// `offset` elements past its allocation (misaligned for offset % 16 != 0).
Outputs RunKernel(const ImplInfo& impl, const Case& c, std::int64_t offset = 0, bool saved = true) {
  const DType xt = impl.x_dtype;
  const DType pt = impl.param_dtype;
  const bool layer = impl.norm == Norm::kLayerNorm;
  Typed x(xt, c.x, offset), gamma(pt, c.gamma, offset), beta(pt, c.beta, offset);
  Typed dy(xt, c.dy, offset);
  Outputs o;
  o.y = Typed::Zeros(xt, c.rows * c.d, offset);
  o.mean.assign(c.rows, 0.f);
  o.rstd.assign(c.rows, 0.f);
  ForwardArgs f{};
  f.rows = c.rows;
  f.d = c.d;
  f.x = x.data();
  f.gamma = c.gamma.empty() ? nullptr : gamma.data();
  f.beta = c.beta.empty() ? nullptr : beta.data();
  f.eps = static_cast<float>(c.eps);
  f.y = o.y.data();
  f.mean = layer ? o.mean.data() : nullptr;
  f.rstd = o.rstd.data();
  o.forward_rc = impl.forward(&f);
  if (c.dy.empty()) return o;
  o.dx = Typed::Zeros(xt, c.rows * c.d, offset);
  o.dgamma = Typed::Zeros(pt, c.d, offset);
  o.dbeta = Typed::Zeros(pt, c.d, offset);
  BackwardArgs b{};
  b.rows = c.rows;
  b.d = c.d;
  b.x = x.data();
  b.gamma = f.gamma;
  b.dy = dy.data();
  b.mean = layer && saved ? o.mean.data() : nullptr;
  b.rstd = saved ? o.rstd.data() : nullptr;
  b.eps = f.eps;
  b.dx = o.dx.data();
  b.dgamma = o.dgamma.data();
  b.dbeta = layer ? o.dbeta.data() : nullptr;
  o.backward_rc = impl.backward(&b);
  return o;
}

// Row r of c as a case of its own (its x, and its dy where c has one).
Case RowOf(const Case& c, std::int64_t r) {
  Case one = c;
  one.rows = 1;
  one.x.assign(c.x.begin() + r * c.d, c.x.begin() + (r + 1) * c.d);
  if (!c.dy.empty()) one.dy.assign(c.dy.begin() + r * c.d, c.dy.begin() + (r + 1) * c.d);
  return one;
}

void ExpectSameBits(const Outputs& a, const Outputs& b, const std::string& what) {
  EXPECT_EQ(a.forward_rc, 0) << what;
  EXPECT_EQ(a.backward_rc, 0) << what;
  EXPECT_EQ(b.forward_rc, 0) << what;
  EXPECT_EQ(b.backward_rc, 0) << what;
  EXPECT_TRUE(a.y.Payload() == b.y.Payload()) << what << ": y";
  EXPECT_TRUE(a.dx.Payload() == b.dx.Payload()) << what << ": dx";
  EXPECT_TRUE(a.dgamma.Payload() == b.dgamma.Payload()) << what << ": dgamma";
  EXPECT_TRUE(a.dbeta.Payload() == b.dbeta.Payload()) << what << ": dbeta";
  EXPECT_EQ(std::memcmp(a.mean.data(), b.mean.data(), a.mean.size() * sizeof(float)), 0) << what;
  EXPECT_EQ(std::memcmp(a.rstd.data(), b.rstd.data(), a.rstd.size() * sizeof(float)), 0) << what;
}

Case FamilyCase(const char* family, Norm norm, DType dtype, std::int64_t d, std::int64_t rows,
                std::uint64_t seed = 11) {
  FamilyParams p;
  p.norm = norm;
  p.dtype = p.param_dtype = dtype;
  p.d = d;
  p.rows = rows;
  p.seed = seed;
  return GenerateCase(*FindFamily(family), p);
}

void SetThreads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

int MaxThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// The backward's arguments for case c with the forward's saved mean (for
// LayerNorm) and rstd from o, writing dx, dgamma and (if given) dbeta.
BackwardArgs SavedStatsBackwardArgs(const Case& c, Typed& x, Typed& gamma, Typed& dy,
                                    const Outputs& o, bool layer, Typed* dx, Typed* dgamma,
                                    Typed* dbeta) {
  BackwardArgs b{};
  b.rows = c.rows;
  b.d = c.d;
  b.x = x.data();
  b.gamma = gamma.data();
  b.dy = dy.data();
  b.mean = layer ? o.mean.data() : nullptr;
  b.rstd = o.rstd.data();
  b.eps = static_cast<float>(c.eps);
  b.dx = dx->data();
  b.dgamma = dgamma->data();
  b.dbeta = dbeta != nullptr ? dbeta->data() : nullptr;
  return b;
}

TEST(FastKernels, AreRegisteredForEveryTargetTheCpuSupportsAndEveryDtype) {
  ASSERT_FALSE(AvailableTargets().empty());
  EXPECT_EQ(AvailableTargets().back().backend, "cpu-fast-scalar");  // runs anywhere
  for (const ImplInfo& impl : FastImpls()) {
    const ImplInfo& reg = Registered(impl.name);
    EXPECT_EQ(reg.forward, impl.forward) << impl.name;
    EXPECT_EQ(reg.status, ImplStatus::kClaimsBound) << impl.name;
    EXPECT_TRUE(std::isinf(reg.max_row_sumsq)) << impl.name;
  }
}

// d around every vector (1, 8, 16 floats), step (4 vectors) and block
// (8 steps) size, where the tails and partial blocks are.
TEST(FastKernels, MeetTheirBoundOnEveryRowLengthAroundTheVectorAndBlockSizes) {
  const std::vector<ImplInfo> impls = FastImpls();
  for (const std::int64_t d :
       {1,  2,   3,   5,   7,   8,   9,   15,  16,   17,   31,   33,   63,  64,
        65, 127, 129, 255, 257, 511, 512, 513, 1023, 1025, 2047, 2049, 4097}) {
    for (const Norm norm : {Norm::kLayerNorm, Norm::kRmsNorm}) {
      for (const DType dtype : kFastDTypes) {
        const Case c = FamilyCase("large_mean", norm, dtype, d, 3, static_cast<std::uint64_t>(d));
        const Reference ref = ComputeReference(c);
        for (const ImplInfo& impl : impls) {
          if (impl.norm != norm || impl.x_dtype != dtype) continue;
          const Judgement j = JudgeWithReference(impl, c, ref);
          EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << " d=" << d << ": " << Summarize(j);
        }
      }
    }
  }
}

// The fp32 forward's fused pairs (fast_layer_norm.cc, kFusedPairsMinRowBytes:
// rows of 16 KiB and more), judged against the oracle: seven rows, so two
// pairs are written fused with the next pair's sums, then a pair unfused and
// a last row alone. The three rows above never reach a fused write.
TEST(FastKernels, MeetTheirBoundOnLongFp32RowsWrittenInFusedPairs) {
  for (const std::int64_t d : {4096, 4097}) {
    const Case c = FamilyCase("large_mean", Norm::kLayerNorm, DType::kF32, d, 7,
                              static_cast<std::uint64_t>(d));
    const Reference ref = ComputeReference(c);
    for (const ImplInfo& impl : FastImpls()) {
      if (impl.norm != Norm::kLayerNorm || impl.x_dtype != DType::kF32) continue;
      const Judgement j = JudgeWithReference(impl, c, ref);
      EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << " d=" << d << ": " << Summarize(j);
    }
  }
}

// dgamma and dbeta judged where the backward's row blocks hold five rows and
// more (driver.h, kMaxRowBlocks): a block's passes then start it, continue
// it and end it, each a loop of its own (fast_layer_norm.cc, PassSums). The
// bound test above has three rows, one-row blocks only.
TEST(FastKernels, MeetTheirBoundWhenRowBlocksHoldManyRows) {
  const std::vector<ImplInfo> impls = FastImpls();
  const std::int64_t rows = 5 * kMaxRowBlocks + 7;  // blocks of 5 and 6 rows
  for (const std::int64_t d : {33, 129}) {
    for (const Norm norm : {Norm::kLayerNorm, Norm::kRmsNorm}) {
      for (const DType dtype : kFastDTypes) {
        const Case c = FamilyCase("standard_normal", norm, dtype, d, rows);
        const Reference ref = ComputeReference(c);
        for (const ImplInfo& impl : impls) {
          if (impl.norm != norm || impl.x_dtype != dtype) continue;
          const Judgement j = JudgeWithReference(impl, c, ref);
          EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << " d=" << d << ": " << Summarize(j);
        }
      }
    }
  }
}

// Backward calls past a core's L2 that store dx the ordinary way prefetch
// the next rows' dx for writing (driver.h, PrefetchOutputsForWriting): such
// calls, judged against the oracle. Not vacuous: each shape takes that path
// (streaming, which would turn it off, is kept off whatever the L3).
TEST(FastKernels, MeetTheirBoundWhenPrefetchingOutputsForWriting) {
  struct Restore {
    ~Restore() { SetStreamingFootprintBytesForTest(-1); }
  } restore;
  SetStreamingFootprintBytesForTest(std::numeric_limits<std::int64_t>::max() / 2);
  const std::vector<ImplInfo> impls = FastImpls();
  const std::int64_t d = 768;
  for (const DType dtype : kFastDTypes) {
    const std::int64_t row_bytes = d * static_cast<std::int64_t>(SizeOf(dtype));
    const std::int64_t rows = CoreL2Bytes() / (3 * row_bytes) + 5;  // x, dy and dx past L2
    const std::int64_t footprint = 3 * rows * row_bytes;
    const bool stream = UseStreamingStoresForSpreadWrites(footprint, row_bytes);
    ASSERT_FALSE(stream) << DTypeName(dtype);
    ASSERT_TRUE(PrefetchOutputsForWriting(footprint, stream)) << DTypeName(dtype);
    const Case c = FamilyCase("standard_normal", Norm::kLayerNorm, dtype, d, rows);
    const Reference ref = ComputeReference(c);
    for (const ImplInfo& impl : impls) {
      if (impl.norm != Norm::kLayerNorm || impl.x_dtype != dtype) continue;
      const Judgement j = JudgeWithReference(impl, c, ref);
      EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << ": " << Summarize(j);
    }
  }
}

// Rows far beyond fp32's naive range: sum((x - mean)^2) overflows, and in
// the last rows sigma > 2^126, so rstd itself is subnormal. Values in
// `format` (fp32, or bf16, which has fp32's exponent range).
Case OverflowingRows(Norm norm, std::int64_t d, const FloatFormat& format = kBinary32) {
  Case c;
  c.norm = norm;
  c.d = d;
  c.eps = static_cast<double>(1e-5f);
  const double max = MaxFinite(format);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const auto fit = [&](double v) { return RoundToFormat(v, format); };
  std::vector<std::vector<double>> rows;
  rows.push_back(std::vector<double>(d, fit(max)));  // constant: sigma = 0
  rows.emplace_back();                               // spread over the full range
  for (std::int64_t i = 0; i < d; ++i) rows.back().push_back(fit(max * u(rng)));
  rows.emplace_back();  // huge mean, spread 2^100
  for (std::int64_t i = 0; i < d; ++i) rows.back().push_back(fit(0x1p126 + 0x1p100 * u(rng)));
  rows.emplace_back();  // huge and subnormal together
  for (std::int64_t i = 0; i < d; ++i) {
    rows.back().push_back(fit(i % 2 ? 0x1p120 * u(rng) : 0x1p-140 * u(rng)));
  }
  rows.emplace_back();  // +-max alternating
  for (std::int64_t i = 0; i < d; ++i) rows.back().push_back(fit(i % 2 ? max : -max));
  for (const auto& r : rows) c.x.insert(c.x.end(), r.begin(), r.end());
  c.rows = static_cast<std::int64_t>(rows.size());
  std::normal_distribution<double> normal;
  for (std::int64_t j = 0; j < d; ++j) c.gamma.push_back(fit(1 + 0.25 * normal(rng)));
  if (norm == Norm::kLayerNorm) {
    for (std::int64_t j = 0; j < d; ++j) c.beta.push_back(fit(0.5 * normal(rng)));
  }
  for (std::int64_t i = 0; i < c.rows * d; ++i) c.dy.push_back(fit(normal(rng)));
  return c;
}

// The kernels claim the full range (max_row_sumsq = +inf), so every row is
// judged. Two LayerNorm rows are ill-conditioned whatever the rescaling: the
// constant row at FLT_MAX (sigma = 0, q = eps) and the huge mean with spread
// 2^100 (kappa ~ 2^26): their variance error bound reaches sigma^2 + eps, so
// they are outside the claimed range (RowInClaimedRange, harness/bounds.h)
// and judged by the NaN contract alone. Every other row must pass.
TEST(FastKernels, MeetTheirBoundOnRowsWhoseFp32SumOfSquaresOverflows) {
  for (const ImplInfo& impl : FastImpls()) {
    if (impl.x_dtype != DType::kF32) continue;  // fp16 cannot hold such rows; bf16 as fp32
    for (const std::int64_t d : {2, 3, 64, 1000}) {
      const Case c = OverflowingRows(impl.norm, d);
      const Judgement all = Judge(impl, c);
      EXPECT_FALSE(IsFailure(all.verdict)) << impl.name << " d=" << d << ": " << Summarize(all);
      for (std::int64_t r = 0; r < c.rows; ++r) {
        const Judgement j = Judge(impl, SelectRows(c, {r}));
        const bool ill_conditioned = impl.norm == Norm::kLayerNorm && (r == 0 || r == 2) && d > 1;
        if (ill_conditioned) {
          EXPECT_FALSE(IsFailure(j.verdict)) << impl.name << " d=" << d << " row " << r;
        } else {
          EXPECT_EQ(j.verdict, Verdict::kPass)
              << impl.name << " d=" << d << " row " << r << ": " << Summarize(j);
          EXPECT_EQ(j.rows_out_of_range, 0) << impl.name << " d=" << d << " row " << r;
        }
      }
    }
  }
}

// Negative control: the same rows break a kernel that does not rescale when
// it is held to the full range, so the test above is not vacuous.
TEST(FastKernels, TheOverflowingRowsBreakAScalarKernelHeldToTheSameClaim) {
  for (const char* name : {"f32/two_pass/cpu-scalar", "f32/rms_serial/cpu-scalar"}) {
    ImplInfo naive = Registered(name);
    naive.max_row_sumsq = std::numeric_limits<double>::infinity();
    const Case c = OverflowingRows(naive.norm, 64);
    const Judgement j = Judge(naive, c);
    EXPECT_TRUE(IsFailure(j.verdict)) << name << ": " << Summarize(j);
  }
}

TEST(FastKernels, MisalignedBuffersGiveTheSameBitsAsAlignedOnes) {
  for (const ImplInfo& impl : FastImpls()) {
    for (const std::int64_t d : {13, 100, 1031}) {
      const Case c = FamilyCase("standard_normal", impl.norm, impl.x_dtype, d, 5);
      const Outputs aligned = RunKernel(impl, c, 0);
      for (const std::int64_t offset : {1, 3, 7}) {
        ExpectSameBits(aligned, RunKernel(impl, c, offset),
                       impl.name + " d=" + std::to_string(d) + " offset " + std::to_string(offset));
      }
    }
  }
}

// Large enough to run in parallel (driver.h, kMinParallelElements).
TEST(FastKernels, EveryOutputIsBitwiseIndependentOfTheThreadCount) {
  const int saved_threads = MaxThreads();
  for (const ImplInfo& impl : FastImpls()) {
    const Case c = FamilyCase("standard_normal", impl.norm, impl.x_dtype, 333, 301);
    ASSERT_GE(c.rows * c.d, kMinParallelElements);
    SetThreads(1);
    const Outputs one = RunKernel(impl, c);
    for (const int threads : {2, 3, 8}) {
      SetThreads(threads);
      ExpectSameBits(one, RunKernel(impl, c), impl.name + " threads " + std::to_string(threads));
    }
  }
  SetThreads(saved_threads);
}

// Negative control: the order of the row sums does show in dgamma's bits on
// this case, so thread-count independence is a property of the fixed row
// blocks, not an accident of the data.
TEST(FastKernels, ADifferentRowBlockCountChangesDgammaSoTheCheckAboveCanFail) {
  const TargetKernels& t = AvailableTargets().front();
  const ImplInfo impl = FastLayerNormImpl(t, DType::kF32);
  const Case c = FamilyCase("standard_normal", Norm::kLayerNorm, DType::kF32, 333, 301);
  const Outputs o = RunKernel(impl, c);
  Typed x(DType::kF32, c.x), gamma(DType::kF32, c.gamma), dy(DType::kF32, c.dy);
  const auto dgamma_with_blocks = [&](std::int64_t blocks) {
    Typed dx = Typed::Zeros(DType::kF32, c.rows * c.d);
    Typed dgamma = Typed::Zeros(DType::kF32, c.d);
    BackwardArgs b = SavedStatsBackwardArgs(c, x, gamma, dy, o, true, &dx, &dgamma, nullptr);
    EXPECT_EQ(RunBackwardWithBlocks(&b, Norm::kLayerNorm, DType::kF32,
                                    t.layer_norm.backward_rows[0], blocks),
              0);
    return dgamma.Payload();
  };
  EXPECT_TRUE(dgamma_with_blocks(RowBlocks(c.rows)) == o.dgamma.Payload());
  EXPECT_FALSE(dgamma_with_blocks(1) == o.dgamma.Payload());
  EXPECT_FALSE(dgamma_with_blocks(7) == o.dgamma.Payload());
}

// The entries merge dgamma/dbeta in pieces as their threads go, add two or
// four one-row blocks in registers and finish with a vectorized merge
// (partials.h); RunBackwardWithBlocks without a finisher hands out single
// blocks and merges them with MergeColumnsReference, the tree's definition.
// Both must give the same bits on 1, 2 and 3 threads (d = 1601: 21 rows and
// more run in parallel), NaN bits included.
void ExpectPiecewiseMergeGivesTheReferenceTreesBits(const TargetKernels& t, const ImplInfo& impl,
                                                    const Case& c) {
  const bool layer = impl.norm == Norm::kLayerNorm;
  const NormKernels& k = layer ? t.layer_norm : t.rms_norm;
  const DType dtype = impl.x_dtype;
  const int saved_threads = MaxThreads();
  for (const int threads : {1, 2, 3}) {
    SetThreads(threads);
    const Outputs o = RunKernel(impl, c);
    Typed x(dtype, c.x), gamma(dtype, c.gamma), dy(dtype, c.dy);
    Typed dx = Typed::Zeros(dtype, c.rows * c.d);
    Typed dgamma = Typed::Zeros(dtype, c.d), dbeta = Typed::Zeros(dtype, c.d);
    BackwardArgs b =
        SavedStatsBackwardArgs(c, x, gamma, dy, o, layer, &dx, &dgamma, layer ? &dbeta : nullptr);
    ASSERT_EQ(RunBackwardWithBlocks(&b, impl.norm, dtype, k.backward_rows[FastDTypeIndex(dtype)],
                                    RowBlocks(c.rows)),
              0);
    const std::string what =
        impl.name + " rows " + std::to_string(c.rows) + " threads " + std::to_string(threads);
    EXPECT_TRUE(dx.Payload() == o.dx.Payload()) << what;
    EXPECT_TRUE(dgamma.Payload() == o.dgamma.Payload()) << what;
    if (layer) {
      EXPECT_TRUE(dbeta.Payload() == o.dbeta.Payload()) << what;
    }
  }
  SetThreads(saved_threads);
}

// For every row count around the block count (one-row blocks, pairs,
// fours, blocks of two rows and more), both norms, every target and dtype.
// 46 rows: a pair of one-row blocks ends an 8-block piece (more carries
// after the pair's) on 1 and 2 threads, and starts at block 2 of a 4-block
// piece on 3.
TEST(FastKernels, ThePiecewiseMergeGivesTheReferenceTreesBits) {
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : kFastDTypes) {
      for (const bool layer : {true, false}) {
        const ImplInfo impl = layer ? FastLayerNormImpl(t, dtype) : FastRmsNormImpl(t, dtype);
        for (const std::int64_t rows : {1, 2, 3, 5, 21, 32, 33, 42, 46, 65, 113}) {
          ExpectPiecewiseMergeGivesTheReferenceTreesBits(
              t, impl, FamilyCase("standard_normal", impl.norm, dtype, 1601, rows));
        }
      }
    }
  }
}

// Columns whose partial sums are NaNs of a different payload in every row
// block (dy: a NaN with row r's payload in column 5), or infinities of
// either sign (column 6: +inf in even rows, -inf in odd ones, whose sum is
// the default NaN): which NaN a column keeps is decided by the merge
// tree's additions alone (merge_partials-inl.h, TreeAdd), so it too is the
// reference tree's on every thread count. The payloads reach dgamma in the
// fp32 entries (not through bf16 and fp16 storage): a TreeAdd that keeps
// the right operand's NaN fails those.
TEST(FastKernels, ThePiecewiseMergeKeepsTheReferenceTreesNaNs) {
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : kFastDTypes) {
      for (const bool layer : {true, false}) {
        const ImplInfo impl = layer ? FastLayerNormImpl(t, dtype) : FastRmsNormImpl(t, dtype);
        for (const std::int64_t rows : {2, 21, 33, 65, 113}) {
          Case c = FamilyCase("standard_normal", impl.norm, dtype, 1601, rows);
          for (std::int64_t r = 0; r < rows; ++r) {
            // A quiet NaN with payload r % 63 + 1 in float bits 16-21.
            const auto bits = static_cast<std::uint32_t>(0x7FC00000u | (r % 63 + 1) << 16);
            float nan;
            std::memcpy(&nan, &bits, sizeof(nan));
            c.dy[static_cast<std::size_t>(r * c.d + 5)] = nan;
            c.dy[static_cast<std::size_t>(r * c.d + 6)] =
                (r % 2 == 0 ? 1 : -1) * std::numeric_limits<double>::infinity();
          }
          ExpectPiecewiseMergeGivesTheReferenceTreesBits(t, impl, c);
        }
      }
    }
  }
}

// dgamma and dbeta as partials.h defines them, from first principles: each
// row block's terms added to zeros in row order (dgamma's term dy * xhat by
// the kernels' MulAdd: one rounding where the target has FMA, two on the
// scalar one; xhat = (x - mean) rstd, rows with rstd >= 2^-60 only), then
// the fixed merge tree (MergeColumnsReference), for the fp32 LayerNorm
// entries, whose dgamma keeps every bit of the sums. The entries add up to
// four rows of a block in one pass, and two or four one-row blocks in
// registers; none of that may change the order of a single addition.
Outputs DgammaDbetaInRowOrder(const TargetKernels& t, const Case& c, const Outputs& o) {
  const std::int64_t d = c.d;
  const bool fused = t.backend != "cpu-fast-scalar";
  Partials p;
  p.padded = PaddedLength(d);
  p.dgamma = p.dbeta = true;
  p.blocks = RowBlocks(c.rows);
  std::vector<float> arrays(static_cast<std::size_t>(2 * p.blocks * p.padded), 0.f);
  p.base = arrays.data();
  for (std::int64_t b = 0; b < p.blocks; ++b) {
    for (std::int64_t r = SplitPoint(c.rows, p.blocks, b); r < SplitPoint(c.rows, p.blocks, b + 1);
         ++r) {
      EXPECT_GE(o.rstd[r], std::ldexp(1.f, -kBackwardRstdExponent)) << "row " << r;
      for (std::int64_t j = 0; j < d; ++j) {
        const auto at = static_cast<std::size_t>(r * d + j);
        const auto x = static_cast<float>(c.x[at]);
        const auto dy = static_cast<float>(c.dy[at]);
        const float xhat = (x - o.mean[r]) * o.rstd[r];
        float& dg = p.Dgamma(b)[j];
        if (fused) {
          dg = std::fma(dy, xhat, dg);
        } else {
          const float term = dy * xhat;
          dg = dg + term;
        }
        p.Dbeta(b)[j] += dy;
      }
    }
  }
  Outputs ref;
  ref.dgamma = Typed::Zeros(DType::kF32, d);
  ref.dbeta = Typed::Zeros(DType::kF32, d);
  BackwardArgs args{};
  args.rows = c.rows;
  args.d = d;
  args.dgamma = ref.dgamma.data();
  args.dbeta = ref.dbeta.data();
  MergeColumnsReference(args, p, DType::kF32, 0, d);
  return ref;
}

// Row counts for blocks of one to ten rows (kMaxRowBlocks = 32), so runs of
// one to four rows, on 1 and 3 threads.
TEST(FastKernels, DgammaAndDbetaAddEachBlocksRowsInRowOrderThroughTheFixedTree) {
  const int saved_threads = MaxThreads();
  for (const TargetKernels& t : AvailableTargets()) {
    const ImplInfo impl = FastLayerNormImpl(t, DType::kF32);
    for (const std::int64_t d : {67, 256}) {
      for (const std::int64_t rows : {3, 21, 46, 64, 96, 128, 160, 199, 225, 290, 320}) {
        const Case c = FamilyCase("standard_normal", Norm::kLayerNorm, DType::kF32, d, rows);
        for (const int threads : {1, 3}) {
          SetThreads(threads);
          const Outputs o = RunKernel(impl, c);
          ASSERT_EQ(o.backward_rc, 0);
          const Outputs ref = DgammaDbetaInRowOrder(t, c, o);
          const std::string what = impl.name + " d=" + std::to_string(d) + " rows " +
                                   std::to_string(rows) + " threads " + std::to_string(threads);
          EXPECT_TRUE(o.dgamma.Payload() == ref.dgamma.Payload()) << what;
          EXPECT_TRUE(o.dbeta.Payload() == ref.dbeta.Payload()) << what;
        }
      }
    }
  }
  SetThreads(saved_threads);
}

// y and dx of a row, and its statistics, are those it gets alone, wherever
// it sits: either row of a pair (the bf16 forward takes rows two at a
// time), any row of a run of up to four (the backward's dx pass), and a
// last row without a partner; with and without gamma and beta. 199 rows:
// one forward work item (pairs, then a row alone), and backward row blocks
// of 7 and 6 rows (driver.h, kMaxRowBlocks), so runs of four, three and
// two.
TEST(FastKernels, ARowsResultsDoNotDependOnItsBatch) {
  for (const ImplInfo& impl : FastImpls()) {
    for (const bool affine : {true, false}) {
      Case c = FamilyCase("heavy_tails", impl.norm, impl.x_dtype, 77, 199);
      if (!affine) {
        c.gamma.clear();
        c.beta.clear();
      }
      const Outputs batch = RunKernel(impl, c);
      for (std::int64_t r = 0; r < c.rows; ++r) {
        const Outputs alone = RunKernel(impl, RowOf(c, r));
        const std::string what =
            impl.name + (affine ? "" : " (no gamma, beta)") + " row " + std::to_string(r);
        for (std::int64_t i = 0; i < c.d; ++i) {
          ASSERT_EQ(alone.y.At(i), batch.y.At(r * c.d + i)) << what << " y i=" << i;
          ASSERT_EQ(alone.dx.At(i), batch.dx.At(r * c.d + i)) << what << " dx i=" << i;
        }
        EXPECT_EQ(alone.rstd[0], batch.rstd[r]) << what;
        EXPECT_EQ(alone.mean[0], batch.mean[r]) << what;
      }
    }
  }
}

// Row r of a batch's y against the same row's y alone, by SameBits
// (harness/formats.h): the same bits in every element, except that a NaN
// need only be a NaN (the values widen exactly and one-to-one to double, so
// comparing them as doubles compares their bits). IEEE 754 leaves the sign
// and payload of a NaN result unspecified (§6.3), and a compiler may
// commute a product: in a row whose mean is infinite, x - mean is the
// default NaN (sign set) at the infinity and rstd a quiet NaN (sign clear),
// and which one (x - mean) * rstd keeps follows the operand order chosen in
// each inlined copy of the write (the scalar target's copies differed when
// built for AddressSanitizer). Every other bit must match.
bool RowGivesTheBitsItGivesAlone(const Typed& batch, std::int64_t r, const Typed& alone,
                                 std::int64_t d) {
  for (std::int64_t i = 0; i < d; ++i) {
    if (!SameBits(alone.At(i), batch.At(r * d + i))) return false;
  }
  return true;
}

// The fp32 forward takes rows of 16 KiB and more two at a time and computes
// a pair's sums in the previous pair's write pass (fast_layer_norm.cc,
// kFusedPairsMinRowBytes, WriteTwoRowsSummingNext; a last row alone in three
// passes, as every shorter row); the bf16 forward takes rows two at a time
// (LayerNormStatsOfTwoRows, LayerNormWriteTwoBf16Rows), and a pair with a
// rescaled row goes one row at a time. Every row of a batch must still give
// the bits it gives alone: ordinary rows next to rescaled ones (their fp32
// sum of squares overflows), rows holding NaN or infinity in either place of
// a pair, a last row without a partner, row lengths of one block and of
// several, on both sides of the fp32 limit (4095; 4096 and 4097), with and
// without streaming stores.
TEST(FastKernels, EveryRowOfAMixedBatchGivesTheBitsItGivesAlone) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const ImplInfo& impl : FastImpls()) {
    for (const std::int64_t d : {1, 17, 1025, 4095, 4096, 4097}) {
      Case c = FamilyCase("heavy_tails", impl.norm, impl.x_dtype, d, 4);
      c.dy.clear();
      std::vector<double> special(static_cast<std::size_t>(d), 1.5);
      special[static_cast<std::size_t>(d / 2)] = nan;
      c.x.insert(c.x.begin() + d, special.begin(), special.end());  // row 1 holds a NaN
      special[static_cast<std::size_t>(d / 2)] = inf;
      c.x.insert(c.x.begin() + 2 * d, special.begin(), special.end());  // row 2 an infinity
      special[static_cast<std::size_t>(d / 2)] = -inf;
      c.x.insert(c.x.end(), special.begin(), special.end());  // row 6 an infinity
      c.rows += 3;
      if (impl.x_dtype != DType::kF16) {  // fp16 cannot hold such rows
        // then five rows that are rescaled, and an ordinary row after them
        const Case big =
            OverflowingRows(impl.norm, d, impl.x_dtype == DType::kBF16 ? kBfloat16 : kBinary32);
        const std::vector<double> first(c.x.begin(), c.x.begin() + d);
        c.x.insert(c.x.end(), big.x.begin(), big.x.end());
        c.x.insert(c.x.end(), first.begin(), first.end());
        c.rows += big.rows + 1;
      }
      ASSERT_EQ(c.rows % 2, 1) << "a last row without a partner";
      for (const std::int64_t stream_bytes : {std::int64_t{-1}, std::int64_t{0}}) {
        SetStreamingFootprintBytesForTest(stream_bytes);
        const Outputs batch = RunKernel(impl, c, 1);
        ASSERT_EQ(batch.forward_rc, 0) << impl.name;
        for (std::int64_t r = 0; r < c.rows; ++r) {
          const Outputs alone = RunKernel(impl, RowOf(c, r), 1);
          EXPECT_TRUE(RowGivesTheBitsItGivesAlone(batch.y, r, alone.y, d))
              << impl.name << " d=" << d << " row " << r << " stream " << stream_bytes;
          EXPECT_EQ(std::memcmp(&alone.rstd[0], &batch.rstd[r], sizeof(float)), 0)
              << impl.name << " d=" << d << " row " << r;
          EXPECT_EQ(std::memcmp(&alone.mean[0], &batch.mean[r], sizeof(float)), 0)
              << impl.name << " d=" << d << " row " << r;
        }
      }
      SetStreamingFootprintBytesForTest(-1);
    }
  }
}

// The LayerNorm backward computes rows whose rstd is below
// 2^-kBackwardRstdExponent in scaled units (row_scaling.h), and every other
// row without the scale's multiplication, up to four rows a pass; a run of
// rows (or a group of one-row sibling blocks) holding a rescaled row goes
// one row at a time. Three batches, on 1 and 2 threads:
//   * 70 rows: row blocks of two and three rows, so runs of every kind
//     (ordinary and rescaled either way round, two rescaled, a rescaled row
//     alone at a block's end);
//   * 200 rows: blocks of seven and six rows (runs of four, three and two),
//     with runs of four holding two, four and one rescaled rows, a run of
//     three ending with one, a pair ending the batch with one;
//   * 7 rows: one-row blocks, a rescaled row among four siblings.
// dx, dgamma and dbeta must meet the bound, and each row's dx must be the
// bits the row gives alone. The rescaled rows are OverflowingRows'
// well-conditioned ones.
Case RescaledRowsAmongOrdinaryOnes(DType dtype, std::int64_t d, std::int64_t rows,
                                   const std::vector<std::int64_t>& rescaled) {
  Case c = FamilyCase("standard_normal", Norm::kLayerNorm, dtype, d, rows);
  const Case big =
      OverflowingRows(Norm::kLayerNorm, d, dtype == DType::kBF16 ? kBfloat16 : kBinary32);
  const std::int64_t well_conditioned[] = {1, 3, 4};
  for (std::size_t k = 0; k < rescaled.size(); ++k) {
    const std::int64_t from = well_conditioned[k % 3];
    std::copy(big.x.begin() + from * d, big.x.begin() + (from + 1) * d,
              c.x.begin() + rescaled[k] * d);
  }
  return c;
}

TEST(FastKernels, TheBackwardMeetsItsBoundWithRescaledRowsAmongOrdinaryOnes) {
  const int saved_threads = MaxThreads();
  for (const ImplInfo& impl : FastImpls()) {
    if (impl.norm != Norm::kLayerNorm || impl.x_dtype == DType::kF16) continue;
    for (const std::int64_t d : {3, 64, 777}) {
      const Case cases[] = {
          RescaledRowsAmongOrdinaryOnes(impl.x_dtype, d, 70, {0, 5, 6, 13, 20, 33, 34, 35, 50, 69}),
          RescaledRowsAmongOrdinaryOnes(impl.x_dtype, d, 7, {2, 6}),
          RescaledRowsAmongOrdinaryOnes(impl.x_dtype, d, 200,
                                        {0, 3, 14, 15, 16, 17, 20, 160, 199})};
      for (const Case& c : cases) {
        for (const int threads : {1, 2}) {
          SetThreads(threads);
          const std::string what = impl.name + " d=" + std::to_string(d) + " rows " +
                                   std::to_string(c.rows) + " threads " + std::to_string(threads);
          const Judgement j = Judge(impl, c);
          EXPECT_EQ(j.verdict, Verdict::kPass) << what << ": " << Summarize(j);
          EXPECT_EQ(j.rows_out_of_range, 0) << what;
          const Outputs batch = RunKernel(impl, c);
          for (std::int64_t r = 0; r < c.rows; ++r) {
            const Outputs alone = RunKernel(impl, RowOf(c, r));
            EXPECT_TRUE(RowGivesTheBitsItGivesAlone(batch.dx, r, alone.dx, d))
                << what << " row " << r;
          }
        }
      }
    }
  }
  SetThreads(saved_threads);
}

TEST(FastKernels, TheBackwardWithoutSavedStatisticsUsesTheForwardsOwn) {
  for (const ImplInfo& impl : FastImpls()) {
    const Case c = FamilyCase("huge_magnitude", impl.norm, impl.x_dtype, 50, 6);
    ExpectSameBits(RunKernel(impl, c, 0, true), RunKernel(impl, c, 0, false), impl.name);
  }
}

// The narrow kernels load exactly the values the fp32 kernel gets, run the
// same fp32 arithmetic and round once at the end: their outputs must be the
// fp32 kernel's, rounded to nearest even (the oracle's RoundToFormat), bit
// for bit. This checks the store paths inside the kernels themselves.
TEST(FastKernels, NarrowStorageResultsAreTheFp32ResultsRoundedOnceToNearestEven) {
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : {DType::kBF16, DType::kF16}) {
      for (const bool layer : {true, false}) {
        const Norm norm = layer ? Norm::kLayerNorm : Norm::kRmsNorm;
        const ImplInfo narrow = layer ? FastLayerNormImpl(t, dtype) : FastRmsNormImpl(t, dtype);
        const ImplInfo wide =
            layer ? FastLayerNormImpl(t, DType::kF32) : FastRmsNormImpl(t, DType::kF32);
        Case c = FamilyCase("standard_normal", norm, dtype, 203, 7);
        const Outputs n = RunKernel(narrow, c);
        c.dtype = c.param_dtype = DType::kF32;  // the same values, now as fp32
        const Outputs w = RunKernel(wide, c);
        const FloatFormat f = dtype == DType::kBF16 ? kBfloat16 : kBinary16;
        std::int64_t bad = 0;
        for (std::int64_t i = 0; i < c.rows * c.d; ++i) {
          bad += n.y.At(i) != RoundToFormat(w.y.At(i), f);
          bad += n.dx.At(i) != RoundToFormat(w.dx.At(i), f);
        }
        for (std::int64_t j = 0; j < c.d; ++j) {
          bad += n.dgamma.At(j) != RoundToFormat(w.dgamma.At(j), f);
          if (layer) bad += n.dbeta.At(j) != RoundToFormat(w.dbeta.At(j), f);
        }
        EXPECT_EQ(bad, 0) << narrow.name;
        EXPECT_EQ(n.rstd, w.rstd) << narrow.name;
        EXPECT_EQ(n.mean, w.mean) << narrow.name;
      }
    }
  }
}

TEST(FastKernels, RejectInvalidArgumentsLikeTheScalarKernels) {
  for (const ImplInfo& impl : FastImpls()) {
    float x[4] = {1, 2, 3, 4}, y[4], dx[4], beta[4] = {};
    ForwardArgs f{};
    f.rows = 1;
    f.d = 4;
    f.x = x;
    f.y = y;
    f.eps = 1e-5f;
    if (impl.x_dtype != DType::kF32) continue;
    EXPECT_EQ(impl.forward(nullptr), kInvalidArgs) << impl.name;
    ForwardArgs bad = f;
    bad.d = 0;
    EXPECT_EQ(impl.forward(&bad), kInvalidArgs) << impl.name;
    bad = f;
    bad.rows = -1;
    EXPECT_EQ(impl.forward(&bad), kInvalidArgs) << impl.name;
    bad = f;
    bad.x = nullptr;
    EXPECT_EQ(impl.forward(&bad), kInvalidArgs) << impl.name;
    bad = f;
    bad.rows = std::numeric_limits<std::int64_t>::max();
    EXPECT_EQ(impl.forward(&bad), kInvalidArgs) << impl.name;
    bad = f;
    bad.beta = beta;
    EXPECT_EQ(impl.forward(&bad), impl.norm == Norm::kRmsNorm ? kInvalidArgs : kOk) << impl.name;
    BackwardArgs b{};
    b.rows = 1;
    b.d = 4;
    b.x = x;
    b.dy = x;
    b.dx = dx;
    b.dbeta = beta;
    EXPECT_EQ(impl.backward(&b), impl.norm == Norm::kRmsNorm ? kInvalidArgs : kOk) << impl.name;
    b.dx = nullptr;
    EXPECT_EQ(impl.backward(&b), kInvalidArgs) << impl.name;
    f.rows = 0;
    EXPECT_EQ(impl.forward(&f), kOk) << impl.name;  // no rows: nothing to do
  }
}

// Calls whose rows outgrow the last-level cache write whole lines with
// streaming stores (simd_row-inl.h: WriteRow after an aligning head, and
// the paired bf16 forward writes on rows that start on a line; long fp32
// rows, fused in pairs otherwise, go one at a time there; the forwards'
// short rows one at a time do not stream, driver.h StoresShortRowsInPlace);
// other calls do not. Both must give the same bits: a call forced to stream
// against the same rows in calls that do not, on misaligned rows of odd
// length and on aligned rows of whole lines, short and long (4097 fp32
// elements: a misaligned row one at a time that streams).
TEST(FastKernels, StreamingStoresGiveTheSameBitsAsOrdinaryStores) {
  struct Shape {
    std::int64_t d, rows, offset;
  };
  for (const Shape& s :
       {Shape{1001, 24, 3}, Shape{1024, 24, 0}, Shape{4096, 8, 0}, Shape{4097, 8, 3}}) {
    for (const ImplInfo& impl : FastImpls()) {
      const Case c = FamilyCase("standard_normal", impl.norm, impl.x_dtype, s.d, s.rows);
      if (s.offset == 0) {  // the rows start on lines: the aligned paths can stream
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(Typed::Zeros(impl.x_dtype, 1).data()) % 64, 0u);
      }
      SetStreamingFootprintBytesForTest(-1);
      // this call does not stream (the lowest threshold, that of the spread
      // writes, is half the forward's)
      ASSERT_GT(StreamingFootprintBytes() / 2, 3 * s.rows * s.d * 4);
      const Outputs ordinary = RunKernel(impl, c, s.offset);
      SetStreamingFootprintBytesForTest(0);  // every call with rows of >= 1 KiB streams
      const Outputs streamed = RunKernel(impl, c, s.offset);
      SetStreamingFootprintBytesForTest(-1);
      ExpectSameBits(ordinary, streamed, impl.name + " d=" + std::to_string(s.d));
    }
  }
}

// sigma > 2^126: the stored rstd is a subnormal float, rounded with fewer
// than 24 bits; its bound counts that (harness/bounds.cc), and the backward,
// which reads it, stays within its bound too.
TEST(FastKernels, MeetTheirBoundWhereRstdIsSubnormal) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  int needs_subnormal_term = 0;
  for (const ImplInfo& impl : FastImpls()) {
    if (impl.x_dtype != DType::kF32) continue;
    for (int k = 0; k < 60; ++k) {
      Case c;
      c.norm = impl.norm;
      c.eps = static_cast<double>(1e-5f);
      c.rows = 1;
      const double m =
          RoundToFormat(std::ldexp(1 + (rng() % (1 << 20)) / 0x1p20, 126 + k % 2), kBinary32);
      if (!std::isfinite(m)) continue;
      if (k % 3 == 0) {
        c.x = {m};  // RMSNorm: rstd = 1/|x|; LayerNorm: sigma = 0
      } else if (k % 3 == 1) {
        c.x = {-m, m};
      } else {
        c.x = {-m, m, RoundToFormat(m * 0.5, kBinary32)};
      }
      c.d = static_cast<std::int64_t>(c.x.size());
      for (std::int64_t i = 0; i < c.d; ++i) {
        c.gamma.push_back(RoundToFormat(1 + 0.25 * normal(rng), kBinary32));
        c.dy.push_back(RoundToFormat(normal(rng), kBinary32));
        if (c.norm == Norm::kLayerNorm) c.beta.push_back(RoundToFormat(normal(rng), kBinary32));
      }
      JudgeOptions keep;
      keep.keep_elements = true;
      const Reference ref = ComputeReference(c);
      const Judgement j = JudgeWithReference(impl, c, ref, keep);
      EXPECT_EQ(j.verdict, Verdict::kPass) << impl.name << " x0=" << c.x[0] << ": " << Summarize(j);
      // Negative control: the relative part of the bound alone, r * rho,
      // does not hold on some of these rows (RMSNorm's d = 1 ones): the
      // subnormal term is needed, and these rows reach it.
      const ElementResult& e = j[Output::kRstd].elements.at(0);
      const double relative_only =
          ref.rows[0].stats.rstd * ForwardRowBound(ModelFor(impl), ref.rows[0]).rstd_rel;
      needs_subnormal_term += e.error > relative_only;
    }
  }
  EXPECT_GT(needs_subnormal_term, 0);
}

}  // namespace
}  // namespace lnv::fast

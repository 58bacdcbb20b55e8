// The CUDA kernels' host side, on any machine: the storage conversions
// against the oracle's rounding, the reduction shape the bound model is given
// against the shape the kernel code actually deals and merges, and the
// emulated kernels against the judge (with a broken variant that must be
// caught). gpu_test.cc compares the emulation with the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness/families.h"
#include "harness/formats.h"
#include "harness/judge.h"
#include "impls/cuda/emulate.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/registry_entries.h"
#include "impls/cuda/row_ops.h"
#include "impls/cuda/storage.h"
#include "impls/cuda/storage_for.h"
#include "impls/registry.h"

namespace lnv::cuda {
namespace {

float FloatOf(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Floats where rounding into `f` is hardest: every midpoint between two
// neighbouring values of f (incl. subnormal ones and the overflow threshold),
// the floats nearest to it on both sides, and 2^20 random bit patterns.
std::vector<float> HardFloats(FloatFormat f) {
  std::vector<double> values;  // every non-negative finite value of f, ascending
  for (int e = f.emin; e <= f.emax; ++e) {
    for (int m = 0; m < (1 << (f.precision - 1)); ++m) {
      values.push_back(std::ldexp(1.0 + std::ldexp(m, 1 - f.precision), e));
    }
  }
  const double sub = std::ldexp(1.0, f.emin - f.precision + 1);
  for (int m = (1 << (f.precision - 1)) - 1; m >= 0; --m) values.push_back(m * sub);
  std::sort(values.begin(), values.end());
  values.push_back(2 * values.back() - values[values.size() - 2]);  // the next binade's first step
  std::vector<float> out;
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);
    const float inf = std::numeric_limits<float>::infinity();
    for (float v : {mid, std::nextafter(mid, inf), std::nextafter(mid, 0.0f),
                    static_cast<float>(values[i])}) {
      out.push_back(v);
      out.push_back(-v);
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < (1 << 20); ++i) out.push_back(FloatOf(rng()));
  return out;
}

// Mismatches of `convert` (float -> 16-bit encoding, read back with `widen`)
// against the oracle's correctly rounded value; NaN inputs only need a NaN.
template <typename Convert, typename Widen>
std::int64_t RoundingMismatches(FloatFormat f, Convert convert, Widen widen) {
  std::int64_t bad = 0;
  for (float v : HardFloats(f)) {
    const float got = widen(convert(v));
    if (std::isnan(v)) {
      bad += !std::isnan(got);
      continue;
    }
    const double want = RoundToFormat(static_cast<double>(v), f);
    bad += !(static_cast<double>(got) == want && std::signbit(got) == std::signbit(want));
  }
  return bad;
}

TEST(HostConversions, Bf16StoresAreTheOraclesRoundToNearestEven) {
  EXPECT_EQ(RoundingMismatches(kBfloat16, &HostFloatToBf16, &HostBf16ToFloat), 0);
}

TEST(HostConversions, F16StoresAreTheOraclesRoundToNearestEven) {
  EXPECT_EQ(RoundingMismatches(kBinary16, &HostFloatToF16, &HostF16ToFloat), 0);
}

TEST(HostConversions, ATruncatingConversionIsCaughtByTheSameCheck) {
  const auto truncate = [](float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return static_cast<std::uint16_t>(b >> 16);
  };
  EXPECT_GT(RoundingMismatches(kBfloat16, truncate, &HostBf16ToFloat), 1000);
}

TEST(HostConversions, NanStoresAreTheCanonicalNanOfEachFormat) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float neg_nan = -nan;
  for (float v : {nan, neg_nan}) {
    EXPECT_EQ(Bf16Storage::FromFloat(v), 0x7fc0);
    EXPECT_EQ(F16Storage::FromFloat(v), 0x7e00);
    const float f = F32Storage::FromFloat(v);
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    EXPECT_EQ(b, 0x7fc00000u);
  }
}

// ---- The shape the bound model gets is the shape the kernel code has ----

// A state that records how many elements it holds and how many non-empty
// merges the deepest of them went through.
struct DepthState {
  std::int64_t count = 0;
  std::int64_t depth = 0;
};
DepthState Merge(const DepthState& a, const DepthState& b) {
  if (b.count == 0) return a;
  if (a.count == 0) return b;
  return {a.count + b.count, std::max(a.depth, b.depth) + 1};
}

// A norm policy that only counts what the lane loop hands it.
struct CountingPolicy {
  static constexpr bool kLayer = true;
  using State = DepthState;
  static void Accumulate(State* s, float) { s->count += 1; }
};

struct CountingMemory {
  template <typename S>
  static int Load(const typename S::Bits*, std::int64_t g, std::int64_t d, float* v) {
    const int n = static_cast<int>(std::min<std::int64_t>(S::kGranule, d - g * S::kGranule));
    for (int k = 0; k < n; ++k) v[k] = 0.0f;
    return n;
  }
};

template <typename S>
void ExpectShapeMatchesDealing(std::int64_t d) {
  SCOPED_TRACE("d=" + std::to_string(d) + " granule=" + std::to_string(S::kGranule));
  const int lanes = LanesPerRow(d);
  RowRefs<S> row;
  row.d = d;
  std::vector<DepthState> lane(static_cast<std::size_t>(lanes));
  std::int64_t leaf = 0, leaves = 0, total = 0, last_nonempty = -1;
  for (int l = 0; l < lanes; ++l) {
    lane[l] = LaneStats<S, CountingPolicy, CountingMemory>(row, l, lanes);
    leaf = std::max(leaf, lane[l].count);
    total += lane[l].count;
    if (lane[l].count > 0) {
      ++leaves;
      last_nonempty = l;
    }
  }
  const RowShape shape = RowShapeFor(d, S::kGranule);
  EXPECT_EQ(total, d);
  EXPECT_LE(leaf, shape.leaf);
  EXPECT_EQ(leaves, shape.leaves);
  EXPECT_EQ(last_nonempty + 1, leaves);  // the non-empty lanes are 0 .. leaves-1
  const DepthState root = EmulateRowTree(lane.data(), lanes);
  EXPECT_EQ(root.count, d);
  EXPECT_LE(root.depth, shape.levels);
}

TEST(ReductionShape, BoundsTheLanesAndMergesTheKernelCodeUsesForEveryD) {
  for (std::int64_t d = 1; d <= 2200; ++d) {
    ExpectShapeMatchesDealing<F32Storage>(d);
    ExpectShapeMatchesDealing<Bf16Storage>(d);
  }
  for (std::int64_t d : {4096, 4099, 16384, 65536 + 17, 100003}) {
    ExpectShapeMatchesDealing<F32Storage>(d);
    ExpectShapeMatchesDealing<Bf16Storage>(d);
  }
}

TEST(ReductionShape, SwitchesFromAWarpToABlockPerRowAfter1024) {
  EXPECT_EQ(LanesPerRow(1024), kWarpSize);
  EXPECT_EQ(LanesPerRow(1025), kBlockRowThreads);
  const RowShape warp = RowShapeFor(1024, 4), block = RowShapeFor(1025, 4);
  EXPECT_EQ(warp.leaf, 32);
  EXPECT_EQ(warp.leaves, 32);
  EXPECT_EQ(warp.levels, 5);
  EXPECT_EQ(block.leaf, 4);
  EXPECT_EQ(block.leaves, 257);
  EXPECT_EQ(block.levels, 9);
}

TEST(ReductionShape, ParamChunksDependOnRowsAloneAndCoverThem) {
  for (std::int64_t rows : {0, 1, 31, 32, 33, 1000, 65536, 65537, 1 << 21}) {
    const std::int64_t c = ParamChunks(rows), per = ParamChunkRows(rows);
    EXPECT_LE(c, kParamMaxChunks);
    EXPECT_GE(c * per, rows);
    if (rows > 0) {
      EXPECT_LT((c - 1) * per, rows);  // no empty chunk
    }
  }
}

// ---- The emulated kernels against the judge ----

const ImplInfo& Find(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "no registry entry " << name;
  return AllImpls().front();
}

TEST(Registry, ListsSixEmulatedKernelsWithTheirLaneShape) {
  int n = 0;
  for (const ImplInfo& i : AllImpls()) {
    if (!i.name.ends_with("/cuda-emulated")) continue;
    ++n;
    EXPECT_EQ(i.reduction, Reduction::kLanes) << i.name;
    ASSERT_NE(i.lane_shape, nullptr) << i.name;
    const RowShape s = RowShapeFor(768, static_cast<int>(16 / SizeOf(i.x_dtype)));
    EXPECT_EQ(i.lane_shape(768).leaf, s.leaf) << i.name;
    EXPECT_EQ(i.status, ImplStatus::kClaimsBound) << i.name;
  }
  EXPECT_EQ(n, 6);
}

Judgement JudgeFamily(const ImplInfo& impl, const char* family, std::int64_t d, std::int64_t rows,
                      std::uint64_t seed) {
  FamilyParams p;
  p.norm = impl.norm;
  p.dtype = impl.x_dtype;
  p.param_dtype = impl.param_dtype;
  p.d = d;
  p.rows = rows;
  p.seed = seed;
  const Family* f = FindFamily(family);
  EXPECT_NE(f, nullptr) << family;
  return Judge(impl, GenerateCase(*f, p));
}

// ln_check covers d = 7, 64, 768, 4096, 65553; these are the kernels' own
// edges: one element per lane, the warp/block switch, partial granules.
TEST(EmulatedKernels, MeetTheirBoundsAtTheWarpAndBlockEdges) {
  for (const ImplInfo& impl : AllImpls()) {
    if (!impl.name.ends_with("/cuda-emulated")) continue;
    for (std::int64_t d : {1, 2, 31, 33, 1023, 1024, 1025, 1031, 8197}) {
      for (const char* family : {"standard_normal", "large_mean", "heavy_tails"}) {
        const Judgement j = JudgeFamily(impl, family, d, 3, 11);
        EXPECT_FALSE(IsFailure(j.verdict))
            << impl.name << " " << family << " d=" << d << ": " << Summarize(j);
        // (LayerNorm with d = 1 is y = beta exactly: no error to use the bound.)
        if (d > 1) {
          EXPECT_GT(j[Output::kY].max_bound_use, 0.0) << impl.name << " d=" << d;
        }
      }
    }
  }
}

TEST(EmulatedKernels, AreDeterministicAndIndependentOfTheRowsPosition) {
  const ImplInfo& impl = Find("bf16/welford_shfl/cuda-emulated");
  FamilyParams p;
  p.dtype = p.param_dtype = DType::kBF16;
  p.d = 77;  // not a multiple of the granule: rows alternate in alignment
  p.rows = 5;
  const Case c = GenerateCase(*FindFamily("standard_normal"), p);
  std::vector<std::uint16_t> x(c.x.size()), y1(c.x.size()), y2(c.x.size() + 1);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = Bf16Storage::FromFloat(static_cast<float>(c.x[i]));
  std::vector<std::uint16_t> x_shifted(x.size() + 1);
  std::copy(x.begin(), x.end(), x_shifted.begin() + 1);
  ForwardArgs a{};
  a.rows = p.rows;
  a.d = p.d;
  a.x = x.data();
  a.eps = 1e-5f;
  a.y = y1.data();
  ASSERT_EQ(impl.forward(&a), 0);
  a.x = x_shifted.data() + 1;  // every row 2 bytes off its previous alignment
  a.y = y2.data() + 1;
  ASSERT_EQ(impl.forward(&a), 0);
  EXPECT_TRUE(std::equal(y1.begin(), y1.end(), y2.begin() + 1));
  // Row 3 alone, as the first row of a one-row call.
  std::vector<std::uint16_t> y3(static_cast<std::size_t>(p.d));
  a.rows = 1;
  a.x = x.data() + 3 * p.d;
  a.y = y3.data();
  ASSERT_EQ(impl.forward(&a), 0);
  EXPECT_TRUE(std::equal(y3.begin(), y3.end(), y1.begin() + 3 * p.d));
}

TEST(EmulatedKernels, RefuseWhatTheGpuLaunchersRefuse) {
  const ImplInfo& rms = Find("f32/rms_shfl/cuda-emulated");
  std::vector<float> x(8, 1.0f), y(8), beta(8), rstd(1);
  ForwardArgs a{};
  a.rows = 1;
  a.d = 8;
  a.x = x.data();
  a.y = y.data();
  a.beta = beta.data();  // RMSNorm has no beta
  EXPECT_NE(rms.forward(&a), 0);
  a.beta = nullptr;
  a.d = 0;
  EXPECT_NE(rms.forward(&a), 0);
  BackwardArgs b{};
  b.rows = 1;
  b.d = 8;
  b.x = x.data();
  b.dy = x.data();
  b.dx = y.data();
  EXPECT_NE(rms.backward(&b), 0);  // no rstd
  b.rstd = rstd.data();
  EXPECT_EQ(rms.backward(&b), 0);
}

// A realistic bug in the same code: the warp tree starts at offset 8, so
// lanes 16..31 never reach lane 0 (a shuffle loop written for 16 lanes). The
// judge must catch it, or the checks above could pass vacuously.
struct HostMemoryForTest {
  template <typename S>
  static int Load(const typename S::Bits* base, std::int64_t g, std::int64_t d, float* v) {
    const std::int64_t begin = g * S::kGranule;
    const int n = static_cast<int>(std::min<std::int64_t>(S::kGranule, d - begin));
    for (int k = 0; k < n; ++k) v[k] = S::ToFloat(base[begin + k]);
    return n;
  }
  template <typename S>
  static void Store(typename S::Bits* base, std::int64_t g, std::int64_t d, const float* v) {
    const std::int64_t begin = g * S::kGranule;
    const int n = static_cast<int>(std::min<std::int64_t>(S::kGranule, d - begin));
    for (int k = 0; k < n; ++k) base[begin + k] = S::FromFloat(v[k]);
  }
};

int HalfWarpTreeForward(const ForwardArgs* a) {
  using S = F32Storage;
  using N = LayerNormPolicy;
  std::vector<WelfordState> lane(kWarpSize);
  for (std::int64_t r = 0; r < a->rows; ++r) {
    RowRefs<S> row;
    row.x = static_cast<const float*>(a->x) + r * a->d;
    row.gamma = static_cast<const float*>(a->gamma);
    row.beta = static_cast<const float*>(a->beta);
    row.out = static_cast<float*>(a->y) + r * a->d;
    row.d = a->d;
    for (int l = 0; l < kWarpSize; ++l)
      lane[l] = LaneStats<S, N, HostMemoryForTest>(row, l, kWarpSize);
    for (int offset = 8; offset >= 1; offset /= 2) {
      for (int i = 0; i < offset; ++i) lane[i] = Merge(lane[i], lane[i + offset]);
    }
    const RowStatsF st = N::Finish(lane[0], a->d, a->eps);
    for (int l = 0; l < kWarpSize; ++l)
      LaneForwardOutput<S, N, HostMemoryForTest>(row, l, kWarpSize, st);
    if (a->mean != nullptr) a->mean[r] = st.mean;
    if (a->rstd != nullptr) a->rstd[r] = st.rstd;
  }
  return 0;
}

TEST(EmulatedKernels, AWarpTreeThatDropsHalfTheLanesIsCaught) {
  ImplInfo broken = Find("f32/welford_shfl/cuda-emulated");
  broken.name = "f32/welford_shfl/half-warp-tree";
  broken.forward = &HalfWarpTreeForward;
  broken.backward = nullptr;
  const Judgement j = JudgeFamily(broken, "standard_normal", 768, 4, 3);
  EXPECT_TRUE(IsFailure(j.verdict)) << Summarize(j);
  // The same rows through the real emulation pass.
  const Judgement ok =
      JudgeFamily(Find("f32/welford_shfl/cuda-emulated"), "standard_normal", 768, 4, 3);
  EXPECT_FALSE(IsFailure(ok.verdict)) << Summarize(ok);
}

}  // namespace
}  // namespace lnv::cuda

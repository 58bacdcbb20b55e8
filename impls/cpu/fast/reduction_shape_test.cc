// The fast kernels' reduction shape against the harness's tree model: the
// documented shape's chain is within the model for every d (with negative
// controls: shapes the model would not cover), and the kernels really sum in
// the documented shape (their mean and rstd match a scalar emulation of it
// bit for bit, on rows where a different order gives different bits).
#include "impls/cpu/fast/reduction_shape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness/bounds.h"
#include "impls/cpu/fast/fast_layer_norm.h"
#include "impls/cpu/fast/targets.h"

namespace lnv::fast {
namespace {

BoundModel DeclaredModel() {
  const ImplInfo info = FastLayerNormImpl(AvailableTargets().front(), DType::kF32);
  return ModelFor(info);
}

// The first d in [1, max_d] whose chain exceeds the model's, or 0.
std::int64_t FirstViolation(std::int64_t lanes, std::int64_t steps_per_block, std::int64_t max_d) {
  const BoundModel model = DeclaredModel();
  for (std::int64_t d = 1; d <= max_d; ++d) {
    if (FastChainLength(d, lanes, steps_per_block) > ChainLength(model, d)) return d;
  }
  return 0;
}

constexpr std::int64_t kEveryLaneCount[] = {1, 8, 16};  // scalar, AVX2, AVX-512

TEST(ReductionShape, TheRegistryDeclaresTheTreeModelWithTheKernelsChunk) {
  for (const TargetKernels& t : AvailableTargets()) {
    for (const DType dtype : kFastDTypes) {
      const ImplInfo info = FastLayerNormImpl(t, dtype);
      EXPECT_EQ(info.reduction, Reduction::kTree) << info.name;
      EXPECT_EQ(info.chunk, kStepsPerBlock) << info.name;
    }
    EXPECT_TRUE(t.f32_lanes == 1 || t.f32_lanes == 8 || t.f32_lanes == 16) << t.backend;
  }
}

TEST(ReductionShape, TheKernelsChainIsWithinTheTreeModelForEveryRowLengthUpTo2To17) {
  for (const std::int64_t lanes : kEveryLaneCount) {
    EXPECT_EQ(FirstViolation(lanes, kStepsPerBlock, std::int64_t{1} << 17), 0) << lanes;
  }
}

TEST(ReductionShape, TheKernelsChainIsWithinTheTreeModelForHugeRows) {
  const BoundModel model = DeclaredModel();
  for (const std::int64_t lanes : kEveryLaneCount) {
    for (int e = 17; e < 43; ++e) {
      for (const std::int64_t d : {(std::int64_t{1} << e) - 1, std::int64_t{1} << e,
                                   (std::int64_t{1} << e) + 1, 3 * (std::int64_t{1} << e) / 2}) {
        EXPECT_LE(FastChainLength(d, lanes), ChainLength(model, d)) << lanes << " " << d;
      }
    }
  }
}

TEST(ReductionShape, TheModelsChainIsTheOneTheHeaderQuotes) {
  const BoundModel model = DeclaredModel();
  EXPECT_EQ(ChainLength(model, 768), 15);
  EXPECT_EQ(ChainLength(model, 4096), 17);
  EXPECT_EQ(ChainLength(model, 1), 0);
  EXPECT_EQ(ChainLength(model, 5), 4);
}

// Negative controls: the check above fails for shapes the model does not
// cover, so it is not vacuous.
TEST(ReductionShape, ALaneStridedSumWithoutBlocksWouldBreakTheTreeModel) {
  constexpr std::int64_t kNoBlocks = std::int64_t{1} << 40;
  for (const std::int64_t lanes : kEveryLaneCount) {
    EXPECT_GT(FirstViolation(lanes, kNoBlocks, std::int64_t{1} << 17), 0) << lanes;
  }
}

TEST(ReductionShape, BlocksTwiceTheDeclaredChunkWouldBreakTheTreeModel) {
  for (const std::int64_t lanes : kEveryLaneCount) {
    EXPECT_GT(FirstViolation(lanes, 2 * kStepsPerBlock, std::int64_t{1} << 17), 0) << lanes;
  }
}

// ---- The kernels sum in the documented shape ----

// reduction_shape.h, step by step, in scalar float arithmetic.
float EmulatedTreeSum(const std::vector<float>& terms, std::int64_t lanes) {
  const auto d = static_cast<std::int64_t>(terms.size());
  const std::int64_t columns = kAccumulators * lanes;
  const std::int64_t block = kStepsPerBlock * columns;
  using Cols = std::vector<float>;
  const auto leaf = [&](std::int64_t b) {
    Cols c(columns, 0.f);
    for (std::int64_t i = b * block; i < std::min(d, (b + 1) * block); ++i) {
      c[(i - b * block) % columns] += terms[i];
    }
    return c;
  };
  const auto merge = [](Cols a, const Cols& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
  };
  // Binary-counter merge of the blocks, pending sums smallest first at the end.
  const std::int64_t blocks = (d + block - 1) / block;
  std::vector<Cols> pending(64);
  for (std::int64_t b = 0; b < blocks; ++b) {
    Cols s = leaf(b);
    int level = 0;
    for (std::int64_t done = b; done & 1; done >>= 1, ++level) s = merge(pending[level], s);
    pending[level] = s;
  }
  Cols c;
  for (int level = 0; level < 64; ++level) {
    if (((blocks >> level) & 1) == 0) continue;
    c = c.empty() ? pending[level] : merge(pending[level], c);
  }
  std::vector<float> lane(lanes);
  for (std::int64_t j = 0; j < lanes; ++j) {
    std::vector<float> acc(kAccumulators);  // accumulator a holds column a * lanes + j
    for (std::int64_t a = 0; a < kAccumulators; ++a) acc[a] = c[a * lanes + j];
    for (std::int64_t w = 1; w < kAccumulators; w *= 2) {  // pairwise
      for (std::int64_t a = 0; a + w < kAccumulators; a += 2 * w) acc[a] = acc[a] + acc[a + w];
    }
    lane[j] = acc[0];
  }
  for (std::int64_t w = lanes / 2; w >= 1; w /= 2) {  // fold halves
    for (std::int64_t j = 0; j < w; ++j) lane[j] = lane[j] + lane[j + w];
  }
  return lane[0];
}

float SerialSum(const std::vector<float>& terms) {
  float s = 0.f;
  for (const float t : terms) s += t;
  return s;
}

struct Stats {
  float mean;
  float rstd;
};

// The two-pass statistics with a given summation.
template <typename Sum>
Stats TwoPass(const std::vector<float>& x, float eps, const Sum& sum) {
  const float n = static_cast<float>(x.size());
  const float mean = sum(x) / n;
  std::vector<float> sq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) sq[i] = (x[i] - mean) * (x[i] - mean);
  return {mean, 1.f / std::sqrt(sum(sq) / n + eps)};
}

// Rows where the summation order shows in the bits: wide dynamic range and
// a large mean.
std::vector<float> Row(std::int64_t d, std::mt19937_64& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> x(d);
  for (float& v : x) v = 1000.f + std::ldexp(normal(rng), static_cast<int>(rng() % 12));
  return x;
}

std::uint32_t Bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

TEST(ReductionShape, EveryTargetsMeanAndRstdMatchAnEmulationOfTheShapeBitForBit) {
  std::mt19937_64 rng(7);
  constexpr float kEps = 1e-5f;
  for (const TargetKernels& t : AvailableTargets()) {
    const ImplInfo info = FastLayerNormImpl(t, DType::kF32);
    int order_visible = 0;  // rows where a serial sum gives other bits
    for (const std::int64_t d :
         {1, 2, 7, 16, 63, 64, 65, 100, 511, 512, 513, 768, 1000, 1500, 2049, 4096, 5000, 16411}) {
      const std::vector<float> x = Row(d, rng);
      std::vector<float> y(d);
      float mean = 0.f, rstd = 0.f;
      ForwardArgs a{};
      a.rows = 1;
      a.d = d;
      a.x = x.data();
      a.eps = kEps;
      a.y = y.data();
      a.mean = &mean;
      a.rstd = &rstd;
      ASSERT_EQ(info.forward(&a), 0);
      const Stats want = TwoPass(
          x, kEps, [&](const std::vector<float>& v) { return EmulatedTreeSum(v, t.f32_lanes); });
      EXPECT_EQ(Bits(mean), Bits(want.mean)) << info.name << " d=" << d;
      EXPECT_EQ(Bits(rstd), Bits(want.rstd)) << info.name << " d=" << d;
      const Stats serial = TwoPass(x, kEps, SerialSum);
      order_visible += Bits(serial.mean) != Bits(want.mean) || Bits(serial.rstd) != Bits(want.rstd);
    }
    // Negative control: on these rows the order matters, so the match above
    // is evidence of the shape, not of any order at all.
    EXPECT_GE(order_visible, 8) << info.name;
  }
}

}  // namespace
}  // namespace lnv::fast

#include "fuzz/mutator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

DecodeConfig EverySignature() {
  DecodeConfig config;
  for (Norm n : {Norm::kLayerNorm, Norm::kRmsNorm}) {
    for (DType t : {DType::kF32, DType::kBF16, DType::kF16, DType::kF64})
      config.signatures.push_back({n, t, t});
  }
  return config;
}

// A fully explicit input with small integer values (exact in every dtype).
FuzzInput SmallIntegers(DType t, std::int64_t d, std::int64_t rows) {
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, t, t};
  in.d = in.cols = d;
  in.rows = rows;
  in.backward = true;
  in.affine = AffineMode::kGammaBeta;
  for (std::int64_t i = 0; i < rows * d; ++i)
    in.x.push_back(ToBits(static_cast<double>(i % 7) - 3, t));
  Normalize(&in);
  return in;
}

std::vector<double> RowValues(const FuzzInput& in, const std::vector<std::uint64_t>& v,
                              std::int64_t r) {
  std::vector<double> out;
  for (std::int64_t j = 0; j < in.cols; ++j)
    out.push_back(FromBits(v[r * in.cols + j], in.signature.dtype));
  return out;
}

TEST(Mutator, EveryMutationKeepsTheInputCanonicalAndDecodable) {
  const DecodeConfig config = EverySignature();
  std::mt19937_64 rng(11);
  for (int m = 0; m < kMutationCount; ++m) {
    for (int k = 0; k < 200; ++k) {
      FuzzInput in = SmallIntegers(static_cast<DType>(k % 4), 1 + k % 40, 1 + k % kMaxRows);
      Mutate(&in, static_cast<Mutation>(m), rng, config);
      const auto bytes = EncodeInput(in);
      const FuzzInput back = DecodeInput(bytes.data(), bytes.size(), config);
      ASSERT_EQ(EncodeInput(back), bytes) << MutationName(static_cast<Mutation>(m)) << " #" << k;
      ASSERT_EQ(ValidateCase(Materialize(back)), "") << MutationName(static_cast<Mutation>(m));
    }
  }
}

TEST(Mutator, ShiftingARowAddsOneConstantToEveryValueOfIt) {
  std::mt19937_64 rng(3);
  int shifted = 0;
  for (int k = 0; k < 100; ++k) {
    FuzzInput in = SmallIntegers(DType::kF64, 16, 1);
    in.backward = false;
    Normalize(&in);
    const auto before = RowValues(in, in.x, 0);
    Mutate(&in, Mutation::kShiftRow, rng, EverySignature());
    const auto after = RowValues(in, in.x, 0);
    const double c = after[0] - before[0];
    for (std::size_t j = 0; j < before.size(); ++j) ASSERT_EQ(after[j] - before[j], c) << "k " << k;
    shifted += c != 0;
  }
  EXPECT_EQ(shifted, 100);
}

TEST(Mutator, ScalingARowMultipliesEveryValueByOnePowerOfTwo) {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 100; ++k) {
    FuzzInput in = SmallIntegers(DType::kF64, 16, 1);
    in.backward = false;
    Normalize(&in);
    const auto before = RowValues(in, in.x, 0);
    Mutate(&in, Mutation::kScaleRow, rng, EverySignature());
    const auto after = RowValues(in, in.x, 0);
    std::set<double> ratios;
    for (std::size_t j = 0; j < before.size(); ++j) {
      if (before[j] != 0 && std::isfinite(after[j]) && after[j] != 0 &&
          std::fabs(after[j]) >= std::ldexp(1.0, -1022)) {
        ratios.insert(after[j] / before[j]);
      }
    }
    ASSERT_LE(ratios.size(), 1u) << "k " << k;
    if (!ratios.empty()) {
      int e = 0;
      EXPECT_EQ(std::frexp(*ratios.begin(), &e), 0.5) << "a power of two";
    }
  }
}

TEST(Mutator, MakingARowConstantLeavesOneDistinctValueInIt) {
  std::mt19937_64 rng(9);
  FuzzInput in = SmallIntegers(DType::kF32, 32, 1);
  in.backward = false;
  Normalize(&in);
  Mutate(&in, Mutation::kMakeRowConstant, rng, EverySignature());
  const auto row = RowValues(in, in.x, 0);
  EXPECT_EQ(std::set<double>(row.begin(), row.end()).size(), 1u);
}

TEST(Mutator, ASpecialMutationPutsASpecialBitPatternInPlace) {
  std::mt19937_64 rng(13);
  const auto specials = SpecialBits(DType::kF32);
  for (int k = 0; k < 50; ++k) {
    FuzzInput in = SmallIntegers(DType::kF32, 8, 2);
    const FuzzInput before = in;
    Mutate(&in, Mutation::kSpecial, rng, EverySignature());
    int changed = 0;
    for (auto [a, b] : {std::pair{&before.x, &in.x}, std::pair{&before.dy, &in.dy},
                        std::pair{&before.gamma, &in.gamma}, std::pair{&before.beta, &in.beta}}) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        if ((*a)[i] != (*b)[i]) {
          ++changed;
          EXPECT_NE(std::find(specials.begin(), specials.end(), (*b)[i]), specials.end());
        }
      }
    }
    EXPECT_LE(changed, 1);
  }
}

TEST(Mutator, ChangingTheSignatureRoundsEveryValueOnceIntoTheNewDtype) {
  DecodeConfig config;
  config.signatures = {{Norm::kLayerNorm, DType::kBF16, DType::kBF16}};
  FuzzInput in;
  in.signature = {Norm::kLayerNorm, DType::kF64, DType::kF64};
  in.d = in.cols = 3;
  in.x = {ToBits(1.0 + 0x1p-20, DType::kF64), ToBits(1e300, DType::kF64),
          ToBits(-3.0, DType::kF64)};
  std::mt19937_64 rng(1);
  Mutate(&in, Mutation::kChangeSignature, rng, config);
  ASSERT_EQ(in.signature.dtype, DType::kBF16);
  EXPECT_EQ(FromBits(in.x[0], DType::kBF16), 1.0);
  EXPECT_EQ(FromBits(in.x[1], DType::kBF16),
            HUGE_VAL);  // beyond bf16's range: +inf, as IEEE rounds
  EXPECT_EQ(FromBits(in.x[2], DType::kBF16), -3.0);
}

TEST(Mutator, ByteMutationsStayWithinMaxSizeAndAreDeterministicInTheSeed) {
  const DecodeConfig config = EverySignature();
  std::mt19937_64 rng(17);
  for (int k = 0; k < 500; ++k) {
    const std::size_t max_size = kHeaderSize + rng() % 2000;
    std::vector<std::uint8_t> data(max_size), copy;
    const std::size_t size = std::min<std::size_t>(max_size, rng() % 400);
    for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<std::uint8_t>(rng());
    copy = data;
    const unsigned seed = static_cast<unsigned>(rng());
    const std::size_t n = MutateBytes(data.data(), size, max_size, seed, config, nullptr);
    const std::size_t n2 = MutateBytes(copy.data(), size, max_size, seed, config, nullptr);
    ASSERT_LE(n, max_size);
    ASSERT_EQ(n, n2);
    ASSERT_TRUE(
        std::equal(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(n), copy.begin()));
  }
}

TEST(Mutator, MutatedInputsDifferFromTheirOriginalsAlmostAlways) {
  const DecodeConfig config = EverySignature();
  std::mt19937_64 rng(19);
  int same = 0;
  constexpr int kTrials = 1000;
  for (int k = 0; k < kTrials; ++k) {
    const FuzzInput in = SmallIntegers(static_cast<DType>(k % 4), 1 + k % 30, 1 + k % 3);
    std::vector<std::uint8_t> bytes = EncodeInput(in);
    const std::vector<std::uint8_t> original = bytes;
    bytes.resize(4096);
    const std::size_t n = MutateBytes(bytes.data(), original.size(), bytes.size(),
                                      static_cast<unsigned>(k), config, nullptr);
    bytes.resize(n);
    same += bytes == original;
  }
  // Some mutations can land on what was there (a 0 made 0, a shift that rounds away).
  EXPECT_LT(same, kTrials / 10);
}

TEST(Mutator, TheByteMutatorIsUsedForSomeCalls) {
  const DecodeConfig config = EverySignature();
  int calls = 0;
  const ByteMutator counting = [&](std::uint8_t*, std::size_t size, std::size_t) {
    ++calls;
    return size;
  };
  const FuzzInput in = SmallIntegers(DType::kF32, 8, 1);
  for (unsigned seed = 0; seed < 500; ++seed) {
    std::vector<std::uint8_t> bytes = EncodeInput(in);
    const std::size_t size = bytes.size();
    bytes.resize(4096);
    MutateBytes(bytes.data(), size, bytes.size(), seed, config, counting);
  }
  EXPECT_GT(calls, 50);
  EXPECT_LT(calls, 200);
}

TEST(Mutator, CrossOverStaysWithinMaxSizeAndDecodes) {
  const DecodeConfig config = EverySignature();
  for (unsigned seed = 0; seed < 200; ++seed) {
    const auto a =
        EncodeInput(SmallIntegers(static_cast<DType>(seed % 4), 1 + seed % 20, 1 + seed % 4));
    const auto b =
        EncodeInput(SmallIntegers(static_cast<DType>((seed / 4) % 4), 1 + seed % 13, 1 + seed % 5));
    std::vector<std::uint8_t> out(kHeaderSize + seed * 8);
    const std::size_t n = CrossOverBytes(a.data(), a.size(), b.data(), b.size(), out.data(),
                                         out.size(), seed, config);
    ASSERT_LE(n, out.size());
    const FuzzInput x = DecodeInput(out.data(), n, config);
    EXPECT_EQ(ValidateCase(Materialize(x)), "");
  }
}

}  // namespace
}  // namespace lnv::fuzz

#include "properties/generators.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "harness/formats.h"

namespace lnv::props {
namespace {

const std::vector<KernelGroup> kGroups = {
    {Norm::kLayerNorm, DType::kF32, DType::kF32}, {Norm::kLayerNorm, DType::kBF16, DType::kBF16},
    {Norm::kLayerNorm, DType::kF16, DType::kF16}, {Norm::kLayerNorm, DType::kF64, DType::kF64},
    {Norm::kRmsNorm, DType::kF32, DType::kF32},   {Norm::kRmsNorm, DType::kBF16, DType::kF32},
};

RC_GTEST_PROP(Generators, DrawnInputsAreValidCasesWithEveryValueRepresentable, ()) {
  const KernelGroup g = *OneGroupOf(kGroups);
  InputSpec spec;
  spec.families = FiniteFamilies();
  spec.max_d = 64;
  const Case c = *Input(g, spec);
  RC_ASSERT(ValidateCase(c) == "");
  RC_ASSERT(c.norm == g.norm);
  RC_ASSERT(c.dtype == g.dtype);
}

RC_GTEST_PROP(Generators, ShiftedRowsStayExactlyRepresentable, ()) {
  const KernelGroup g = *OneGroupOf(kGroups);
  const ShiftPair s = *ShiftedInput(g, 64, 3);
  RC_ASSERT(ValidateCase(s.base) == "");
  RC_ASSERT(ValidateCase(s.shifted) == "");
  for (std::int64_t r = 0; r < s.base.rows; ++r) {
    for (std::int64_t i = 0; i < s.base.d; ++i) {
      const std::int64_t n = r * s.base.d + i;
      RC_ASSERT(s.shifted.x[n] - s.shift[r] == s.base.x[n]);
    }
  }
}

RC_GTEST_PROP(Generators, PermutationsArePermutations, ()) {
  const std::int64_t d = *rc::gen::inRange<std::int64_t>(1, 200);
  std::vector<std::int64_t> p = *Permutation(d);
  std::sort(p.begin(), p.end());
  for (std::int64_t i = 0; i < d; ++i) RC_ASSERT(p[i] == i);
}

RC_GTEST_PROP(Generators, SpecialRowsHoldANanOrAnInfinity, ()) {
  const std::vector<double> row = *SpecialRow(kBinary32, *rc::gen::inRange<std::int64_t>(1, 40));
  RC_ASSERT(std::any_of(row.begin(), row.end(), [](double v) { return !std::isfinite(v); }));
}

// The size parameter starts at 0; values must not collapse to the bottom of
// their exponent range there (they are drawn at full size).
TEST(Generators, ValuesDrawnAtSizeZeroStillSpanTheirExponentRange) {
  const rc::Gen<double> g = FloatValue(kBinary32, -140, 100);
  std::set<int> exponents;
  int subnormal = 0;
  for (int i = 0; i < 400; ++i) {
    const double v = g(rc::Random(static_cast<std::uint64_t>(i) + 1), 0).value();
    exponents.insert(std::ilogb(v));
    subnormal += std::fabs(v) < std::ldexp(1.0, -126);
  }
  EXPECT_GT(exponents.size(), 100u);
  EXPECT_LT(subnormal, 100);  // 14 of 241 exponents are subnormal: ~6%
  // The negative control: without the resize, size 0 gives only the range's bottom.
  const rc::Gen<int> raw = rc::gen::inRange(-140, 101);
  std::set<int> raw_values;
  for (int i = 0; i < 50; ++i) raw_values.insert(raw(rc::Random(i + 1), 0).value());
  EXPECT_EQ(raw_values.size(), 1u);
}

TEST(Generators, FloatValuesReachTheSmallestSubnormalAndTheLargestFinite) {
  // Clamped to the subnormal floor: (1 + m 2^-10) 2^-24 rounds to 2^-24 or 2^-23.
  const rc::Gen<double> tiny = FloatValue(kBinary16, -100, -24);
  for (int i = 0; i < 20; ++i) {
    const double v = std::fabs(tiny(rc::Random(i + 1), 100).value());
    EXPECT_TRUE(v == std::ldexp(1.0, -24) || v == std::ldexp(1.0, -23)) << v;
  }
  const FloatFormat f = kBfloat16;
  bool reached = false;
  for (int i = 0; i < 4000 && !reached; ++i) {
    reached =
        std::fabs(FloatValue(f, f.emax, f.emax)(rc::Random(i + 1), 100).value()) == MaxFinite(f);
  }
  EXPECT_TRUE(reached);
}

// gamma and beta reach the values where the affine step's IEEE details live.
TEST(Generators, GammaAndBetaReachSignedZerosAndSubnormals) {
  for (const FloatFormat f : {kBinary32, kBfloat16, kBinary16}) {
    for (const auto& [name, gen] :
         {std::pair{"gamma", GammaValues(f, 64)}, std::pair{"beta", BetaValues(f, 64)}}) {
      bool negative_zero = false, subnormal = false;
      for (int i = 0; i < 20; ++i) {
        for (double v : gen(rc::Random(static_cast<std::uint64_t>(i) + 1), 100).value()) {
          negative_zero |= v == 0 && std::signbit(v);
          subnormal |= v != 0 && std::fabs(v) < std::ldexp(1.0, f.emin);
        }
      }
      EXPECT_TRUE(negative_zero) << name;
      EXPECT_TRUE(subnormal) << name;
    }
  }
}

// Now and then one element of gamma or beta is infinite, never more than one.
TEST(Generators, GammaAndBetaAreSometimesInfiniteInOneElement) {
  for (const auto& [name, gen] : {std::pair{"gamma", GammaValues(kBinary32, 64)},
                                  std::pair{"beta", BetaValues(kBinary32, 64)}}) {
    int with_inf = 0;
    bool plus = false, minus = false;
    for (int i = 0; i < 400; ++i) {
      const std::vector<double> v = gen(rc::Random(static_cast<std::uint64_t>(i) + 1), 100).value();
      const auto infinite =
          std::count_if(v.begin(), v.end(), [](double x) { return std::isinf(x); });
      EXPECT_LE(infinite, 1) << name;
      with_inf += infinite > 0;
      plus |= std::find(v.begin(), v.end(), INFINITY) != v.end();
      minus |= std::find(v.begin(), v.end(), -INFINITY) != v.end();
    }
    EXPECT_TRUE(plus && minus) << name;
    EXPECT_LT(with_inf, 400 / 4) << name;  // rare: most cases keep every output finite
  }
}

}  // namespace
}  // namespace lnv::props

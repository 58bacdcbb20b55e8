#include "harness/families.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>

#include "harness/formats.h"

namespace lnv {
namespace {

FamilyParams Small(DType t, Norm n = Norm::kLayerNorm) {
  FamilyParams p;
  p.norm = n;
  p.dtype = p.param_dtype = t;
  p.d = 64;
  p.rows = 8;
  p.large_d = 300;
  p.many_rows = 100;
  return p;
}

TEST(Families, EveryFamilyGivesAValidCaseInEveryDtypeAndNorm) {
  for (const Family& f : AllFamilies()) {
    for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
      for (Norm n : {Norm::kLayerNorm, Norm::kRmsNorm}) {
        const Case c = GenerateCase(f, Small(t, n));
        EXPECT_EQ(ValidateCase(c), "") << f.name << " " << DTypeName(t) << " " << NormName(n);
        EXPECT_EQ(c.provenance.family, f.name);
        EXPECT_FALSE(c.dy.empty());
        if (n == Norm::kRmsNorm) {
          EXPECT_TRUE(c.beta.empty());
        }
      }
    }
  }
}

TEST(Families, AreDeterministicForASeedAndDifferAcrossSeeds) {
  for (const Family& f : AllFamilies()) {
    FamilyParams p = Small(DType::kBF16);
    const std::string a = FormatCase(GenerateCase(f, p));
    EXPECT_EQ(a, FormatCase(GenerateCase(f, p))) << f.name;
    p.seed = 2;
    EXPECT_NE(a, FormatCase(GenerateCase(f, p))) << f.name;
  }
}

TEST(Families, AreFoundByName) {
  EXPECT_NE(FindFamily("large_mean"), nullptr);
  EXPECT_EQ(FindFamily("no_such_family"), nullptr);
  EXPECT_NE(FamilySeed(1, "a"), FamilySeed(1, "b"));
}

TEST(Families, ShapeFamiliesHaveTheirShapes) {
  const FamilyParams p = Small(DType::kF32);
  EXPECT_EQ(GenerateCase(*FindFamily("d_one"), p).d, 1);
  EXPECT_EQ(GenerateCase(*FindFamily("odd_d"), p).d % 2, 1);
  const std::int64_t ragged = GenerateCase(*FindFamily("ragged_d"), p).d;
  EXPECT_NE(ragged % 8, 0);
  EXPECT_NE(ragged % 16, 0);
  EXPECT_EQ(GenerateCase(*FindFamily("large_d"), p).d, 300);
  EXPECT_EQ(GenerateCase(*FindFamily("many_rows"), p).rows, 100);
}

double RowMean(const Case& c, std::int64_t r) {
  double s = 0;
  for (std::int64_t i = 0; i < c.d; ++i) s += c.x[r * c.d + i];
  return s / static_cast<double>(c.d);
}

double RowVar(const Case& c, std::int64_t r) {
  const double mu = RowMean(c, r);
  double s = 0;
  for (std::int64_t i = 0; i < c.d; ++i) s += (c.x[r * c.d + i] - mu) * (c.x[r * c.d + i] - mu);
  return s / static_cast<double>(c.d);
}

TEST(Families, LargeMeanSweepsKappaFromOneToTenMillion) {
  FamilyParams p = Small(DType::kF64);
  p.rows = 8;
  const Case c = GenerateCase(*FindFamily("large_mean"), p);
  auto kappa = [&](std::int64_t r) {
    const double mu = RowMean(c, r);
    return std::sqrt(1 + mu * mu / RowVar(c, r));
  };
  EXPECT_LT(kappa(0), 2);
  EXPECT_GT(kappa(7), 1e6);
  EXPECT_LT(kappa(7), 1e8);
  for (std::int64_t r = 1; r < 8; ++r) EXPECT_GT(kappa(r), kappa(r - 1) / 3);
}

TEST(Families, HugeMagnitudeOverflowsFp32SumsOfSquaresAndTinyReachesSubnormals) {
  const Case huge = GenerateCase(*FindFamily("huge_magnitude"), Small(DType::kF32));
  double max_sumsq = 0;
  for (std::int64_t r = 0; r < huge.rows; ++r) {
    double s = 0;
    for (std::int64_t i = 0; i < huge.d; ++i) s += huge.x[r * huge.d + i] * huge.x[r * huge.d + i];
    max_sumsq = std::max(max_sumsq, s);
  }
  EXPECT_GT(max_sumsq, FLT_MAX);
  for (double v : huge.x) EXPECT_TRUE(std::isfinite(v));

  const Case tiny = GenerateCase(*FindFamily("tiny_magnitude"), Small(DType::kF32));
  int subnormal = 0;
  for (double v : tiny.x) subnormal += v != 0 && std::fabs(v) < FLT_MIN;
  EXPECT_GT(subnormal, 10);

  const Case half = GenerateCase(*FindFamily("huge_magnitude"), Small(DType::kF16));
  double max_abs = 0;
  for (double v : half.x) max_abs = std::max(max_abs, std::fabs(v));
  EXPECT_GT(max_abs * max_abs, 65504.0);  // x^2 overflows fp16
}

TEST(Families, NearConstantRowsHaveVarianceFarBelowEps) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    const FamilyParams p = Small(t);
    const Case c = GenerateCase(*FindFamily("near_constant"), p);
    for (std::int64_t r = 0; r < c.rows; ++r) {
      EXPECT_LT(RowVar(c, r), p.eps / 100) << DTypeName(t);
    }
    const Case k = GenerateCase(*FindFamily("constant_rows"), p);
    for (std::int64_t i = 0; i < k.rows * k.d; ++i) EXPECT_EQ(k.x[i], k.x[i / k.d * k.d]);
  }
}

TEST(Families, NanInfRowsMixSpecialAndFiniteRows) {
  FamilyParams p = Small(DType::kF32);
  p.rows = 10;
  const Case c = GenerateCase(*FindFamily("nan_inf_rows"), p);
  int nan_rows = 0, inf_rows = 0, finite_rows = 0;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    bool nan = false, inf = false;
    for (std::int64_t i = 0; i < c.d; ++i) {
      nan |= std::isnan(c.x[r * c.d + i]);
      inf |= std::isinf(c.x[r * c.d + i]);
    }
    nan_rows += nan;
    inf_rows += inf;
    finite_rows += !nan && !inf;
  }
  EXPECT_EQ(nan_rows, 2);
  EXPECT_EQ(inf_rows, 6);
  EXPECT_EQ(finite_rows, 2);
}

TEST(Families, BetaCancelsGammaXhatOnItsFirstRow) {
  const Case c = GenerateCase(*FindFamily("beta_cancels"), Small(DType::kF64));
  // mu and r here are the generator's, operation for operation (families.cc:
  // serial double sums in row order), and beta_i = (-gamma_i (x_i - mu)) r
  // in double; negation is exact, so gamma_i (x_i - mu) r = -beta_i exactly
  // and y is exactly 0.
  const double mu = RowMean(c, 0), r = 1 / std::sqrt(RowVar(c, 0) + c.eps);
  for (std::int64_t i = 0; i < c.d; ++i) {
    const double y = c.gamma[i] * (c.x[i] - mu) * r + c.beta[i];
    EXPECT_EQ(y, 0.0) << "i=" << i;
  }
}

TEST(Families, GammaNearZeroHasZerosAndSubnormals) {
  const Case c = GenerateCase(*FindFamily("gamma_near_zero"), Small(DType::kF32));
  EXPECT_EQ(c.gamma[0], 0.0);
  EXPECT_TRUE(std::signbit(c.gamma[1]));
  EXPECT_EQ(std::fabs(c.gamma[2]), 0x1p-149);
}

}  // namespace
}  // namespace lnv

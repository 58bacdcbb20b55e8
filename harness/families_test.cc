#include "harness/families.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/formats.h"
#include "harness/judge.h"
#include "impls/registry.h"

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

// ---- Rows whose statistics change when elements are dropped, repeated or mixed up ----

TEST(Families, RampsRiseAlongTheRow) {
  FamilyParams p = Small(DType::kF64);
  p.d = 4096;
  const Case c = GenerateCase(*FindFamily("ramp"), p);
  const std::int64_t eighth = c.d / 8;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    // The last eighth's mean is over half the ramp's height above the
    // first's: a tail left out takes the row's largest values with it.
    double head = 0, tail = 0;
    for (std::int64_t i = 0; i < eighth; ++i) {
      head += c.x[r * c.d + i];
      tail += c.x[r * c.d + c.d - 1 - i];
    }
    EXPECT_GT((tail - head) / static_cast<double>(eighth), 0.5) << "row " << r;
  }
}

TEST(Families, SortedRowsAscendAndDescendInTurn) {
  const Case c = GenerateCase(*FindFamily("sorted_rows"), Small(DType::kBF16));
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const auto row = c.x.begin() + r * c.d;
    if (r % 2 == 0) {
      EXPECT_TRUE(std::is_sorted(row, row + c.d)) << "row " << r;
    } else {
      EXPECT_TRUE(std::is_sorted(row, row + c.d, std::greater<>())) << "row " << r;
    }
    EXPECT_NE(*row, *(row + c.d - 1)) << "row " << r;
  }
}

// Row r's variance without its element `left_out`.
double RowVarWithout(const Case& c, std::int64_t r, std::int64_t left_out) {
  double mu = 0, s = 0;
  for (std::int64_t i = 0; i < c.d; ++i) mu += i == left_out ? 0 : c.x[r * c.d + i];
  mu /= static_cast<double>(c.d - 1);
  for (std::int64_t i = 0; i < c.d; ++i) {
    s += i == left_out ? 0 : (c.x[r * c.d + i] - mu) * (c.x[r * c.d + i] - mu);
  }
  return s / static_cast<double>(c.d - 1);
}

TEST(Families, OneOutlierSitsFirstLastOrAnywhereAndCarriesTheVariance) {
  for (std::int64_t d : {7, 64, 4099}) {
    FamilyParams p = Small(DType::kF32);
    p.d = d;
    p.rows = 6;
    const Case c = GenerateCase(*FindFamily("one_outlier"), p);
    for (std::int64_t r = 0; r < c.rows; ++r) {
      std::int64_t at = 0;
      for (std::int64_t i = 0; i < c.d; ++i) {
        if (std::fabs(c.x[r * c.d + i]) > std::fabs(c.x[r * c.d + at])) at = i;
      }
      if (r % 3 == 0) {
        EXPECT_EQ(at, 0) << "d=" << d << " row " << r;
      } else if (r % 3 == 1) {
        EXPECT_EQ(at, c.d - 1) << "d=" << d << " row " << r;
      }
      // Leaving it out divides the variance by more than 100 at every d:
      // an error no rounding explains.
      EXPECT_GT(RowVar(c, r), 100 * RowVarWithout(c, r, at)) << "d=" << d << " row " << r;
    }
  }
}

TEST(Families, TwoHalvesAreFurtherApartThanTheirSpread) {
  const Case c = GenerateCase(*FindFamily("two_halves"), Small(DType::kF32));
  const std::int64_t h = c.d / 2;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    double first = 0, second = 0;
    for (std::int64_t i = 0; i < c.d; ++i) (i < h ? first : second) += c.x[r * c.d + i];
    first /= static_cast<double>(h);
    second /= static_cast<double>(c.d - h);
    // The spread about each half's own mean is below a quarter of the gap
    // squared: the gap carries most of the row's variance.
    double within = 0;
    for (std::int64_t i = 0; i < c.d; ++i) {
      const double dev = c.x[r * c.d + i] - (i < h ? first : second);
      within += dev * dev;
    }
    within /= static_cast<double>(c.d);
    EXPECT_LT(within, (first - second) * (first - second) / 4) << "row " << r;
  }
}

// What a row's norm divides by, squared: its variance (LayerNorm) or its
// mean square (RMSNorm).
double RowQ(const Case& c, std::int64_t r) {
  return RowVar(c, r) + (c.norm == Norm::kRmsNorm ? RowMean(c, r) * RowMean(c, r) : 0.0);
}

// Neighbouring rows differ by more than iid rows ever do: the largest ratio
// of q between any two of standard_normal's rows (sampling noise) is below
// the smallest between neighbours of rows_differ.
TEST(Families, RowsDifferFromTheirNeighboursMoreThanIidRows) {
  FamilyParams p = Small(DType::kF32);
  p.d = 768;
  p.rows = 9;
  for (Norm n : {Norm::kLayerNorm, Norm::kRmsNorm}) {
    p.norm = n;
    const Case differ = GenerateCase(*FindFamily("rows_differ"), p);
    const Case iid = GenerateCase(*FindFamily("standard_normal"), p);
    double largest_iid = 1;
    for (std::int64_t r = 0; r < iid.rows; ++r) {
      for (std::int64_t t = 0; t < iid.rows; ++t) {
        largest_iid = std::max(largest_iid, RowQ(iid, r) / RowQ(iid, t));
      }
    }
    for (std::int64_t r = 1; r < differ.rows; ++r) {
      const double a = RowQ(differ, r), b = RowQ(differ, r - 1);
      EXPECT_GT(std::max(a, b) / std::min(a, b), largest_iid) << NormName(n) << " row " << r;
    }
  }
}

// ---- ... and the simulated broken kernels they catch (impls/broken/) ----

const ImplInfo* Registered(const std::string& name) {
  for (const ImplInfo& k : AllImpls()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

struct Shape {
  std::int64_t d = 0;
  std::int64_t rows = 0;
};

std::string Where(std::string_view family, Shape s) {
  return std::string(family) + " d=" + std::to_string(s.d) + " rows=" + std::to_string(s.rows);
}

// The control's and the two-pass reference's judgements of one case of the
// family, forward only: these bugs are in the statistics, and the exact
// backward of long rows costs seconds.
struct Judged {
  Judgement control, reference;
};
Judged JudgeBoth(const ImplInfo& control, std::string_view family, Shape s) {
  const ImplInfo* reference = Registered("f32/two_pass/cpu-scalar");
  EXPECT_NE(reference, nullptr);
  FamilyParams p;
  p.norm = control.norm;
  p.dtype = control.x_dtype;
  p.param_dtype = control.param_dtype;
  p.d = s.d;
  p.rows = s.rows;
  p.with_dy = false;
  const Case c = GenerateCase(*FindFamily(family), p);
  const Reference ref = ComputeReference(c);
  return {JudgeWithReference(control, c, ref),
          reference ? JudgeWithReference(*reference, c, ref) : Judgement{}};
}

// The control breaks its bound on each shape of the family, and the
// two-pass reference it imitates meets it on the same case: the bug is what
// the family shows.
void ExpectCaught(const std::string& control, std::string_view family,
                  const std::vector<Shape>& shapes) {
  const ImplInfo* k = Registered("f32/" + control + "/cpu-broken");
  ASSERT_NE(k, nullptr) << control;
  for (const Shape& s : shapes) {
    const Judged j = JudgeBoth(*k, family, s);
    EXPECT_EQ(j.control.verdict, Verdict::kBoundExceeded)
        << control << " on " << Where(family, s) << ": " << Summarize(j.control);
    EXPECT_FALSE(IsFailure(j.reference.verdict))
        << "the two-pass reference on " << Where(family, s) << ": " << Summarize(j.reference);
  }
}

// The control meets its bound on each shape: those inputs cannot tell it
// from a correct kernel.
void ExpectMissed(const std::string& control, std::string_view family,
                  const std::vector<Shape>& shapes) {
  const ImplInfo* k = Registered("f32/" + control + "/cpu-broken");
  ASSERT_NE(k, nullptr) << control;
  for (const Shape& s : shapes) {
    const Judged j = JudgeBoth(*k, family, s);
    EXPECT_FALSE(IsFailure(j.control.verdict))
        << control << " on " << Where(family, s) << ": " << Summarize(j.control);
  }
}

// Long rows, past 2^16 and past 2^17.
constexpr Shape kPast16{65536 + 17, 2};
constexpr Shape kPast17{131072 + 3, 2};

// One element of 2^17 moves iid statistics by about 2^-17, far below the
// serial bound there; an outlier carries the variance whatever d is.
TEST(DroppedElements, ALastElementLeftOutIsCaughtByAnOutlierLastAtEveryD) {
  ExpectCaught("drop_last_element", "one_outlier",
               {{2, 2}, {3, 2}, {7, 2}, {64, 2}, {257, 2}, {4099, 2}, kPast16, kPast17});
  ExpectMissed("drop_last_element", "standard_normal", {kPast16, kPast17});
}

// A prefix of iid values has the statistics of the whole row; a prefix of a
// ramp, a sorted row or two halves does not, in proportion to what is left
// out (a ninth past 2^17 at d = 2^17 + 2^14 + 3, a third past 2^16 at
// 3 * 2^15 + 1). An outlier last shows even 3 elements left out.
TEST(DroppedElements, ATailPastAPowerOfTwoLeftOutIsCaughtByRampsSortedRowsHalvesAndOutliers) {
  const Shape ninth{131072 + 16384 + 3, 1}, third{98304 + 1, 1};
  ExpectCaught("drop_past_power_of_two", "ramp",
               {{3, 1}, {7, 1}, {100, 1}, {768, 1}, third, ninth});
  ExpectCaught("drop_past_power_of_two", "sorted_rows", {{7, 1}, {768, 1}, third, ninth});
  ExpectCaught("drop_past_power_of_two", "two_halves", {{7, 1}, {768, 1}, third, ninth});
  ExpectCaught("drop_past_power_of_two", "one_outlier",
               {{3, 2}, {7, 2}, {100, 2}, {4099, 2}, kPast17});
  ExpectMissed("drop_past_power_of_two", "standard_normal", {ninth, kPast17});
}

// The first 256 elements counted twice reweigh a 512th of a long iid row,
// below the bound; an outlier first is counted twice and doubles the variance.
TEST(DroppedElements, AFirstChunkCountedTwiceIsCaughtByAnOutlierFirstAtEveryDPastIt) {
  ExpectCaught("double_first_chunk", "one_outlier",
               {{257, 1}, {300, 1}, {768, 1}, {4099, 1}, kPast16, kPast17});
  ExpectCaught("double_first_chunk", "ramp", {{300, 1}, {768, 1}, {4099, 1}, {65536 + 17, 1}});
  ExpectCaught("double_first_chunk", "sorted_rows",
               {{300, 1}, {768, 1}, {4099, 1}, {65536 + 17, 1}, {131072 + 16384 + 3, 1}});
  ExpectCaught("double_first_chunk", "two_halves", {{300, 1}, {768, 1}, {4099, 1}, {16387, 1}});
  ExpectMissed("double_first_chunk", "standard_normal", {kPast16, kPast17});
  // Up to one chunk every element is counted twice: the same statistics, no bug.
  ExpectMissed("double_first_chunk", "one_outlier", {{7, 1}, {64, 1}, {256, 1}});
}

// A row normalized with its neighbour's statistics is off by how much they
// differ: a factor 2 in rstd on rows_differ, sampling noise on iid rows; and
// only odd batches of 3 or more have such a row.
TEST(DroppedElements, AnOddLastRowGivenThePreviousRowsStatisticsIsCaughtByRowsThatDiffer) {
  for (std::int64_t rows : {3, 5, 7, 9}) {
    ExpectCaught("odd_last_row", "rows_differ", {{1, rows}, {7, rows}, {64, rows}, {768, rows}});
  }
  ExpectCaught("odd_last_row", "rows_differ", {{4099, 3}, {65536 + 17, 3}});
  ExpectMissed("odd_last_row", "rows_differ", {{64, 1}, {64, 2}, {64, 4}, {64, 8}, {4099, 4}});
  // standard_normal at the batch sizes ln_check ran it at (even), and odd
  // batches of long iid rows.
  ExpectMissed("odd_last_row", "standard_normal",
               {{7, 8}, {64, 8}, {768, 4}, {131072 + 16384 + 3, 3}});
}

// heavy_tails is random data, but its outliers make a serial sum stagnate
// (terms below half an ulp of the partial sum are lost, all with one sign),
// so the statistical tier does not apply there: a correct bf16 two-pass
// kernel's rstd is beyond the typical bound on this case (found by the
// property suite), within its worst-case bound, and the tier is off.
TEST(StatisticalTier, IsOffOnHeavyTailsWhereOutliersMakeTheSumsStagnate) {
  for (std::string_view f :
       {"standard_normal", "large_d", "many_rows", "two_halves", "rows_differ"}) {
    EXPECT_TRUE(IsRandomDataFamily(f) && HoldsTheTypicalModel(f)) << f;
  }
  EXPECT_TRUE(IsRandomDataFamily("heavy_tails"));
  EXPECT_FALSE(HoldsTheTypicalModel("heavy_tails"));
  for (std::string_view f : {"one_outlier", "ramp", "sorted_rows", "large_mean"}) {
    EXPECT_FALSE(HoldsTheTypicalModel(f)) << f;
  }

  FamilyParams p;
  p.dtype = p.param_dtype = DType::kBF16;
  p.d = 4097;
  p.rows = 3;
  p.seed = 1525576933;
  p.with_dy = false;
  p.affine = false;
  const Case c = GenerateCase(*FindFamily("heavy_tails"), p);
  const ImplInfo* k = Registered("bf16/two_pass/cpu-scalar");
  ASSERT_NE(k, nullptr);
  JudgeOptions forced;
  forced.typical = TypicalTier::kFail;
  const Judgement beyond = Judge(*k, c, forced);
  EXPECT_EQ(beyond.verdict, Verdict::kBeyondTypical) << Summarize(beyond);
  JudgeOptions as_the_tools;
  as_the_tools.typical = TypicalTierFor(*k, "heavy_tails", TypicalTier::kFail);
  EXPECT_EQ(as_the_tools.typical, TypicalTier::kOff);
  EXPECT_EQ(Judge(*k, c, as_the_tools).verdict, Verdict::kPass);
}

}  // namespace
}  // namespace lnv

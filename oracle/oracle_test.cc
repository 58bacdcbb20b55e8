// Hand-derived cases with exact answers, special values, and the exact
// identities of docs/DESIGN.md section 1 checked on the oracle's exact values.
#include "oracle/oracle.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "oracle/test_problems.h"

namespace lnv {
namespace {

constexpr double kInf = HUGE_VAL;
const double kNaN = std::nan("");

struct Solved {
  OracleForwardResult fwd;
  OracleBackwardResult bwd;
};

Solved Solve(OracleNorm norm, std::vector<double> x, double eps, std::vector<double> gamma = {},
             std::vector<double> beta = {}, std::vector<double> dy = {},
             FloatFormat out = kBinary32, OracleBackend backend = OracleBackend::kBoost,
             bool fast = true) {
  OracleProblem p = RowsOf(norm, x, 1, eps, out);
  p.gamma = gamma;
  p.beta = beta;
  OracleOptions o;
  o.backend = backend;
  o.fast_path = fast;
  Solved r;
  r.fwd = OracleForward(p, o);
  if (!dy.empty()) {
    p.dy = dy;
    r.bwd = OracleBackward(p, o);
  }
  return r;
}

// Rounds a long double reference (64-bit significand, error well below
// 2^-60 relative for the expressions used here) into f, checking that it is
// not so close to a rounding boundary that 64 bits could not decide.
double Reference(long double v, FloatFormat f) {
  const double r = RoundToFormat(static_cast<double>(v), f);
  const long double ulp = UlpOf(r, f);
  const long double frac = std::fabs(v - r) / ulp;  // in [0, 0.5]
  EXPECT_LT(std::fabs(frac - 0.5L), 0.5L);
  EXPECT_GT(std::fabs(frac - 0.5L), 0x1p-40L) << "reference too close to a midpoint";
  return r;
}

TEST(OracleForward, MatchesAHandDerivedRowWithAnIrrationalRstd) {
  // x = 1,2,3,4: mu = 5/2, sigma^2 = 5/4, r = 2/sqrt(5), xhat = (x - 5/2) 2/sqrt(5).
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      Solved r =
          Solve(OracleNorm::kLayerNorm, {1, 2, 3, 4}, 0.0, {}, {}, {}, kBinary32, backend, fast);
      const long double s5 = std::sqrt(5.0L);
      EXPECT_EQ(r.fwd.mean[0].rounded, 2.5);
      EXPECT_EQ(r.fwd.rstd[0].rounded, Reference(2 / s5, kBinary32));
      const long double want[] = {-3 / s5, -1 / s5, 1 / s5, 3 / s5};
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(r.fwd.y[i].rounded, Reference(want[i], kBinary32)) << i;
        // hi is the exact value rounded to double (within 2^-53 of it,
        // relatively); want, a long double, is within 2^-63 (a sqrt and a
        // division), and w is want rounded to double (2^-53 more).
        const double w = static_cast<double>(want[i]);
        EXPECT_NEAR(r.fwd.y[i].hi, w, std::fabs(w) * (0x1p-52 + 0x1p-62));
      }
      EXPECT_EQ(r.fwd.stats[0].var, 1.25);
      EXPECT_EQ(r.fwd.undecided, 0);
    }
  }
}

TEST(OracleForward, GivesExactOutputsWhenQIsASquare) {
  // x = 0, 6: mu = 3, sigma^2 = 9, r = 1/3 (rational but not dyadic), xhat = -1, 1.
  Solved r = Solve(OracleNorm::kLayerNorm, {0, 6}, 0.0, {}, {}, {}, kBinary32,
                   OracleBackend::kBoost, false);
  EXPECT_EQ(r.fwd.y[0].rounded, -1.0);
  EXPECT_EQ(r.fwd.y[1].rounded, 1.0);
  EXPECT_EQ(r.fwd.y[1].hi, 1.0);
  EXPECT_EQ(r.fwd.y[1].lo, 0.0);
  EXPECT_EQ(r.fwd.rstd[0].rounded, static_cast<double>(1.0f / 3.0f));
}

TEST(OracleForward, RoundsExactMidpointsToEven) {
  // xhat = 1 exactly (x = 0, 6); y = gamma: 1 + 2^-11 is halfway between two
  // fp16 values (ties to 1), 1 + 3*2^-11 is halfway too (ties to 1 + 2^-9).
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    Solved r = Solve(OracleNorm::kLayerNorm, {0, 6, 0, 6}, 0.0,
                     {0, 1 + 0x1p-11, 0, 1 + 3 * 0x1p-11}, {}, {}, kBinary16, backend);
    EXPECT_EQ(r.fwd.y[1].rounded, 1.0);
    EXPECT_EQ(r.fwd.y[3].rounded, 1.0 + 0x1p-9);
    EXPECT_EQ(r.fwd.y[1].hi, 1 + 0x1p-11);  // the exact value is kept, not the rounded one
  }
}

TEST(OracleForward, ReturnsBetaExactlyWhereXEqualsTheMean) {
  // x = 1,2,3: x_1 = mu, so y_1 = beta_1 rounded once into the output format.
  const double beta1 = 0.1;  // not an fp16 value: rounded once, not via fp32
  Solved r = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, 1e-5, {}, {0, beta1, 0}, {}, kBinary16);
  EXPECT_EQ(r.fwd.y[1].rounded, RoundToFormat(beta1, kBinary16));
  EXPECT_EQ(r.fwd.y[1].hi, beta1);
}

TEST(OracleForward, HandlesRowsWhoseFloatSumOfSquaresOverflows) {
  // x = +-2^127: sum x^2 = 2^255 overflows fp32 (and fp64 does not matter: the
  // sums are exact integers). sigma^2 = 2^254, r = 2^-127 exactly: a subnormal
  // fp32 rstd; y = -1, 1.
  Solved r = Solve(OracleNorm::kLayerNorm, {0x1p127, -0x1p127}, 0.0);
  EXPECT_EQ(r.fwd.rstd[0].rounded, 0x1p-127);
  EXPECT_EQ(r.fwd.y[0].rounded, 1.0);
  EXPECT_EQ(r.fwd.y[1].rounded, -1.0);
  // With eps > 0, r is irrational, just below 2^-127; y rounds to +-1 still.
  Solved e = Solve(OracleNorm::kLayerNorm, {0x1p127, -0x1p127, FLT_MAX, -FLT_MAX}, 1e-5);
  EXPECT_TRUE(std::isfinite(e.fwd.rstd[0].rounded));
  EXPECT_GT(e.fwd.rstd[0].rounded, 0.0);
  EXPECT_LT(e.fwd.rstd[0].rounded, 0x1p-126);  // subnormal fp32
  EXPECT_EQ(e.fwd.undecided, 0);
}

TEST(OracleForward, RoundsOverflowingOutputsToInfinity) {
  // xhat = -1, 1; y = gamma xhat + beta with gamma = beta = FLT_MAX: 2 FLT_MAX -> inf, 0.
  Solved r = Solve(OracleNorm::kLayerNorm, {0, 2}, 0.0, {FLT_MAX, FLT_MAX}, {FLT_MAX, FLT_MAX});
  EXPECT_EQ(r.fwd.y[0].rounded, 0.0);
  EXPECT_EQ(r.fwd.y[1].rounded, kInf);
  // fp16: 60000 + 10000 overflows, 10000 - 60000 = -50000 rounds to -49984.
  Solved h =
      Solve(OracleNorm::kLayerNorm, {0, 2}, 0.0, {60000, 60000}, {10000, 10000}, {}, kBinary16);
  EXPECT_EQ(h.fwd.y[1].rounded, kInf);
  EXPECT_EQ(h.fwd.y[0].rounded, RoundToFormat(-50000, kBinary16));
}

// Past binary64's range the exact value is hi = +-inf and lo = exact -+
// 2^1024 (oracle.h), the same on both backends and on the exact path alone.
// The case fuzz_ln found: RMSNorm, x = (1 - 2^-52, 1 - 2^-53), eps = 2^-126,
// gamma = DBL_MAX; y[1] = (1 + 2^-54 + ...) DBL_MAX is above the overflow
// threshold 2^1024 - 2^970 by 1.5e-33 relative, and exact - 2^1024 rounds to
// -2^970 (checked at 600 bits with mpmath).
TEST(OracleForward, GivesWhatIsLeftBeyond2To1024ForABinary64OutputPastItsRange) {
  const double max = std::numeric_limits<double>::max();
  for (const OracleBackend backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (const bool fast : {true, false}) {
      const Solved r = Solve(OracleNorm::kRmsNorm, {0x1.ffffffffffffep-1, 0x1.fffffffffffffp-1},
                             0x1p-126, {max, max}, {}, {}, kBinary64, backend, fast);
      EXPECT_EQ(r.fwd.y[1].rounded, kInf);
      EXPECT_EQ(r.fwd.y[1].hi, kInf);
      EXPECT_EQ(r.fwd.y[1].lo, -0x1p970);
      EXPECT_EQ(r.fwd.y[1].status, ValueStatus::kDecided);
      // y[0] = (1 - 2^-52) r DBL_MAX is just below DBL_MAX: finite, ordinary.
      EXPECT_TRUE(std::isfinite(r.fwd.y[0].hi));
    }
  }
}

TEST(OracleForward, RoundsTinyOutputsIntoSubnormals) {
  // y_3 = 2^-20 * 3/sqrt(5) = 1.3416 * 2^-20: an fp16 subnormal (spacing 2^-24).
  Solved r =
      Solve(OracleNorm::kLayerNorm, {1, 2, 3, 4}, 0.0, {1, 1, 1, 0x1p-20}, {}, {}, kBinary16);
  EXPECT_EQ(r.fwd.y[3].rounded, Reference(0x1p-20L * 3 / std::sqrt(5.0L), kBinary16));
  EXPECT_EQ(r.fwd.y[3].rounded, 21 * 0x1p-24);
}

TEST(OracleForward, ComputesRmsNorm) {
  // x = 3, 4: mean square 25/2, r = sqrt(2)/5; y = 3 sqrt(2)/5, 4 sqrt(2)/5.
  Solved r = Solve(OracleNorm::kRmsNorm, {3, 4}, 0.0);
  EXPECT_TRUE(r.fwd.mean.empty());
  EXPECT_EQ(r.fwd.y[0].rounded, Reference(3 * std::sqrt(2.0L) / 5, kBinary32));
  EXPECT_EQ(r.fwd.y[1].rounded, Reference(4 * std::sqrt(2.0L) / 5, kBinary32));
  Solved ones = Solve(OracleNorm::kRmsNorm, {-1, 1, 1, -1}, 0.0);
  EXPECT_EQ(ones.fwd.y[0].rounded, -1.0);
  EXPECT_EQ(ones.fwd.rstd[0].rounded, 1.0);
}

// The special-value table (oracle.h): IEEE arithmetic on the formula, each
// value decided by the table, with the alternatives it accepts.
void ExpectTable(const ExactValue& v, double value, bool nan_accepted) {
  EXPECT_TRUE(v.by_table);
  EXPECT_EQ(v.nan_accepted, nan_accepted);
  if (std::isnan(value)) {
    EXPECT_TRUE(std::isnan(v.rounded));
  } else {
    EXPECT_EQ(v.rounded, value);
    EXPECT_EQ(std::signbit(v.rounded), std::signbit(value)) << value;
  }
}

TEST(OracleSpecials, NanOrInfInALayerNormRowMakesItNanButForTheMeanOfItsInfinities) {
  for (double bad : {kNaN, kInf, -kInf}) {
    Solved r = Solve(OracleNorm::kLayerNorm, {1, bad, 3}, 1e-5, {}, {}, {1, 1, 1});
    for (const auto& v : r.fwd.y) ExpectTable(v, kNaN, false);
    // mu = sum(x)/d is the infinity itself; Welford's order reaches inf - inf.
    ExpectTable(r.fwd.mean[0], bad, !std::isnan(bad));
    ExpectTable(r.fwd.rstd[0], kNaN, false);
    for (const auto& v : r.bwd.dx) ExpectTable(v, kNaN, false);
    for (const auto& v : r.bwd.dgamma) ExpectTable(v, kNaN, false);
    EXPECT_EQ(r.bwd.dbeta[0].rounded, 1.0);  // dbeta = sum dy does not involve x
    EXPECT_FALSE(r.bwd.dbeta[0].by_table);
  }
  Solved both = Solve(OracleNorm::kLayerNorm, {kInf, 2, -kInf}, 1e-5);
  ExpectTable(both.fwd.mean[0], kNaN, false);  // inf - inf in any order
}

// RMSNorm with +-inf and no NaN: s2 = +inf, r = 1/sqrt(+inf) = +0.
TEST(OracleSpecials, AnInfinityInAnRmsNormRowGivesZeroRstdSignedZerosAndNanWhereIeeeDoes) {
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      Solved r = Solve(OracleNorm::kRmsNorm, {3, -2, kInf, 0.5, -0.0, -kInf}, 1e-5,
                       {2, 0.5, 1, -kInf, -1, 1}, {}, {1, 1, 1, 1, 1, 1}, kBinary32, backend, fast);
      ExpectTable(r.fwd.rstd[0], 0.0, true);  // NaN: a max|x|-scaled order
      ExpectTable(r.fwd.y[0], 0.0, true);     // (3 * 0) * 2
      ExpectTable(r.fwd.y[1], -0.0, true);    // (-2 * 0) * 0.5
      ExpectTable(r.fwd.y[2], kNaN, false);   // inf * 0
      ExpectTable(r.fwd.y[3], kNaN, false);   // 0 * -inf
      ExpectTable(r.fwd.y[4], 0.0, true);     // (-0 * 0) * -1
      ExpectTable(r.fwd.y[5], kNaN, false);
      // b = mean(g xhat) holds g (inf * 0) = NaN: dx = 0 * NaN everywhere.
      for (const auto& v : r.bwd.dx) ExpectTable(v, kNaN, false);
      // One row: dy xhat is +-0 where x is finite (a zero sum), NaN at the infinities.
      for (int j : {0, 1, 3, 4}) ExpectTable(r.bwd.dgamma[j], 0.0, true);
      ExpectTable(r.bwd.dgamma[2], kNaN, false);
      ExpectTable(r.bwd.dgamma[5], kNaN, false);
    }
  }
}

TEST(OracleSpecials, AnRmsNormRowWithAnInfinityAddsNothingToTheOtherRowsDgamma) {
  const std::vector<double> x = {1.5, -0.25, 3, 2, kInf, -1}, dy = {0.5, 2, -1, 1, 1, 1};
  OracleProblem p;
  p.norm = OracleNorm::kRmsNorm;
  p.rows = 2;
  p.d = 3;
  p.x = x;
  p.dy = dy;
  p.eps = 1e-5;
  const OracleBackwardResult both = OracleBackward(p);
  p.rows = 1;
  p.x = std::span<const double>(x).first(3);
  p.dy = std::span<const double>(dy).first(3);
  const OracleBackwardResult finite_row = OracleBackward(p);
  for (int j : {0, 2}) {
    EXPECT_EQ(both.dgamma[j].rounded, finite_row.dgamma[j].rounded);
    EXPECT_FALSE(both.dgamma[j].by_table);  // the finite row's sum, within a bound
    EXPECT_TRUE(both.dgamma[j].nan_accepted);
    EXPECT_FALSE(finite_row.dgamma[j].nan_accepted);
  }
  ExpectTable(both.dgamma[1], kNaN, false);
}

TEST(OracleSpecials, AnRmsNormRowWithNanOrWithInfAndANanOrMinusInfEpsIsNan) {
  const Solved nan_row = Solve(OracleNorm::kRmsNorm, {1, kNaN, kInf}, 1e-5, {}, {}, {1, 1, 1});
  const Solved nan_eps = Solve(OracleNorm::kRmsNorm, {1, 2, kInf}, kNaN, {}, {}, {1, 1, 1});
  const Solved minus_inf_eps = Solve(OracleNorm::kRmsNorm, {1, 2, kInf}, -kInf, {}, {}, {1, 1, 1});
  for (const Solved* r : {&nan_row, &nan_eps, &minus_inf_eps}) {
    ExpectTable(r->fwd.rstd[0], kNaN, false);
    for (const auto& v : r->fwd.y) ExpectTable(v, kNaN, false);
    for (const auto& v : r->bwd.dx) ExpectTable(v, kNaN, false);
    for (const auto& v : r->bwd.dgamma) ExpectTable(v, kNaN, false);
  }
}

TEST(OracleSpecials, OnlyTheRowWithTheNanIsAffected) {
  std::vector<double> x = {1, 2, 3, kNaN, 5, 6};
  OracleProblem p;
  p.rows = 2;
  p.d = 3;
  p.x = x;
  p.eps = 1e-5;
  auto r = OracleForward(p);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isfinite(r.y[i].rounded));
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(r.y[i].rounded));
}

TEST(OracleSpecials, NegativeQGivesNanButKeepsTheMean) {
  Solved r = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, -1.0);  // sigma^2 = 2/3 < 1
  EXPECT_EQ(r.fwd.mean[0].rounded, 2.0);
  EXPECT_TRUE(std::isnan(r.fwd.rstd[0].rounded));
  for (const auto& v : r.fwd.y) EXPECT_TRUE(std::isnan(v.rounded));
  Solved n = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, kNaN);
  EXPECT_TRUE(std::isnan(n.fwd.y[0].rounded));
  EXPECT_EQ(n.fwd.mean[0].rounded, 2.0);
}

TEST(OracleSpecials, ZeroQGivesInfiniteRstdAndIeeeProducts) {
  // Constant row with eps = 0: every xhat is 0 * inf = NaN.
  Solved c = Solve(OracleNorm::kLayerNorm, {7, 7, 7}, 0.0, {}, {}, {1, 2, 3});
  EXPECT_EQ(c.fwd.rstd[0].rounded, kInf);
  for (const auto& v : c.fwd.y) EXPECT_TRUE(std::isnan(v.rounded));
  for (const auto& v : c.bwd.dx) EXPECT_TRUE(std::isnan(v.rounded));
  // sigma^2 = 1 and eps = -1: xhat = -inf, NaN (x = mu), +inf.
  Solved w = Solve(OracleNorm::kLayerNorm, {0, 2}, -1.0, {}, {0.5, 0.5});
  EXPECT_EQ(w.fwd.y[0].rounded, -kInf);
  EXPECT_EQ(w.fwd.y[1].rounded, kInf);
}

TEST(OracleSpecials, InfiniteEpsGivesZeroRstdAndYEqualsBeta) {
  Solved r = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, kInf, {}, {0.25, -0.5, 1.0}, {1, 1, 1});
  EXPECT_EQ(r.fwd.rstd[0].rounded, 0.0);
  EXPECT_EQ(r.fwd.y[0].rounded, 0.25);
  EXPECT_EQ(r.fwd.y[1].rounded, -0.5);
  for (const auto& v : r.bwd.dx) EXPECT_EQ(v.rounded, 0.0);
}

TEST(OracleSpecials, NonFiniteGammaOrBetaFollowIeeeOnTheSigns) {
  // x = 1,2,3: xhat = -c, 0, c. gamma = inf: -inf, NaN (inf * 0), +inf.
  Solved g = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, 0.0, {kInf, kInf, kInf});
  EXPECT_EQ(g.fwd.y[0].rounded, -kInf);
  EXPECT_TRUE(std::isnan(g.fwd.y[1].rounded));
  EXPECT_EQ(g.fwd.y[2].rounded, kInf);
  // A true infinity carries lo = hi: hi = +-inf with a finite lo means a
  // finite value past binary64's range (oracle.h), which the judge measures.
  EXPECT_EQ(g.fwd.y[0].lo, -kInf);
  EXPECT_EQ(g.fwd.y[2].lo, kInf);
  Solved b = Solve(OracleNorm::kLayerNorm, {1, 2, 3}, 0.0, {}, {-kInf, kNaN, 0.0});
  EXPECT_EQ(b.fwd.y[0].rounded, -kInf);
  EXPECT_TRUE(std::isnan(b.fwd.y[1].rounded));
  EXPECT_TRUE(std::isfinite(b.fwd.y[2].rounded));
}

TEST(OracleBackward, MatchesAHandDerivedGradient) {
  // x = 0,1,2, eps = 0: mu = 1, sigma^2 = 2/3, r = sqrt(3/2), xhat = (-r, 0, r).
  // dy = (1,0,0), gamma = 1: g = dy, a = 1/3, b = -r/3,
  // dx = r (g - a - xhat b) = r (1/6, -1/3, 1/6); dgamma = -r; dbeta = (1, 0, 0).
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      Solved r = Solve(OracleNorm::kLayerNorm, {0, 1, 2}, 0.0, {}, {}, {1, 0, 0}, kBinary32,
                       backend, fast);
      const long double rr = std::sqrt(1.5L);
      EXPECT_EQ(r.bwd.dx[0].rounded, Reference(rr / 6, kBinary32));
      EXPECT_EQ(r.bwd.dx[1].rounded, Reference(-rr / 3, kBinary32));
      EXPECT_EQ(r.bwd.dx[2].rounded, Reference(rr / 6, kBinary32));
      EXPECT_EQ(r.bwd.dgamma[0].rounded, Reference(-rr, kBinary32));
      EXPECT_EQ(r.bwd.dgamma[1].rounded, 0.0);
      EXPECT_EQ(r.bwd.dbeta[0].rounded, 1.0);
      EXPECT_EQ(r.bwd.dbeta[1].rounded, 0.0);
    }
  }
}

TEST(OracleBackward, SumsDgammaOverRowsWithDifferentRstd) {
  // Two rows with different q: dgamma_j = sum of two irrationals, decided by
  // the multi-root enclosure.
  std::vector<double> x = {1, 2, 3, 4, 0, 1, 2, 4}, dy = {1, 0.5, -1, 2, 0.25, 1, 1, -3};
  OracleProblem p;
  p.rows = 2;
  p.d = 4;
  p.x = x;
  p.dy = dy;
  p.eps = 0.0;
  OracleOptions o;
  o.fast_path = false;
  auto r = OracleBackward(p, o);
  const long double r0 = 2 / std::sqrt(5.0L);     // row 0: sigma^2 = 5/4
  const long double r1 = 1 / std::sqrt(2.1875L);  // row 1: mu = 7/4, sigma^2 = 35/16
  const long double want0 = 1 * (1 - 2.5L) * r0 + 0.25L * (0 - 1.75L) * r1;
  EXPECT_EQ(r.dgamma[0].rounded, Reference(want0, kBinary32));
  EXPECT_EQ(r.undecided, 0);
}

// Whether c is the binary64 value nearest to k 2^s / sqrt(m), m not a square
// (the value is irrational: no ties), decided in exact integers rather than
// in a wider float: with |c| = M 2^E, M in (2^52, 2^53), c is the nearest iff
// (M - 1/2)^2 4^E < k^2 4^s / m < (M + 1/2)^2 4^E, that is
// m (2M - 1)^2 < k^2 4^(s - E + 1) < m (2M + 1)^2.
bool IsNearestDoubleToRootQuotient(double c, std::uint64_t k, int s, std::uint64_t m) {
  using U = unsigned __int128;
  int e = 0;
  const U M = static_cast<U>(std::ldexp(std::frexp(std::fabs(c), &e), 53));
  const int shift = 2 * (s - (e - 53) + 1);
  const int k_bits = 64 - __builtin_clzll(k);
  // M = 2^52 would halve the gap below; the rest keeps every product below 2^128.
  if (M == U{1} << 52 || shift < 0 || shift + 2 * k_bits > 126 || m >= (1u << 16)) {
    ADD_FAILURE() << "outside what this check handles: " << std::hexfloat << c;
    return false;
  }
  const U target = U{k} * k << shift;
  return U{m} * (2 * M - 1) * (2 * M - 1) < target && target < U{m} * (2 * M + 1) * (2 * M + 1);
}

TEST(OracleBackward, GivesFiniteDxWhenDyTimesGammaOverflowsBinary64) {
  // x = 2^900 (0, 1, 2): mu = 2^900, n = 2^900 (-1, 0, 1), sigma^2 = 2^1800 2/3,
  // r = 2^-900 sqrt(3/2), xhat = sqrt(3/2) (-1, 0, 1). gamma = 2^1000 and
  // dy = (2^100, 0, -2^99): g = 2^1100 (1, 0, -1/2), beyond binary64, yet
  // a = 2^1100/6, b = -2^1100 sqrt(3/2)/2 and
  // dx = r (g - a - xhat b) = 2^200 sqrt(3/2) (1/12, -1/6, 1/12) = 2^198/sqrt(6) (1, -2, 1).
  const std::vector<double> x = {0, 0x1p900, 0x1p901}, gamma(3, 0x1p1000),
                            dy = {0x1p100, 0, -0x1p99};
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      Solved r = Solve(OracleNorm::kLayerNorm, x, 0.0, gamma, {}, dy, kBinary64, backend, fast);
      for (const ExactValue& v : r.bwd.dx) EXPECT_EQ(v.status, ValueStatus::kDecided);
      EXPECT_GT(r.bwd.dx[0].rounded, 0.0);
      EXPECT_LT(r.bwd.dx[1].rounded, 0.0);
      EXPECT_TRUE(IsNearestDoubleToRootQuotient(r.bwd.dx[0].rounded, 1, 198, 6))
          << std::hexfloat << r.bwd.dx[0].rounded;
      EXPECT_TRUE(IsNearestDoubleToRootQuotient(r.bwd.dx[1].rounded, 1, 199, 6))
          << std::hexfloat << r.bwd.dx[1].rounded;
      EXPECT_EQ(r.bwd.dx[2].rounded, r.bwd.dx[0].rounded);
      EXPECT_EQ(r.bwd.undecided, 0);
    }
  }
}

TEST(OracleBackward, FallsBackToTheExactPathWhenDyTimesGammaOverflowsInTheFastPath) {
  // As above with x = 2^899 (0, 1, 2) and dy = (2^25, 0, -2^24): g = 2^1025 (1, 0, -1/2)
  // overflows binary64, r = 2^-899 sqrt(3/2) is in the fast path's range, and
  // dx = 2^124/sqrt(6) (1, -2, 1) is a finite fp32 value.
  const std::vector<double> x = {0, 0x1p899, 0x1p900}, gamma(3, 0x1p1000),
                            dy = {0x1p25, 0, -0x1p24};
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      Solved r = Solve(OracleNorm::kLayerNorm, x, 0.0, gamma, {}, dy, kBinary32, backend, fast);
      const long double dx0 = 0x1p124L / std::sqrt(6.0L);
      EXPECT_EQ(r.bwd.dx[0].rounded, Reference(dx0, kBinary32));
      EXPECT_EQ(r.bwd.dx[1].rounded, Reference(-2 * dx0, kBinary32));
      EXPECT_EQ(r.bwd.dx[2].rounded, Reference(dx0, kBinary32));
      EXPECT_EQ(r.bwd.undecided, 0);
    }
  }
}

// Backward of a problem of several rows with gamma = 1, everything in fp32.
OracleBackwardResult BackwardRows(OracleNorm norm, std::int64_t rows, const std::vector<double>& x,
                                  const std::vector<double>& dy, double eps, OracleBackend backend,
                                  bool fast, int max_bits = OracleOptions{}.max_bits) {
  OracleProblem p = RowsOf(norm, x, rows, eps, kBinary32);
  p.dy = dy;
  OracleOptions o;
  o.backend = backend;
  o.fast_path = fast;
  o.max_bits = max_bits;
  return OracleBackward(p, o);
}

TEST(OracleBackward, GivesPlusZeroForADgammaThatCancelsOverRowsThatAreScaledCopies) {
  // Row 1 is row 0 times 2 (LayerNorm: q_1 = 4 q_0, r_1 = r_0/2) or times 3
  // (RMSNorm: r_1 = r_0/3): xhat is the same in both rows, so
  // dgamma_j = xhat_0j (dy_0j + dy_1j) = 0 exactly, and an exact zero is +0 (oracle.h).
  struct Case {
    OracleNorm norm;
    std::vector<double> x, dy;
  };
  const Case cases[] = {
      {OracleNorm::kLayerNorm, {0, 7, 2, 0, 14, 4}, {2, -5, 1, -2, 5, -1}},
      {OracleNorm::kRmsNorm, {1, 2, 3, 3, 6, 9}, {1, -2, 0.5, -1, 2, -0.5}},
  };
  for (const Case& c : cases) {
    for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
      for (bool fast : {true, false}) {
        auto r = BackwardRows(c.norm, 2, c.x, c.dy, 0.0, backend, fast);
        EXPECT_EQ(r.undecided, 0);
        for (const ExactValue& v : r.dgamma) {
          EXPECT_EQ(v.status, ValueStatus::kDecided);
          EXPECT_EQ(v.rounded, 0.0);
          EXPECT_FALSE(std::signbit(v.rounded));
          EXPECT_EQ(v.hi, 0.0);
          EXPECT_EQ(v.lo, 0.0);
        }
      }
    }
  }
}

TEST(OracleBackward, SumsDgammaOfScaledCopiesAsOneRationalTimesOneRoot) {
  // Rows 1 and 2 are row 0 = (0, 7, 2) times 2 and 3: xhat = sqrt(3/26) (-3, 4, -1)
  // in each, so dgamma_j = sqrt(3/26) n_0j sum_rows dy_rj. Column 0 cancels to
  // 2^-100 from terms of 2^100: adding per-row enclosures needs some 250 bits
  // there, one rational times one root needs the first Ziv level (88 bits for
  // fp32), so a cap of two levels must decide every column.
  const std::vector<double> x = {0, 7, 2, 0, 14, 4, 0, 21, 6};
  const std::vector<double> dy = {0x1p100, 1, 0.5, -0x1p100, 2, 0.25, 0x1p-100, 3, -1};
  const long double root = std::sqrt(3.0L / 26);
  const long double want[] = {-3 * 0x1p-100L * root, 4 * 6 * root, -1 * -0.25L * root};
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      auto r = BackwardRows(OracleNorm::kLayerNorm, 3, x, dy, 0.0, backend, fast, 2 * 88);
      EXPECT_EQ(r.undecided, 0);
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(r.dgamma[j].status, ValueStatus::kDecided) << j;
        EXPECT_EQ(r.dgamma[j].rounded, Reference(want[j], kBinary32)) << j;
      }
    }
  }
}

TEST(OracleBackward, SumsDgammaOverTwoSquareClassesOfQ) {
  // Rows 0 and 1 as above (q_1 = 4 q_0, q_0 = 26/3: one square class); row 2 =
  // (0, 1, 2) has q_2 = 2/3, and q_0 q_2 = 52/9 is not a square: a second root,
  // r_2 = sqrt(3/2). n = (-3, 4, -1), (-6, 8, -2), (-1, 0, 1); r_0 = sqrt(3/26).
  // Column 0: the first class cancels, leaving -r_2; column 1: the second class
  // is 0, leaving 8 r_0; column 2 needs both roots: -2 r_0 - r_2.
  const std::vector<double> x = {0, 7, 2, 0, 14, 4, 0, 1, 2};
  const std::vector<double> dy = {2, 1, 1, -2, 1, 1, 1, 1, -1};
  const long double r0 = std::sqrt(3.0L / 26), r2 = std::sqrt(1.5L);
  const long double want[] = {-r2, 8 * r0, -2 * r0 - r2};
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      auto r = BackwardRows(OracleNorm::kLayerNorm, 3, x, dy, 0.0, backend, fast);
      EXPECT_EQ(r.undecided, 0);
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(r.dgamma[j].rounded, Reference(want[j], kBinary32)) << j;
    }
  }
}

TEST(OracleBackward, KeepsRootsApartWhenTheProductOfTheQIsANearSquareInteger) {
  // Rows (0, 7/2) and (0, 9/2): sigma^2 = 49/16 and 81/16; with eps = 2^27 - 65/16,
  // q_0 = 2^27 - 1 and q_1 = 2^27 + 1. q_0 q_1 = 2^54 - 1 is an integer but not
  // a square (in binary64 it and its sqrt round to squares), so the roots stay apart.
  // dgamma_0 = 9 (-7/4) r_0 - 7 (-9/4) r_1 = (63/4) (r_1 - r_0)
  //          = -(63/2) / (sqrt(q_0 q_1) (sqrt(q_0) + sqrt(q_1))), written without cancellation;
  // dgamma_1 = (7/4) r_0 + (9/4) r_1.
  const std::vector<double> x = {0, 3.5, 0, 4.5}, dy = {9, 1, -7, 1};
  const double eps = 0x1p27 - 65.0 / 16;
  const long double q0 = 0x1p27L - 1, q1 = 0x1p27L + 1;
  const long double want0 = -31.5L / (std::sqrt(q0 * q1) * (std::sqrt(q0) + std::sqrt(q1)));
  const long double want1 = 1.75L / std::sqrt(q0) + 2.25L / std::sqrt(q1);
  for (auto backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
    for (bool fast : {true, false}) {
      auto r = BackwardRows(OracleNorm::kLayerNorm, 2, x, dy, eps, backend, fast);
      EXPECT_EQ(r.undecided, 0);
      EXPECT_EQ(r.dgamma[0].rounded, Reference(want0, kBinary32));
      EXPECT_EQ(r.dgamma[1].rounded, Reference(want1, kBinary32));
    }
  }
}

// Exact identities (docs/DESIGN.md section 1), on the exact values carried to
// 106 bits (binary64 output format, so hi + lo): each term is known to
// 2^-104 relative, and the sums below are accumulated in long double
// (64 bits), so the tolerance is sum|terms| * (2^-104 + d 2^-63).
long double Tolerance(const std::vector<long double>& terms) {
  long double s = 0;
  for (auto t : terms) s += std::fabs(t);
  return s * (0x1p-104L + static_cast<long double>(terms.size()) * 0x1p-63L);
}

TEST(OracleIdentities, HoldOnTheExactValuesOfRandomRows) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 60; ++trial) {
    const int d = 1 + static_cast<int>(rng() % 200);
    const double shift = trial % 3 == 0 ? std::ldexp(1.0, static_cast<int>(rng() % 20)) : 0.0;
    const double eps = trial % 2 ? 0.0 : 0x1p-10;
    std::vector<double> x(d), dy(d), gamma(d);
    for (auto& v : x) v = static_cast<float>(normal(rng) + shift);
    for (auto& v : dy) v = static_cast<float>(normal(rng));
    for (auto& v : gamma) v = static_cast<float>(normal(rng));
    OracleProblem p;
    p.rows = 1;
    p.d = d;
    p.x = x;
    p.dy = dy;
    p.eps = eps;
    p.out_format = kBinary64;
    p.param_format = kBinary64;
    auto f = OracleForward(p);  // gamma = 1, beta = 0: y = xhat
    const long double var = f.stats[0].var, r = f.stats[0].rstd;
    std::vector<long double> xh(d), t1, t2;
    for (int i = 0; i < d; ++i) xh[i] = static_cast<long double>(f.y[i].hi) + f.y[i].lo;
    long double s1 = 0, s2 = 0;
    for (auto v : xh) s1 += v, s2 += v * v, t1.push_back(v), t2.push_back(v * v);
    EXPECT_LE(std::fabs(s1), Tolerance(t1)) << "sum xhat = 0, trial " << trial;
    // sum xhat^2 = d sigma^2 / (sigma^2 + eps); var and r are rounded to
    // double (2^-53 each), so compare with that tolerance instead.
    const long double want2 = eps == 0 && var == 0 ? 0 : d * var / (var + eps);
    EXPECT_NEAR(static_cast<double>(s2), static_cast<double>(want2),
                static_cast<double>(want2 * 0x1p-50L + Tolerance(t2)));

    p.gamma = gamma;
    auto b = OracleBackward(p);
    std::vector<long double> dx(d), u1, u2;
    long double sdx = 0, sxdx = 0, bsum = 0;
    for (int i = 0; i < d; ++i) {
      dx[i] = static_cast<long double>(b.dx[i].hi) + b.dx[i].lo;
      sdx += dx[i];
      sxdx += xh[i] * dx[i];
      u1.push_back(dx[i]);
      u2.push_back(xh[i] * dx[i]);
      bsum += static_cast<long double>(dy[i]) * gamma[i] * xh[i];
    }
    EXPECT_LE(std::fabs(sdx), Tolerance(u1) + 0x1p-900L) << "sum dx = 0, trial " << trial;
    // sum xhat dx = d r b eps / (sigma^2 + eps), b = mean(g xhat).
    const long double bmean = bsum / d;
    const long double want = d * r * bmean * eps / (var + eps);
    EXPECT_NEAR(static_cast<double>(sxdx), static_cast<double>(want),
                static_cast<double>(Tolerance(u2) + std::fabs(want) * 0x1p-48L + 0x1p-900L))
        << "trial " << trial;
  }
}

TEST(OracleInput, RejectsMalformedProblemsWithAClearError) {
  std::vector<double> x = {1, 2, 3};
  OracleProblem p;
  p.rows = 2;  // but x holds one row
  p.d = 3;
  p.x = x;
  EXPECT_THROW(OracleForward(p), std::invalid_argument);
  p.rows = 1;
  p.d = 0;
  EXPECT_THROW(OracleForward(p), std::invalid_argument);
  p.d = 3;
  EXPECT_THROW(OracleBackward(p), std::invalid_argument);  // no dy
}

}  // namespace
}  // namespace lnv

namespace lnv {
namespace {

TEST(OracleZiv, ReportsUndecidedWhenThePrecisionCapIsReachedNeverAGuess) {
  std::vector<double> x = {1, 2, 3, 4};
  OracleProblem p;
  p.rows = 1;
  p.d = 4;
  p.x = x;
  OracleOptions o;
  o.fast_path = false;
  o.max_bits = 32;  // below the first Ziv step: nothing irrational can be decided
  auto r = OracleForward(p, o);
  EXPECT_EQ(r.undecided, 5);  // four y and the rstd
  for (const auto& v : r.y) EXPECT_EQ(v.status, ValueStatus::kUndecided);
  EXPECT_EQ(r.mean[0].status, ValueStatus::kDecided);  // rational: exact at any cap
}

}  // namespace
}  // namespace lnv

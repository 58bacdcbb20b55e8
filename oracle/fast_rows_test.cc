// The fast path's new pieces at their edges, each against exact rational
// arithmetic: the arithmetic rounding into a format (RoundMagnitude), the
// exact rounding of a double-word (RoundDoubleWord, ties included), and the
// row statistics' enclosures (ComputeFastStats): every bound must hold, and
// the bounds must be tight enough that typical rows take the fast path.
#include "oracle/fast_rows.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "oracle/backends.h"
#include "oracle/fast_stats.h"
#include "oracle/rat.h"
#include "oracle/test_problems.h"

namespace lnv::oracle_internal {
namespace {

using Int = BoostBackend::Int;
using R = Rat<Int>;

constexpr FloatFormat kFormats[] = {kBinary32, kBfloat16, kBinary16};
// A kernel's usual eps, an fp32 value: an input of these tests, not a tolerance.
constexpr double kKernelEps = static_cast<double>(1e-5f);

double RandomPositive(std::mt19937_64& rng, int lo_exp, int hi_exp) {
  const int e = lo_exp + static_cast<int>(rng() % static_cast<std::uint64_t>(hi_exp - lo_exp));
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(rng() >> 11), -53), e);
}

TEST(FastRounding, RoundMagnitudeIsRoundToFormatOnEdgesAndRandomValues) {
  std::mt19937_64 rng(11);
  for (FloatFormat f : kFormats) {
    const double ulp1 = std::ldexp(1.0, 1 - f.precision);
    const double max_finite = std::ldexp(2.0 - ulp1, f.emax);
    const double min_sub = std::ldexp(1.0, f.emin - f.precision + 1);
    const double edges[] = {1.0,
                            1.0 + ulp1 / 2,    // a tie, to even (1)
                            1.0 + 1.5 * ulp1,  // a tie, to even (1 + 2 ulp)
                            max_finite,
                            max_finite * (1 + ulp1 / 4),
                            std::ldexp(2.0 - ulp1 / 2, f.emax),  // the overflow tie: +inf
                            std::nextafter(std::ldexp(2.0 - ulp1 / 2, f.emax), 0.0),
                            min_sub,
                            min_sub / 2,    // a tie to 0
                            min_sub * 1.5,  // a tie to 2 min_sub
                            std::nextafter(min_sub / 2, 1.0),
                            std::ldexp(1.0, f.emin),
                            std::ldexp(1.0, f.emin) - min_sub / 2,
                            0x1p995,  // far past the range: the shifter must not overflow
                            1e300,
                            DBL_MAX};
    for (double m : edges) {
      EXPECT_EQ(RoundMagnitude(m, f), RoundToFormat(m, f)) << std::hexfloat << m;
    }
    for (int i = 0; i < 200000; ++i) {
      const double m = RandomPositive(rng, f.emin - f.precision - 4, f.emax + 3);
      ASSERT_EQ(RoundMagnitude(m, f), RoundToFormat(m, f)) << std::hexfloat << m;
    }
  }
}

TEST(FastRounding, RoundDoubleWordRoundsTheExactSumTiesIncluded) {
  std::mt19937_64 rng(12);
  int ties = 0;
  for (FloatFormat f : kFormats) {
    for (int i = 0; i < 100000; ++i) {
      double h = RandomPositive(rng, f.emin - f.precision, f.emax);
      if (i % 2 == 0) {  // a midpoint of the format: a value plus half its ulp
        const double v = RoundToFormat(h, f);
        h = v + UlpOf(v, f) / 2;
        ++ties;
      }
      if (rng() % 2) h = -h;
      const int pick = static_cast<int>(rng() % 3);
      const double l = pick == 0
                           ? 0.0
                           : (pick == 1 ? 1 : -1) *
                                 std::ldexp(std::fabs(h), -53 - 1 - static_cast<int>(rng() % 20));
      double got;
      if (!RoundDoubleWord(h, l, f, &got)) continue;  // outside its stated range
      const double want = RoundRat(Add(FromDouble<Int>(h), FromDouble<Int>(l)), f).value;
      ASSERT_EQ(got, want) << std::hexfloat << h << " + " << l;
    }
  }
  EXPECT_GT(ties, 100000);
  for (FloatFormat f : kFormats) {  // past the format's range: +-inf, never NaN
    for (double h : {0x1p990, 1e300, -1e300}) {
      double got = 0.0;
      if (RoundDoubleWord(h, 0.0, f, &got)) {
        EXPECT_EQ(got, std::copysign(HUGE_VAL, h)) << h;
      }
    }
  }
}

// A review found this: dbeta's exact double-word sum past the format's
// range went through the shifter, which overflowed to NaN.
TEST(FastRounding, ADbetaPastTheFormatsRangeIsInfinityOnBothPaths) {
  const std::vector<double> x = {1.0, 2.0, 4.0}, dy = {1e300, -2.0, 0.5};
  OracleProblem p;
  p.rows = 1;
  p.d = 3;
  p.x = x;
  p.dy = dy;
  p.eps = kKernelEps;
  for (bool fast : {true, false}) {
    OracleOptions o;
    o.fast_path = fast;
    const OracleBackwardResult r = OracleBackward(p, o);
    EXPECT_EQ(r.dbeta[0].rounded, HUGE_VAL) << "fast path " << fast;
    EXPECT_EQ(r.dbeta[1].rounded, -2.0);
  }
}

// A LayerNorm backward of `rows` rows of x and dy (kept alive by the
// caller) without gamma and beta, every output binary64.
OracleProblem Binary64Backward(const std::vector<double>& x, const std::vector<double>& dy,
                               std::int64_t rows) {
  OracleProblem p = RowsOf(OracleNorm::kLayerNorm, x, rows, kKernelEps, kBinary64);
  p.dy = dy;
  return p;
}

// dbeta into binary64 from the exact double-word sum (oracle.cc,
// Binary64OfExactSum): the same bits as the exact path, double-double
// included, on a tie to even (1 + 2^-53), sums of -0 terms and of terms
// that cancel (+0 on both paths), a subnormal sum, and past 2^1000, where
// the exact path decides: a sum that rounds to DBL_MAX and one past the
// overflow threshold (hi = inf and what is left past 2^1024).
TEST(FastRounding, Binary64DbetaOfAnExactSumIsTheExactPathsBitForBit) {
  const double max = DBL_MAX;
  // Two rows, six columns: column j sums dy[j] and dy[6 + j].
  const std::vector<double> dy = {1.0,     -0.0, 0x1p-1074, 0.5,  max,     max,
                                  0x1p-53, -0.0, 0x1p-1073, -0.5, 0x1p969, max};
  const std::vector<double> x = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 3.0, 1.0, 4.0, 1.0, 5.0, 9.0};
  const OracleProblem p = Binary64Backward(x, dy, 2);
  OracleOptions tiered, exact;
  tiered.recheck_every = 1;
  exact.fast_path = false;
  const OracleBackwardResult a = OracleBackward(p, tiered), b = OracleBackward(p, exact);
  for (int j = 0; j < 6; ++j) {
    const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
    EXPECT_EQ(bits(a.dbeta[j].rounded), bits(b.dbeta[j].rounded)) << "column " << j;
    EXPECT_EQ(bits(a.dbeta[j].hi), bits(b.dbeta[j].hi)) << "column " << j;
    EXPECT_EQ(bits(a.dbeta[j].lo), bits(b.dbeta[j].lo)) << "column " << j;
  }
  EXPECT_EQ(b.dbeta[0].rounded, 1.0);  // the tie 1 + 2^-53 rounds to even
  EXPECT_EQ(b.dbeta[0].lo, 0x1p-53);
  EXPECT_EQ(b.dbeta[1].rounded, 0.0);
  EXPECT_FALSE(std::signbit(b.dbeta[1].rounded));
  EXPECT_EQ(b.dbeta[4].rounded, max);  // max + 2^969 is below the threshold
  EXPECT_EQ(b.dbeta[5].rounded, HUGE_VAL);
  EXPECT_EQ(a.recheck_disagreements, 0);
}

// On ordinary binary64 rows every dbeta is an exact sum of two doubles, so
// the fast branch decides each one: with recheck_every = 1 every fast or
// wide decision is re-decided and counted, d of them dbeta's.
TEST(FastRounding, Binary64DbetaOfOrdinaryRowsIsDecidedWithoutTheExactPath) {
  const std::vector<double> x = {1.0, 2.0, 4.0, 8.0, 3.0, 1.0, 4.0, 1.0},
                            dy = {0.25, -1.5, 3.0, 0.1, 0.7, 2.0, -0.3, 1.1};
  const OracleProblem p = Binary64Backward(x, dy, 2);
  OracleOptions o;
  o.recheck_every = 1;
  const OracleBackwardResult r = OracleBackward(p, o);
  EXPECT_EQ(r.slow_path, 0);
  EXPECT_EQ(r.recheck_disagreements, 0);
  EXPECT_EQ(r.rechecked, p.rows * p.d + 2 * p.d);  // dx, dgamma, dbeta
}

// A row of d values of one of the adversarial families.
std::vector<double> MakeRow(std::mt19937_64& rng, int d, int family) {
  std::normal_distribution<double> normal;
  const double mean = std::ldexp(1.0, static_cast<int>(rng() % 40));
  const int scale = static_cast<int>(rng() % 400) - 200;
  std::vector<double> x(d);
  for (int i = 0; i < d; ++i) {
    double v = normal(rng);
    if (family == 1) v = mean + v;                              // kappa up to 2^39
    if (family == 2) v = std::ldexp(v, scale);                  // huge and tiny
    if (family == 3) v = 3.0 + (i % 2) * 0x1p-30;               // near-constant
    if (family == 4) v = static_cast<double>(rng() % 5);        // small integers
    if (family == 5 && rng() % 16 == 0) v = std::ldexp(v, 40);  // outliers
    x[i] = static_cast<float>(v);
  }
  return x;
}

bool Encloses(const Edd& a, const R& exact) {
  const R lo = Sub(Add(FromDouble<Int>(a.hi), FromDouble<Int>(a.lo)), FromDouble<Int>(a.e));
  const R hi = Add(Add(FromDouble<Int>(a.hi), FromDouble<Int>(a.lo)), FromDouble<Int>(a.e));
  return Compare(lo, exact) <= 0 && Compare(exact, hi) <= 0;
}

TEST(FastStats, EnclosesTheExactMeanVarianceQAndRootOnAdversarialRows) {
  std::mt19937_64 rng(13);
  int accepted = 0, rows = 0;
  for (int t = 0; t < 3000; ++t) {
    const int d = 1 + static_cast<int>(std::exp2(static_cast<double>(rng() % 1200) / 100.0));
    const int family = static_cast<int>(rng() % 6);
    const bool layer = rng() % 4 != 0;
    const double eps = (t % 5 == 0) ? 0.0 : kKernelEps;
    const std::vector<double> x = MakeRow(rng, d, family);
    ++rows;
    FastStats fs;
    if (!ComputeFastStats(x.data(), d, layer, eps, &fs)) continue;
    ++accepted;
    R sum, sq, abs_sum;
    for (double v : x) {
      sum = Add(sum, FromDouble<Int>(v));
      abs_sum = Add(abs_sum, FromDouble<Int>(std::fabs(v)));
    }
    const R n = FromDouble<Int>(d);
    const R mu = layer ? Div(sum, n) : R{};
    for (double v : x) {
      const R c = Sub(FromDouble<Int>(v), mu);
      sq = Add(sq, Mul(c, c));
    }
    const R var = Div(sq, n), q = Add(var, FromDouble<Int>(eps));
    ASSERT_TRUE(Encloses(fs.mu, mu)) << "mu d=" << d << " family " << family;
    ASSERT_TRUE(Encloses(fs.var, var)) << "var d=" << d << " family " << family;
    ASSERT_TRUE(Encloses(fs.q, q)) << "q d=" << d << " family " << family;
    ASSERT_TRUE(Encloses(fs.mean_abs, Div(abs_sum, n))) << "mean_abs d=" << d;
    // r encloses q^(-1/2): (r - e)^2 q <= 1 <= (r + e)^2 q.
    const R r = Add(FromDouble<Int>(fs.r.hi), FromDouble<Int>(fs.r.lo));
    const R lo = Sub(r, FromDouble<Int>(fs.r.e)), hi = Add(r, FromDouble<Int>(fs.r.e));
    const R one{Int(1), Int(1), 0};
    ASSERT_LE(Compare(Mul(Mul(lo, lo), q), one), 0) << "r low end, d=" << d;
    ASSERT_GE(Compare(Mul(Mul(hi, hi), q), one), 0) << "r high end, d=" << d;
    // And usable: ComputeFastStats accepts q only to 2^-60 (so that r has
    // the 2p <= 52 bits DecideFast needs), and r's bound follows it.
    ASSERT_LE(fs.r.e, 0x1p-58 * fs.r.hi) << "d=" << d;
  }
  // Most rows take the fast path (the near-constant rows with eps = 0 and
  // d = 1 rows with eps = 0 cannot: their q is 0 or cancels).
  EXPECT_GT(accepted, rows * 3 / 4);
}

TEST(FastStats, RefusesRowsItCannotBound) {
  const double eps = kKernelEps, negative_eps = -kKernelEps;
  FastStats fs;
  const std::vector<double> row = {1.0, 2.0, 4.0};
  EXPECT_TRUE(ComputeFastStats(row.data(), 3, true, eps, &fs));            // the positive control
  EXPECT_FALSE(ComputeFastStats(row.data(), 3, true, negative_eps, &fs));  // eps < 0: q may cancel
  EXPECT_FALSE(ComputeFastStats(row.data(), 3, true, HUGE_VAL, &fs));
  const std::vector<double> constant = {3.0, 3.0, 3.0};
  EXPECT_FALSE(ComputeFastStats(constant.data(), 3, true, 0.0, &fs));  // q = 0
  const std::vector<double> huge = {DBL_MAX, -DBL_MAX, DBL_MAX};
  EXPECT_FALSE(ComputeFastStats(huge.data(), 3, true, eps, &fs));  // the squares overflow
}

TEST(FastStats, NearestDoubleRefusesAnEnclosureHoldingATieOrZero) {
  double v = 0.0;
  EXPECT_TRUE(NearestDouble({1.0, 0x1p-60, 0x1p-70}, &v));
  EXPECT_EQ(v, 1.0);
  EXPECT_FALSE(NearestDouble({1.0, 0x1p-53, 0.0}, &v));      // 1 + 2^-53: a tie below 1 + 2^-52
  EXPECT_FALSE(NearestDouble({1.0, 0x1p-54, 0x1p-54}, &v));  // reaches the tie
  EXPECT_FALSE(NearestDouble({0x1p-80, 0.0, 0x1p-79}, &v));  // holds 0
  EXPECT_TRUE(NearestDouble({0.0, 0.0, 0.0}, &v));
  EXPECT_EQ(v, 0.0);
}

}  // namespace
}  // namespace lnv::oracle_internal

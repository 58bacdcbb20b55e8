// The wide tier (wide_path.h) against the exact path: the forward and the
// backward of the same problem with OracleOptions::fast_path on (double-word tier, then the
// wide tier, then exact) and off (every value exact) must give the same
// bits, rounded value and double-double alike, for every y, dx, dgamma and
// dbeta; and the wide tier must decide what it is for (binary64 outputs of
// ordinary rows), or it would be dead code.
#include "oracle/wide_path.h"

#include <gtest/gtest.h>

#include <bit>
#include <boost/multiprecision/gmp.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "oracle/oracle.h"
#include "oracle/test_problems.h"

namespace lnv {
namespace {

bool SameBits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

struct Problem {
  std::vector<double> x, dy, gamma;
  OracleProblem p;
};

// rows x d values: x = offset + N(0, 1) (a large offset makes the mean
// cancel), dy = N(0, 1) scaled by dy_scale, gamma = 1 + N(0, 1)/4.
Problem Make(std::mt19937_64& rng, OracleNorm norm, std::int64_t rows, std::int64_t d,
             double offset, double dy_scale, FloatFormat out, FloatFormat param) {
  std::normal_distribution<double> n(0.0, 1.0);
  Problem pr;
  for (std::int64_t i = 0; i < rows * d; ++i) {
    pr.x.push_back(offset + n(rng));
    pr.dy.push_back(dy_scale * n(rng));
  }
  for (std::int64_t j = 0; j < d; ++j) pr.gamma.push_back(1.0 + n(rng) / 4);
  pr.p.norm = norm;
  pr.p.rows = rows;
  pr.p.d = d;
  pr.p.x = pr.x;
  pr.p.dy = pr.dy;
  pr.p.gamma = pr.gamma;
  pr.p.eps = 1e-5;
  pr.p.out_format = out;
  pr.p.param_format = param;
  return pr;
}

// The same rounded value; for binary64 the same double-double (the
// exact value's, canonical); for p <= 26 hi is the exact value to 2p bits
// (oracle.h), which two correct enclosures may give a few binary64 ulps
// apart, so hi must agree to 2p bits.
void ExpectSame(const std::vector<ExactValue>& tiered, const std::vector<ExactValue>& exact,
                FloatFormat f, const char* what) {
  ASSERT_EQ(tiered.size(), exact.size());
  for (std::size_t i = 0; i < tiered.size(); ++i) {
    ASSERT_EQ(exact[i].status, ValueStatus::kDecided) << what << " " << i;
    const bool same = f.precision > 26 ? SameBits(tiered[i].hi, exact[i].hi) &&
                                             SameBits(tiered[i].lo, exact[i].lo)
                                       : std::fabs(tiered[i].hi - exact[i].hi) <=
                                             std::ldexp(std::fabs(exact[i].hi), -2 * f.precision);
    EXPECT_TRUE(SameBits(tiered[i].rounded, exact[i].rounded) && same)
        << what << " " << i << ": tiered " << tiered[i].rounded << " (" << tiered[i].hi << " + "
        << tiered[i].lo << "), exact " << exact[i].rounded << " (" << exact[i].hi << " + "
        << exact[i].lo << ")";
  }
}

// Runs both and compares; returns the tiered run's exact-path count.
std::int64_t CompareTiers(const Problem& pr) {
  OracleOptions tiered, exact;
  exact.fast_path = false;
  const OracleBackwardResult a = OracleBackward(pr.p, tiered);
  const OracleBackwardResult b = OracleBackward(pr.p, exact);
  ExpectSame(a.dx, b.dx, pr.p.out_format, "dx");
  ExpectSame(a.dgamma, b.dgamma, pr.p.param_format, "dgamma");
  ExpectSame(a.dbeta, b.dbeta, pr.p.param_format, "dbeta");
  return a.slow_path;
}

// The forward's y, the same way; returns the tiered run's exact-path count.
std::int64_t CompareForward(Problem& pr) {
  std::vector<double> beta(pr.gamma.size());
  for (std::size_t j = 0; j < beta.size(); ++j) beta[j] = pr.gamma[j] - 1.0;
  pr.p.beta = beta;
  OracleOptions tiered, exact;
  exact.fast_path = false;
  const OracleForwardResult a = OracleForward(pr.p, tiered);
  const OracleForwardResult b = OracleForward(pr.p, exact);
  ExpectSame(a.y, b.y, pr.p.out_format, "y");
  pr.p.beta = {};
  return a.slow_path;
}

TEST(WidePath, Binary64ForwardIsDecidedWithoutTheExactPathAndMatchesIt) {
  std::mt19937_64 rng(1202);
  for (const OracleNorm norm : {OracleNorm::kLayerNorm, OracleNorm::kRmsNorm}) {
    for (const std::int64_t d : {1, 3, 64}) {
      Problem pr = Make(rng, norm, 3, d, 0.25, 1.0, kBinary64, kBinary64);
      EXPECT_EQ(CompareForward(pr), 0) << "d = " << d;
    }
  }
}

// xhat, the by-product the bounds use, of rows whose y the double-word path
// cannot decide (binary64): from the double-word operands where DecideFast
// proves binary32's 2p bits (oracle.cc), else the wide tier or the exact
// path. Each is the exact xhat to 2^-48, so two of them agree to 2^-47,
// offsets that cancel included.
TEST(WidePath, Binary64RowsGiveXhatToBinary32sTwoPBits) {
  std::mt19937_64 rng(1205);
  for (const OracleNorm norm : {OracleNorm::kLayerNorm, OracleNorm::kRmsNorm}) {
    for (const double offset : {0.0, 0x1p30, 0x1p60}) {
      Problem pr = Make(rng, norm, 3, 17, offset, 1.0, kBinary64, kBinary64);
      OracleOptions tiered, exact;
      exact.fast_path = false;
      const OracleForwardResult a = OracleForward(pr.p, tiered);
      const OracleForwardResult b = OracleForward(pr.p, exact);
      ASSERT_EQ(a.xhat.size(), b.xhat.size());
      for (std::size_t i = 0; i < a.xhat.size(); ++i) {
        EXPECT_LE(std::fabs(a.xhat[i] - b.xhat[i]), std::ldexp(std::fabs(b.xhat[i]), -47))
            << "offset " << offset << ", element " << i << ": " << a.xhat[i] << " vs " << b.xhat[i];
      }
    }
  }
}

TEST(WidePath, ForwardMatchesTheExactPathUnderCancellation) {
  std::mt19937_64 rng(9);
  for (const FloatFormat f : {kBinary64, kBinary32, kBfloat16}) {
    for (const double offset : {0.0, 0x1p30, 0x1p60}) {
      for (const OracleNorm norm : {OracleNorm::kLayerNorm, OracleNorm::kRmsNorm}) {
        Problem pr = Make(rng, norm, 2, 16, offset, 1.0, f, f);
        CompareForward(pr);
      }
    }
  }
}

TEST(WidePath, Binary64BackwardIsDecidedWithoutTheExactPathAndMatchesIt) {
  std::mt19937_64 rng(20261202);
  for (const OracleNorm norm : {OracleNorm::kLayerNorm, OracleNorm::kRmsNorm}) {
    for (const std::int64_t d : {1, 2, 7, 64}) {
      const Problem pr = Make(rng, norm, 3, d, 0.5, 1.0, kBinary64, kBinary64);
      // Ordinary rows: every dx and dgamma decided by the wide tier (dbeta,
      // a sum of doubles, may still take the exact path).
      const std::int64_t slow = CompareTiers(pr);
      EXPECT_LE(slow, (norm == OracleNorm::kLayerNorm ? d : 0)) << "d = " << d;
    }
  }
}

TEST(WidePath, MatchesTheExactPathUnderCancellationAndScale) {
  std::mt19937_64 rng(7);
  for (const FloatFormat f : {kBinary64, kBinary32, kBfloat16, kBinary16}) {
    for (const double offset : {0.0, 1e3, 0x1p30, 0x1p60}) {
      for (const double dy_scale : {1.0, 0x1p-1000, 0x1p900}) {
        CompareTiers(Make(rng, OracleNorm::kLayerNorm, 2, 16, offset, dy_scale, f, f));
        CompareTiers(Make(rng, OracleNorm::kRmsNorm, 2, 16, offset, dy_scale, f, kBinary64));
      }
    }
  }
}

// dx_0 on a binary32 midpoint and 2^-81 either side of it: x = (-1, -1, 1,
// 1) has mu = 0 and q = 1 (eps = 0), so r = 1 and n = x; with gamma = 1 and
// dy = (2 m, e, 0, 0), a = (2m + e)/4 and T = -(2m + e), so dx_0 = 2m - a -
// T/4 * (-1) = m - e/2 exactly.
TEST(WidePath, AgreesOnTiesAndNearTies) {
  const double mid = 1.0 + 0x1p-24;  // halfway between two binary32 neighbours
  for (const double e : {0.0, 0x1p-80, -0x1p-80}) {
    std::vector<double> x = {-1.0, -1.0, 1.0, 1.0}, dy = {2 * mid, e, 0.0, 0.0},
                        gamma = {1.0, 1.0, 1.0, 1.0};
    OracleProblem p;
    p.rows = 1;
    p.d = 4;
    p.x = x;
    p.dy = dy;
    p.gamma = gamma;
    p.eps = 0.0;
    for (const FloatFormat f : {kBinary32, kBinary64}) {
      p.out_format = f;
      p.param_format = f;
      OracleOptions tiered, exact;
      exact.fast_path = false;
      const OracleBackwardResult a = OracleBackward(p, tiered);
      ExpectSame(a.dx, OracleBackward(p, exact).dx, f, "dx");
      if (f.precision == kBinary32.precision) {  // the tie to even, else the nearer side
        EXPECT_EQ(a.dx[0].rounded, e < 0 ? 1.0 + 0x1p-23 : 1.0) << e;
      }
    }
  }
}

// Values a relative 2^-900 from a double: for binary64 the sign of the
// double-double's lo flips there, so an enclosure that misses the exact
// value by a rounding in the wrong direction (r's lower end rounded up, say)
// decides a wrong lo. RMSNorm, x = (2^349, -2^349), eps = 2^-202: q = 2^698
// (1 + 2^-900), r = 2^-349 (1 + 2^-900)^(-1/2), so y_i = gamma_i (1 +
// 2^-900)^(-1/2) x_i/|x_i| and dgamma_j = dy_j x_j/|x_j| (1 + 2^-900)^(-1/2).
TEST(WidePath, Binary64ValuesAHairFromADoubleMatchTheExactPath) {
  std::vector<double> x = {0x1p349, -0x1p349}, gamma = {0.75, -10.0}, dy = {1.0, 0.5};
  OracleProblem p = RowsOf(OracleNorm::kRmsNorm, x, 1, 0x1p-202, kBinary64);
  p.gamma = gamma;
  p.dy = dy;
  OracleOptions tiered, exact;
  exact.fast_path = false;
  const OracleForwardResult fa = OracleForward(p, tiered), fb = OracleForward(p, exact);
  ExpectSame(fa.y, fb.y, kBinary64, "y");
  EXPECT_EQ(fb.y[0].hi, 0.75);
  EXPECT_LT(fb.y[0].lo, 0.0);  // the exact value is just below 0.75
  const OracleBackwardResult ba = OracleBackward(p, tiered), bb = OracleBackward(p, exact);
  ExpectSame(ba.dx, bb.dx, kBinary64, "dx");
  ExpectSame(ba.dgamma, bb.dgamma, kBinary64, "dgamma");
  EXPECT_EQ(bb.dgamma[0].hi, 1.0);
  EXPECT_LT(bb.dgamma[0].lo, 0.0);
}

// y = beta + gamma xhat with gamma subnormal and beta normal, as fuzz_ln
// drives the binary64 kernels: t = gamma xhat lies far below beta's last
// place, so the double-double is (beta, RN(t)), whose lo only an enclosure
// to about 1,100 bits of y could resolve. The oracle decides it from an
// enclosure of t (oracle.cc, DecideBesideDouble), with the exact path's bits:
// tails of either sign, one that rounds to -0, one a few subnormal quanta
// wide, beta a power of two (half the spacing below it), and none of them on
// the exact path.
TEST(WidePath, Binary64YWithATailFarBelowBetasLastPlaceMatchesTheExactPath) {
  const std::vector<double> x = {-1.0, 1.0, 0.5, -0.25, 3.0, 0.0};
  const std::vector<double> gamma = {
      0x1p-1074, -0x1.8p-1060, 0x1p-1074, 0x1p-1074, 0x1.3b79602dc35f1p-1022, -0x1p-1070};
  const std::vector<double> beta = {0.25, 1.5, -0x1.95ae44a97fe51p+0, 1.0, -2.0, 0x1p-900};
  OracleProblem p = RowsOf(OracleNorm::kLayerNorm, x, 1, 1e-5, kBinary64);
  p.gamma = gamma;
  p.beta = beta;
  OracleOptions tiered, exact;
  tiered.recheck_every = 1;
  exact.fast_path = false;
  const OracleForwardResult a = OracleForward(p, tiered), b = OracleForward(p, exact);
  ExpectSame(a.y, b.y, kBinary64, "y");
  EXPECT_EQ(a.slow_path, 0);
  EXPECT_EQ(a.recheck_disagreements, 0);
  int negative_zero = 0;
  for (std::size_t i = 0; i < beta.size(); ++i) {
    EXPECT_TRUE(SameBits(b.y[i].hi, beta[i])) << i;
    if (b.y[i].lo == 0.0 && std::signbit(b.y[i].lo)) ++negative_zero;
  }
  EXPECT_EQ(negative_zero, 1);  // x_2 just below the mean, gamma_2 > 0
  EXPECT_NE(b.y[4].lo, 0.0);
}

// Each of the row's enclosures holds the exact value, checked in exact
// rationals: mu, q, n_i, a and b directly, r, y_i and dx_i (irrational:
// c/sqrt(q) for a rational c) by comparing squares. The rows make the
// intervals wide enough for a wrong end or direction to show: a mean that
// cancels across 2^1000 (so mu's enclosure is wide and n_1 straddles 0,
// the straddle cases of the products and squares), large offsets, negative
// eps close to -sigma^2, RMSNorm.
using Q = boost::multiprecision::mpq_rational;

Q Exact(mpfr_srcptr v) {
  if (mpfr_zero_p(v)) return Q(0);  // get_z_2exp would give 0 * 2^emin
  boost::multiprecision::mpz_int z;
  const mpfr_exp_t e = mpfr_get_z_2exp(z.backend().data(), v);
  const boost::multiprecision::mpz_int one(1);
  if (e >= 0) return Q(boost::multiprecision::mpz_int(z << static_cast<unsigned>(e)));
  return Q(z, boost::multiprecision::mpz_int(one << static_cast<unsigned>(-e)));
}

Q Exact(double v) {
  oracle_internal::WideVars t(1);
  mpfr_set_d(t[0], v, MPFR_RNDN);
  return Exact(t[0]);
}

// L <= c / sqrt(q) for q > 0, by squares.
bool AtMostRootRatio(const Q& l, const Q& c, const Q& q) {
  if (c >= 0) return l <= 0 || l * l * q <= c * c;
  return l < 0 && l * l * q >= c * c;
}
bool Encloses(const oracle_internal::WideIv& v, const Q& exact) {
  return Exact(v.lo) <= exact && exact <= Exact(v.hi);
}
bool EnclosesRootRatio(const oracle_internal::WideIv& v, const Q& c, const Q& q) {
  return AtMostRootRatio(Exact(v.lo), c, q) && AtMostRootRatio(-Exact(v.hi), -c, q);
}

TEST(WidePath, EveryEnclosureHoldsTheExactValue) {
  struct RowCase {
    std::vector<double> x, dy, gamma;
    bool layer;
    double eps;
  };
  const std::vector<RowCase> rows = {
      {{0x1p1000, 1.0, -0x1p1000}, {1.0, -2.0, 0.5}, {1.0, 3.0, -0.25}, true, 0.0},
      {{1e15 + 1, 1e15 - 3, 1e15 + 7, 1e15}, {0.1, 0.2, -0.3, 0.4}, {1, 1, 1, 1}, true, 1e-5},
      {{3.0, 5.0, 11.0}, {-1.0, 0x1p-600, 0x1p600}, {0.5, 2.0, 1.0}, true, -11.5},
      {{0x1p-1074, -3.5, 0x1p700}, {2.0, 0.0, -1.0}, {1.0, -0.0, 7.0}, false, 0x1p-30},
  };
  for (const RowCase& rc : rows) {
    const auto d = static_cast<std::int64_t>(rc.x.size());
    oracle_internal::WideRow w;
    ASSERT_TRUE(w.PrepareStats(rc.x.data(), d, rc.layer, rc.eps));
    w.PrepareGrad(rc.dy.data(), rc.gamma.data());
    Q mu = 0, sum_sq = 0, a = 0, t = 0;
    for (double v : rc.x) mu += Exact(v);
    mu = rc.layer ? mu / d : Q(0);
    std::vector<Q> n, g;
    for (std::int64_t i = 0; i < d; ++i) {
      n.push_back(Exact(rc.x[i]) - mu);
      g.push_back(Exact(rc.dy[i]) * Exact(rc.gamma[i]));
      sum_sq += n.back() * n.back();
      a += g.back();
      t += g.back() * n.back();
    }
    const Q q = sum_sq / d + Exact(rc.eps);
    ASSERT_GT(q, 0);
    a = rc.layer ? a / d : Q(0);
    const Q b = t / (d * q);
    EXPECT_TRUE(Encloses(w.Mu(), mu));
    EXPECT_TRUE(Encloses(w.Q(), q));
    EXPECT_TRUE(EnclosesRootRatio(w.R(), Q(1), q));
    EXPECT_TRUE(Encloses(w.A(), a));
    EXPECT_TRUE(Encloses(w.B(), b));
    for (std::int64_t i = 0; i < d; ++i) {
      EXPECT_TRUE(Encloses(w.N(i), n[i])) << i;
      EXPECT_TRUE(EnclosesRootRatio(w.Xhat(i), n[i], q)) << i;
      EXPECT_TRUE(EnclosesRootRatio(w.Dx(i), g[i] - a - n[i] * b, q)) << i;
      const double beta = 0.5 - static_cast<double>(i);
      const oracle_internal::WideIv y = w.Y(i, rc.gamma[i], beta);
      // y - beta = gamma n / sqrt(q); the ends minus beta are exact rationals.
      EXPECT_TRUE(AtMostRootRatio(Exact(y.lo) - Exact(beta), Exact(rc.gamma[i]) * n[i], q)) << i;
      EXPECT_TRUE(AtMostRootRatio(Exact(beta) - Exact(y.hi), -Exact(rc.gamma[i]) * n[i], q)) << i;
    }
  }
}

// Interval ends become Dyadics exactly: a point interval of a double reads
// back as that double.
TEST(WidePath, EndsReadBackExactly) {
  oracle_internal::WideVars v(2);
  for (const double x : {1.0, -3.5, 0x1p-1074, -0x1.fffffffffffffp1023, 0.0}) {
    mpfr_set_d(v[0], x, MPFR_RNDN);
    mpfr_set_d(v[1], x, MPFR_RNDN);
    oracle_internal::Dyadic lo, hi;
    ASSERT_TRUE(oracle_internal::WideEnds({v[0], v[1]}, &lo, &hi));
    EXPECT_TRUE(SameBits(oracle_internal::ToDouble(lo), x == 0.0 ? 0.0 : x)) << x;
    EXPECT_TRUE(SameBits(oracle_internal::ToDouble(hi), x == 0.0 ? 0.0 : x)) << x;
    EXPECT_EQ(oracle_internal::ToDoubleDouble(lo).second, 0.0) << x;
  }
  mpfr_set_inf(v[1], 1);
  oracle_internal::Dyadic lo, hi;
  EXPECT_FALSE(oracle_internal::WideEnds({v[0], v[1]}, &lo, &hi));
}

// SetDouble writes MPFR's limbs itself: it must give the number mpfr_set_d
// gives, sign of zero included, for every kind of double, and the number
// must then compute as MPFR's own (a sum and a product checked).
TEST(WidePath, SetDoubleIsMpfrSetD) {
  oracle_internal::WideVars v(3);
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0x1p-1074,
                            -0x1p-1074,
                            0x1p-1022,
                            0x0.fffffffffffffp-1022,
                            0x1.fffffffffffffp1023,
                            -0x1.fffffffffffffp1023,
                            3.0,
                            0.1,
                            -1e300,
                            0x1.8p-1060};
  std::mt19937_64 rng(20261203);
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = rng();
    const double x = std::bit_cast<double>(bits);
    if (std::isfinite(x)) xs.push_back(x);
  }
  // Arithmetic on it: x + 1/3 and x * 1/3 at kWideBits, as on MPFR's own.
  oracle_internal::WideVars sums(2);
  mpfr_ptr third = v[2], a = sums[0], b = sums[1];
  mpfr_set_ui(third, 1, MPFR_RNDN);
  mpfr_div_ui(third, third, 3, MPFR_RNDN);
  for (const double x : xs) {
    oracle_internal::SetDouble(v[0], x);
    mpfr_set_d(v[1], x, MPFR_RNDN);
    EXPECT_TRUE(mpfr_equal_p(v[0], v[1]) || (mpfr_zero_p(v[0]) && mpfr_zero_p(v[1]))) << x;
    EXPECT_EQ(mpfr_signbit(v[0]) != 0, std::signbit(x)) << x;
    EXPECT_TRUE(SameBits(mpfr_get_d(v[0], MPFR_RNDN), x)) << x;
    mpfr_add(a, v[0], third, MPFR_RNDD);
    mpfr_add(b, v[1], third, MPFR_RNDD);
    EXPECT_TRUE(mpfr_equal_p(a, b)) << x;
    mpfr_mul(a, v[0], third, MPFR_RNDU);
    mpfr_mul(b, v[1], third, MPFR_RNDU);
    EXPECT_TRUE(mpfr_equal_p(a, b) || (mpfr_zero_p(a) && mpfr_zero_p(b))) << x;
  }
}

}  // namespace
}  // namespace lnv

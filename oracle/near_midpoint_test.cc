// Outputs whose nearest double is exactly a midpoint of the output format
// (the overflow threshold, subnormal midpoints, midpoints below a power of
// two): the oracle must round each to the side its exact value lies on. The
// exact path's shortcut (docs/DESIGN.md §2) rounds from the nearest double
// only when that double is not such a midpoint; these cases are where it
// must not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "oracle/oracle.h"

namespace lnv {
namespace {

// Midpoints between neighbours of f, and the overflow threshold.
std::vector<double> Midpoints(FloatFormat f) {
  const int p = f.precision;
  const double half_min_sub = std::ldexp(1.0, f.emin - p);
  return {
      std::ldexp(std::ldexp(1.0, p) - 0.5, f.emax - p + 1),  // (2^p - 1/2) ulp: rounds to inf
      half_min_sub,                                          // between 0 and the least subnormal
      3 * half_min_sub,                                      // between two subnormals
      std::ldexp(1.0, f.emin) - half_min_sub,                // below the least normal
      1.0 - std::ldexp(1.0, -p - 1),                         // below a power of two
      std::ldexp(1.0, 10) - std::ldexp(1.0, 10 - p - 1),
      1.0 + std::ldexp(1.0, -p),  // above one
      -(1.5 + std::ldexp(1.0, -p)),
  };
}

TEST(OracleNearMidpoints, RoundsToTheSideOfTheExactValueNotToEven) {
  // Rows with an irrational r: xhat_i = hi_i + lo_i (+ far less) from the
  // oracle's binary64 forward with gamma = 1, beta = 0.
  const std::vector<double> x = {1, 2, 3, 4, 1, 2, 4, 8};
  const double eps = static_cast<double>(1e-5f);
  OracleProblem base;
  base.rows = 2;
  base.d = 4;
  base.x = x;
  base.eps = eps;
  base.out_format = kBinary64;
  OracleOptions exact;
  exact.fast_path = false;
  const OracleForwardResult xhat = OracleForward(base, exact);
  for (FloatFormat f : {kBinary32, kBfloat16, kBinary16}) {
    for (double m : Midpoints(f)) {
      // gamma_i = +-2^(ilogb m - ilogb hi_i), with the sign that puts
      // gamma_i hi_i in m's binade: beta_i = m - gamma_i hi_i is then exact
      // (Sterbenz), and y_i = m + gamma_i (lo_i + ...), on lo_i's side of m.
      std::vector<double> gamma(8), beta(8), want(8);
      for (int i = 0; i < 8; ++i) {
        const ExactValue& v = xhat.y[i];
        ASSERT_NE(v.lo, 0.0);
        const double sign = (m < 0) == (v.hi < 0) ? 1.0 : -1.0;
        gamma[i] = sign * std::ldexp(1.0, std::ilogb(m) - std::ilogb(v.hi));
        beta[i] = m - gamma[i] * v.hi;
        ASSERT_EQ(beta[i] + gamma[i] * v.hi, m);
        const bool up = gamma[i] * v.lo > 0;
        want[i] = RoundToFormat(std::nextafter(m, up ? HUGE_VAL : -HUGE_VAL), f);
      }
      int ups = 0;
      for (int i = 0; i < 8; ++i) ups += gamma[i] * xhat.y[i].lo > 0;
      ASSERT_GT(ups, 0);  // both sides of m are tested
      ASSERT_LT(ups, 8);
      OracleProblem p = base;
      p.gamma = gamma;
      p.beta = beta;
      p.out_format = f;
      p.param_format = f;
      for (OracleBackend backend : {OracleBackend::kBoost, OracleBackend::kMpfr}) {
        for (bool fast : {true, false}) {
          OracleOptions o;
          o.backend = backend;
          o.fast_path = fast;
          // gamma and beta are per column: one problem per row.
          for (std::int64_t row = 0; row < 2; ++row) {
            OracleProblem one = p;
            one.rows = 1;
            one.x = std::span<const double>(x).subspan(4 * row, 4);
            std::vector<double> g(gamma.begin() + 4 * row, gamma.begin() + 4 * row + 4);
            std::vector<double> b(beta.begin() + 4 * row, beta.begin() + 4 * row + 4);
            one.gamma = g;
            one.beta = b;
            const OracleForwardResult r = OracleForward(one, o);
            for (int i = 0; i < 4; ++i) {
              EXPECT_EQ(r.y[i].rounded, want[4 * row + i])
                  << "p=" << f.precision << " m=" << std::hexfloat << m << " element "
                  << 4 * row + i << (fast ? " fast" : " exact") << " backend "
                  << static_cast<int>(backend);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace lnv

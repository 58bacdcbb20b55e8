// The two backends (cpp_int + integer sqrt, GMP + MPFR) must agree bit for bit,
// on the exact path, and the fast path must agree with both: every output,
// and the row statistics the bounds read (nearest doubles, whichever path).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "oracle/oracle.h"

namespace lnv {
namespace {

// Mixed adversarial rows, each value exactly representable in `f`.
class RowMaker {
 public:
  explicit RowMaker(std::uint64_t seed) : rng_(seed) {}

  std::vector<double> Make(int d, FloatFormat f, int family) {
    std::vector<double> x(d);
    std::normal_distribution<double> normal;
    const double mean = std::ldexp(1.0, static_cast<int>(rng_() % 24));
    const int scale = static_cast<int>(rng_() % 200) - 100;
    for (int i = 0; i < d; ++i) {
      double v = 0;
      switch (family) {
        case 0:
          v = normal(rng_);
          break;  // standard normal
        case 1:
          v = mean + normal(rng_);
          break;  // large mean (kappa up to 2^23)
        case 2:
          v = std::ldexp(normal(rng_), scale);
          break;  // huge and tiny magnitudes
        case 3:
          v = 3.0 + (i % 2) * std::ldexp(1.0, -20);
          break;  // near-constant
        case 4:
          v = std::ldexp(normal(rng_), f.emin - f.precision + 3);
          break;  // subnormals
        case 5:
          v = static_cast<double>(static_cast<int>(rng_() % 9) - 4);
          break;  // small integers: exact cases
        case 6:
          v = (rng_() % 16 == 0) ? std::ldexp(normal(rng_), 30) : normal(rng_);
          break;  // outliers
        default:
          v = RandomBits(f);
          break;  // any finite value of the format
      }
      x[i] = RoundToFormat(v, f);
      if (!std::isfinite(x[i])) x[i] = 0.0;
    }
    return x;
  }

 private:
  double RandomBits(FloatFormat f) {
    const int span = f.emax - f.emin;
    const int e = f.emin + static_cast<int>(rng_() % static_cast<std::uint64_t>(span));
    double m = 1.0 + std::ldexp(static_cast<double>(rng_() >> 11), -53);
    return std::ldexp((rng_() & 1) ? -m : m, e);
  }
  std::mt19937_64 rng_;
};

bool SameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

void ExpectSame(const std::vector<ExactValue>& a, const std::vector<ExactValue>& b,
                const char* what, int d, bool compare_exact) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].status, ValueStatus::kDecided) << what << " d=" << d << " i=" << i;
    ASSERT_TRUE(SameBits(a[i].rounded, b[i].rounded))
        << what << " d=" << d << " i=" << i << std::hexfloat << " " << a[i].rounded << " vs "
        << b[i].rounded;
    if (compare_exact) {
      ASSERT_TRUE(SameBits(a[i].hi, b[i].hi)) << what << " hi, d=" << d << " i=" << i;
      ASSERT_TRUE(SameBits(a[i].lo, b[i].lo)) << what << " lo, d=" << d << " i=" << i;
    }
  }
}

// 10,000 rows in optimized builds; under the sanitizers (10-20x slower on
// big-integer code) a tenth of them, so that the asan preset stays usable.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::int64_t kRowsToCompare = 1000;
#else
constexpr std::int64_t kRowsToCompare = 10000;
#endif

TEST(OracleBackends, AgreeBitForBitOnTenThousandMixedRows) {
  const FloatFormat formats[] = {kBinary32, kBfloat16, kBinary16, kBinary64};
  RowMaker maker(0x5eed);
  std::mt19937_64 rng(42);
  std::int64_t rows_checked = 0, rechecked = 0, disagreements = 0;
  int batch = 0;
  while (rows_checked < kRowsToCompare) {
    // d log-uniform in [1, 4096]; rows so that a batch has ~2^12 elements.
    const int d = static_cast<int>(std::exp2(static_cast<double>(rng() % 1300) / 100.0));
    const int rows = std::max(1, std::min(64, 2048 / d));
    const FloatFormat f = formats[batch % 4];
    const int family = static_cast<int>(rng() % 8);
    const auto norm = (batch % 5 == 4) ? OracleNorm::kRmsNorm : OracleNorm::kLayerNorm;
    std::vector<double> x, dy, gamma = maker.Make(d, f, 0), beta = maker.Make(d, f, 0);
    for (int r = 0; r < rows; ++r) {
      auto row = maker.Make(d, f, family);
      x.insert(x.end(), row.begin(), row.end());
      auto g = maker.Make(d, f, 0);
      dy.insert(dy.end(), g.begin(), g.end());
    }
    OracleProblem p;
    p.norm = norm;
    p.rows = rows;
    p.d = d;
    p.x = x;
    p.dy = dy;
    p.gamma = gamma;
    if (batch % 3 == 0) p.beta = beta;
    p.eps = (batch % 7 == 0) ? 0.0 : static_cast<float>(1e-5);
    p.out_format = f;
    p.param_format = f;
    OracleOptions boost_exact{OracleBackend::kBoost, 1 << 14, false};
    OracleOptions mpfr_exact{OracleBackend::kMpfr, 1 << 14, false};
    OracleOptions boost_fast{OracleBackend::kBoost, 1 << 14, true};
    boost_fast.recheck_every = 5;  // and every fifth fast decision again, on the exact path
    auto a = OracleForward(p, boost_exact);
    auto b = OracleForward(p, mpfr_exact);
    auto c = OracleForward(p, boost_fast);
    rechecked += c.rechecked;
    disagreements += c.recheck_disagreements;
    ExpectSame(a.y, b.y, "y", d, true);
    ExpectSame(a.rstd, b.rstd, "rstd", d, true);
    ExpectSame(a.mean, b.mean, "mean", d, true);
    ExpectSame(a.y, c.y, "y fast", d, false);
    ExpectSame(a.rstd, c.rstd, "rstd fast", d, false);
    ExpectSame(a.mean, c.mean, "mean fast", d, false);
    for (std::size_t r = 0; r < a.stats.size(); ++r) {  // the bounds' inputs: nearest doubles
      ASSERT_TRUE(SameBits(a.stats[r].mean, c.stats[r].mean)) << "stats mean d=" << d;
      ASSERT_TRUE(SameBits(a.stats[r].var, c.stats[r].var)) << "stats var d=" << d;
      ASSERT_TRUE(SameBits(a.stats[r].mean_abs, c.stats[r].mean_abs)) << "stats mean_abs d=" << d;
    }
    if (batch % 4 == 0) {  // the backward is costlier: every fourth batch
      auto ga = OracleBackward(p, boost_exact);
      auto gb = OracleBackward(p, mpfr_exact);
      auto gc = OracleBackward(p, boost_fast);
      rechecked += gc.rechecked;
      disagreements += gc.recheck_disagreements;
      ExpectSame(ga.dx, gb.dx, "dx", d, true);
      ExpectSame(ga.dgamma, gb.dgamma, "dgamma", d, true);
      ExpectSame(ga.dbeta, gb.dbeta, "dbeta", d, true);
      ExpectSame(ga.dx, gc.dx, "dx fast", d, false);
      ExpectSame(ga.dgamma, gc.dgamma, "dgamma fast", d, false);
      ExpectSame(ga.dbeta, gc.dbeta, "dbeta fast", d, false);
    }
    if (HasFatalFailure()) return;
    rows_checked += rows;
    ++batch;
  }
  RecordProperty("rows", static_cast<int>(rows_checked));
  EXPECT_GE(rows_checked, kRowsToCompare);
  std::printf(
      "[ oracle   ] %lld fast decisions re-decided on the exact path, %lld disagreement(s)\n",
      static_cast<long long>(rechecked), static_cast<long long>(disagreements));
  EXPECT_GT(rechecked, 0);
  EXPECT_EQ(disagreements, 0);
}

}  // namespace
}  // namespace lnv

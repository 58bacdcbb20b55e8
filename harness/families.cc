#include "harness/families.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "harness/formats.h"
#include "oracle/oracle.h"

namespace lnv {
namespace {

std::uint64_t SplitMix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Draws in double, stores rounded once into the case's formats.
class Gen {
 public:
  Gen(const FamilyParams& p, std::string_view family)
      : p_(p),
        rng_(FamilySeed(p.seed, family)),
        xf_(FormatOf(p.dtype)),
        pf_(FormatOf(p.param_dtype)) {}

  double Normal() { return normal_(rng_); }
  double Uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }
  std::int64_t Int(std::int64_t a, std::int64_t b) {  // [a, b]
    return std::uniform_int_distribution<std::int64_t>(a, b)(rng_);
  }
  double Sign() { return Int(0, 1) ? 1.0 : -1.0; }
  double StudentT(double dof) { return std::student_t_distribution<double>(dof)(rng_); }

  // Round into the format; a finite value beyond its range saturates (the
  // families want large finite values, not accidental infinities).
  static double Fit(double v, FloatFormat f) {
    const double r = RoundToFormat(v, f);
    if (std::isinf(r) && std::isfinite(v)) return std::copysign(MaxFinite(f), v);
    return r;
  }
  double X(double v) const { return Fit(v, xf_); }
  double P(double v) const { return Fit(v, pf_); }
  FloatFormat xf() const { return xf_; }
  FloatFormat pf() const { return pf_; }
  const FamilyParams& params() const { return p_; }

  // A case of the given shape with empty value arrays.
  Case Start(std::int64_t d, std::int64_t rows) const {
    Case c;
    c.norm = p_.norm;
    c.dtype = p_.dtype;
    c.param_dtype = p_.param_dtype;
    c.d = d;
    c.rows = rows;
    c.eps = p_.eps;
    c.x.reserve(static_cast<std::size_t>(d * rows));
    return c;
  }

  // Default gamma ~ 1 + N/4, beta ~ N/2, dy ~ N, for whatever the family
  // did not set itself (drawn after x, in this order: deterministic).
  void Finish(Case* c) {
    if (p_.affine && c->gamma.empty()) {
      for (std::int64_t j = 0; j < c->d; ++j) c->gamma.push_back(P(1 + 0.25 * Normal()));
    }
    if (p_.affine && c->beta.empty() && c->norm == Norm::kLayerNorm) {
      for (std::int64_t j = 0; j < c->d; ++j) c->beta.push_back(P(0.5 * Normal()));
    }
    if (!p_.affine) {
      c->gamma.clear();
      c->beta.clear();
    }
    if (c->norm == Norm::kRmsNorm) c->beta.clear();
    if (p_.with_dy) {
      c->dy.clear();
      for (std::int64_t i = 0; i < c->rows * c->d; ++i) c->dy.push_back(X(Normal()));
    }
  }

 private:
  FamilyParams p_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  FloatFormat xf_, pf_;
};

// Row fractions 0 .. 1 for sweeps over rows.
double Sweep(std::int64_t r, std::int64_t rows) {
  return rows > 1 ? static_cast<double>(r) / static_cast<double>(rows - 1) : 0.5;
}

Case StandardNormal(const FamilyParams& p) {
  Gen g(p, "standard_normal");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t i = 0; i < p.rows * p.d; ++i) c.x.push_back(g.X(g.Normal()));
  g.Finish(&c);
  return c;
}

// kappa = sqrt(1 + mu^2/s2) swept 1 .. 1e7 over the rows (docs/DESIGN.md §1): where
// the one-pass variance cancels and the stable algorithms lose k kappa u.
// Narrow dtypes cannot hold a spread far below ulp(mu): their rows collapse
// to (near-)constant ones, which is part of the family.
Case LargeMean(const FamilyParams& p) {
  Gen g(p, "large_mean");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double kappa = std::pow(10.0, 7 * Sweep(r, p.rows));
    const double mag = std::exp2(g.Uniform(-3, 6));
    const double mu = kappa > 1 ? g.Sign() * mag : 0.0;
    const double sigma = kappa > 1 ? mag / std::sqrt(kappa * kappa - 1) : mag;
    for (std::int64_t i = 0; i < p.d; ++i) c.x.push_back(g.X(mu + sigma * g.Normal()));
  }
  g.Finish(&c);
  return c;
}

// Row scales 2^e from emax/2 - 4 to emax - 3: the upper rows' sum of squares
// overflows the format (fp32: e >= 64; fp16: e >= 8), outside the scalar
// kernels' claimed range (then only the NaN contract is judged) but inside
// the full-range kernels'.
Case HugeMagnitude(const FamilyParams& p) {
  Gen g(p, "huge_magnitude");
  Case c = g.Start(p.d, p.rows);
  const double e_lo = g.xf().emax / 2 - 4, e_hi = g.xf().emax - 3;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double scale = std::exp2(std::round(e_lo + (e_hi - e_lo) * Sweep(r, p.rows)));
    const double shift = g.Uniform(-1, 1);
    for (std::int64_t i = 0; i < p.d; ++i) c.x.push_back(g.X(scale * (shift + g.Normal())));
  }
  g.Finish(&c);
  return c;
}

// Row scales from a few subnormal ulps (fp32: 2^-146) up to just above the
// normal range: subnormal inputs, underflowing squares, subnormal outputs.
Case TinyMagnitude(const FamilyParams& p) {
  Gen g(p, "tiny_magnitude");
  Case c = g.Start(p.d, p.rows);
  const double e_lo = g.xf().emin - g.xf().precision + 4, e_hi = g.xf().emin + 2;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double scale = std::exp2(std::round(e_lo + (e_hi - e_lo) * Sweep(r, p.rows)));
    for (std::int64_t i = 0; i < p.d; ++i) c.x.push_back(g.X(scale * g.Normal()));
  }
  g.Finish(&c);
  return c;
}

// sigma^2 = 0: xhat = 0 exactly, y = beta; any error in the mean is divided
// by sqrt(eps) only.
Case ConstantRows(const FamilyParams& p) {
  Gen g(p, "constant_rows");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double v = r == 0 ? 0.0 : r == 1 ? 1.0 : g.X(g.Sign() * std::exp2(g.Uniform(-10, 10)));
    for (std::int64_t i = 0; i < p.d; ++i) c.x.push_back(v);
  }
  g.Finish(&c);
  return c;
}

// c + {-1, 0, 1} ulp(c), with c placed so ulp(c) ~ sqrt(eps)/128: sigma^2 is
// ~1e-4 eps, so eps dominates q and the row is nearly constant.
Case NearConstant(const FamilyParams& p) {
  Gen g(p, "near_constant");
  Case c = g.Start(p.d, p.rows);
  const FloatFormat f = g.xf();
  const double target = p.eps > 0 ? std::sqrt(p.eps) / 128 : std::exp2(-20);
  const int e_c = std::clamp(static_cast<int>(std::floor(std::log2(target))) + f.precision - 1,
                             f.emin, f.emax - 1);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double base = g.X(g.Sign() * std::ldexp(g.Uniform(1, 1.9), e_c));
    const double ulp = FormatUlp(base, f);
    for (std::int64_t i = 0; i < p.d; ++i) {
      c.x.push_back(g.X(base + static_cast<double>(g.Int(-1, 1)) * ulp));
    }
  }
  g.Finish(&c);
  return c;
}

// Cauchy and Student-t(3) rows, one 1e4-sized outlier each: a few elements
// carry most of the variance.
Case HeavyTails(const FamilyParams& p) {
  Gen g(p, "heavy_tails");
  Case c = g.Start(p.d, p.rows);
  const double clamp = std::exp2(g.xf().emax - 4);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const bool cauchy = r % 2 == 0;
    const std::int64_t outlier = g.Int(0, p.d - 1);
    for (std::int64_t i = 0; i < p.d; ++i) {
      double v = cauchy ? g.Normal() / g.Normal() : g.StudentT(3);
      if (i == outlier) v = g.Sign() * 1e4 * (1 + std::fabs(g.Normal()));
      c.x.push_back(g.X(std::clamp(v, -clamp, clamp)));
    }
  }
  g.Finish(&c);
  return c;
}

// d = 1: mu = x, sigma^2 = 0, xhat = 0; y = beta exactly.
Case DOne(const FamilyParams& p) {
  Gen g(p, "d_one");
  Case c = g.Start(1, p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) c.x.push_back(g.X(10 * g.Normal()));
  g.Finish(&c);
  return c;
}

// Odd d (p.d rounded up to odd): no power-of-two scaling, odd tails.
Case OddD(const FamilyParams& p) {
  Gen g(p, "odd_d");
  const std::int64_t d = p.d | 1;
  Case c = g.Start(d, p.rows);
  for (std::int64_t i = 0; i < p.rows * d; ++i) c.x.push_back(g.X(1 + g.Normal()));
  g.Finish(&c);
  return c;
}

// d = 16m + 6: not a multiple of 8 or 16 (vector tails), and a partial last
// chunk for the tree reductions.
Case RaggedD(const FamilyParams& p) {
  Gen g(p, "ragged_d");
  const std::int64_t d = 16 * std::max<std::int64_t>(1, p.d / 16) + 6;
  Case c = g.Start(d, p.rows);
  for (std::int64_t i = 0; i < p.rows * d; ++i) c.x.push_back(g.X(3 + g.Normal()));
  g.Finish(&c);
  return c;
}

// d = p.large_d (2^16 + 17 by default): long rounding chains, many tree levels.
Case LargeD(const FamilyParams& p) {
  Gen g(p, "large_d");
  const std::int64_t d = p.large_d;
  const std::int64_t rows = std::min<std::int64_t>(p.rows, 2);
  Case c = g.Start(d, rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    const double mu = g.Uniform(-2, 2);
    for (std::int64_t i = 0; i < d; ++i) c.x.push_back(g.X(mu + g.Normal()));
  }
  g.Finish(&c);
  return c;
}

// rows = p.many_rows (2^16 by default), small d: long dgamma/dbeta sums over
// rows, and row independence at scale.
Case ManyRows(const FamilyParams& p) {
  Gen g(p, "many_rows");
  const std::int64_t d = std::max<std::int64_t>(1, p.d / 16);
  Case c = g.Start(d, p.many_rows);
  for (std::int64_t i = 0; i < p.many_rows * d; ++i) c.x.push_back(g.X(g.Normal()));
  g.Finish(&c);
  return c;
}

// gamma of +0, -0, the smallest subnormal, tiny normals and 1e-3-sized values:
// y ~ beta, products that underflow.
Case GammaNearZero(const FamilyParams& p) {
  Gen g(p, "gamma_near_zero");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t i = 0; i < p.rows * p.d; ++i) c.x.push_back(g.X(g.Normal()));
  const FloatFormat f = g.pf();
  for (std::int64_t j = 0; j < p.d; ++j) {
    double v = 0;
    switch (j % 5) {
      case 0:
        v = 0.0;
        break;
      case 1:
        v = -0.0;
        break;
      case 2:
        v = g.Sign() * std::ldexp(1.0, f.emin - f.precision + 1);
        break;
      case 3:
        v = g.Sign() * std::ldexp(g.Uniform(1, 2), f.emin);
        break;
      default:
        v = 1e-3 * g.Normal();
        break;
    }
    c.gamma.push_back(g.P(v));
  }
  g.Finish(&c);
  return c;
}

// beta_j = -gamma_j xhat_j of row 0 (rows r > 0 are scaled and shifted copies,
// so nearly the same xhat): y is a cancellation residue, near 0, where a
// relative error means nothing and the absolute bound must hold. RMSNorm has
// no beta: gamma alternates in sign there instead.
Case BetaCancels(const FamilyParams& p) {
  Gen g(p, "beta_cancels");
  Case c = g.Start(p.d, p.rows);
  std::vector<double> x0;
  for (std::int64_t i = 0; i < p.d; ++i) x0.push_back(g.X(g.Normal()));
  for (std::int64_t r = 0; r < p.rows; ++r) {
    for (std::int64_t i = 0; i < p.d; ++i) {
      c.x.push_back(r == 0 ? x0[i]
                           : g.X(x0[i] * (1 + std::ldexp(static_cast<double>(r), -6)) +
                                 static_cast<double>(r)));
    }
  }
  for (std::int64_t j = 0; j < p.d; ++j) {
    const double gj = g.P(1 + 0.25 * g.Normal());
    c.gamma.push_back(c.norm == Norm::kRmsNorm && j % 2 ? -gj : gj);
  }
  if (c.norm == Norm::kLayerNorm && p.affine) {
    double mu = 0, s2 = 0;
    for (double v : x0) mu += v;
    mu /= static_cast<double>(p.d);
    for (double v : x0) s2 += (v - mu) * (v - mu);
    const double r = 1 / std::sqrt(s2 / static_cast<double>(p.d) + p.eps);
    for (std::int64_t j = 0; j < p.d; ++j) c.beta.push_back(g.P(-c.gamma[j] * (x0[j] - mu) * r));
  }
  g.Finish(&c);
  return c;
}

// Rows with NaN, +inf, -inf and +-inf together, between finite rows: every
// output of a special row is NaN (oracle.h), and other rows are unaffected.
Case NanInfRows(const FamilyParams& p) {
  Gen g(p, "nan_inf_rows");
  Case c = g.Start(p.d, p.rows);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::int64_t r = 0; r < p.rows; ++r) {
    std::vector<double> row;
    for (std::int64_t i = 0; i < p.d; ++i) row.push_back(g.X(g.Normal()));
    const std::int64_t at = g.Int(0, p.d - 1);
    switch (r % 5) {
      case 1:
        row[at] = std::numeric_limits<double>::quiet_NaN();
        break;
      case 2:
        row[at] = inf;
        break;
      case 3:
        row[at] = -inf;
        break;
      case 4:
        row[at] = inf;
        row[(at + 1) % p.d] = p.d > 1 ? -inf : inf;
        break;
      default:
        break;  // a finite row
    }
    c.x.insert(c.x.end(), row.begin(), row.end());
  }
  g.Finish(&c);
  return c;
}

// A ramp, x_i = i/d plus noise of 1/64: every stretch of the row has its own
// mean, so statistics that skip a tail (past a power of two, past a 16-bit
// count) or count a chunk twice move in proportion to the share they miss.
// On iid rows a dropped or repeated block moves them by sampling noise only,
// which at large d hides below the bound.
Case Ramp(const FamilyParams& p) {
  Gen g(p, "ramp");
  Case c = g.Start(p.d, p.rows);
  const double step = 1.0 / static_cast<double>(p.d);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    for (std::int64_t i = 0; i < p.d; ++i) {
      c.x.push_back(g.X(static_cast<double>(i) * step + g.Normal() / 64));
    }
  }
  g.Finish(&c);
  return c;
}

// Sorted rows, ascending on even rows and descending on odd ones: the
// largest (or smallest) values sit together at the ends, where dropped tails
// and repeated chunks are.
Case SortedRows(const FamilyParams& p) {
  Gen g(p, "sorted_rows");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double mu = g.Uniform(-1, 1);
    std::vector<double> row;
    for (std::int64_t i = 0; i < p.d; ++i) row.push_back(g.X(mu + g.Normal()));
    if (r % 2 == 0) {
      std::sort(row.begin(), row.end());
    } else {
      std::sort(row.begin(), row.end(), std::greater<>());
    }
    c.x.insert(c.x.end(), row.begin(), row.end());
  }
  g.Finish(&c);
  return c;
}

// Standard rows with one outlier of 16 sqrt(d) .. 32 sqrt(d): it carries
// over 99% of the variance at every d, so a kernel that skips it or counts
// it twice is off by a factor, not by 1/d. Rows put it first, last and at a
// random position in turn (r mod 3), where skipped tails, repeated first
// chunks and misplaced vector tails are.
Case OneOutlier(const FamilyParams& p) {
  Gen g(p, "one_outlier");
  Case c = g.Start(p.d, p.rows);
  const double size = 16 * std::sqrt(static_cast<double>(p.d));
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t at = r % 3 == 0 ? 0 : r % 3 == 1 ? p.d - 1 : g.Int(0, p.d - 1);
    for (std::int64_t i = 0; i < p.d; ++i) {
      const double v = i == at ? g.Sign() * size * g.Uniform(1, 2) : g.Normal();
      c.x.push_back(g.X(v));
    }
  }
  g.Finish(&c);
  return c;
}

// The first floor(d/2) elements around one mean, the rest around another,
// 1 to 3 apart with noise 1/4: statistics over either half alone, or with
// one half's chunk counted twice, miss the gap.
Case TwoHalves(const FamilyParams& p) {
  Gen g(p, "two_halves");
  Case c = g.Start(p.d, p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double first = g.Uniform(-2, 2);
    const double second = first + g.Sign() * g.Uniform(1, 3);
    for (std::int64_t i = 0; i < p.d; ++i) {
      c.x.push_back(g.X((i < p.d / 2 ? first : second) + g.Normal() / 4));
    }
  }
  g.Finish(&c);
  return c;
}

// Rows that differ in mean and scale, as activations do from token to
// token: scale 2^e with e in [-6, 6] never the previous row's, mean within
// one scale of 0, so neighbours' spread (and root mean square) differ by a
// factor 2 (sqrt 2) or more. A kernel that hands one row's statistics to
// another (a two-rows-at-a-time loop with an odd last row) is off by that
// factor; on iid rows, by sampling noise only.
Case RowsDiffer(const FamilyParams& p) {
  Gen g(p, "rows_differ");
  Case c = g.Start(p.d, p.rows);
  std::int64_t previous = 0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    // Uniform over [-6, 6] without the previous row's exponent.
    std::int64_t e = r == 0 ? g.Int(-6, 6) : g.Int(-6, 5);
    if (r > 0 && e >= previous) ++e;
    previous = e;
    const double scale = std::exp2(static_cast<double>(e));
    const double mu = scale * g.Uniform(-1, 1);
    for (std::int64_t i = 0; i < p.d; ++i) c.x.push_back(g.X(mu + scale * g.Normal()));
  }
  g.Finish(&c);
  return c;
}

}  // namespace

std::uint64_t FamilySeed(std::uint64_t seed, std::string_view family) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the name
  for (char ch : family) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  return SplitMix64(seed ^ SplitMix64(h));
}

namespace {

using Shapes = std::vector<FamilyShape>;

// The shape tables below are constant-initialized arrays (no static
// initialization order to depend on); S() makes a family's list of one.
template <std::size_t N>
Shapes S(const FamilyShape (&shapes)[N]) {
  return Shapes(shapes, shapes + N);
}

// The shapes most families run at. Quick: d = 64 only, 8 rows; full: short,
// medium, long and very long rows.
constexpr FamilyShape kQuick[] = {{64, 8}};
constexpr FamilyShape kFull[] = {{7, 16}, {64, 32}, {768, 8}, {4096, 4}};
// The magnitude families sweep the row scale over their rows: more rows, more
// points on the magnitude chart.
constexpr FamilyShape kMagnitudeQuick[] = {{64, 16}};
constexpr FamilyShape kMagnitudeFull[] = {{7, 16}, {64, 32}, {768, 32}, {4096, 4}};

// The families where values matter most also run short and long rows in the
// quick budget, each at its own seed offset; rows64 rows at d = 64 (more
// where the family sweeps a chart's axis over its rows).
Shapes ValueQuick(std::int64_t rows64, std::int64_t rows7, unsigned roles) {
  return {{64, rows64, 0, 0, 0, true, roles},
          {7, rows7, 1, 0, 0, true, roles},
          {768, 4, 2, 0, 0, true, roles}};
}
Shapes WithRoles(Shapes shapes, unsigned roles) {
  for (FamilyShape& s : shapes) s.roles |= roles;
  return shapes;
}

// The d sweep of the report's bound-use-vs-d chart, on standard normal rows:
// from d = 1 to 2^16, with enough rows for a spread at small d and at most
// `cap` elements per case otherwise. Its d = 64 case also marks unit
// magnitude on the magnitude chart. The quick budget's d = 7 and 768 are the
// value families' short and long rows.
Shapes DSweep(bool quick) {
  const std::int64_t max_rows = quick ? 8 : 16, cap = quick ? 8192 : 65536;
  const auto at = [&](std::int64_t d, std::uint64_t seed_offset, std::int64_t rows) {
    const unsigned roles = d == 64 ? kRoleDSweep | kRoleMagnitude : kRoleDSweep;
    return FamilyShape{d, rows, seed_offset, 0, 0, true, roles};
  };
  const auto rows_at = [&](std::int64_t d) {
    return std::clamp<std::int64_t>(cap / d, 1, max_rows);
  };
  if (quick) {
    return {at(64, 0, 8),
            at(7, 1, 8),
            at(768, 2, 8),
            at(1, 0, 8),
            at(4096, 0, rows_at(4096)),
            at(65536, 0, rows_at(65536))};
  }
  Shapes s = {at(7, 0, 16), at(64, 0, 32), at(768, 0, 16), at(4096, 0, 16)};
  for (std::int64_t d : {1, 2, 3, 16, 31, 127, 256, 1024, 8191, 16384, 65536}) {
    s.push_back(at(d, 0, rows_at(d)));
  }
  return s;
}

// The families built to expose dropped, repeated and mixed-up elements run
// where each bug shows. A dropped tail or a repeated chunk shows on a ramp,
// sorted rows or halves in proportion to its share of the row, so the long
// ramps drop a sizeable tail past a power of two (3 * 2^15 + 1 past 2^16,
// 2^17 + 2^14 + 3 past 2^17, and more than half past a 16-bit count). The
// quick budget's one long ramp is a single row, forward only: it adds about
// 3 s over every kernel group, and its exact backward would add as much
// again.
constexpr FamilyShape kRampQuick[] = {{7, 5}, {64, 8}, {131072 + 16384 + 3, 1, 0, 0, 0, false}};
constexpr FamilyShape kRampFull[] = {{7, 16},   {64, 32},       {768, 8},
                                     {4096, 4}, {98304 + 1, 2}, {131072 + 16384 + 3, 2}};
// One outlier shows at any d, so one_outlier runs past the first 256-element
// chunk and past 2^16 (quick too: its outlier first in one row and last in
// the other, so that a kernel that drops the tail of rows longer than
// 2^16 - 1 is caught by every quick run; forward only there, as the long
// ramp: the exact backward of two such rows costs about 2 s per kernel
// group) and, in the full budget, past 2^17 with the backward.
constexpr FamilyShape kOutlierQuick[] = {
    {7, 3}, {64, 6}, {4099, 3}, {65536 + 17, 2, 0, 0, 0, false}};
constexpr FamilyShape kOutlierFull[] = {{7, 15},   {64, 30},        {768, 6},
                                        {4099, 3}, {65536 + 17, 2}, {131072 + 3, 2}};
// A row given its neighbour's statistics shows only in an odd batch, so
// rows_differ runs odd and even row counts.
constexpr FamilyShape kRowsDifferQuick[] = {{7, 5}, {64, 7}, {64, 8}, {768, 3}};
constexpr FamilyShape kRowsDifferFull[] = {{7, 15},  {7, 16},  {64, 31},  {64, 32},
                                           {768, 7}, {768, 8}, {4096, 3}, {4096, 4}};
constexpr FamilyShape kHalvesQuick[] = {{64, 8}, {768, 4}};

// large_d: d = 4099 in the quick budget, past 2^16 in the full one.
constexpr FamilyShape kLargeDQuick[] = {{64, 8, 0, 4099}};
constexpr FamilyShape kLargeDFull[] = {{64, 2, 0, 65536 + 17}};
// many_rows: the oracle's exact dgamma sums group rows pairwise by equal q,
// so their cost grows with rows^2 (2048 rows: 0.75 s per dtype group, 4096:
// about 1 s, 65536: minutes). The full budget runs 2^16 rows forward only
// and 4096 with the backward.
constexpr FamilyShape kManyRowsQuick[] = {{64, 8, 0, 0, 2048}};
constexpr FamilyShape kManyRowsFull[] = {{64, 1, 0, 0, 65536, false}, {64, 1, 2, 0, 4096}};

}  // namespace

const std::vector<Family>& AllFamilies() {
  // name, why, generator, random data, typical model, quick shapes, full shapes.
  static const std::vector<Family> families = {
      {"standard_normal", "the typical input: every kernel must be within its bound here",
       StandardNormal, true, true, DSweep(true), DSweep(false)},
      {"large_mean",
       "kappa = sqrt(1 + mu^2/s2) up to 1e7: one-pass cancellation, k kappa u losses",
       LargeMean,
       false,
       false,
       ValueQuick(24, 16, kRoleKappa),
       {{7, 32, 0, 0, 0, true, kRoleKappa},
        {64, 64, 0, 0, 0, true, kRoleKappa},
        {768, 48, 0, 0, 0, true, kRoleKappa},
        {4096, 16, 0, 0, 0, true, kRoleKappa}}},
      {"huge_magnitude", "values up to 2^(emax-3): sums of squares that overflow", HugeMagnitude,
       false, false, WithRoles(S(kMagnitudeQuick), kRoleMagnitude),
       WithRoles(S(kMagnitudeFull), kRoleMagnitude)},
      {"tiny_magnitude", "subnormal inputs and outputs, underflowing squares", TinyMagnitude, false,
       false, ValueQuick(16, 8, kRoleMagnitude), WithRoles(S(kMagnitudeFull), kRoleMagnitude)},
      {"constant_rows", "sigma^2 = 0: xhat = 0, y = beta exactly", ConstantRows, false, false,
       S(kQuick), S(kFull)},
      {"near_constant", "sigma^2 << eps: eps dominates the variance", NearConstant, false, false,
       ValueQuick(8, 8, kRoleNone), S(kFull)},
      {"heavy_tails", "Cauchy/Student-t rows with outliers", HeavyTails, true, false,
       ValueQuick(8, 8, kRoleNone), S(kFull)},
      {"d_one",
       "d = 1: a single element is its own mean",
       DOne,
       false,
       false,
       S(kQuick),
       {{1, 64}}},
      {"odd_d", "odd d: no power-of-two scaling", OddD, false, false, S(kQuick), S(kFull)},
      {"ragged_d", "d not a multiple of 8 or 16: vector tails, partial chunks", RaggedD, false,
       false, S(kQuick), S(kFull)},
      {"large_d", "d >= 2^16: long rounding chains", LargeD, true, true, S(kLargeDQuick),
       S(kLargeDFull)},
      {"many_rows", "rows >= 2^16: long dgamma/dbeta sums", ManyRows, true, true, S(kManyRowsQuick),
       S(kManyRowsFull)},
      {"gamma_near_zero", "gamma of zeros and subnormals: underflowing products", GammaNearZero,
       false, false, S(kQuick), S(kFull)},
      {"beta_cancels", "beta = -gamma xhat: y is a cancellation residue", BetaCancels, false, false,
       S(kQuick), S(kFull)},
      {"nan_inf_rows",
       "NaN/inf rows: the NaN contract, row independence",
       NanInfRows,
       false,
       false,
       {{64, 10}},
       S(kFull)},
      {"ramp", "x_i = i/d + noise: statistics that drop a tail or repeat a chunk move", Ramp, false,
       false, S(kRampQuick), S(kRampFull)},
      {"sorted_rows", "sorted rows: the extremes sit together at the ends", SortedRows, false,
       false, S(kHalvesQuick), S(kFull)},
      {"one_outlier", "one outlier first, last or anywhere: missing or repeating it shows",
       OneOutlier, false, false, S(kOutlierQuick), S(kOutlierFull)},
      {"two_halves", "halves with different means: one half alone misses the gap", TwoHalves, true,
       true, S(kHalvesQuick), S(kFull)},
      {"rows_differ", "rows differing in mean and scale: one row's statistics on another show",
       RowsDiffer, true, true, S(kRowsDifferQuick), S(kRowsDifferFull)},
  };
  return families;
}

const Family* FindFamily(std::string_view name) {
  for (const Family& f : AllFamilies()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool IsRandomDataFamily(std::string_view name) {
  const Family* f = FindFamily(name);
  return f != nullptr && f->random_data;
}

bool HoldsTheTypicalModel(std::string_view name) {
  const Family* f = FindFamily(name);
  return f != nullptr && f->typical_model;
}

Case GenerateCase(const Family& family, const FamilyParams& p) {
  Case c = family.generate(p);
  c.provenance.family = std::string(family.name);
  c.provenance.seed = p.seed;
  c.provenance.why = std::string(family.why);
  return c;
}

}  // namespace lnv

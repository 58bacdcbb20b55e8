// Self-contained sanity checks of the scalar reference kernels, run over every
// "*/cpu-scalar" registry entry. The judge against the exact oracle lives in
// harness/; these tests only need a long double reference and hand-worked
// rows, and every tolerance is written in units of the formats involved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "impls/api.h"
#include "impls/dtype.h"
#include "impls/registry.h"

namespace lnv {
namespace {

using Real = long double;  // reference arithmetic: well below every kernel's error

int Precision(DType t) {
  switch (t) {
    case DType::kF32:
      return 24;
    case DType::kF64:
      return 53;
    case DType::kF16:
      return 11;
    case DType::kBF16:
      return 8;
  }
  return 0;
}

int MinExponent(DType t) {
  switch (t) {
    case DType::kF32:
      return -126;
    case DType::kF64:
      return -1022;
    case DType::kF16:
      return -14;
    case DType::kBF16:
      return -126;
  }
  return 0;
}

// Unit roundoff 2^-p of a format.
double UnitRoundoff(DType t) { return std::ldexp(1.0, -Precision(t)); }

// Spacing of the format at v, with the subnormal floor.
double Ulp(double v, DType t) {
  const int e =
      (v == 0 || !std::isfinite(v)) ? MinExponent(t) : std::max(std::ilogb(v), MinExponent(t));
  return std::ldexp(1.0, e - Precision(t) + 1);
}

// A typed buffer in one of the ABI's dtypes.
class Buffer {
 public:
  Buffer() = default;
  Buffer(DType t, std::size_t n) : dtype_(t), n_(n), bytes_(n * SizeOf(t)) {}
  // Rounds each value into `t` (inputs are chosen representable, or are
  // test data whose rounded value is what the test then reads back).
  static Buffer Of(DType t, const std::vector<double>& values) {
    Buffer b(t, values.size());
    for (std::size_t i = 0; i < values.size(); ++i) b.Set(i, values[i]);
    return b;
  }
  void Set(std::size_t i, double v) {
    if (dtype_ == DType::kF64) {
      StoreExact(data(), dtype_, i, v);
    } else {
      StoreFromFloat(data(), dtype_, i, static_cast<float>(v));
    }
  }
  double operator[](std::size_t i) const { return LoadAsDouble(data(), dtype_, i); }
  std::size_t size() const { return n_; }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  bool BitwiseEqual(const Buffer& o) const { return bytes_ == o.bytes_; }

 private:
  DType dtype_ = DType::kF32;
  std::size_t n_ = 0;
  std::vector<unsigned char> bytes_;
};

// One problem in a kernel's dtype: inputs already rounded to it.
struct Problem {
  std::int64_t rows = 1;
  std::int64_t d = 1;
  Buffer x, dy;
  std::optional<Buffer> gamma, beta;
  float eps = 0.0f;
  double X(std::int64_t r, std::int64_t i) const { return x[r * d + i]; }
  double Gamma(std::int64_t i) const { return gamma ? (*gamma)[i] : 1.0; }
  double Beta(std::int64_t i) const { return beta ? (*beta)[i] : 0.0; }
  double Dy(std::int64_t r, std::int64_t i) const { return dy[r * d + i]; }
};

struct ForwardOut {
  int rc = -1;
  Buffer y;
  std::vector<float> mean, rstd;
};

struct BackwardOut {
  int rc = -1;
  Buffer dx, dgamma, dbeta;
};

bool IsLayerNorm(const ImplInfo& info) { return info.norm == Norm::kLayerNorm; }

ForwardOut RunForward(const ImplInfo& info, const Problem& p) {
  ForwardOut out;
  out.y = Buffer(info.x_dtype, p.rows * p.d);
  out.mean.assign(p.rows, 0.0f);
  out.rstd.assign(p.rows, 0.0f);
  ForwardArgs a{};
  a.rows = p.rows;
  a.d = p.d;
  a.x = p.x.data();
  a.gamma = p.gamma ? p.gamma->data() : nullptr;
  a.beta = p.beta ? p.beta->data() : nullptr;
  a.eps = p.eps;
  a.y = out.y.data();
  a.mean = IsLayerNorm(info) ? out.mean.data() : nullptr;
  a.rstd = out.rstd.data();
  out.rc = info.forward(&a);
  return out;
}

BackwardOut RunBackward(const ImplInfo& info, const Problem& p, const ForwardOut& f) {
  BackwardOut out;
  out.dx = Buffer(info.x_dtype, p.rows * p.d);
  out.dgamma = Buffer(info.param_dtype, p.d);
  out.dbeta = Buffer(info.param_dtype, p.d);
  BackwardArgs a{};
  a.rows = p.rows;
  a.d = p.d;
  a.x = p.x.data();
  a.gamma = p.gamma ? p.gamma->data() : nullptr;
  a.dy = p.dy.data();
  a.mean = IsLayerNorm(info) ? f.mean.data() : nullptr;
  a.rstd = f.rstd.data();
  a.eps = p.eps;
  a.dx = out.dx.data();
  a.dgamma = out.dgamma.data();
  a.dbeta = IsLayerNorm(info) ? out.dbeta.data() : nullptr;
  out.rc = info.backward(&a);
  return out;
}

// The exact math of docs/DESIGN.md section 1, in long double, for one row.
struct RowReference {
  Real mean = 0, var = 0, rstd = 0;
  std::vector<Real> xhat, y, g, dx;
  Real mean_abs_g = 0, mean_abs_gxhat = 0;
};

RowReference Reference(const ImplInfo& info, const Problem& p, std::int64_t r) {
  RowReference ref;
  const std::int64_t d = p.d;
  const bool layer = IsLayerNorm(info);
  Real sum = 0;
  for (std::int64_t i = 0; i < d; ++i) sum += p.X(r, i);
  ref.mean = layer ? sum / d : 0;
  Real m2 = 0;
  for (std::int64_t i = 0; i < d; ++i) m2 += (p.X(r, i) - ref.mean) * (p.X(r, i) - ref.mean);
  ref.var = m2 / d;
  ref.rstd = 1 / std::sqrt(ref.var + static_cast<Real>(p.eps));
  Real a = 0, b = 0;
  for (std::int64_t i = 0; i < d; ++i) {
    const Real xhat = (p.X(r, i) - ref.mean) * ref.rstd;
    ref.xhat.push_back(xhat);
    ref.y.push_back(static_cast<Real>(p.Gamma(i)) * xhat + p.Beta(i));
    if (p.dy.size() > 0) {
      const Real g = static_cast<Real>(p.Dy(r, i)) * p.Gamma(i);
      ref.g.push_back(g);
      a += g;
      b += g * xhat;
      ref.mean_abs_g += std::fabs(g) / d;
      ref.mean_abs_gxhat += std::fabs(g * xhat) / d;
    }
  }
  a = layer ? a / d : 0;
  b /= d;
  for (std::size_t i = 0; i < ref.g.size(); ++i) {
    ref.dx.push_back(ref.rstd * (ref.g[i] - a - ref.xhat[i] * b));
  }
  return ref;
}

// Allowance for a forward output: its own rounding (one ulp, as the
// accumulated value may sit across a binade from the exact one) plus a
// chain of k accumulation roundings on the terms of gamma*xhat + beta, with
// the mean's error scaled by the row's condition kappa (docs/DESIGN.md section 1).
double ForwardTolerance(const ImplInfo& info, const RowReference& ref, double gamma, double beta,
                        std::int64_t i, double k) {
  const Real kappa = std::sqrt((ref.var + ref.mean * ref.mean) / ref.var);
  const double u = UnitRoundoff(info.acc_dtype);
  const Real xhat = std::fabs(ref.xhat[i]);
  return Ulp(static_cast<double>(ref.y[i]), info.x_dtype) +
         static_cast<double>(4 * k * u * (std::fabs(gamma) * (kappa + xhat) + std::fabs(beta)));
}

// The backward's normwise scale of docs/DESIGN.md section 4, times a chain of k
// roundings, plus the output's own rounding.
double DxTolerance(const ImplInfo& info, const RowReference& ref, std::int64_t i, double k) {
  const double u = UnitRoundoff(info.acc_dtype);
  const Real scale = ref.rstd * (ref.mean_abs_g + std::fabs(ref.g[i]) +
                                 std::fabs(ref.xhat[i]) * ref.mean_abs_gxhat);
  return Ulp(static_cast<double>(ref.dx[i]), info.x_dtype) + static_cast<double>(4 * k * u * scale);
}

std::vector<double> Normal(std::mt19937_64& rng, std::size_t n, double mean, double sd) {
  std::normal_distribution<double> dist(mean, sd);
  std::vector<double> v(n);
  for (double& e : v) e = dist(rng);
  return v;
}

Problem RandomProblem(const ImplInfo& info, std::int64_t rows, std::int64_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.rows = rows;
  p.d = d;
  p.x = Buffer::Of(info.x_dtype, Normal(rng, rows * d, 0.5, 1.0));
  p.dy = Buffer::Of(info.x_dtype, Normal(rng, rows * d, 0.0, 1.0));
  p.gamma = Buffer::Of(info.param_dtype, Normal(rng, d, 1.0, 0.5));
  if (IsLayerNorm(info)) p.beta = Buffer::Of(info.param_dtype, Normal(rng, d, 0.0, 0.5));
  p.eps = 1e-5f;
  return p;
}

// The scalar registry entries that `keep` selects.
template <typename Keep>
std::vector<const ImplInfo*> ScalarImpls(Keep keep) {
  std::vector<const ImplInfo*> out;
  for (const ImplInfo& info : AllImpls()) {
    if (GlobMatch("*/cpu-scalar", info.name) && keep(info)) out.push_back(&info);
  }
  return out;
}

const ImplInfo& Find(const std::string& name) {
  if (const ImplInfo* i = FindImpl(name)) return *i;
  ADD_FAILURE() << "no registry entry " << name;
  return AllImpls().front();
}

class ScalarKernel : public testing::TestWithParam<const ImplInfo*> {
 protected:
  const ImplInfo& info() const { return *GetParam(); }
};
class LayerNormScalarKernel : public ScalarKernel {};
class F64ScalarKernel : public ScalarKernel {};
class NarrowStoreScalarKernel : public ScalarKernel {};  // bf16/f16 storage

// x = {1, 2, 3, 4}, eps = 0: mean 2.5 and variance 1.25 exactly (mean square
// 7.5 for RMSNorm); every algorithm computes them without rounding.
TEST_P(ScalarKernel, HandWorkedRowGivesExactStatisticsAndNearlyExactOutputs) {
  Problem p;
  p.d = 4;
  p.x = Buffer::Of(info().x_dtype, {1, 2, 3, 4});
  const ForwardOut f = RunForward(info(), p);
  ASSERT_EQ(f.rc, 0);
  const RowReference ref = Reference(info(), p, 0);
  if (IsLayerNorm(info())) {
    EXPECT_EQ(f.mean[0], 2.5f);
  }
  // rstd: sqrt and division each round once in the accumulation type, and
  // the value is rounded once more to float: within 2 float ulps.
  EXPECT_NEAR(f.rstd[0], static_cast<double>(ref.rstd),
              2 * Ulp(static_cast<double>(ref.rstd), DType::kF32));
  for (std::int64_t i = 0; i < p.d; ++i) {
    EXPECT_NEAR(f.y[i], static_cast<double>(ref.y[i]),
                2 * Ulp(static_cast<double>(ref.y[i]), info().x_dtype))
        << "i=" << i;
  }
}

TEST_P(ScalarKernel, HandWorkedRowWithGainAndBias) {
  Problem p;
  p.d = 4;
  p.x = Buffer::Of(info().x_dtype, {1, 2, 3, 4});
  p.gamma = Buffer::Of(info().param_dtype, {0.5, -1, 2, 1.5});
  if (IsLayerNorm(info())) p.beta = Buffer::Of(info().param_dtype, {0.25, 0.5, -1, 0});
  const ForwardOut f = RunForward(info(), p);
  ASSERT_EQ(f.rc, 0);
  const RowReference ref = Reference(info(), p, 0);
  for (std::int64_t i = 0; i < p.d; ++i) {
    EXPECT_NEAR(f.y[i], static_cast<double>(ref.y[i]),
                ForwardTolerance(info(), ref, p.Gamma(i), p.Beta(i), i, /*k=*/1))
        << "i=" << i;
  }
}

TEST_P(ScalarKernel, ModerateRowsAgreeWithALongDoubleReference) {
  const Problem p = RandomProblem(info(), /*rows=*/3, /*d=*/100, /*seed=*/7);
  const ForwardOut f = RunForward(info(), p);
  ASSERT_EQ(f.rc, 0);
  const BackwardOut b = RunBackward(info(), p, f);
  ASSERT_EQ(b.rc, 0);
  std::vector<Real> dgamma(p.d, 0), dbeta(p.d, 0), dgamma_scale(p.d, 0), dbeta_scale(p.d, 0);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const RowReference ref = Reference(info(), p, r);
    const double k = static_cast<double>(p.d);
    const double u = UnitRoundoff(info().acc_dtype);
    if (IsLayerNorm(info())) {
      EXPECT_NEAR(f.mean[r], static_cast<double>(ref.mean),
                  Ulp(static_cast<double>(ref.mean), DType::kF32) + 4 * k * u);
    }
    EXPECT_NEAR(f.rstd[r], static_cast<double>(ref.rstd),
                static_cast<double>(ref.rstd) * (UnitRoundoff(DType::kF32) + 4 * k * u));
    for (std::int64_t i = 0; i < p.d; ++i) {
      const std::int64_t at = r * p.d + i;
      EXPECT_NEAR(f.y[at], static_cast<double>(ref.y[i]),
                  ForwardTolerance(info(), ref, p.Gamma(i), p.Beta(i), i, k))
          << "y i=" << i;
      EXPECT_NEAR(b.dx[at], static_cast<double>(ref.dx[i]), DxTolerance(info(), ref, i, k))
          << "dx i=" << i;
      dgamma[i] += p.Dy(r, i) * ref.xhat[i];
      dbeta[i] += p.Dy(r, i);
      dgamma_scale[i] += std::fabs(p.Dy(r, i)) * (1 + std::fabs(ref.xhat[i]));
      dbeta_scale[i] += std::fabs(p.Dy(r, i));
    }
  }
  // dgamma/dbeta: k = d (xhat) + rows (the sum over rows) roundings.
  const double k = static_cast<double>(p.d + p.rows);
  const double u = UnitRoundoff(info().acc_dtype);
  for (std::int64_t i = 0; i < p.d; ++i) {
    EXPECT_NEAR(b.dgamma[i], static_cast<double>(dgamma[i]),
                Ulp(static_cast<double>(dgamma[i]), info().param_dtype) +
                    static_cast<double>(4 * k * u * dgamma_scale[i]))
        << "dgamma i=" << i;
    if (IsLayerNorm(info())) {
      EXPECT_NEAR(b.dbeta[i], static_cast<double>(dbeta[i]),
                  Ulp(static_cast<double>(dbeta[i]), info().param_dtype) +
                      static_cast<double>(4 * k * u * dbeta_scale[i]))
          << "dbeta i=" << i;
    }
  }
}

// sum(dx) = 0 exactly for LayerNorm (docs/DESIGN.md section 1); the computed sum
// may differ only by the elements' own allowances.
TEST_P(LayerNormScalarKernel, LayerNormInputGradientSumsToZero) {
  for (std::int64_t d : {1, 7, 32, 33, 100, 257}) {
    SCOPED_TRACE("d=" + std::to_string(d));
    const Problem p = RandomProblem(info(), /*rows=*/2, d, /*seed=*/100 + d);
    const ForwardOut f = RunForward(info(), p);
    ASSERT_EQ(f.rc, 0);
    const BackwardOut b = RunBackward(info(), p, f);
    ASSERT_EQ(b.rc, 0);
    for (std::int64_t r = 0; r < p.rows; ++r) {
      const RowReference ref = Reference(info(), p, r);
      Real sum = 0;
      double allowance = 0;
      for (std::int64_t i = 0; i < d; ++i) {
        sum += b.dx[r * d + i];
        allowance += DxTolerance(info(), ref, i, static_cast<double>(d));
      }
      EXPECT_LE(std::fabs(static_cast<double>(sum)), allowance) << "row " << r;
    }
  }
}

// Central differences of L = sum(dy * y) through the kernel's own forward.
// With h = 2^-16 the truncation error is O(h^2 * |L'''|) ~ 1e-9 and the
// cancellation error about d * u64 * sum|dy * y| / h ~ 1e-9 for these rows,
// so 1e-6 of the gradient's scale separates a right gradient from a wrong
// one by three orders of magnitude either way.
TEST_P(F64ScalarKernel, GradientsMatchFiniteDifferencesOfItsOwnForward) {
  constexpr double kH = 0x1p-16;
  constexpr double kRelTol = 1e-6;
  Problem p = RandomProblem(info(), /*rows=*/2, /*d=*/37, /*seed=*/11);
  p.eps = 1e-3f;
  const ForwardOut f = RunForward(info(), p);
  ASSERT_EQ(f.rc, 0);
  const BackwardOut b = RunBackward(info(), p, f);
  ASSERT_EQ(b.rc, 0);
  const auto loss = [&](const Problem& q) {
    const ForwardOut out = RunForward(info(), q);
    Real l = 0;
    for (std::size_t i = 0; i < out.y.size(); ++i) l += static_cast<Real>(q.dy[i]) * out.y[i];
    return l;
  };
  const auto central = [&](Buffer* target, std::size_t i) {
    Problem q = p;
    Buffer* t = target == &p.x ? &q.x : target == &*p.gamma ? &*q.gamma : &*q.beta;
    const double v = (*t)[i];
    t->Set(i, v + kH);
    const Real up = loss(q);
    t->Set(i, v - kH);
    const Real down = loss(q);
    return static_cast<double>((up - down) / (2 * kH));
  };
  double scale = 1;
  for (std::size_t i = 0; i < b.dx.size(); ++i) scale = std::max(scale, std::fabs(b.dx[i]));
  for (std::size_t i = 0; i < b.dx.size(); ++i) {
    EXPECT_NEAR(b.dx[i], central(&p.x, i), kRelTol * scale) << "dx i=" << i;
  }
  for (std::int64_t j = 0; j < p.d; ++j) {
    EXPECT_NEAR(b.dgamma[j], central(&*p.gamma, j), kRelTol * scale) << "dgamma j=" << j;
    if (IsLayerNorm(info())) {
      EXPECT_NEAR(b.dbeta[j], central(&*p.beta, j), kRelTol * scale) << "dbeta j=" << j;
    }
  }
}

TEST_P(ScalarKernel, RowsAreComputedIndependently) {
  const Problem p = RandomProblem(info(), /*rows=*/3, /*d=*/45, /*seed=*/3);
  const ForwardOut all = RunForward(info(), p);
  ASSERT_EQ(all.rc, 0);
  const BackwardOut all_b = RunBackward(info(), p, all);
  ASSERT_EQ(all_b.rc, 0);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    Problem one = p;
    one.rows = 1;
    one.x = Buffer(info().x_dtype, p.d);
    one.dy = Buffer(info().x_dtype, p.d);
    for (std::int64_t i = 0; i < p.d; ++i) {
      one.x.Set(i, p.X(r, i));
      one.dy.Set(i, p.Dy(r, i));
    }
    const ForwardOut f = RunForward(info(), one);
    ASSERT_EQ(f.rc, 0);
    const BackwardOut b = RunBackward(info(), one, f);
    ASSERT_EQ(b.rc, 0);
    EXPECT_EQ(f.rstd[0], all.rstd[r]);
    if (IsLayerNorm(info())) {
      EXPECT_EQ(f.mean[0], all.mean[r]);
    }
    for (std::int64_t i = 0; i < p.d; ++i) {
      EXPECT_EQ(f.y[i], all.y[r * p.d + i]) << "y row " << r << " i=" << i;
      EXPECT_EQ(b.dx[i], all_b.dx[r * p.d + i]) << "dx row " << r << " i=" << i;
    }
  }
}

TEST_P(ScalarKernel, StatisticsOutputsAreOptionalAndRmsNormLeavesMeanAlone) {
  const Problem p = RandomProblem(info(), /*rows=*/2, /*d=*/40, /*seed=*/5);
  const ForwardOut with = RunForward(info(), p);
  ASSERT_EQ(with.rc, 0);
  Buffer y(info().x_dtype, p.rows * p.d);
  std::vector<float> mean(p.rows, 12345.0f);
  ForwardArgs a{p.rows, p.d,      p.x.data(), p.gamma->data(), p.beta ? p.beta->data() : nullptr,
                p.eps,  y.data(), nullptr,    nullptr};
  ASSERT_EQ(info().forward(&a), 0);
  EXPECT_TRUE(y.BitwiseEqual(with.y));
  if (!IsLayerNorm(info())) {
    a.mean = mean.data();
    ASSERT_EQ(info().forward(&a), 0);
    EXPECT_EQ(mean, std::vector<float>(p.rows, 12345.0f));
  }
  // Backward without the saved statistics recomputes them from x.
  BackwardOut b(RunBackward(info(), p, with));
  ASSERT_EQ(b.rc, 0);
  Buffer dx(info().x_dtype, p.rows * p.d);
  BackwardArgs ba{p.rows,  p.d,   p.x.data(), p.gamma->data(), p.dy.data(), nullptr,
                  nullptr, p.eps, dx.data(),  nullptr,         nullptr};
  ASSERT_EQ(info().backward(&ba), 0);
  EXPECT_TRUE(dx.BitwiseEqual(b.dx));
}

TEST_P(ScalarKernel, RejectsInvalidArguments) {
  Problem p = RandomProblem(info(), /*rows=*/2, /*d=*/8, /*seed=*/9);
  Buffer y(info().x_dtype, 16), dx(info().x_dtype, 16);
  const ForwardArgs good{2, 8, p.x.data(), nullptr, nullptr, 0.0f, y.data(), nullptr, nullptr};
  EXPECT_EQ(info().forward(&good), 0);
  EXPECT_NE(info().forward(nullptr), 0);
  ForwardArgs a = good;
  a.d = 0;
  EXPECT_NE(info().forward(&a), 0);
  a = good;
  a.rows = -1;
  EXPECT_NE(info().forward(&a), 0);
  a = good;
  a.x = nullptr;
  EXPECT_NE(info().forward(&a), 0);
  a = good;
  a.y = nullptr;
  EXPECT_NE(info().forward(&a), 0);
  a = good;
  a.rows = std::int64_t{1} << 62;  // rows * d overflows int64
  EXPECT_NE(info().forward(&a), 0);
  a = good;
  a.rows = 0;
  EXPECT_EQ(info().forward(&a), 0);
  if (!IsLayerNorm(info())) {
    a = good;
    a.beta = p.gamma->data();
    EXPECT_NE(info().forward(&a), 0) << "RMSNorm has no beta";
  }

  const BackwardArgs bgood{2,       8,    p.x.data(), nullptr, p.dy.data(), nullptr,
                           nullptr, 0.0f, dx.data(),  nullptr, nullptr};
  EXPECT_EQ(info().backward(&bgood), 0);
  EXPECT_NE(info().backward(nullptr), 0);
  BackwardArgs b = bgood;
  b.d = -3;
  EXPECT_NE(info().backward(&b), 0);
  b = bgood;
  b.rows = -1;
  EXPECT_NE(info().backward(&b), 0);
  b = bgood;
  b.x = nullptr;
  EXPECT_NE(info().backward(&b), 0);
  b = bgood;
  b.dy = nullptr;
  EXPECT_NE(info().backward(&b), 0);
  b = bgood;
  b.dx = nullptr;
  EXPECT_NE(info().backward(&b), 0);
  if (!IsLayerNorm(info())) {
    b = bgood;
    b.dbeta = dx.data();
    EXPECT_NE(info().backward(&b), 0) << "RMSNorm has no dbeta";
  }
}

TEST_P(ScalarKernel, AnEmptyBatchWritesZeroParameterGradients) {
  const Problem p = RandomProblem(info(), /*rows=*/1, /*d=*/5, /*seed=*/13);
  Buffer dgamma = Buffer::Of(info().param_dtype, {7, 7, 7, 7, 7});
  Buffer dbeta = Buffer::Of(info().param_dtype, {7, 7, 7, 7, 7});
  Buffer dx(info().x_dtype, 5);
  BackwardArgs b{0,
                 5,
                 p.x.data(),
                 p.gamma->data(),
                 p.dy.data(),
                 nullptr,
                 nullptr,
                 0.0f,
                 dx.data(),
                 dgamma.data(),
                 IsLayerNorm(info()) ? dbeta.data() : nullptr};
  ASSERT_EQ(info().backward(&b), 0);
  for (std::size_t j = 0; j < 5; ++j) {
    EXPECT_EQ(dgamma[j], 0.0);
    if (IsLayerNorm(info())) {
      EXPECT_EQ(dbeta[j], 0.0);
    }
  }
}

// y is rounded once from the accumulation type into bf16/f16 with
// round-to-nearest-even. The rows below make y exactly a midpoint between
// two neighbours of the storage format, so truncation, round-half-away and
// double rounding would each pick a different value on at least one of them.
TEST_P(NarrowStoreScalarKernel, HalfwayOutputsRoundToEven) {
  const DType t = info().x_dtype;
  const int p = Precision(t);
  const double half_ulp1 = std::ldexp(1.0, -p);  // half the spacing just above 1
  if (IsLayerNorm(info())) {
    // x = {-1, 1}: mean 0, var 1, rstd 1, xhat = {-1, 1}, all exact.
    Problem q;
    q.d = 2;
    q.x = Buffer::Of(t, {-1, 1});
    // y0 = -1 - half_ulp1: tie between -1 (even) and -(1 + ulp) (odd).
    // y1 = 1 + 3 half_ulp1: tie between 1 + ulp (odd) and 1 + 2 ulp (even).
    q.beta = Buffer::Of(t, {-half_ulp1, 3 * half_ulp1});
    const ForwardOut f = RunForward(info(), q);
    ASSERT_EQ(f.rc, 0);
    EXPECT_EQ(f.y[0], -1.0);
    EXPECT_EQ(f.y[1], 1.0 + 4 * half_ulp1);
  } else {
    // d = 1, x = 1 + 2 half_ulp1 (= 1 + ulp), eps chosen so ms + eps = 4
    // exactly: rstd = 1/2 and y = 3 x / 2 = 1.5 + 3 half_ulp1, a tie between
    // 1.5 + 2 half_ulp1 (odd) and 1.5 + 4 half_ulp1 (even).
    const double x = 1 + 2 * half_ulp1;
    Problem q;
    q.d = 1;
    q.x = Buffer::Of(t, {x});
    q.gamma = Buffer::Of(t, {3});
    q.eps = static_cast<float>(4 - x * x);
    ASSERT_EQ(static_cast<double>(q.eps), 4 - x * x) << "eps must be exact for the tie";
    const ForwardOut f = RunForward(info(), q);
    ASSERT_EQ(f.rc, 0);
    EXPECT_EQ(f.rstd[0], 0.5f);
    EXPECT_EQ(f.y[0], 1.5 + 4 * half_ulp1);
  }
}

std::string PrintableName(const testing::TestParamInfo<const ImplInfo*>& p) {
  std::string name = p.param->name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Registry, ScalarKernel,
                         testing::ValuesIn(ScalarImpls([](const ImplInfo&) { return true; })),
                         PrintableName);
INSTANTIATE_TEST_SUITE_P(Registry, LayerNormScalarKernel,
                         testing::ValuesIn(ScalarImpls(IsLayerNorm)), PrintableName);
INSTANTIATE_TEST_SUITE_P(Registry, F64ScalarKernel,
                         testing::ValuesIn(ScalarImpls([](const ImplInfo& info) {
                           return info.x_dtype == DType::kF64;
                         })),
                         PrintableName);
INSTANTIATE_TEST_SUITE_P(Registry, NarrowStoreScalarKernel,
                         testing::ValuesIn(ScalarImpls([](const ImplInfo& info) {
                           return info.x_dtype == DType::kBF16 || info.x_dtype == DType::kF16;
                         })),
                         PrintableName);

// Eigen's lesson: prove the check can fail. On a row with mean 1e4 and spread
// 1 (kappa ~ 1e4), the two-pass kernel keeps rstd within its model's bound
// and the one-pass kernel, held to that same bound, is far outside it.
TEST(NegativeControl, OnePassIsCaughtOnALargeMeanRowWhereTwoPassHoldsItsBound) {
  const ImplInfo& two_pass = Find("f32/two_pass/cpu-scalar");
  const ImplInfo& one_pass = Find("f32/one_pass/cpu-scalar");
  ASSERT_EQ(one_pass.status, ImplStatus::kNegativeControl);
  ASSERT_EQ(one_pass.bound_algorithm, two_pass.algorithm);
  std::mt19937_64 rng(2024);
  Problem p;
  p.d = 256;
  p.x = Buffer::Of(DType::kF32, Normal(rng, p.d, 1e4, 1.0));
  p.eps = 1e-5f;
  const RowReference ref = Reference(two_pass, p, 0);
  // Two-pass serial model (Chan, Golub & LeVeque 1983), k = d - 1: relative
  // variance error <= (d + 2) u + (k kappa u)^2; rstd inherits half of it,
  // plus the sqrt and division roundings.
  const double u = UnitRoundoff(DType::kF32);
  const double kappa = static_cast<double>(std::sqrt(1 + ref.mean * ref.mean / ref.var));
  const double k = static_cast<double>(p.d - 1);
  const double var_bound = (p.d + 2) * u + (k * kappa * u) * (k * kappa * u);
  const double rstd_bound = var_bound / 2 + 2 * u;
  const auto rstd_error = [&](const ImplInfo& info) {
    const ForwardOut f = RunForward(info, p);
    EXPECT_EQ(f.rc, 0);
    return std::fabs(static_cast<double>((f.rstd[0] - ref.rstd) / ref.rstd));
  };
  const double two_pass_error = rstd_error(two_pass);
  const double one_pass_error = rstd_error(one_pass);
  RecordProperty("kappa", std::to_string(kappa));
  RecordProperty("rstd_bound", std::to_string(rstd_bound));
  RecordProperty("two_pass_rstd_error", std::to_string(two_pass_error));
  RecordProperty("one_pass_rstd_error", std::to_string(one_pass_error));
  EXPECT_LE(two_pass_error, rstd_bound);
  EXPECT_GT(one_pass_error, rstd_bound) << "the negative control was not caught";
  EXPECT_GT(one_pass_error, 100 * two_pass_error);
}

}  // namespace
}  // namespace lnv

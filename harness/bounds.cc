// Derivations of the bound models (see bounds.h for the sources' full titles).
//
// Rounding model (ASNA §2.2, with underflow §2.1): for op in {+, -, *, /, sqrt}
// on floats of the accumulation format, fl(a op b) = (a op b)(1 + delta) + eta,
// |delta| <= u = 2^-p, |eta| <= eta_c (UnderflowUnit: the smallest subnormal
// spacing 2^(emin - p + 1), twice what round-to-nearest needs), delta * eta = 0, and
// eta = 0 for + and - (underflowing sums are exact). Products of k factors
// (1 + delta_i)^(+-1) are 1 + theta_k with |theta_k| <= gamma_k = k u/(1 - k u)
// (ASNA §3.1, Lemma 3.1). Compose(a, b) = (1 + a)(1 + b) - 1 chains two such bounds.
//
// Notation: d the row length, mu, s2 (= sigma^2), r = (s2 + eps)^(-1/2),
// q = s2 + eps, A = mean|x|, M = max|x|, all exact; E = |mean_hat - mu|,
// Delta = |v_hat - s2|, rho = |r_hat / r - 1|.
#include "harness/bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/formats.h"

namespace lnv {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The bounds are evaluated in double. For fp64 kernels with subnormal
// results, products inside a formula can underflow below 2^-1074 and vanish;
// each loses less than 2^-1074 and no formula here has more than 32 products,
// so 32 * 2^-1074 restores what can be lost. (Rounding of the evaluation in
// the normal range moves a bound by a relative ~1e-15: immaterial.)
constexpr double kEvalSlack = 32 * std::numeric_limits<double>::denorm_min();

double U(const BoundModel& m) { return UnitRoundoff(m.acc); }
double Eta(const BoundModel& m) { return UnderflowUnit(m.acc); }

// (1 + a)(1 + b) - 1: the relative error of two chained relative errors.
double Compose(double a, double b) { return a + b + a * b; }

bool IsPowerOfTwo(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// Roundings in scaling a sum by 1/d: sum / d is one, sum * fl(1/d) two; both
// are exact (barring underflow, counted by eta) when d is a power of two.
int ScaleRoundings(std::int64_t d) { return IsPowerOfTwo(d) ? 0 : 2; }

int CeilLog2(std::int64_t n) {
  int l = 0;
  while ((std::int64_t{1} << l) < n) ++l;
  return l;
}

// Half an ulp of the value's magnitude bound in `to`, when rounding from the
// accumulation format into `to` is not exact (the stored value is within
// |v| + err of zero, and ulp is monotone in |v|).
double StoreRounding(const BoundModel& m, FloatFormat to, double magnitude) {
  if (FormatContains(to, m.acc)) return 0.0;
  if (!std::isfinite(magnitude)) return kInf;
  return 0.5 * FormatUlp(magnitude, to);
}

// Leaves of at most `leaf` elements, `leaves` of them non-empty, merged in a
// tree of depth `levels`: serial is one leaf of d elements.
struct TreeShape {
  std::int64_t leaf = 1;
  std::int64_t leaves = 1;
  std::int64_t levels = 0;
};
TreeShape ShapeOf(const BoundModel& m, std::int64_t d) {
  if (m.reduction == Reduction::kTree && m.chunk > 0 && m.chunk < d) {
    const std::int64_t parts = (d + m.chunk - 1) / m.chunk;
    return {m.chunk, parts, CeilLog2(parts)};
  }
  if (m.reduction == Reduction::kLanes && m.lane_shape != nullptr && d > 1) {
    const LaneShape s = m.lane_shape(d);
    return {std::min(s.leaf, d), s.leaves, s.levels};
  }
  return {std::max<std::int64_t>(d, 1), 1, 0};
}

struct StatsError {
  double mean_err = 0.0;
  double var_err = 0.0;
};

// The sum's mean: s_hat = sum x_i (1 + theta_i), |theta_i| <= phi (SumError),
// then mean_hat = s_hat/d (1 + theta_s) (+ eta when the quotient underflows):
//   |mean_hat - mu| <= phi A (1 + gamma_s) + gamma_s |mu| + eta
//                   <= Compose(phi, gamma_s) A + eta          (|mu| <= A).
// (docs/DESIGN.md §1: delta_mu <= gamma_{k+1} mean|x| for a division; the form
// here also covers multiplying by a rounded 1/d.) Since A r <= kappa_eps =
// sqrt((s2 + mu^2)/(s2 + eps)) (A <= sqrt(mean x^2)), r E <= gamma_{k+s} kappa_eps:
// the gamma_k kappa_eps term of docs/DESIGN.md §4.
double SumMeanError(const BoundModel& m, const RowInput& row) {
  const double phi = SumError(m, row.d);
  const double gs = Gamma(m, ScaleRoundings(row.d));
  return Compose(phi, gs) * row.stats.mean_abs + Eta(m);
}

// Two-pass (also Kahan two-pass, through SumError). Each term is
// t_i = fl(fl(x_i - mean_hat)^2) = (x_i - mean_hat)^2 (1 + theta_3) + eta_i
// (the difference's rounding enters squared), summed (phi) and scaled (s):
//   v_hat = (1/d) sum (x_i - mean_hat)^2 (1 + psi_i) + abs,
//   psi = Compose(Compose(gamma_3, phi), gamma_s), |abs| <= eta (1+phi)(1+gamma_s) + eta.
// Exactly, (1/d) sum (x_i - mean_hat)^2 = s2 + E^2 (sum (x_i - mu) = 0; CGL
// 1983 §3, ASNA §1.9), so
//   Delta <= psi (s2 + E^2) + E^2 + abs
// which is docs/DESIGN.md §1's gamma_{k+3} s2 + (1 + gamma_{k+3}) delta_mu^2 with the
// scaling's roundings counted too.
StatsError TwoPassError(const BoundModel& m, const RowInput& row) {
  const double phi = SumError(m, row.d);
  const double gs = Gamma(m, ScaleRoundings(row.d));
  const double e = SumMeanError(m, row);
  const double psi = Compose(Compose(Gamma(m, 3), phi), gs);
  const double abs = Eta(m) * (1 + phi) * (1 + gs) + Eta(m);
  return {e, psi * (row.stats.var + e * e) + e * e + abs};
}

// One-pass, as impls/cpu/one_pass.cc evaluates it: s1 = sum x, s2 = sum x^2
// (one rounding per square), mean_hat = s1/d, v_hat = (s2 - s1 * mean_hat)/d,
// clamped at 0 (clamping a negative v_hat only moves it toward s2 >= 0).
// With w = s1/d = mu + e1, |e1| <= phi A, and m2 = s2 + mu^2 (exact mean square):
//   |fl(s2)/d - m2|        <= Compose(gamma_1, phi) m2 + eta (1 + phi)       =: P
//   |fl(s1 mean_hat)/d - mu^2| <= (2|mu| phi A + (phi A)^2)(1 + g) + g mu^2
//                            + 2 eta (1 + A (1 + phi))                       =: Q
// with g = gamma_{s+1} (the product and mean_hat's scaling), then the
// subtraction and the division by d (gamma_{s+1} again, + eta):
//   Delta <= (P + Q)(1 + g) + g s2 + eta.
// Relative to s2 this is about (k+2) u (1 + mu^2/s2) = (k+2) u kappa^2: the
// textbook algorithm's loss (CGL 1983 §2; ASNA §1.9). The same model covers
// sum(x^2)/d - mean_hat^2 (one rounding fewer in the product).
StatsError OnePassError(const BoundModel& m, const RowInput& row) {
  const double phi = SumError(m, row.d);
  const double u_g = Gamma(m, ScaleRoundings(row.d) + 1);
  const double a = row.stats.mean_abs;
  const double mu = std::fabs(row.stats.mean);
  const double s2 = row.stats.var;
  const double m2 = s2 + mu * mu;
  const double eta = Eta(m);
  const double p = Compose(Gamma(m, 1), phi) * m2 + eta * (1 + phi);
  const double q = (2 * mu * phi * a + (phi * a) * (phi * a)) * (1 + u_g) + u_g * mu * mu +
                   2 * eta * (1 + a * (1 + phi));
  return {SumMeanError(m, row), (p + q) * (1 + u_g) + u_g * s2 + eta};
}

// Welford/West updating (CGL 1983 §4: the updating algorithm's relative
// error grows like n kappa u), leaves of c elements merged pairwise with
// Chan et al.'s formula (L = ceil(log2 P) levels, P = ceil(d/c) leaves;
// serial: c = d, P = 1, L = 0). Roundings counted on impls/cpu/welford_state.h:
//   delta = x - m; m += delta / n; M2 += delta * (x - m)
//   merge: delta = mb - ma; m = ma + delta * (nb/n); M2 = (M2a + M2b) + delta*delta*(na*nb/n).
//
// 1. Mean error. Step j of a leaf: m_j = m_{j-1} + (x_j - m_{j-1})/j exactly;
// computed, e_j = e_{j-1} (j-1)/j + l_j with
//   |l_j| <= gamma_3 |x_j - m_hat_{j-1}|/j + u |m_hat_{j-1} + t_hat_j| + eta
// (t_hat = fl(delta/j), two roundings, gamma_3 also covers delta * fl(1/j)).
// Unrolled, e_i = sum_{j<=i} l_j j/i; with |x_j|, |m_j| <= M, j|m_j| <= sum_{l<=j}|x_l|
// <= A_leaf and |e| <= E:
//   E <= 2 gamma_3 (1+u) M + u A_leaf + u E (n-1)/2 + gamma_3 (1+u) E + n eta
//   => E_leaf <= (2 gamma_3 (1+u) M + u A_leaf + n eta) / (1 - gamma_3 (1+u) - u (n-1)/2).
// A merge is the weighted average of its children's means plus a local error
// <= c_m (M + E), c_m = 2 gamma_3 (1 + u) + u (either merge form), + eta; so
// over L levels E <= (E_leaf + L (c_m M + eta)) / (1 - L c_m).
//
// 2. Sum of squares, S = d s2. Exact Welford increments c_j = D_j^2 (j-1)/j
// >= 0 (D_j = x_j - m_{j-1}) sum to a leaf's S_l; merge terms T = w delta^2
// (w = na nb/n <= n/4) are >= 0 too, and S = sum_l S_l + sum T. With the
// computed means the increment is (D_j - e_{j-1})(D_j (j-1)/j - e_j), off by
// <= 2|D_j| E + E^2; a merge term by <= w (4|delta| E + 4E^2). Cauchy-Schwarz:
//   sum_{j>=2} |D_j| <= sqrt(sum D_j^2 (j-1)/j * sum j/(j-1)) <= sqrt(2 (n-1) S_l),
//   over leaves <= sqrt(2 (d - P) S);  sum w |delta| <= sqrt(S W), W = sum w <= L d/4.
// Rounding: each increment 3 roundings + a chain of c - 1, each merge term 5
// + 2 per level: relative gamma_K on the nonnegative terms, K = c + 2 (serial)
// or max(c + 2, 5) + 2L. Dividing by d (s roundings):
//   |S_hat - S|/d <= gamma_K s2 + (1 + gamma_K)(2 E s2^.5 sqrt(2(d-P)/d)
//                    + E^2 (d-P)/d + 2 E s2^.5 sqrt(L) + E^2 L) + (d + 2(P-1)) eta/d (1+gamma_K)
//   Delta <= (1 + gamma_s) |S_hat - S|/d + gamma_s s2 + eta.
// The cross terms 2 E sigma are the kappa u behaviour: E ~ d u |mu|, so
// 2 E sigma / s2 ~ 2 d u kappa (the two-pass has (d u kappa)^2 there instead).
//
// A kLanes reduction (registry.h: GPU lanes, each serial, then shuffles) is
// the same computation with leaves of at most c = leaf elements, P = leaves
// non-empty leaves and at most L = levels non-empty merges on any path: the
// argument above uses only those three numbers (a leaf of n <= c elements is
// within E_leaf(c), which grows with c; a merge with an empty leaf is exact).
StatsError WelfordError(const BoundModel& m, const RowInput& row) {
  const std::int64_t d = row.d;
  const TreeShape shape = ShapeOf(m, d);
  const std::int64_t c = shape.leaf;
  const std::int64_t parts = shape.leaves;
  const int levels = static_cast<int>(shape.levels);
  const double u = U(m);
  const double eta = Eta(m);
  const double big_m = row.max_abs;
  const double g3 = Gamma(m, 3);

  double e = 0.0;
  if (c > 1) {
    const double a_leaf =
        std::min(row.stats.mean_abs * static_cast<double>(d), big_m * static_cast<double>(c));
    const double denom = 1 - g3 * (1 + u) - u * static_cast<double>(c - 1) / 2;
    e = denom > 0 ? (2 * g3 * (1 + u) * big_m + u * a_leaf + static_cast<double>(c) * eta) / denom
                  : kInf;
  }
  if (levels > 0) {
    const double cm = 2 * g3 * (1 + u) + u;
    const double denom = 1 - levels * cm;
    e = denom > 0 ? (e + levels * (cm * big_m + eta)) / denom : kInf;
  }

  const double s2 = row.stats.var;
  const double sigma = std::sqrt(s2);
  const double dd = static_cast<double>(d);
  const std::int64_t k_count = levels == 0 ? c + 2 : std::max<std::int64_t>(c + 2, 5) + 2 * levels;
  const double gk = Gamma(m, static_cast<double>(k_count));
  const double cross = 2 * e * sigma * std::sqrt(2 * static_cast<double>(d - parts) / dd) +
                       e * e * static_cast<double>(d - parts) / dd +
                       2 * e * sigma * std::sqrt(static_cast<double>(levels)) + e * e * levels;
  const double uf = (dd + 2 * static_cast<double>(parts - 1)) * eta / dd * (1 + gk);
  const double s_err = gk * s2 + (1 + gk) * cross + uf;
  const double gs = Gamma(m, ScaleRoundings(d));
  return {e, (1 + gs) * s_err + gs * s2 + eta};
}

// RMSNorm: v_hat = fl(sum fl(x_i^2) / d), nonnegative terms, no cancellation:
//   Delta <= Compose(Compose(gamma_1, phi), gamma_s) ms + eta (1+phi)(1+gamma_s) + eta
// with ms = mean(x^2) (= stats.var for RMSNorm); ASNA §4.2 with |t_i| = t_i.
StatsError SumOfSquaresError(const BoundModel& m, const RowInput& row) {
  const double phi = SumError(m, row.d);
  const double gs = Gamma(m, ScaleRoundings(row.d));
  const double psi = Compose(Compose(Gamma(m, 1), phi), gs);
  return {0.0, psi * row.stats.var + Eta(m) * (1 + phi) * (1 + gs) + Eta(m)};
}

StatsError StatsErrorFor(const BoundModel& m, const RowInput& row) {
  if (m.norm == Norm::kRmsNorm) return SumOfSquaresError(m, row);  // every RMS algorithm
  switch (m.algorithm) {
    case Algorithm::kTwoPass:
    case Algorithm::kKahanTwoPass:
      return TwoPassError(m, row);
    case Algorithm::kWelford:
      return WelfordError(m, row);
    case Algorithm::kOnePass:
    case Algorithm::kSumOfSquares:  // LayerNorm from a sum of squares is the one-pass
      return OnePassError(m, row);
    case Algorithm::kUnknown: {
      // Generic (docs/DESIGN.md §3, plugins): the loosest stable model, serial, k = d-1.
      // Both outputs feed the y bound monotonically, so the componentwise max
      // bounds a kernel following either algorithm.
      BoundModel serial = m;
      serial.reduction = Reduction::kSerial;
      serial.algorithm = Algorithm::kTwoPass;
      const StatsError two = TwoPassError(serial, row);
      serial.algorithm = Algorithm::kWelford;
      const StatsError wel = WelfordError(serial, row);
      return {std::max(two.mean_err, wel.mean_err), std::max(two.var_err, wel.var_err)};
    }
  }
  return {kInf, kInf};
}

// rho from Delta. q_hat = fl(v_hat + eps) = (v_hat + eps)(1 + d_a), s =
// fl(sqrt(q_hat)) = sqrt(q_hat)(1 + d_s), r_hat = fl(1/s) = (1/s)(1 + d_d), so
//   r_hat / r = sqrt(q / (v_hat + eps)) (1 + d_a)^(-1/2) (1 + d_s)^(-1) (1 + d_d)
// with v_hat + eps in [q - Delta, q + Delta]:
//   rho <= max(sqrt(q/(q - Delta)) (1+u)/(1-u)^(3/2) - 1,
//              1 - sqrt(q/(q + Delta)) (1-u)/(1+u)^(3/2)),
// +inf when Delta >= q (v_hat + eps may be <= 0: no claim). sqrt(1/q_hat)
// stays inside the same interval. First order: Delta/(2q) + 5u/2, i.e.
// docs/DESIGN.md §4's eps_v s2/(2(s2 + eps)) + u/2 + the rsqrt error.
double RstdRelError(const BoundModel& m, double q, double delta) {
  if (!(q > 0) || !(delta < q)) return kInf;
  const double u = U(m);
  const double up = std::sqrt(q / (q - delta)) * (1 + u) / std::pow(1 - u, 1.5) - 1;
  const double lo = 1 - std::sqrt(q / (q + delta)) * (1 - u) / std::pow(1 + u, 1.5);
  return std::max(up, lo);
}

}  // namespace

std::string DescribeBound(const ImplInfo& impl) {
  std::string s = std::string(AlgorithmName(impl.bound_algorithm)) + " bound, ";
  switch (impl.reduction) {
    case Reduction::kTree:
      s += "tree reduction (chunk " + std::to_string(impl.chunk) + ", k = chunk + log2 parts)";
      break;
    case Reduction::kLanes:
      s += "lanes reduction (each lane serial, then a merge tree: k = leaf + levels)";
      break;
    case Reduction::kSerial:
      s += "serial reduction (k = d - 1)";
      break;
  }
  return s + ", accumulation " + std::string(DTypeName(impl.acc_dtype)) + " (harness/bounds.h)";
}

BoundModel ModelFor(const ImplInfo& impl) {
  BoundModel m;
  m.norm = impl.norm;
  m.algorithm = impl.bound_algorithm;
  m.reduction = impl.reduction;
  m.chunk = impl.chunk;
  m.lane_shape = impl.lane_shape;
  m.acc = FormatOf(impl.acc_dtype);
  m.out = FormatOf(impl.x_dtype);
  m.param = FormatOf(impl.param_dtype);
  m.stat = kBinary32;
  return m;
}

double Gamma(const BoundModel& model, double k) {
  if (k <= 0) return 0.0;
  const double u = UnitRoundoff(model.acc);
  const double ku = k * u;
  const double worst = ku < 1 ? ku / (1 - ku) : kInf;  // ASNA Lemma 3.1 needs k u < 1
  if (model.probabilistic) {
    // Higham & Mary 2019: gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2/(1-u)) - 1.
    return std::min(worst, std::expm1(model.lambda * std::sqrt(k) * u + k * u * u / (1 - u)));
  }
  return worst;
}

double TypicalUses(std::int64_t rows, std::int64_t d) {
  const double per_row = 4.0 * static_cast<double>(d) + 32.0;
  return static_cast<double>(std::max<std::int64_t>(rows, 1)) * (per_row + 1.0);
}

double TypicalLambda(const BoundModel& model, std::int64_t rows, std::int64_t d) {
  const double u = U(model);
  const double ratio = 2 * kTypicalNightElements * TypicalUses(rows, d) / kTypicalFalseAlarms;
  return std::sqrt(2 * std::log(ratio)) / (1 - u);
}

BoundModel TypicalModel(BoundModel model, std::int64_t rows, std::int64_t d) {
  model.lambda = TypicalLambda(model, rows, d);
  model.probabilistic = true;
  return model;
}

std::int64_t ChainLength(const BoundModel& model, std::int64_t n) {
  if (n <= 1) return 0;
  if (model.reduction == Reduction::kTree && model.chunk > 0) {
    const std::int64_t parts = (n + model.chunk - 1) / model.chunk;
    return std::min(n - 1, model.chunk + CeilLog2(parts));
  }
  if (model.reduction == Reduction::kLanes && model.lane_shape != nullptr) {
    const LaneShape s = model.lane_shape(n);
    return std::min(n - 1, s.leaf + s.levels);
  }
  return n - 1;
}

double SumError(const BoundModel& model, std::int64_t n) {
  if (n <= 1) return 0.0;  // one term: the sum is exact (0 + t)
  if (model.algorithm == Algorithm::kKahanTwoPass) {
    // Compensated summation (ASNA §4.3, after Knuth):
    // s_hat = sum (1 + mu_i) x_i, |mu_i| <= 2u + O(n u^2). ASNA gives no
    // constant for the O(n u^2) term; we take 8 n u^2, generous against the
    // second-order products of a few roundings per step (the kahan kernels'
    // tests exercise it). Not improved by a probabilistic model.
    const double u = UnitRoundoff(model.acc);
    return 2 * u + 8 * static_cast<double>(n) * u * u;
  }
  return Gamma(model, static_cast<double>(ChainLength(model, n)));
}

RowInput MakeRowInput(const RowStats& stats, double eps, const double* row, std::int64_t d) {
  RowInput in;
  in.stats = stats;
  in.eps = eps;
  in.d = d;
  double m = 0.0;
  for (std::int64_t i = 0; i < d; ++i) m = std::max(m, std::fabs(row[i]));
  in.max_abs = m;
  return in;
}

RowBound ForwardRowBound(const BoundModel& model, const RowInput& row) {
  RowBound b;
  if (!row.stats.finite || row.d < 1) {
    b.mean_err = b.var_err = b.rstd_rel = b.mean = b.rstd = kInf;
    return b;
  }
  const StatsError se = StatsErrorFor(model, row);
  b.mean_err = se.mean_err;
  b.var_err = se.var_err;
  const double q = row.stats.var + row.eps;
  b.rstd_rel = RstdRelError(model, q, se.var_err);
  // Stored as float: exact for fp32 accumulation, one more rounding for fp64.
  const bool layer = model.norm == Norm::kLayerNorm;
  b.mean = layer ? b.mean_err + kEvalSlack +
                       StoreRounding(model, model.stat, std::fabs(row.stats.mean) + b.mean_err)
                 : 0.0;
  const double r = row.stats.rstd;
  // A float rstd below 2^-126 (sigma > 2^126, only in full-range kernels) is
  // subnormal: the rounding that made it is absolute there, at most the stat
  // format's eta (ASNA §2.1), which the relative rho does not count.
  b.rstd = std::isfinite(b.rstd_rel) ? r * b.rstd_rel + UnderflowUnit(model.stat) +
                                           StoreRounding(model, model.stat, r * (1 + b.rstd_rel))
                                     : kInf;
  b.theta_x = std::pow(1 + U(model), layer ? 2 : 1) * (1 + b.rstd_rel) - 1;
  b.gamma2 = Gamma(model, 2);
  return b;
}

bool RowInClaimedRange(const RowBound& rb) {
  return !(std::isfinite(rb.var_err) && std::isinf(rb.rstd_rel));
}

// y_i, as the kernel forms it in the accumulation format:
//   t1 = fl(x_i - mean_hat), t2 = fl(t1 r_hat) (the computed xhat),
//   t3 = fl(gamma_i t2), t4 = fl(t3 + beta_i), y_out = round_out(t4).
// With x_i - mean_hat = (x_i - mu) - e and r_hat = r (1 + rho'):
//   |t2 - xhat_i| <= |xhat_i| theta_x + r E (1 + theta_x) + eta =: X_i,
//   theta_x = (1+u)^2 (1+rho) - 1 (LayerNorm; RMSNorm has no t1: (1+u)(1+rho) - 1);
//   t4 - y_i = gamma (t2 - xhat)(1+d3)(1+d4) + gamma xhat ((1+d3)(1+d4) - 1)
//              + beta d4 + eta_3 (1 + d4),
//   |t4 - y_i| <= |gamma_i| X_i (1+u)^2 + |gamma_i xhat_i| gamma_2 + u |beta_i| + eta (1+u);
// then rounding into the output format adds <= ulp_out(|y_i| + that)/2 unless
// the output format contains the accumulation format. First order this is
// docs/DESIGN.md §4's B_i = ulp/2 + |gamma|[gamma_k kappa_eps + |xhat|(|rho| + 2u)]
// + u(|gamma xhat| + |beta|), since r E <= gamma_{k+s} kappa_eps (SumMeanError).
double ForwardElementBound(const BoundModel& model, const RowInput& row, const RowBound& rb,
                           const ElementInput& e) {
  if (!std::isfinite(rb.rstd_rel) || !std::isfinite(rb.mean_err)) return kInf;
  const double u = U(model);
  const double eta = Eta(model);
  const double theta_x = rb.theta_x;
  const double r = row.stats.rstd;
  const double ax = std::fabs(e.xhat);
  const double ag = std::fabs(e.gamma);
  const double x_err = ax * theta_x + r * rb.mean_err * (1 + theta_x) + eta;
  const double acc_err =
      ag * x_err * (1 + u) * (1 + u) + ag * ax * rb.gamma2 + u * std::fabs(e.beta) + eta * (1 + u);
  return acc_err + StoreRounding(model, model.out, std::fabs(e.y) + acc_err) + kEvalSlack;
}

// The backward recomputes xhat from the STORED mean/rstd (RowBound::mean,
// ::rstd; rho_b = rstd / r), exactly as the forward's t2 above:
//   |xhat_hat - xhat| <= theta_b |xhat| + r mean_b (1 + theta_b) + eta.
// (A kernel that recomputes the statistics at its accumulation precision, as
// the fp64 scalar kernels do, is within this too: mean_err <= mean.)
// g_hat_i = fl(dy_i gamma_i) = g_i (1 + d) + eta. With G1 = mean|g|,
// G2 = mean|g xhat|, G3 = mean(|g| X) = xhat_rel G2 + xhat_abs G1, and
// psi = Compose(Compose(gamma_1, phi), gamma_s) (one product, the row sum, 1/d):
//   |a_hat - a| <= psi G1 + eta (1+phi)(1+gamma_s) + eta;
//   p_i = fl(g_hat_i xhat_hat_i): (1/d) sum |g_hat xhat_hat - g xhat| <=
//     G3 + u (G2 + G3) + eta (1 + mean X) =: D_b  (mean|xhat| <= 1: sum xhat^2 <= d),
//   |b_hat - b| <= (1 + psi) D_b + psi G2 + eta (1+phi)(1+gamma_s) + eta.
BackwardRowBound BackwardRowBoundFor(const BoundModel& model, const RowInput& row,
                                     const RowBound& fwd, const BackwardRowInput& in) {
  BackwardRowBound bb;
  const double r = row.stats.rstd;
  bb.rstd_rel = r > 0 && std::isfinite(r) ? fwd.rstd / r : kInf;
  if (!std::isfinite(bb.rstd_rel) || !std::isfinite(fwd.mean)) {
    bb.xhat_rel = bb.xhat_abs = bb.a_err = bb.b_err = kInf;
    return bb;
  }
  const double u = U(model);
  const double eta = Eta(model);
  const bool layer = model.norm == Norm::kLayerNorm;
  bb.xhat_rel = std::pow(1 + u, layer ? 2 : 1) * (1 + bb.rstd_rel) - 1;
  bb.xhat_abs = (layer ? r * fwd.mean * (1 + bb.xhat_rel) : 0.0) + eta;
  const double phi = SumError(model, row.d);
  const double gs = Gamma(model, ScaleRoundings(row.d));
  const double psi = Compose(Compose(Gamma(model, 1), phi), gs);
  const double sum_uf = eta * (1 + phi) * (1 + gs) + eta;
  const double g1 = in.mean_abs_g;
  const double g2 = in.mean_abs_g_xhat;
  const double g3 = bb.xhat_rel * g2 + bb.xhat_abs * g1;
  bb.a_err = layer ? psi * g1 + sum_uf : 0.0;
  const double d_b = g3 + u * (g2 + g3) + eta * (1 + bb.xhat_rel + bb.xhat_abs);
  bb.b_err = (1 + psi) * d_b + psi * g2 + sum_uf;
  bb.gamma2 = Gamma(model, 2);
  return bb;
}

double XhatError(const BackwardRowBound& bb, double xhat) {
  return bb.xhat_rel * std::fabs(xhat) + bb.xhat_abs;
}

// dx_i = r Z_i, Z_i = g_i - a - xhat_i b; the kernel forms
// Z_hat = fl(fl(g_hat - a_hat) - fl(xhat_hat b_hat)), dx_hat = fl(r_hat Z_hat).
// Perturbed inputs (|a| <= G1, |b| <= G2, X_i = XhatError):
//   pi_i = |xhat_hat b_hat - xhat b| <= X_i G2 + |xhat_i| b_err + X_i b_err,
//   |Z~ - Z| <= (u|g_i| + eta) + a_err + pi_i =: Z0   (Z~ = exact ops on perturbed inputs),
// three roundings of the combination: |Z_hat - Z~| <= gamma_2 (|g_i| + G1 + u|g_i| + eta
//   + a_err + |xhat_i| G2 + pi_i) + eta (1 + u),
// then |dx_hat - dx| <= r |Z_hat - Z| (1 + rho_b)(1 + u) + |dx| ((1 + rho_b)(1 + u) - 1) + eta,
// and the store into the output format. Every term is r times a multiple of
// mean|g|, |g_i| or |xhat_i| mean|g xhat| (docs/DESIGN.md §4), plus r E_b terms.
double DxElementBound(const BoundModel& model, const RowInput& row, const BackwardRowInput& in,
                      const BackwardRowBound& bb, const DxElementInput& e) {
  if (!std::isfinite(bb.b_err) || !std::isfinite(bb.a_err)) return kInf;
  const double u = U(model);
  const double eta = Eta(model);
  const double r = row.stats.rstd;
  const double ax = std::fabs(e.xhat);
  const double ag = std::fabs(e.g);
  const double x_err = XhatError(bb, e.xhat);
  const double pi = x_err * in.mean_abs_g_xhat + ax * bb.b_err + x_err * bb.b_err;
  const double eg = u * ag + eta;
  const double z0 = eg + bb.a_err + pi;
  const double z = z0 +
                   bb.gamma2 * (ag + in.mean_abs_g + eg + bb.a_err + ax * in.mean_abs_g_xhat + pi) +
                   eta * (1 + u);
  const double scale = (1 + bb.rstd_rel) * (1 + u);
  const double acc_err = r * z * scale + std::fabs(e.dx) * (scale - 1) + eta;
  return acc_err + StoreRounding(model, model.out, std::fabs(e.dx) + acc_err) + kEvalSlack;
}

// dgamma_j = sum_r dy_rj xhat_rj, computed as sum_r fl(dy xhat_hat) over the
// rows in any order (chain <= rows - 1, ASNA §4.2):
//   |dgamma_hat - dgamma| <= S_err + Compose(gamma_1, gamma_{R-1}) (S_abs + S_err)
//                            + rows eta (1 + gamma_{R-1}),
// S_abs = sum |dy xhat|, S_err = sum |dy| X; then the store into the param format.
double DgammaBound(const BoundModel& model, const ColumnInput& c) {
  const double gr = Gamma(model, static_cast<double>(std::max<std::int64_t>(c.rows - 1, 0)));
  const double acc_err =
      c.sum_abs_dy_xhat_err +
      Compose(Gamma(model, 1), gr) * (c.sum_abs_dy_xhat + c.sum_abs_dy_xhat_err) +
      static_cast<double>(c.rows) * Eta(model) * (1 + gr);
  if (!std::isfinite(acc_err)) return kInf;
  return acc_err + StoreRounding(model, model.param, std::fabs(c.dgamma) + acc_err) + kEvalSlack;
}

// dbeta_j = sum_r dy_rj: exact terms, |error| <= gamma_{R-1} sum |dy| (no
// underflow error in sums), then the store.
double DbetaBound(const BoundModel& model, const ColumnInput& c) {
  const double gr = Gamma(model, static_cast<double>(std::max<std::int64_t>(c.rows - 1, 0)));
  const double acc_err = gr * c.sum_abs_dy;
  if (!std::isfinite(acc_err)) return kInf;
  return acc_err + StoreRounding(model, model.param, std::fabs(c.dbeta) + acc_err) + kEvalSlack;
}

}  // namespace lnv

// The error-bound models: how far a kernel's outputs
// may be from the exact values, given the algorithm that computes the row
// statistics, its reduction shape, its accumulation format and the formats
// its outputs are rounded into. One place for every formula; bounds.cc has
// each one's derivation and source:
//   Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed. (ASNA):
//     §2.1-2.2 (rounding model), §3.1 (gamma_k), ch. 4 (summation, §4.3 Kahan);
//   Chan, Golub & LeVeque, "Algorithms for computing the sample variance:
//     analysis and recommendations", Amer. Statist. 37 (1983) (CGL);
//   Higham & Mary, "A new approach to probabilistic rounding error analysis",
//     SIAM J. Sci. Comput. 41 (2019) (the probabilistic sqrt(k) form).
//
// The models take the EXACT quantities (from the oracle) as inputs and are
// rigorous upper bounds (unless BoundModel::probabilistic is set): a kernel
// that follows its declared algorithm with correctly rounded operations never
// exceeds them. +inf means no claim is possible (e.g. the variance error can
// reach sigma^2 + eps, so rstd is unconstrained).
//
// Arithmetic a kernel may use and still be covered (matching
// impls/cpu/scalar_common.h): mean = sum / d or sum * (1/d); rstd = 1/sqrt(v +
// eps) or sqrt(1/(v + eps)) (correctly rounded ops); xhat = (x - mean) * rstd;
// y = gamma * xhat + beta; dx = rstd * ((g - a) - xhat * b); any association of
// the sums whose longest chain is at most the model's k; FMAs anywhere (an FMA
// is one rounding where the model counts two).
#ifndef LNV_HARNESS_BOUNDS_H_
#define LNV_HARNESS_BOUNDS_H_

#include <cstdint>

#include "impls/api.h"
#include "impls/registry.h"
#include "oracle/oracle.h"

namespace lnv {

// What selects a bound: everything about the kernel that the error depends on.
struct BoundModel {
  Norm norm = Norm::kLayerNorm;
  Algorithm algorithm = Algorithm::kTwoPass;
  Reduction reduction = Reduction::kSerial;
  std::int64_t chunk = 0;            // leaf size of a kTree reduction
  LaneShapeFn lane_shape = nullptr;  // a kLanes reduction's tree (registry.h)
  FloatFormat acc = kBinary32;       // the accumulation format (u_c = 2^-p)
  FloatFormat out = kBinary32;       // y and dx: the x dtype
  FloatFormat param = kBinary32;     // dgamma, dbeta: the param dtype
  FloatFormat stat = kBinary32;      // mean, rstd: the ABI writes float
  // Higham & Mary's probabilistic form: gamma_k -> exp(lambda sqrt(k) u +
  // k u^2/(1-u)) - 1, which holds with probability >= 1 - 2 exp(-lambda^2
  // (1-u)^2 / 2) per use. Not a guarantee: the statistical tier's model
  // (TypicalModel, below, sets lambda from a false-alarm budget), a verdict
  // only on the families that hold its model.
  bool probabilistic = false;
  double lambda = 3.0;
};

// The model a registry entry is held to: its bound_algorithm (not its
// algorithm: a negative control is held to the bound of what it imitates).
BoundModel ModelFor(const ImplInfo& impl);

// That model in words, e.g. "two_pass bound, serial reduction (k = d - 1),
// accumulation f32 (harness/bounds.h)": what ln_check --list and
// errors.json say a kernel is held to.
std::string DescribeBound(const ImplInfo& impl);

// ---- The statistical tier (verdict beyond_typical) ----
// The worst-case gamma_k is loose by about sqrt(k) on random data, so a badly
// wrong kernel (statistics over half a long row: relative error ~ 1/sqrt(d))
// can meet it. On the random-data families the judge also holds each element
// to the same formulas with Higham & Mary's probabilistic gamma (2019, Thm
// 2.4): under their model (independent, mean-zero rounding errors) each use
// |prod(1 + delta_i) - 1| <= gamma~_k(lambda) fails with probability at most
// 2 exp(-lambda^2 (1-u)^2 / 2). An element's bound rests on at most
// TypicalUses(rows, d) such uses: each row's mean and variance chains and the
// backward's two row sums (4 d partial sums, Thm 3.1's union over them), <= 32
// single operations, and for dgamma/dbeta every row of the column. By the
// union bound, the expected false alarms over N elements are at most
// N * uses * 2 exp(-lambda^2 (1-u)^2 / 2); lambda is the smallest value that
// keeps this at kTypicalFalseAlarms for kTypicalNightElements, a night of
// fuzz_ln at 2,000 exec/s (one ln_check or ln_report run judges fewer, so
// expects fewer):
//   lambda = sqrt(2 ln(2 N uses / F)) / (1 - u)   (about 9-10 here).
inline constexpr double kTypicalFalseAlarms = 1e-3;
inline constexpr double kTypicalNightElements = 1e11;
double TypicalUses(std::int64_t rows, std::int64_t d);
double TypicalLambda(const BoundModel& model, std::int64_t rows, std::int64_t d);
// The model of the statistical tier for a case of rows x d: probabilistic,
// with TypicalLambda. (Gamma takes the smaller of the two forms: the
// worst-case one always holds.)
BoundModel TypicalModel(BoundModel model, std::int64_t rows, std::int64_t d);

// gamma_k = k u / (1 - k u) (ASNA §3.1, Lemma 3.1), +inf when k u >= 1; with
// model.probabilistic, the smaller of that and the probabilistic form
// exp(lambda sqrt(k) u + k u^2/(1-u)) - 1 (larger for small k). k = 0 gives 0.
double Gamma(const BoundModel& model, double k);

// Longest rounding chain of a sum of n terms in the model's reduction shape:
// serial n - 1; tree min(n - 1, chunk + ceil(log2(parts))), parts =
// ceil(n / chunk); lanes min(n - 1, leaf + levels) of lane_shape(n) (serial
// when lane_shape is null). (Any binary summation tree over n terms has depth
// <= n - 1.)
std::int64_t ChainLength(const BoundModel& model, std::int64_t n);

// phi such that a sum of n terms t_i, computed in the model's shape, is
// sum t_i (1 + theta_i) with |theta_i| <= phi: gamma_k (ASNA §4.2, recursive summation) or,
// for kKahanTwoPass, the compensated-summation bound (ASNA §4.3).
double SumError(const BoundModel& model, std::int64_t n);

// ---- Forward ----

// Exact per-row quantities the forward bounds need.
struct RowInput {
  RowStats stats;    // from the oracle: mean, var, rstd, mean_abs (exact, to double)
  double eps = 0.0;  // the float eps the kernel adds
  std::int64_t d = 0;
  double max_abs = 0.0;  // max_i |x_i| (Welford's prefix means are bounded by it)
};

// Builds a RowInput from the oracle's stats and the row itself.
RowInput MakeRowInput(const RowStats& stats, double eps, const double* row, std::int64_t d);

// Per-row forward bounds. All absolute unless named _rel.
struct RowBound {
  // In the accumulation format, before the statistics are stored:
  double mean_err = 0.0;  // |mean_hat - mu| (0 for RMSNorm)
  double var_err = 0.0;   // Delta = |v_hat - sigma^2| (sigma^2 = mean square for RMSNorm)
  double rstd_rel = 0.0;  // rho: |r_hat / r - 1|, +inf when Delta >= q = sigma^2 + eps
  // The stored float outputs (what the ABI's mean/rstd hold):
  double mean = 0.0;  // |mean_out - mu|
  double rstd = 0.0;  // |rstd_out - r|
  // The row's constants of ForwardElementBound (bounds.cc), computed once:
  double theta_x = 0.0;  // (1+u)^2 (1+rho) - 1; RMSNorm (1+u)(1+rho) - 1
  double gamma2 = 0.0;   // gamma_2 of the accumulation format
};
RowBound ForwardRowBound(const BoundModel& model, const RowInput& row);

// The conditioning part of a kernel's claimed range (with ImplInfo's
// max_row_sumsq and max_backward_weight, the rest of it): a finite row is
// inside when its variance error bound Delta is below q = sigma^2 + eps.
// Beyond that v_hat + eps may be <= 0 or arbitrarily far from q, so rstd, y
// and dx are unconstrained for any kernel of that algorithm and accumulation:
// NaN and +-inf are legitimate there, and the judge applies only the NaN
// contract. A row whose Delta is itself unbounded (k u >= 1: an accumulation
// too narrow for d) stays inside: it has no accuracy claim (bound +inf), but
// finite in, finite out and the NaN contract still hold.
bool RowInClaimedRange(const RowBound& rb);

// The most elements of a claims_bound or plugin kernel's output that may be
// judged without a claim (bound +inf, or outside the claimed range) on the
// random-data families (IsRandomDataFamily, harness/families.h) before the
// kernel is "not judged" rather than passed: a verdict must rest on claims.
inline constexpr double kMaxUnclaimedFraction = 0.01;

// One element of y, exact quantities.
struct ElementInput {
  double xhat = 0.0;   // exact xhat_i (oracle), to double
  double gamma = 1.0;  // 1 when absent
  double beta = 0.0;   // 0 when absent
  double y = 0.0;      // exact y_i (hi + lo)
};
// Bound on |y_out_i - y_i| (B_i, in its rigorous form; bounds.cc derives it);
// rb is ForwardRowBound(model, row).
double ForwardElementBound(const BoundModel& model, const RowInput& row, const RowBound& rb,
                           const ElementInput& e);

// ---- Backward ----
// The backward receives the forward's stored mean/rstd (the ABI's floats), so
// their errors (RowBound::mean, ::rstd) propagate into its xhat.

// Exact per-row sums of g = dy * gamma.
struct BackwardRowInput {
  double mean_abs_g = 0.0;       // mean_i |g_i|
  double mean_abs_g_xhat = 0.0;  // mean_i |g_i xhat_i|
};

struct BackwardRowBound {
  // The kernel's recomputed xhat: |xhat_hat_i - xhat_i| <= xhat_rel |xhat_i| + xhat_abs.
  double xhat_rel = 0.0;
  double xhat_abs = 0.0;
  double rstd_rel = 0.0;  // rho_b: relative error of the rstd the backward uses
  double a_err = 0.0;     // |a_hat - a|, a = mean(g) (0 for RMSNorm)
  double b_err = 0.0;     // |b_hat - b|, b = mean(g xhat)
  double gamma2 = 0.0;    // gamma_2 of the accumulation format (DxElementBound's)
};
BackwardRowBound BackwardRowBoundFor(const BoundModel& model, const RowInput& row,
                                     const RowBound& fwd, const BackwardRowInput& in);

// Bound on |xhat_hat - xhat| for one element.
double XhatError(const BackwardRowBound& bb, double xhat);

struct DxElementInput {
  double xhat = 0.0;  // exact
  double g = 0.0;     // dy_i * gamma_i, exact
  double dx = 0.0;    // exact dx_i (hi + lo)
};
// Bound on |dx_out_i - dx_i|: scaled by r (mean|g| + |g_i| + |xhat_i| mean|g xhat|)
// (bounds.cc derives it), plus the propagated statistics errors; bb is
// BackwardRowBoundFor(model, row, ...).
double DxElementBound(const BoundModel& model, const RowInput& row, const BackwardRowInput& in,
                      const BackwardRowBound& bb, const DxElementInput& e);

// Exact column sums over the rows for dgamma_j, dbeta_j.
struct ColumnInput {
  std::int64_t rows = 0;
  double sum_abs_dy_xhat = 0.0;      // sum_r |dy_rj xhat_rj|
  double sum_abs_dy_xhat_err = 0.0;  // sum_r |dy_rj| XhatError(row r, xhat_rj)
  double sum_abs_dy = 0.0;           // sum_r |dy_rj|
  double dgamma = 0.0;               // exact dgamma_j
  double dbeta = 0.0;                // exact dbeta_j
};
double DgammaBound(const BoundModel& model, const ColumnInput& c);
double DbetaBound(const BoundModel& model, const ColumnInput& c);

}  // namespace lnv

#endif  // LNV_HARNESS_BOUNDS_H_

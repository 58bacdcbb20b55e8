// The exact oracle: LayerNorm and RMSNorm, forward and backward, computed from
// exact rational statistics with one irrational step (r = 1/sqrt(q)), then
// rounded once, directly into the target format (round-to-nearest-even).
//
// Inputs are doubles; every fp64/fp32/bf16/fp16 value is one, so the oracle
// needs no low-precision types: the target format is data (FloatFormat).
//
// Math (docs/DESIGN.md section 1). Row x in R^d, gain g (gamma), bias b (beta), eps:
//   LayerNorm: mu = sum(x)/d, s2 = sum((x-mu)^2)/d, q = s2 + eps, r = q^(-1/2),
//              xhat = (x-mu) r, y = gamma xhat + beta.
//   RMSNorm:   s2 = sum(x^2)/d, q = s2 + eps, xhat = x r, y = gamma xhat.
//   Backward:  g = dy gamma, a = mean(g) (0 for RMSNorm), b = mean(g xhat),
//              dx = r (g - a - xhat b); dgamma_j = sum_rows dy xhat; dbeta_j = sum_rows dy.
//
// Special values: IEEE arithmetic applied to the exact formula, output by
// output (the README has the short table). Where two faithful evaluation
// orders give different IEEE results, the oracle returns the one of the
// formula as written and marks the other accepted (ExactValue::nan_accepted);
// elements that IEEE rules alone decide are marked by_table and allow no
// error: `rounded` (a zero of either sign) or the accepted alternative.
//   * A NaN in a row of x: every sum over the row is NaN, so y, mean, rstd and
//     dx of the row are NaN [table], and so is dgamma_j for every j [table].
//   * LayerNorm, +-inf in a row of x (no NaN): mu = sum(x)/d is +-inf when
//     the infinities share a sign [table; NaN accepted: Welford's update
//     m + (x - m)/n, a Kahan-compensated sum and a max|x|-scaled sum all reach
//     inf - inf], NaN when both signs occur [table]. x - mu, sigma^2, r, y and
//     dx are then NaN [table], and dgamma_j is NaN for every j [table].
//   * RMSNorm, +-inf in a row of x (no NaN), eps neither NaN nor -inf:
//     s2 = sum(x^2)/d = +inf, q = +inf, r = 1/sqrt(q) = rsqrt(q) = +0.
//       rstd = +0 [table; NaN accepted: a kernel that divides the row by
//         max|x| before summing gets inf/inf = NaN].
//       y_j = (x_j r) gamma_j: NaN where x_j = +-inf (inf * 0) or gamma_j is
//         not finite (0 * inf) [table]; else +-0 [table; NaN accepted, the
//         scaled order again], with the sign of x_j gamma_j, the same in any
//         association of the product (x (r gamma) too), and a kernel that
//         adds a zero beta (fma) gets +0: the sign is not judged. Never a
//         nonzero value.
//       dx_j = r (g_j - xhat_j b) is NaN for every j [table]: b = mean(g xhat)
//         holds the infinite element's g_k (inf * 0) = NaN, and 0 * NaN = NaN.
//       dgamma_j: the row's term dy_j xhat_j is NaN where x_j = +-inf or dy_j
//         is not finite; else +-0, which leaves the sum unchanged: dgamma_j is
//         the other rows' sum (NaN accepted, the scaled order), an exact +0
//         [table] when every row of the column is such a row, NaN [table] when
//         a term is NaN.
//     With eps NaN or -inf, q is NaN (inf - inf): every output of the row NaN.
//   * eps NaN: q is NaN, so y, rstd, dx are NaN for every row; mean is still mu.
//   * q < 0 (possible only with eps < 0): sqrt of a negative number is NaN, so
//     rstd, y, dx are NaN; mean is mu.
//   * q = 0 (eps <= 0 and s2 = -eps): r = +inf. xhat_i = (x_i - mu) * inf is
//     +-inf where x_i != mu and NaN (0 * inf) where x_i == mu; y_i = gamma_i *
//     xhat_i + beta_i in IEEE arithmetic; rstd = +inf; dx is NaN (inf - inf).
//   * q = +inf (eps = +inf, finite row): r = +0, rstd = +0, y_i = gamma_i 0 +
//     beta_i (NaN where gamma_i is infinite), dx = +0.
//   * Non-finite gamma_i or beta_i on a finite row: y_i = gamma_i * xhat_i +
//     beta_i evaluated in IEEE arithmetic on the signs (gamma_i = inf with
//     xhat_i = 0 is NaN; beta_i = +-inf gives +-inf unless the product is the
//     opposite infinity). Non-finite dy or gamma in a backward row: dx of that
//     row is NaN (IEEE gives +-inf or NaN per element, by the signs and the
//     order of g - a - xhat b, never a finite value); dgamma/dbeta follow IEEE
//     sums. Finite dy and gamma whose product overflows binary64 are exact
//     values like others. These NaNs are not [table]: they come from inf * 0
//     or inf - inf where the 0 or the cancellation is exact but a kernel's
//     rounded xhat or sum need not be, so the judge accepts +-inf for them.
//   * Finite results beyond the format's range round to +-inf per IEEE RNE
//     (|v| >= (2 - 2^-p) 2^emax); tiny results round into subnormals or +-0.
//     The sign of an exact zero is +0, except y_i = beta_i = -0 with gamma_i
//     xhat_i = 0 exactly, which is -0 + (+0) = +0 in IEEE as well.
//   * xhat (a by-product for the bounds, not an output) is NaN on a row of x
//     holding NaN or +-inf: no bound is claimed there.
//
// Termination of the Ziv loop: each output is v = A + P * r with A, P exact
// rationals (A = beta_i for y, 0 for dx). If P = 0 or q is the square of a
// rational, v is rational and is rounded exactly (ties included). Otherwise
// r is irrational, so v is irrational and can be neither a float nor a
// midpoint: for some precision the enclosure of v excludes every rounding
// boundary, and the loop ends. dgamma sums several rows' irrationals: terms
// are grouped by the square class of q (rows i, k with q_i q_k the square of a
// rational, so that r_k = r_i sqrt(q_i/q_k) with sqrt(q_i/q_k) rational), and
// each class sums exactly to (rational) * r of one representative row. Classes
// whose rational is 0 drop out; none left gives +0 and one left is the single-r
// case. Several left are rationals times square roots of distinct squarefree
// integers, linearly independent over Q (Besicovitch 1940), so the sum is
// irrational and the loop ends too. Its precision is capped at
// OracleOptions::max_bits all the same: a value not decided by then is reported
// kUndecided, never guessed.
#ifndef LNV_ORACLE_ORACLE_H_
#define LNV_ORACLE_ORACLE_H_

#include <cstdint>
#include <span>
#include <vector>

namespace lnv {

// A binary floating-point format: precision p (with the hidden bit), and the
// exponent range of normal numbers [emin, emax]; subnormals go down to
// 2^(emin - p + 1).
struct FloatFormat {
  int precision;
  int emin;
  int emax;
};
inline constexpr FloatFormat kBinary64{53, -1022, 1023};
inline constexpr FloatFormat kBinary32{24, -126, 127};
inline constexpr FloatFormat kBinary16{11, -14, 15};
inline constexpr FloatFormat kBfloat16{8, -126, 127};

// Rounds a double to the format, IEEE round-to-nearest-even, once (exact for
// any double input). Overflow gives +-inf, NaN stays NaN.
double RoundToFormat(double v, FloatFormat f);
// The gap between v and the next larger-magnitude value of the format, with
// the subnormal floor: ulp(v) = 2^(max(floor(log2|v|), emin) - p + 1).
double UlpOf(double v, FloatFormat f);

enum class OracleNorm { kLayerNorm, kRmsNorm };
enum class OracleBackend {
  kBoost,  // cpp_int exact integers; r enclosed by an exact integer square root
  kMpfr,   // GMP integers (Boost's gmp backend); r enclosed by MPFR with directed rounding
};

struct OracleProblem {
  OracleNorm norm = OracleNorm::kLayerNorm;
  std::int64_t rows = 0, d = 0;
  std::span<const double> x;             // rows * d
  std::span<const double> gamma;         // d, or empty: all ones
  std::span<const double> beta;          // d, or empty: all zeros (ignored for RMSNorm)
  std::span<const double> dy;            // rows * d; needed by Backward only
  double eps = 0.0;                      // the value the kernel uses (a float, as a double)
  FloatFormat out_format = kBinary32;    // y and dx: the x dtype
  FloatFormat param_format = kBinary32;  // dgamma, dbeta: the param dtype
  FloatFormat stat_format = kBinary32;   // mean, rstd: the ABI writes float
};

struct OracleOptions {
  OracleBackend backend = OracleBackend::kBoost;
  // Largest working precision of the Ziv loop, in bits; reaching it gives kUndecided.
  int max_bits = 1 << 14;
  // Decide most elements in double arithmetic with a rigorous error bound
  // first, then what is left (binary64 outputs, near-ties) in 256-bit
  // outward-rounded intervals (wide_path.h); elements neither decides go to
  // the exact path. Off in the tests that compare backends, so that they
  // compare the exact paths.
  bool fast_path = true;
  // Sampled re-decisions: one value in recheck_every (on average; the same
  // ones on every run) that the fast path decides is decided again on the
  // exact path (0: none; 1: all). The results count them
  // (rechecked) and the ones whose rounding differs, or for binary64 whose
  // double-double differs (recheck_disagreements, a bug of the oracle's
  // fast path if ever above 0).
  std::int64_t recheck_every = 0;
};

enum class ValueStatus : std::uint8_t { kDecided, kUndecided };

// One output element.
struct ExactValue {
  double rounded = 0.0;  // correctly rounded into the output format
  // The exact value, hi + lo, known to at least 2p bits of the output format
  // (relative); hi alone when that suffices. Non-finite results: hi = rounded
  // (an infinity: lo = hi too). A finite exact value past binary64's overflow
  // threshold (binary64 outputs): hi = +-inf and a finite lo = the exact
  // value -+ 2^1024, rounded to nearest, so that a finite kernel value can
  // still be measured against it.
  double hi = 0.0, lo = 0.0;
  ValueStatus status = ValueStatus::kDecided;
  // Set by the special-value table (above). by_table: IEEE rules alone decide
  // the element, so there is no rounding error to allow: a kernel must return
  // `rounded` (a zero of either sign) or an accepted alternative. nan_accepted:
  // NaN is such an alternative, the IEEE result of another faithful
  // evaluation order (e.g. scaling a row by max|x| before summing).
  bool by_table = false;
  bool nan_accepted = false;
};

// Per-row exact statistics, as correctly rounded doubles (for bounds and reports).
struct RowStats {
  bool finite = true;     // no NaN/inf in the row of x
  double mean = 0.0;      // mu (0 for RMSNorm)
  double var = 0.0;       // s2: biased variance (LayerNorm) or mean square (RMSNorm)
  double rstd = 0.0;      // r = (s2 + eps)^(-1/2)
  double mean_abs = 0.0;  // sum|x| / d
};

struct OracleForwardResult {
  std::vector<ExactValue> y;     // rows * d, in out_format
  std::vector<ExactValue> mean;  // rows (LayerNorm only), in stat_format
  std::vector<ExactValue> rstd;  // rows, in stat_format
  std::vector<RowStats> stats;   // rows
  std::vector<double> xhat;      // rows * d: xhat correctly rounded to double
  std::int64_t undecided = 0;    // count of kUndecided elements
  std::int64_t slow_path = 0;    // elements the fast path could not decide
  std::int64_t rechecked = 0, recheck_disagreements = 0;  // OracleOptions::recheck_every
};

struct OracleBackwardResult {
  std::vector<ExactValue> dx;      // rows * d, in out_format
  std::vector<ExactValue> dgamma;  // d, in param_format
  std::vector<ExactValue> dbeta;   // d, in param_format (LayerNorm only)
  std::int64_t undecided = 0;
  std::int64_t slow_path = 0;
  std::int64_t rechecked = 0, recheck_disagreements = 0;  // OracleOptions::recheck_every
};

OracleForwardResult OracleForward(const OracleProblem& p, const OracleOptions& o = {});
OracleBackwardResult OracleBackward(const OracleProblem& p, const OracleOptions& o = {});

}  // namespace lnv

#endif  // LNV_ORACLE_ORACLE_H_

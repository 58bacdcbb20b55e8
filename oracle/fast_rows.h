// The fast path's per-element loops: one row's y (forward) or dx (backward)
// in binary64 with the error rules of fast_path.h (Ed: each operation adds
// u |result| + 2^-1074), and a branch-free decision per element, so that the
// loops vectorize. They are compiled for AVX-512, AVX2 + FMA and baseline
// x86-64, and picked at run time; every version does the same IEEE
// operations (no contraction: -ffp-contract=off), so decides the same way.
// Internal to oracle/.
//
// Decision (as DecideFast): with err = e (1 + 2^-40) + 2^-1070, the interval
// [|v| - err, |v| + err], widened by one binary64 step each side to cover the
// rounding of its ends, must round to one value of the format, and hold 2p
// correct bits: err <= (|v| - err) 2^-2p. The format rounding is done in
// arithmetic (RoundMagnitude), for ends in [2^-960, 2^1023): smaller or larger
// values are left to the caller's slower paths, as is every element whose
// value or bound is not finite.
#ifndef LNV_ORACLE_FAST_ROWS_H_
#define LNV_ORACLE_FAST_ROWS_H_

#include <cstdint>

#include "oracle/fast_path.h"
#include "oracle/oracle.h"

namespace lnv::oracle_internal {

// A row's operands: the mean mu within me of mh + ml (all 0 for RMSNorm),
// r within re of rh + rl. n_i = x_i - mu is taken as the double-word
// TwoSum(x_i, -mh) - ml, within u |its low word| + u |ml| + me + 2^-1073
// (Row::NFastWord's rule), or as x_i - mh in binary64 (NError()).
struct RowOperands {
  double mh = 0.0, ml = 0.0, me = 0.0;
  double rh = 0.0, rl = 0.0, re = 0.0;
};

// n = x - mu as a double-word with its bound (the rule above).
Edd NWord(double x, const RowOperands& op);

// Where the loops write: the rounded value, the binary64 value (the exact
// one to 2p bits) and whether the element was decided (1) or not (0).
struct Decisions {
  double* rounded;
  double* value;
  std::uint8_t* ok;
};

// y_i = beta_i + gamma_i (x_i - mu) r, and xhat_i = hi + lo of the
// double-word product NWord(x_i) (rh + rl), for i < d.
// gamma and beta hold d values (ones and zeros when the problem has none).
void DecideForwardRow(const double* x, const double* gamma, const double* beta, std::int64_t d,
                      const RowOperands& op, FloatFormat f, double* xhat, Decisions out);

// The backward's row sums, g_i = dy_i gamma_i: sum g (Sum2) and sum g n_i
// (Dot2 of the split g with the double-word n), each in kLanes chains
// (lanes.h), with what their bounds need (oracle.cc, PrepareFastBackward):
// the sums of |terms| and the error of merging the chains. finite is false
// when a product or a sum overflows.
struct BackwardSums {
  double s_hi = 0.0, s_lo = 0.0, s_abs = 0.0, s_merge = 0.0;
  double t_hi = 0.0, t_lo = 0.0, t_abs = 0.0, t_merge = 0.0;
  double n_err = 0.0;  // sum |g_i| err(n_i)
  bool finite = true;
};
BackwardSums SumBackwardRow(const double* x, const double* dy, const double* gamma, std::int64_t d,
                            const RowOperands& op);

// dgamma's running double-words, one per column: acc_j += dy_j (n_j r) in
// double-word arithmetic (Edd: AddEdd, MulEdd), a row at a time.
struct ColumnSums {
  double* hi;
  double* lo;
  double* e;
};
void AddDgammaRow(const double* x, const double* dy, std::int64_t d, const RowOperands& op,
                  ColumnSums acc);

// dbeta's running sums, one per column, a row at a time: hi by TwoSum, its
// errors summed by TwoSum into lo, and e the sum of |the second residuals|.
// The column's exact sum is then within e (1 + gamma_rows) of hi + lo, and
// is exactly hi + lo when e is 0 (ColumnSums::e holds that sum here).
void AddDbetaRow(const double* dy, std::int64_t d, ColumnSums acc);

// The exact value h + l rounded into f (p <= 25): round h, unless h is a
// rounding boundary (a midpoint of f) and l != 0, which then picks the
// side. False where |h + l| is outside [2^-1000, 2^1000) but not zero.
bool RoundDoubleWord(double h, double l, FloatFormat f, double* out);

// dx_i = r (dy_i gamma_i - a - (x_i - mu) bq), with a within a_err of ah and
// bq = b / q within bq_err of bqh.
void DecideBackwardRow(const double* x, const double* dy, const double* gamma, std::int64_t d,
                       const RowOperands& op, double ah, double a_err, double bqh, double bq_err,
                       FloatFormat f, Decisions out);

// The rounding of a positive binary64 m into f, round to nearest even
// (+inf past the format's range), in arithmetic that vectorizes. Exact for
// every positive m that is a normal binary64.
double RoundMagnitude(double m, FloatFormat f);

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_FAST_ROWS_H_

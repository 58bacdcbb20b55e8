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

#include "oracle/oracle.h"

namespace lnv::oracle_internal {

// A row's operands: n_i = x_i - mu is within n_err of x_i - mh (mh = 0 and
// n_err = 0 for RMSNorm), r within r_err of rh.
struct RowOperands {
  double mh = 0.0, n_err = 0.0;
  double rh = 0.0, r_err = 0.0;
};

// Where the loops write: the rounded value, the binary64 value (the exact
// one to 2p bits) and whether the element was decided (1) or not (0).
struct Decisions {
  double* rounded;
  double* value;
  std::uint8_t* ok;
};

// y_i = beta_i + gamma_i (x_i - mu) r, and xhat_i = (x_i - mh) rh, for i < d.
// gamma and beta hold d values (ones and zeros when the problem has none).
void DecideForwardRow(const double* x, const double* gamma, const double* beta, std::int64_t d,
                      const RowOperands& op, FloatFormat f, double* xhat, Decisions out);

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

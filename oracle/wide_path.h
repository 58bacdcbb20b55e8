// The oracle's middle tier for the backward: interval arithmetic at kWideBits
// bits, every operation rounded outward with MPFR's directed rounding, for
// the values the double-word fast path cannot decide: binary64 outputs
// (which need 2p = 106 bits of the exact value, more than a double-word
// holds), and near-ties or cancellations of any format.
//
// Each quantity of a row is enclosed, never approximated: the sums of x, of
// (x_i - mu)^2 (or x_i^2) and of g_i = dy_i gamma_i, the mean mu, q = sigma^2
// + eps (or mean square + eps), r = 1/sqrt(q) (mpfr_rec_sqrt rounded down at
// q's upper end and up at its lower end), a = mean(g), T = sum g_i n_i and
// b = T/(d q). Then dx_i = r (g_i - a - n_i b) and each row's dgamma term
// dy_i n_i r are enclosed by interval products. An interval [lo, hi] holds
// the exact value because every MPFR result lies on its side of the exact
// result of its operands (IEEE 754-style directed rounding, MPFR's contract)
// and each operation is monotone in each operand over the cases taken
// (products by sign, quotients by a positive divisor).
//
// A value is decided only when both ends, which are dyadic numbers, round
// to one value and one double-double (oracle.cc, DecideEnclosure): then so
// does every number between them, the exact one included. Otherwise, or
// when q's enclosure is not positive, the exact path decides. The exponent
// range of MPFR's numbers (about 2^+-2^30) holds every product and quotient
// of these finite doubles, so nothing overflows or underflows on the way.
// Internal to oracle/.
#ifndef LNV_ORACLE_WIDE_PATH_H_
#define LNV_ORACLE_WIDE_PATH_H_

#include <gmp.h>
#include <mpfr.h>

#include <cstdint>
#include <vector>

#include "oracle/dyadic.h"

namespace lnv::oracle_internal {

// Enough for a binary64 double-double (106 bits) after about 140 bits of
// cancellation; four 64-bit limbs, so that an end fits a Dyadic.
inline constexpr mpfr_prec_t kWideBits = 256;

// n MPFR numbers at kWideBits in one allocation (MPFR's custom interface):
// no per-number malloc, and nothing to clear.
class WideVars {
 public:
  explicit WideVars(std::size_t n);
  // A copy's numbers would point into the original's limbs: moves only.
  WideVars(const WideVars&) = delete;
  WideVars& operator=(const WideVars&) = delete;
  WideVars(WideVars&&) = default;
  WideVars& operator=(WideVars&&) = default;
  mpfr_ptr operator[](std::size_t i) { return &vars_[i]; }
  std::size_t size() const { return vars_.size(); }

 private:
  std::vector<__mpfr_struct> vars_;
  std::vector<mp_limb_t> limbs_;
};

// x = v exactly, for a finite double v and an x of a WideVars (kWideBits):
// the limbs and exponent are written through MPFR's custom interface.
// mpfr_set_d would save and restore MPFR's exponent range and flags, which
// are thread-local: under the fuzz build's sanitizers that bookkeeping cost
// more than the wide tier's arithmetic (fuzz/README.md, Speed).
void SetDouble(mpfr_ptr x, double v);

// [lo, hi], two numbers of a WideVars.
struct WideIv {
  mpfr_ptr lo, hi;
};

// The end points of an enclosure as Dyadics (dyadic.h); false if an end is
// not finite, the ends are out of order (a broken enclosure must not
// decide), or an end does not leave ToDoubleDouble its room
// (FitsDoubleDouble).
bool WideEnds(const WideIv& v, Dyadic* lo, Dyadic* hi);

// The column sums dgamma_j = sum over rows of dy n r, as intervals, for the
// rows that WideRow prepared; complete() once every row of the call
// has added its terms.
class WideColumns {
 public:
  WideColumns() : vars_(0) {}
  void Start(std::int64_t d);
  WideIv At(std::int64_t j) { return {vars_[2 * j], vars_[2 * j + 1]}; }
  bool started() const { return started_; }
  void Invalidate() { valid_ = false; }
  bool valid() const { return started_ && valid_; }

 private:
  WideVars vars_;
  bool started_ = false, valid_ = true;
};

// One row in wide intervals: the forward's xhat and y, the backward's dx and
// dgamma terms.
class WideRow {
 public:
  WideRow();
  // mu, q and r of a row of d finite x. False when q's enclosure reaches 0
  // or below, or is not finite, or when MPFR's exponent range has been
  // narrowed so that doubles and their products are no longer exact (the
  // exact path then decides).
  bool PrepareStats(const double* x, std::int64_t d, bool layer, double eps);
  // The enclosures of xhat_i = n_i r, of gamma xhat_i and of y_i = beta +
  // gamma xhat_i for finite gamma and beta (after PrepareStats); valid until
  // the next call.
  WideIv Xhat(std::int64_t i);
  WideIv GammaXhat(std::int64_t i, double gamma);  // gamma xhat_i: y without beta
  WideIv Y(std::int64_t i, double gamma, double beta);
  // a and b from the row's dy and gamma (gamma all ones when absent), all
  // finite, after PrepareStats returned true.
  void PrepareGrad(const double* dy, const double* gamma);
  // The enclosure of dx_i, after PrepareGrad; valid until the next call.
  WideIv Dx(std::int64_t i);
  // Adds dy_j n_j r to column j's sum, for every j (after PrepareStats).
  void AddDgamma(const double* dy, WideColumns* cols);

  // The row's enclosures (tests check them against exact rationals): mu, q,
  // r after PrepareStats, n_i (valid until the next call), a and b after
  // PrepareGrad.
  WideIv Mu() { return Iv(kMu); }
  WideIv Q() { return Iv(kQ); }
  WideIv R() { return Iv(kR); }
  WideIv N(std::int64_t i);
  WideIv A() { return Iv(kA); }
  WideIv B() { return Iv(kB); }

 private:
  // The intervals, two numbers each, then scratch numbers.
  enum Slot : int { kMu, kQ, kR, kA, kB, kN, kT, kC, kDx, kIvs };
  static constexpr int kScratch = 2 * kIvs;
  WideIv Iv(int k) { return {v_[2 * k], v_[2 * k + 1]}; }
  void EncloseN(std::int64_t i, WideIv n);
  mpfr_ptr ExactG(std::int64_t i);  // dy_i gamma_i, exactly
  // v in the point slot (one number, overwritten by the next call): a
  // plain MPFR operation on it costs less than MPFR's *_d functions.
  mpfr_srcptr Point(double v);

  WideVars v_;
  const double* x_ = nullptr;
  const double* dy_ = nullptr;
  const double* gamma_ = nullptr;
  std::int64_t d_ = 0;
  bool layer_ = true;
};

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_WIDE_PATH_H_

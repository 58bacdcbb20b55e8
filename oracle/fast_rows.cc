// The fast path's per-element loops (fast_rows.h), one source compiled per
// instruction set and dispatched once from cpuid.
#include "oracle/fast_rows.h"

#include <bit>
#include <cmath>

#include "oracle/fast_path.h"
#include "oracle/isa.h"
#include "oracle/lanes.h"

namespace lnv::oracle_internal {
namespace {

// The rounding of a positive m into a format of precision p and exponents
// [emin, emax], round to nearest even, in arithmetic only (no variable
// shift, so that it vectorizes): with ulp the format's quantum at m, adding
// c = 1.5 2^52 ulp rounds m (< 2^52 ulp) to a multiple of ulp, and
// subtracting c again is exact (the classic shifter; RNE is the default
// rounding). A result of 2^(emax+1) or more is past the range: +inf.
[[gnu::always_inline]] inline double RoundMagnitudeTo(double m, int p, int emin, double top) {
  const std::int64_t e_m = static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(m) >> 52) - 1023;
  const std::int64_t e = e_m > emin ? e_m : emin;
  const double ulp = std::bit_cast<double>(static_cast<std::uint64_t>(e - p + 1 + 1023) << 52);
  const double c = ulp * 0x1.8p52;
  const double r = (m + c) - c;
  // m at or past 2^(emax+1) is +inf, and is not shifted: c would overflow.
  return (m >= top) | (r >= top) ? HUGE_VAL : r;
}

// The decision of fast_rows.h for v within e; returns the rounded value.
[[gnu::always_inline]] inline double Decide(Ed y, int p, int emin, double top, double two_m2p,
                                            bool* ok) {
  const double err = y.e * (1.0 + 0x1p-40) + 0x1p-1070;
  const double a = std::fabs(y.v);
  const double lo = a - err, hi = a + err;
  const bool good = (lo >= 0x1p-960) & (hi < 0x1p1023) & (err <= lo * two_m2p);
  // One step down from lo and up from hi (positive normals: adjacent bits).
  const double below = std::bit_cast<double>(std::bit_cast<std::uint64_t>(good ? lo : 1.0) - 1);
  const double above = std::bit_cast<double>(std::bit_cast<std::uint64_t>(good ? hi : 1.0) + 1);
  const double rl = RoundMagnitudeTo(below, p, emin, top);
  const double rh = RoundMagnitudeTo(above, p, emin, top);
  *ok = good & (rl == rh);
  return std::copysign(rh, y.v);
}

// 2^(emax + 1): the first power of two past the format's range.
double Top(FloatFormat f) { return std::ldexp(1.0, f.emax + 1); }

// n = x - mu as a double-word, branch-free (fast_rows.h); an overflowing
// x - mh gets an infinite bound.
[[gnu::always_inline]] inline Edd NWordOf(double x, const RowOperands& op) {
  double s, t;
  TwoSum(x, -op.mh, &s, &t);
  const double c = t - op.ml;
  const double e = kU * std::fabs(c) + kU * std::fabs(op.ml) + op.me + 2 * kTiny;
  // s + c need not be a normalized double-word (x_i near mh: s = 0, c = -ml),
  // which MulEdd's bound assumes: TwoSum makes it one, exactly.
  double h, l;
  TwoSum(s, c, &h, &l);
  return {h, l, std::isfinite(s) ? e : HUGE_VAL};
}

// n = x - mu in binary64: x - mh rounded, with |mu - mh| <= |ml| + 2u |ml|
// (the rounding of a double-double's low word) + me + an underflow.
Ed NOperand(const RowOperands& op) {
  return {-op.mh, std::fabs(op.ml) * (1 + 2 * kU) + op.me + kTiny};
}
Ed ROperand(const RowOperands& op) { return {op.rh, std::fabs(op.rl) + op.re}; }

double TwoToMinus2p(FloatFormat f) {
  return 1.0 / static_cast<double>(std::uint64_t{1} << (2 * f.precision));
}

[[gnu::always_inline]] inline void ForwardBody(
    const double* __restrict x, const double* __restrict gamma, const double* __restrict beta,
    std::int64_t d, const RowOperands& op, FloatFormat f, double* __restrict xhat,
    double* __restrict rounded, double* __restrict value, std::uint8_t* __restrict ok) {
  const Ed m = NOperand(op), r = ROperand(op);
  const Edd r_word{op.rh, op.rl, op.re};
  const int p = f.precision, emin = f.emin;
  const double top = Top(f), scale = TwoToMinus2p(f);
  for (std::int64_t i = 0; i < d; ++i) {
    const Ed xh = MulEd(AddEd(ExactEd(x[i]), m), r);
    const Ed y = AddEd(ExactEd(beta[i]), MulEd(ExactEd(gamma[i]), xh));
    bool good = true;
    rounded[i] = Decide(y, p, emin, top, scale, &good);
    value[i] = y.v;
    ok[i] = good;
    // xhat for the bounds: the double-word product, to about u^2 (Row::xhat).
    const Edd xw = MulEdd(NWordOf(x[i], op), r_word);
    xhat[i] = xw.hi + xw.lo;
  }
}

[[gnu::always_inline]] inline void BackwardBody(
    const double* __restrict x, const double* __restrict dy, const double* __restrict gamma,
    std::int64_t d, const RowOperands& op, double ah, double a_err, double bqh, double bq_err,
    FloatFormat f, double* __restrict rounded, double* __restrict value,
    std::uint8_t* __restrict ok) {
  const Ed m = NOperand(op), r = ROperand(op);
  const Ed a{-ah, a_err}, bq{-bqh, bq_err};
  const int p = f.precision, emin = f.emin;
  const double top = Top(f), scale = TwoToMinus2p(f);
  for (std::int64_t i = 0; i < d; ++i) {
    const Ed g = MulEd(ExactEd(dy[i]), ExactEd(gamma[i]));
    const Ed n = AddEd(ExactEd(x[i]), m);
    const Ed c = AddEd(AddEd(g, a), MulEd(n, bq));
    const Ed dx = MulEd(c, r);
    bool good = true;
    rounded[i] = Decide(dx, p, emin, top, scale, &good);
    value[i] = dx.v;
    ok[i] = good;
  }
}

[[gnu::always_inline]] inline BackwardSums SumBackwardBody(const double* __restrict x,
                                                           const double* __restrict dy,
                                                           const double* __restrict gamma,
                                                           std::int64_t d, const RowOperands& op) {
  double sh[kLanes] = {}, sl[kLanes] = {}, sa[kLanes] = {};  // Sum2 of g
  double th[kLanes] = {}, tl[kLanes] = {}, ta[kLanes] = {};  // Dot2 of g and n
  double ne[kLanes] = {};                                    // sum |g| err(n)
  ForEachInLanes(d, [&](int k, std::int64_t i) LNV_ALWAYS_INLINE {
    const double gh = dy[i] * gamma[i];
    const double gl = std::fma(dy[i], gamma[i], -gh);
    double sum, err;
    TwoSum(sh[k], gh, &sum, &err);
    sh[k] = sum;
    sl[k] += err + gl;
    sa[k] += std::fabs(gh) + std::fabs(gl);
    const Edd n = NWordOf(x[i], op);
    // The four products of the split g with the double-word n, each split
    // exactly (TwoProduct), in a fixed order; written out so that the loop
    // over the chains is the innermost one (and vectorizes).
    const auto add_product = [&](double part, double m) LNV_ALWAYS_INLINE {
      const double ph = part * m;
      const double pl = std::fma(part, m, -ph);
      TwoSum(th[k], ph, &sum, &err);
      th[k] = sum;
      tl[k] += err + pl;
      ta[k] += std::fabs(ph) + std::fabs(pl);
    };
    add_product(gh, n.hi);
    add_product(gh, n.lo);
    add_product(gl, n.hi);
    add_product(gl, n.lo);
    ne[k] += (std::fabs(gh) + std::fabs(gl)) * n.e;
  });
  BackwardSums b;
  const Edd s = MergeLanes(sh, sl), t = MergeLanes(th, tl);
  b.s_hi = s.hi;
  b.s_lo = s.lo;
  b.s_merge = s.e;
  b.s_abs = SumLanes(sa);
  b.t_hi = t.hi;
  b.t_lo = t.lo;
  b.t_merge = t.e;
  b.t_abs = SumLanes(ta);
  b.n_err = SumLanes(ne);
  // An overflowing product has no error-free split (gl is then not finite).
  b.finite = std::isfinite(b.s_hi) && std::isfinite(b.s_lo) && std::isfinite(b.t_hi) &&
             std::isfinite(b.t_lo) && std::isfinite(b.s_abs) && std::isfinite(b.t_abs) &&
             std::isfinite(b.n_err) && std::isfinite(b.s_merge) && std::isfinite(b.t_merge);
  return b;
}

[[gnu::always_inline]] inline void DgammaRowBody(const double* __restrict x,
                                                 const double* __restrict dy, std::int64_t d,
                                                 const RowOperands& op, double* __restrict hi,
                                                 double* __restrict lo, double* __restrict e) {
  const Edd r{op.rh, op.rl, op.re};
  for (std::int64_t j = 0; j < d; ++j) {
    const Edd xh = MulEdd(NWordOf(x[j], op), r);
    const Edd acc = AddEdd(Edd{hi[j], lo[j], e[j]}, MulEdd(Edd{dy[j], 0.0, 0.0}, xh));
    hi[j] = acc.hi;
    lo[j] = acc.lo;
    e[j] = acc.e;
  }
}

[[gnu::always_inline]] inline void DbetaRowBody(const double* __restrict dy, std::int64_t d,
                                                double* __restrict hi, double* __restrict lo,
                                                double* __restrict e) {
  for (std::int64_t j = 0; j < d; ++j) {
    double s, t, s2, r;
    TwoSum(hi[j], dy[j], &s, &t);
    TwoSum(lo[j], t, &s2, &r);
    hi[j] = s;
    lo[j] = s2;
    e[j] += std::fabs(r);
  }
}

LNV_ISA_VERSIONS(void, Forward,
                 (const double* x, const double* gamma, const double* beta, std::int64_t d,
                  const RowOperands& op, FloatFormat f, double* xhat, Decisions out),
                 ForwardBody(x, gamma, beta, d, op, f, xhat, out.rounded, out.value, out.ok))
LNV_ISA_VERSIONS(void, Backward,
                 (const double* x, const double* dy, const double* gamma, std::int64_t d,
                  const RowOperands& op, double ah, double a_err, double bqh, double bq_err,
                  FloatFormat f, Decisions out),
                 BackwardBody(x, dy, gamma, d, op, ah, a_err, bqh, bq_err, f, out.rounded,
                              out.value, out.ok))
LNV_ISA_VERSIONS(BackwardSums, Sums,
                 (const double* x, const double* dy, const double* gamma, std::int64_t d,
                  const RowOperands& op),
                 SumBackwardBody(x, dy, gamma, d, op))
LNV_ISA_VERSIONS(void, Dbeta, (const double* dy, std::int64_t d, ColumnSums acc),
                 DbetaRowBody(dy, d, acc.hi, acc.lo, acc.e))
LNV_ISA_VERSIONS(void, Dgamma,
                 (const double* x, const double* dy, std::int64_t d, const RowOperands& op,
                  ColumnSums acc),
                 DgammaRowBody(x, dy, d, op, acc.hi, acc.lo, acc.e))

}  // namespace

void DecideForwardRow(const double* x, const double* gamma, const double* beta, std::int64_t d,
                      const RowOperands& op, FloatFormat f, double* xhat, Decisions out) {
  LNV_ISA_CALL(Forward, x, gamma, beta, d, op, f, xhat, out);
}

void DecideBackwardRow(const double* x, const double* dy, const double* gamma, std::int64_t d,
                       const RowOperands& op, double ah, double a_err, double bqh, double bq_err,
                       FloatFormat f, Decisions out) {
  LNV_ISA_CALL(Backward, x, dy, gamma, d, op, ah, a_err, bqh, bq_err, f, out);
}

BackwardSums SumBackwardRow(const double* x, const double* dy, const double* gamma, std::int64_t d,
                            const RowOperands& op) {
  return LNV_ISA_CALL(Sums, x, dy, gamma, d, op);
}

void AddDgammaRow(const double* x, const double* dy, std::int64_t d, const RowOperands& op,
                  ColumnSums acc) {
  LNV_ISA_CALL(Dgamma, x, dy, d, op, acc);
}

void AddDbetaRow(const double* dy, std::int64_t d, ColumnSums acc) {
  LNV_ISA_CALL(Dbeta, dy, d, acc);
}

bool RoundDoubleWord(double h, double l, FloatFormat f, double* out) {
  double hi, lo;
  TwoSum(h, l, &hi, &lo);
  if (hi == 0.0) {  // then lo is 0 too
    *out = 0.0;
    return true;
  }
  const double m = std::fabs(hi);
  if (!(m >= 0x1p-1000) || !(m < 0x1p1000)) return false;
  const double top = Top(f);
  const double r = RoundMagnitudeTo(m, f.precision, f.emin, top);
  const bool boundary = r != m && RoundMagnitudeTo(m, f.precision + 1, f.emin, top) == m;
  if (!boundary || lo == 0.0) {
    *out = std::copysign(r, hi);
    return true;
  }
  // A midpoint, and the value lies beyond it on lo's side: its neighbour
  // there (one binary64 step away) is no midpoint, and rounds that way.
  const bool away = (lo > 0) == (hi > 0);
  const double step = std::bit_cast<double>(std::bit_cast<std::uint64_t>(m) + (away ? 1 : -1));
  *out = std::copysign(RoundMagnitudeTo(step, f.precision, f.emin, top), hi);
  return true;
}

Edd NWord(double x, const RowOperands& op) { return NWordOf(x, op); }

double RoundMagnitude(double m, FloatFormat f) {
  return RoundMagnitudeTo(m, f.precision, f.emin, Top(f));
}

}  // namespace lnv::oracle_internal

// The wide tier's interval arithmetic (wide_path.h). Every lower end is
// rounded down (MPFR_RNDD) and every upper end up (MPFR_RNDU). An output
// aliases an input only where each end is read before it is written.
#include "oracle/wide_path.h"

#include <cmath>

namespace lnv::oracle_internal {
namespace {

constexpr mpfr_rnd_t kDown = MPFR_RNDD;
constexpr mpfr_rnd_t kUp = MPFR_RNDU;

// A double as a point interval (exact: kWideBits >= 53).
void SetPoint(WideIv out, double v) {
  SetDouble(out.lo, v);
  SetDouble(out.hi, v);
}

void SetZero(WideIv out) {
  mpfr_set_zero(out.lo, 1);
  mpfr_set_zero(out.hi, 1);
}

void AddTo(WideIv acc, const WideIv& t) {
  mpfr_add(acc.lo, acc.lo, t.lo, kDown);
  mpfr_add(acc.hi, acc.hi, t.hi, kUp);
}

// a g for an exact number g.
void MulExact(WideIv out, const WideIv& a, mpfr_srcptr g) {
  const bool neg = mpfr_sgn(g) < 0;
  mpfr_mul(out.lo, neg ? a.hi : a.lo, g, kDown);
  mpfr_mul(out.hi, neg ? a.lo : a.hi, g, kUp);
}

// a p for p >= 0 (p.lo >= 0): the smallest product takes p's upper end
// when a.lo < 0, the largest p's lower end when a.hi < 0.
void MulNonNegative(WideIv out, const WideIv& a, const WideIv& p) {
  mpfr_mul(out.lo, a.lo, mpfr_sgn(a.lo) >= 0 ? p.lo : p.hi, kDown);
  mpfr_mul(out.hi, a.hi, mpfr_sgn(a.hi) >= 0 ? p.hi : p.lo, kUp);
}

// a / p for p > 0 (p.lo > 0), by the same rule.
void DivPositive(WideIv out, const WideIv& a, const WideIv& p) {
  mpfr_div(out.lo, a.lo, mpfr_sgn(a.lo) >= 0 ? p.hi : p.lo, kDown);
  mpfr_div(out.hi, a.hi, mpfr_sgn(a.hi) >= 0 ? p.lo : p.hi, kUp);
}

// a b for any signs (t: a scratch number): the extreme products are
// products of ends, which ones by the signs (Moore's case table).
void Mul(WideIv out, const WideIv& a, const WideIv& b, mpfr_ptr t) {
  if (mpfr_sgn(b.lo) >= 0) return MulNonNegative(out, a, b);
  if (mpfr_sgn(a.lo) >= 0) return MulNonNegative(out, b, a);
  // a.lo < 0 and b.lo < 0.
  const bool a_neg = mpfr_sgn(a.hi) <= 0, b_neg = mpfr_sgn(b.hi) <= 0;
  if (a_neg && b_neg) {  // both <= 0: [a.hi b.hi, a.lo b.lo]
    mpfr_mul(out.lo, a.hi, b.hi, kDown);
  } else if (a_neg) {  // b straddles 0: [a.lo b.hi, a.lo b.lo]
    mpfr_mul(out.lo, a.lo, b.hi, kDown);
  } else if (b_neg) {  // a straddles 0: [a.hi b.lo, a.lo b.lo]
    mpfr_mul(out.lo, a.hi, b.lo, kDown);
  } else {  // both straddle: [min(a.lo b.hi, a.hi b.lo), max(a.lo b.lo, a.hi b.hi)]
    mpfr_mul(out.lo, a.lo, b.hi, kDown);
    mpfr_mul(t, a.hi, b.lo, kDown);
    mpfr_min(out.lo, out.lo, t, MPFR_RNDN);
    mpfr_mul(out.hi, a.hi, b.hi, kUp);
    mpfr_mul(t, a.lo, b.lo, kUp);
    mpfr_max(out.hi, out.hi, t, MPFR_RNDN);
    return;
  }
  mpfr_mul(out.hi, a.lo, b.lo, kUp);
}

// n^2 (an enclosure of a square is >= 0 even when n straddles 0).
void Square(WideIv out, const WideIv& n) {
  if (mpfr_sgn(n.lo) >= 0) {
    mpfr_sqr(out.lo, n.lo, kDown);
    mpfr_sqr(out.hi, n.hi, kUp);
  } else if (mpfr_sgn(n.hi) <= 0) {
    mpfr_sqr(out.lo, n.hi, kDown);
    mpfr_sqr(out.hi, n.lo, kUp);
  } else {
    mpfr_set_zero(out.lo, 1);
    const bool lo_bigger = mpfr_cmpabs(n.lo, n.hi) > 0;
    mpfr_sqr(out.hi, lo_bigger ? n.lo : n.hi, kUp);
  }
}

static_assert(sizeof(unsigned long) >= sizeof(std::int64_t), "d must fit mpfr_div_ui");
void DivByCount(WideIv v, std::int64_t d) {
  mpfr_div_ui(v.lo, v.lo, static_cast<unsigned long>(d), kDown);
  mpfr_div_ui(v.hi, v.hi, static_cast<unsigned long>(d), kUp);
}

// An end as a Dyadic: a nonzero MPFR number is 0.m 2^E with its
// ceil(prec/64) limbs m normalized to the top bit, least significant first
// (as GMP's), so it is m 2^(E - 64 limbs).
static_assert(GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0, "64-bit limbs without nails");
Dyadic EndToDyadic(mpfr_srcptr v) {
  Dyadic out;
  if (mpfr_zero_p(v)) return out;
  const int limbs = static_cast<int>((mpfr_get_prec(v) + 63) / 64);
  const auto* m = static_cast<const mp_limb_t*>(mpfr_custom_get_significand(v));
  for (int i = 0; i < limbs; ++i) out.mag[i] = m[i];
  out.used = limbs;
  out.negative = mpfr_signbit(v) != 0;
  out.exp = static_cast<std::int64_t>(mpfr_get_exp(v)) - 64 * limbs;
  Trim(&out);
  return out;
}

}  // namespace

void SetDouble(mpfr_ptr x, double v) {
  constexpr int kLimbs = static_cast<int>((kWideBits + 63) / 64);
  void* sig = mpfr_custom_get_significand(x);
  if (v == 0.0) {
    mpfr_custom_init_set(x, std::signbit(v) ? -MPFR_ZERO_KIND : MPFR_ZERO_KIND, 0, kWideBits, sig);
    return;
  }
  // |v| = mant 2^exp = 0.m 2^(exp + msb + 1), m = mant shifted to the top bit.
  const DoubleParts p = SplitDouble(v);
  const int msb = 63 - __builtin_clzll(p.mant);
  auto* m = static_cast<mp_limb_t*>(sig);
  for (int i = 0; i < kLimbs - 1; ++i) m[i] = 0;
  m[kLimbs - 1] = p.mant << (63 - msb);
  mpfr_custom_init_set(x, p.negative ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, p.exp + msb + 1,
                       kWideBits, sig);
}

WideVars::WideVars(std::size_t n) : vars_(n) {
  static_assert(kWideBits <= 64 * kDyadicLimbs - 64, "an end must fit a Dyadic with room");
  const std::size_t bytes = mpfr_custom_get_size(kWideBits);
  const std::size_t per = (bytes + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t);
  limbs_.assign(n * per, 0);
  for (std::size_t i = 0; i < n; ++i) {
    mp_limb_t* sig = limbs_.data() + i * per;
    mpfr_custom_init(sig, kWideBits);
    mpfr_custom_init_set(&vars_[i], MPFR_ZERO_KIND, 0, kWideBits, sig);
  }
}

bool WideEnds(const WideIv& v, Dyadic* lo, Dyadic* hi) {
  if (!mpfr_number_p(v.lo) || !mpfr_number_p(v.hi) || !mpfr_lessequal_p(v.lo, v.hi)) return false;
  *lo = EndToDyadic(v.lo);
  *hi = EndToDyadic(v.hi);
  return FitsDoubleDouble(*lo) && FitsDoubleDouble(*hi);
}

void WideColumns::Start(std::int64_t d) {
  vars_ = WideVars(static_cast<std::size_t>(2 * d));
  started_ = true;
  valid_ = true;
}

WideRow::WideRow() : v_(kScratch + 3) {}

void WideRow::EncloseN(std::int64_t i, WideIv n) {
  if (!layer_) return SetPoint(n, x_[i]);
  const WideIv mu = Iv(kMu);
  mpfr_srcptr xi = Point(x_[i]);
  mpfr_sub(n.lo, xi, mu.hi, kDown);
  mpfr_sub(n.hi, xi, mu.lo, kUp);
}

bool WideRow::PrepareStats(const double* x, std::int64_t d, bool layer, double eps) {
  // Exact doubles and products of two (ExactG, Point) need exponents from
  // about -2200 to 2100; MPFR's default range is +-(2^30 - 1), and only a
  // caller that narrows it (mpfr_set_emin) could break that.
  if (mpfr_get_emin() > -4096 || mpfr_get_emax() < 4096) return false;
  x_ = x;
  d_ = d;
  layer_ = layer;
  const WideIv mu = Iv(kMu), q = Iv(kQ), r = Iv(kR), n = Iv(kN), sq = Iv(kT);
  SetZero(mu);
  if (layer) {
    for (std::int64_t i = 0; i < d; ++i) {
      mpfr_srcptr xi = Point(x[i]);
      mpfr_add(mu.lo, mu.lo, xi, kDown);
      mpfr_add(mu.hi, mu.hi, xi, kUp);
    }
    DivByCount(mu, d);
  }
  SetZero(q);  // sum n_i^2, then q = that / d + eps
  for (std::int64_t i = 0; i < d; ++i) {
    EncloseN(i, n);
    Square(sq, n);
    AddTo(q, sq);
  }
  DivByCount(q, d);
  mpfr_srcptr e = Point(eps);
  mpfr_add(q.lo, q.lo, e, kDown);
  mpfr_add(q.hi, q.hi, e, kUp);
  if (!(mpfr_sgn(q.lo) > 0) || !mpfr_number_p(q.hi)) return false;
  mpfr_rec_sqrt(r.lo, q.hi, kDown);
  mpfr_rec_sqrt(r.hi, q.lo, kUp);
  return true;
}

void WideRow::PrepareGrad(const double* dy, const double* gamma) {
  dy_ = dy;
  gamma_ = gamma;
  const WideIv a = Iv(kA), t = Iv(kB), n = Iv(kN), gn = Iv(kT);
  SetZero(a);
  SetZero(t);  // T = sum g_i n_i, then b = T / (d q)
  for (std::int64_t i = 0; i < d_; ++i) {
    mpfr_ptr g = ExactG(i);
    if (layer_) {
      mpfr_add(a.lo, a.lo, g, kDown);
      mpfr_add(a.hi, a.hi, g, kUp);
    }
    EncloseN(i, n);
    MulExact(gn, n, g);
    AddTo(t, gn);
  }
  if (layer_) DivByCount(a, d_);
  DivPositive(t, t, Iv(kQ));  // in place: each end is read before it is written
  DivByCount(t, d_);
}

mpfr_ptr WideRow::ExactG(std::int64_t i) {
  mpfr_ptr g = v_[kScratch];
  SetDouble(g, dy_[i]);
  mpfr_mul(g, g, Point(gamma_[i]), MPFR_RNDN);  // exact: 106 bits at most
  return g;
}

mpfr_srcptr WideRow::Point(double v) {
  SetDouble(v_[kScratch + 2], v);
  return v_[kScratch + 2];
}

WideIv WideRow::N(std::int64_t i) {
  EncloseN(i, Iv(kN));
  return Iv(kN);
}

WideIv WideRow::Xhat(std::int64_t i) {
  const WideIv n = Iv(kN), xhat = Iv(kC);
  EncloseN(i, n);
  MulNonNegative(xhat, n, Iv(kR));
  return xhat;
}

WideIv WideRow::GammaXhat(std::int64_t i, double gamma) {
  const WideIv xhat = Xhat(i), t = Iv(kDx);
  MulExact(t, xhat, Point(gamma));
  return t;
}

WideIv WideRow::Y(std::int64_t i, double gamma, double beta) {
  const WideIv y = GammaXhat(i, gamma);
  mpfr_srcptr b = Point(beta);  // after the product: both use the point slot
  mpfr_add(y.lo, y.lo, b, kDown);
  mpfr_add(y.hi, y.hi, b, kUp);
  return y;
}

WideIv WideRow::Dx(std::int64_t i) {
  const WideIv n = Iv(kN), nb = Iv(kT), c = Iv(kC), dx = Iv(kDx), a = Iv(kA);
  EncloseN(i, n);
  Mul(nb, n, Iv(kB), v_[kScratch + 1]);
  mpfr_ptr g = ExactG(i);
  // c = g - a - n b: the lower end from the upper ends subtracted, rounded down.
  mpfr_sub(c.lo, g, a.hi, kDown);
  mpfr_sub(c.lo, c.lo, nb.hi, kDown);
  mpfr_sub(c.hi, g, a.lo, kUp);
  mpfr_sub(c.hi, c.hi, nb.lo, kUp);
  MulNonNegative(dx, c, Iv(kR));
  return dx;
}

void WideRow::AddDgamma(const double* dy, WideColumns* cols) {
  const WideIv term = Iv(kT);
  for (std::int64_t j = 0; j < d_; ++j) {
    const WideIv xhat = Xhat(j);  // before Point(dy_j): both use the point slot
    MulExact(term, xhat, Point(dy[j]));
    AddTo(cols->At(j), term);
  }
}

}  // namespace lnv::oracle_internal

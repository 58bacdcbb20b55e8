// The exact oracle (see oracle.h for the contract and the termination
// argument). Per row: exact integer sums, exact rational mean and variance,
// one enclosure of r = 1/sqrt(q) refined on demand (Ziv), and every output
// written as A + P*r with A, P exact rationals.
#include "oracle/oracle.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <list>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "oracle/backends.h"
#include "oracle/dyadic.h"
#include "oracle/fast_path.h"
#include "oracle/fast_rows.h"
#include "oracle/fast_stats.h"
#include "oracle/rat.h"
#include "oracle/square_class.h"
#include "oracle/wide_path.h"

namespace lnv {
namespace {

using oracle_internal::AddEd;
using oracle_internal::Ed;
using oracle_internal::ExactEd;
using oracle_internal::kTiny;
using oracle_internal::kU;
using oracle_internal::kU2;
using oracle_internal::MulEd;
using oracle_internal::NegEd;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A non-finite exact value. An infinity sets lo = hi too: hi = +-inf with a
// finite lo is a finite value past binary64's range (ExactValue, oracle.h).
ExactValue Special(double v) {
  return ExactValue{v, v, std::isinf(v) ? v : 0.0, ValueStatus::kDecided};
}

// An element the special-value table decides (oracle.h): v itself, or NaN
// too where another faithful evaluation order gives NaN.
ExactValue ByTable(double v, bool nan_accepted = false) {
  ExactValue e = Special(v);
  e.by_table = true;
  e.nan_accepted = nan_accepted && !std::isnan(v);
  return e;
}

// OracleOptions::recheck_every: one fast decision in n, on average, is
// decided again by `exact` (the exact path), and a different rounding is
// counted. Which ones: a hash of the value and its place in the call, so
// that calls with fewer than n decisions are sampled too, and a rerun
// samples the same ones.
struct Recheck {
  std::int64_t every = 0, seen = 0;
  std::int64_t* rechecked;
  std::int64_t* disagreements;

  // f: the format of the decision. For p > 26 (binary64) the double-double
  // hi + lo is the exact value's own, canonical on every path, so it must
  // agree too; for p <= 26, hi is the exact value to 2p bits only.
  template <class Exact>
  void Maybe(const ExactValue& fast, Exact exact, FloatFormat f) {
    if (every <= 0) return;
    const std::uint64_t h =
        (std::bit_cast<std::uint64_t>(fast.hi) ^ static_cast<std::uint64_t>(++seen)) *
        0x9E3779B97F4A7C15ull;
    if ((h >> 32) % static_cast<std::uint64_t>(every) != 0) return;
    const ExactValue e = exact();
    ++*rechecked;
    const auto differ = [](double a, double b) {
      return std::bit_cast<std::uint64_t>(a) != std::bit_cast<std::uint64_t>(b);
    };
    if (e.status == ValueStatus::kDecided &&
        (differ(e.rounded, fast.rounded) ||
         (f.precision > 26 && (differ(e.hi, fast.hi) || differ(e.lo, fast.lo))))) {
      ++*disagreements;
    }
  }
};

// Working precision of the first Ziv step: 2p bits for the exact value plus
// guard bits so that most elements decide at once.
int StartBits(FloatFormat f) { return 2 * f.precision + 40; }

enum class QKind { kPositive, kZero, kNegative, kNaN, kPosInf };

template <class Int>
Int FromUint128(unsigned __int128 v) {
  return (Int(static_cast<std::uint64_t>(v >> 64)) << 64) + Int(static_cast<std::uint64_t>(v));
}

template <class Int>
Int FromInt128(__int128 v) {
  if (v >= 0) return FromUint128<Int>(static_cast<unsigned __int128>(v));
  return Int(-FromUint128<Int>(static_cast<unsigned __int128>(-(v + 1)) + 1));
}

template <class Int>
ExactValue FromRational(const oracle_internal::Rat<Int>& v, FloatFormat f) {
  const auto dd = oracle_internal::ToDoubleDouble(v);
  return ExactValue{oracle_internal::RoundRat(v, f).value, dd.first, dd.second,
                    ValueStatus::kDecided};
}

// The Boost backend's per-element dyadics (dyadic.h): an enclosure of
// r / den in fixed-width limbs.
struct FixedEnclosure {
  oracle_internal::Dyadic lo, hi;
};

template <class B>
class Row {
 public:
  using Int = typename B::Int;
  using R = oracle_internal::Rat<Int>;

  // try_fast: decide the statistics in double-words first (fast_stats.h);
  // the exact integers are then built only if something needs them.
  Row(const OracleProblem& p, std::int64_t row, bool try_fast)
      : d_(p.d), layer_(p.norm == OracleNorm::kLayerNorm), eps_(p.eps) {
    const double* x = p.x.data() + row * p.d;
    for (std::int64_t i = 0; i < d_; ++i) {
      if (std::isnan(x[i])) has_nan_ = true;
      if (std::isinf(x[i])) (x[i] > 0 ? pos_inf_ : neg_inf_) = true;
    }
    finite_ = !has_nan_ && !pos_inf_ && !neg_inf_;
    x_ = x;
    if (!finite_) {
      ClassifyInfiniteRow(p.eps);
      return;
    }
    if (try_fast && oracle_internal::ComputeFastStats(x, d_, layer_, p.eps, &fs_)) {
      fast_stats_ = true;
      q_kind_ = QKind::kPositive;  // proven: q >= q_h - e > 0
      return;
    }
    EnsureExact();
  }

  // The exact integers, mean, variance and q of a finite row (built once).
  void EnsureExact() const {
    if (exact_built_ || !finite_) return;
    exact_built_ = true;
    const double* x = x_;
    // x_i = X_i * 2^lo with integer X_i: every double is an odd integer times
    // a power of two, so lo is the smallest such power in the row.
    using Part = oracle_internal::DoubleParts;  // mant odd, or 0 for x_i = 0
    std::vector<Part> parts(d_);
    lo_ = std::numeric_limits<std::int64_t>::max();
    std::int64_t top = std::numeric_limits<std::int64_t>::min();
    for (std::int64_t i = 0; i < d_; ++i) {
      Part& pt = parts[i];
      pt = Part{0, 0, x[i] < 0};
      if (x[i] == 0.0) continue;
      pt = oracle_internal::SplitDouble(x[i]);
      lo_ = std::min(lo_, pt.exp);
      top = std::max(top, pt.exp + 64 - __builtin_clzll(pt.mant));
    }
    if (lo_ == std::numeric_limits<std::int64_t>::max()) lo_ = top = 0;
    Int s1(0), s2(0), a1(0);
    narrow_ = top - lo_ <= 62;
    if (narrow_) {
      // Every |X_i| < 2^62: exact sums in 128-bit machine integers (X_i^2 <
      // 2^124, so the sum of squares carries into a third word).
      Xn_.resize(d_);
      __int128 sum = 0;
      unsigned __int128 abs_sum = 0, sq_lo = 0;
      std::uint64_t sq_hi = 0;
      for (std::int64_t i = 0; i < d_; ++i) {
        const auto mag = parts[i].mant == 0
                             ? std::int64_t{0}
                             : static_cast<std::int64_t>(parts[i].mant << (parts[i].exp - lo_));
        const std::int64_t v = parts[i].negative ? -mag : mag;
        Xn_[i] = v;
        sum += v;
        abs_sum += static_cast<unsigned __int128>(mag);
        const unsigned __int128 sq =
            static_cast<unsigned __int128>(mag) * static_cast<unsigned __int128>(mag);
        sq_lo += sq;
        if (sq_lo < sq) ++sq_hi;
      }
      s1 = FromInt128<Int>(sum);
      a1 = FromUint128<Int>(abs_sum);
      s2 = (Int(sq_hi) << 128) + FromUint128<Int>(sq_lo);
    } else {
      X_.resize(d_);
      for (std::int64_t i = 0; i < d_; ++i) {
        if (parts[i].mant == 0) continue;
        X_[i] = oracle_internal::ShiftLeft(Int(parts[i].mant), parts[i].exp - lo_);
        if (parts[i].negative) X_[i] = -X_[i];
        s1 += X_[i];
        s2 += X_[i] * X_[i];
        a1 += abs(X_[i]);
      }
    }
    S1_ = s1;
    const Int dd(static_cast<std::uint64_t>(d_));
    if (layer_) {
      mu_ = R{s1, dd, lo_};
      Int v = dd * s2 - s1 * s1;  // d^2 sigma^2 2^(-2lo) >= 0
      var_ = R{v, dd * dd, 2 * lo_};
      dn_ = dd;
    } else {
      var_ = R{s2, dd, 2 * lo_};
      dn_ = Int(1);
    }
    mean_abs_ = oracle_internal::ToDouble(R{a1, dd, lo_});
    ClassifyQ(eps_);
  }

  bool finite() const { return finite_; }
  // A row of x holding +-inf but no NaN, whose IEEE results the table of
  // oracle.h gives (with finite() false): for RMSNorm, q_kind() is then kPosInf
  // (r = +0) unless eps is NaN or -inf.
  bool infinite_without_nan() const { return !finite_ && !has_nan_; }
  // The IEEE sum of such a row: +-inf when its infinities share a sign, else NaN.
  double InfiniteSum() const {
    return pos_inf_ && neg_inf_ ? kNaN : pos_inf_ ? HUGE_VAL : -HUGE_VAL;
  }
  QKind q_kind() const { return q_kind_; }
  const R& mu() const { return EnsureExact(), mu_; }
  const R& var() const { return EnsureExact(), var_; }
  const R& q() const { return EnsureExact(), q_; }
  const double* x() const { return x_; }
  // q > 0 as num/den * 2^exp with exp even (valid when q_kind() is kPositive).
  const oracle_internal::PositiveRat<Int>& qp() const { return EnsureExact(), qp_; }

  // The statistics rounded to the nearest double (RowStats), from the
  // double-words when their bounds prove it, else from the exact rationals.
  double MeanDouble() const {
    return Nearest(fs_.mu, [this] { return mu(); });
  }
  double VarDouble() const {
    return Nearest(fs_.var, [this] { return var(); });
  }
  double MeanAbsDouble() const {
    double v;
    if (fast_stats_ && oracle_internal::NearestDouble(fs_.mean_abs, &v)) return v;
    EnsureExact();
    return mean_abs_;
  }
  // The mean (LayerNorm) correctly rounded into f; true when the fast
  // statistics decided it.
  bool MeanValue(FloatFormat f, ExactValue* v) const {
    if (fast_stats_ && oracle_internal::DecideFast(oracle_internal::ToEd(fs_.mu), f, v))
      return true;
    *v = FromRational(mu(), f);
    return false;
  }

  // n_i = x_i - mu (LayerNorm) or x_i (RMSNorm), exactly: N_i / dn * 2^lo.
  R N(std::int64_t i) const {
    EnsureExact();
    Int xi = narrow_ ? oracle_internal::FromInt64<Int>(Xn_[i]) : X_[i];
    if (!layer_) return R{xi, Int(1), lo_};
    Int n = Int(static_cast<std::uint64_t>(d_)) * xi - S1_;
    if (n.is_zero()) return R{};
    return R{n, dn_, lo_};
  }

  // For g_i = dy_i gamma_i (finite doubles; gamma_at(i) gives gamma_i):
  // sum_g = sum g_i and t = sum g_i n_i, exactly. Every g_i is an integer
  // G_i times 2^e, e the smallest exponent of the products, so sum_g = G 2^e
  // and t = (d A - S1 G) / dn 2^(e + lo) (RMSNorm: A 2^(e + lo)), with the
  // integer sums G = sum G_i and A = sum G_i X_i accumulated in place: no
  // rational, and no allocation once the integers have grown.
  struct GradSums {
    R sum_g, t;
  };
  template <class GammaAt>
  GradSums SumsOfG(const double* dy, const GammaAt& gamma_at) const {
    EnsureExact();
    using oracle_internal::DoubleParts;
    using oracle_internal::SplitDouble;
    std::int64_t e = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t i = 0; i < d_; ++i) {
      const double gam = gamma_at(i);
      if (dy[i] == 0.0 || gam == 0.0) continue;
      e = std::min(e, SplitDouble(dy[i]).exp + SplitDouble(gam).exp);
    }
    GradSums out;
    if (e == std::numeric_limits<std::int64_t>::max()) return out;  // every g_i = 0
    Int g(0), a(0), term, prod;
    for (std::int64_t i = 0; i < d_; ++i) {
      const double gam = gamma_at(i);
      if (dy[i] == 0.0 || gam == 0.0) continue;
      const DoubleParts pd = SplitDouble(dy[i]);
      const DoubleParts pg = SplitDouble(gam);
      term = pd.mant;
      term *= pg.mant;
      term <<= static_cast<unsigned>(pd.exp + pg.exp - e);
      prod = term;
      if (narrow_) {
        prod *= static_cast<long long>(Xn_[i]);
      } else {
        prod *= X_[i];
      }
      if (pd.negative != pg.negative) {
        g -= term;
        a -= prod;
      } else {
        g += term;
        a += prod;
      }
    }
    if (!g.is_zero()) out.sum_g = R{g, Int(1), e};
    Int t = layer_ ? Int(Int(static_cast<std::uint64_t>(d_)) * a - S1_ * g) : a;
    if (!t.is_zero()) out.t = R{t, layer_ ? dn_ : Int(1), e + lo_};
    return out;
  }

  // Whether r is rational (q the square of a rational); decided on first use,
  // since only the exact path needs it.
  bool r_exact() {
    EnsureExact();
    if (!r_exact_known_) {
      r_exact_known_ = true;
      r_exact_ = oracle_internal::ExactRecipSqrt(qp_, &r_exact_value_);
    }
    return r_exact_;
  }
  const R& r_exact_value() const { return r_exact_value_; }

  // The enclosure of r at Ziv level k (start_bits * 2^k bits), cached.
  const oracle_internal::Enclosure<Int>& Level(int k, int start_bits) {
    EnsureExact();
    const int bits = start_bits << k;
    for (const auto& [b, e] : levels_) {
      if (b == bits) return e;
    }
    levels_.emplace_back(bits, B::RecipSqrt(qp_, bits));
    return levels_.back().second;
  }

  // r / den at Ziv level k as a dyadic enclosure (den 1, DyadicQuotient in
  // backends.h). Then A + P r with P = num/den is A + num (r/den): integer
  // products and shifts only. Cached by (k, den); with the Boost backend
  // also in fixed-width integers (`fixed`, when its numerators fit in
  // dyadic.h's limbs).
  struct ScaledEnclosure {
    int bits;
    Int den;
    oracle_internal::Enclosure<Int> e;
    bool fits_fixed = false;
    FixedEnclosure fixed;
  };
  const ScaledEnclosure& ScaledLevel(int k, int start_bits, const Int& den) {
    const int bits = start_bits << k;
    for (const auto& s : scaled_) {
      if (s.bits == bits && s.den == den) return s;
    }
    ScaledEnclosure s{
        bits, den, oracle_internal::DyadicQuotient(Level(k, start_bits), den, bits), false, {}};
    if constexpr (B::kFixedWidthElements) {
      s.fits_fixed = oracle_internal::DyadicFromInt(s.e.lo.num, s.e.lo.exp, &s.fixed.lo) &&
                     oracle_internal::DyadicFromInt(s.e.hi.num, s.e.hi.exp, &s.fixed.hi);
    }
    scaled_.push_back(std::move(s));
    return scaled_.back();
  }

  // Fast-path operands: mu as a double-double and r with its error.
  bool PrepareFast() {
    if (fast_ready_) return fast_ok_;
    fast_ready_ = true;
    if (q_kind_ != QKind::kPositive) return fast_ok_ = false;
    if (fast_stats_) {
      mu_h_ = fs_.mu.hi;
      mu_l_ = fs_.mu.lo;
      mu_e_ = fs_.mu.e;
      r_w_ = fs_.r;
      return fast_ok_ = true;  // ComputeFastStats checked r's range
    }
    if (layer_) {
      auto [h, l] = oracle_internal::ToDoubleDouble(mu_);
      mu_h_ = h;
      mu_l_ = l;
    }
    // r as a double-word: the double-double of the enclosure's lower end at
    // 128 bits; |r - (h + l)| <= (hi - lo) + 2u^2 r, and hi - lo <= 2^-120 r.
    const R& lo = Level(0, 128).lo;
    const auto [h, l] = oracle_internal::ToDoubleDouble(lo);
    r_w_ = oracle_internal::Edd{h, l, 0x1p-119 * std::fabs(h) + 4 * kTiny};
    fast_ok_ = std::isfinite(mu_h_) && std::isfinite(h) && h > 0x1p-900 && h < 0x1p900;
    return fast_ok_;
  }
  const oracle_internal::Edd& r_word() const { return r_w_; }
  // The operands of the vectorized loops (fast_rows.h), after PrepareFast().
  oracle_internal::RowOperands Operands() const {
    oracle_internal::RowOperands op;
    if (layer_) {
      op.mh = mu_h_;
      op.ml = mu_l_;
      op.me = mu_e_;
    }
    op.rh = r_w_.hi;
    op.rl = r_w_.lo;
    op.re = r_w_.e;
    return op;
  }

  // n_i as a double-word s + c: x_i - mu_h exactly (TwoSum), then - mu_l,
  // within fast_rows.h's bound (mu_e is 0 for the exact mean's double-double,
  // whose rounding u |mu_l| covers).
  oracle_internal::Edd NFastWord(std::int64_t i) const {
    return oracle_internal::NWord(x_[i], Operands());
  }

 private:
  // q of a row of x holding NaN or +-inf, in IEEE arithmetic: LayerNorm's
  // sigma^2 and a NaN's sum of squares are NaN; RMSNorm's sum of squares of a
  // row with +-inf is +inf, and +inf + eps is +inf unless eps is NaN or -inf.
  void ClassifyInfiniteRow(double eps) {
    const bool q_inf = !layer_ && !has_nan_ && !std::isnan(eps) && eps != -HUGE_VAL;
    q_kind_ = q_inf ? QKind::kPosInf : QKind::kNaN;
  }

  void ClassifyQ(double eps) const {
    if (std::isnan(eps)) {
      q_kind_ = QKind::kNaN;
      return;
    }
    if (std::isinf(eps)) {
      q_kind_ = eps > 0 ? QKind::kPosInf : QKind::kNegative;
      return;
    }
    q_ = oracle_internal::Add(var_, oracle_internal::FromDouble<Int>(eps));
    const int s = q_.num.sign();
    if (s < 0) {
      q_kind_ = QKind::kNegative;
      return;
    }
    if (s == 0) {
      q_kind_ = QKind::kZero;
      return;
    }
    q_kind_ = QKind::kPositive;
    qp_.num = q_.num;
    qp_.den = q_.den;
    qp_.exp = q_.exp;
    if (qp_.exp % 2 != 0) {
      qp_.num <<= 1;
      qp_.exp -= 1;
    }
  }

  template <class Exact>
  double Nearest(const oracle_internal::Edd& a, Exact exact) const {
    double v;
    if (fast_stats_ && oracle_internal::NearestDouble(a, &v)) return v;
    return oracle_internal::ToDouble(exact());
  }

  std::int64_t d_;
  bool layer_;
  double eps_;
  bool finite_ = true;
  bool has_nan_ = false, pos_inf_ = false, neg_inf_ = false;
  const double* x_ = nullptr;
  bool fast_stats_ = false;
  oracle_internal::FastStats fs_;
  // The exact side, built on first use (EnsureExact) unless the fast
  // statistics failed; a cache, hence mutable.
  mutable bool exact_built_ = false;
  mutable std::int64_t lo_ = 0;
  mutable bool narrow_ = false;
  mutable std::vector<std::int64_t> Xn_;  // X_i when the row spans <= 62 bits
  mutable std::vector<Int> X_;            // X_i otherwise
  mutable Int S1_{0};
  mutable Int dn_{1};
  mutable R mu_, var_, q_;
  mutable double mean_abs_ = 0.0;
  mutable QKind q_kind_ = QKind::kNaN;
  mutable oracle_internal::PositiveRat<Int> qp_{};
  bool r_exact_known_ = false;
  bool r_exact_ = false;
  R r_exact_value_;
  // Caches whose entries keep their addresses as they grow (Level and
  // ScaledLevel return references), and which allocate nothing until used:
  // a std::deque allocates on construction, for every row.
  std::list<std::pair<int, oracle_internal::Enclosure<Int>>> levels_;  // by bits
  std::list<ScaledEnclosure> scaled_;                                  // ScaledLevel's cache
  bool fast_ready_ = false, fast_ok_ = false;
  double mu_h_ = 0.0, mu_l_ = 0.0, mu_e_ = 0.0;
  oracle_internal::Edd r_w_{0.0, 0.0, 0.0};
};

// Equal as doubles, the sign of zero included.
bool SameDouble(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

bool IsBinary64(FloatFormat f) {
  return f.precision == kBinary64.precision && f.emin == kBinary64.emin && f.emax == kBinary64.emax;
}

// Whether the double h is a midpoint of f: (k + 1/2) ulp_f(h) for an
// integer k (h / ulp is exact: a power-of-two scaling of a value >= 2^-1074
// by at most 2^-(emin - p + 1), far from underflow). Above f's range it may
// say yes where no midpoint is, which only sends the value the long way.
bool IsMidpoint(double h, FloatFormat f) {
  if (!std::isfinite(h)) return false;  // both ends past DBL_MAX: +-inf in every format
  const double t = std::fabs(h) / UlpOf(h, f);
  return t - std::floor(t) == 0.5;
}

// Decides a value from an enclosure [a, b] of it, or reports that it cannot.
template <class Value>  // Rat<Int> or Dyadic
bool DecideEnclosure(const Value& a, const Value& b, FloatFormat f, ExactValue* out) {
  // The exact value must be known to 2p bits: binary64 suffices for p <= 26,
  // a double-double for binary64 outputs.
  if (f.precision <= 26) {
    const double h = oracle_internal::ToDouble(a);
    if (!SameDouble(h, oracle_internal::ToDouble(b))) return false;
    // Every v in [a, b] has the nearest double h. Rounding to nearest in f
    // changes value only at f's midpoints (the overflow threshold (2^p - 1/2)
    // ulp too), which are doubles; so unless h is one, v and h lie strictly
    // on one side of each and round alike in f.
    if (!IsMidpoint(h, f)) {
      *out = ExactValue{RoundToFormat(h, f), h, 0.0, ValueStatus::kDecided};
      return true;
    }
  }
  if (IsBinary64(f)) {
    // Rounding into binary64 is the double-double's hi (ToDoubleDouble
    // rounds each end so): compare the pairs alone.
    const auto da = oracle_internal::ToDoubleDouble(a);
    const auto db = oracle_internal::ToDoubleDouble(b);
    if (!SameDouble(da.first, db.first) || !SameDouble(da.second, db.second)) return false;
    *out = ExactValue{da.first, da.first, da.second, ValueStatus::kDecided};
    return true;
  }
  const auto ra = oracle_internal::RoundRat(a, f);
  const auto rb = oracle_internal::RoundRat(b, f);
  if (!SameDouble(ra.value, rb.value)) return false;
  if (f.precision <= 26) {
    *out = ExactValue{ra.value, oracle_internal::ToDouble(a), 0.0, ValueStatus::kDecided};
    return true;
  }
  const auto da = oracle_internal::ToDoubleDouble(a);
  const auto db = oracle_internal::ToDoubleDouble(b);
  if (!SameDouble(da.first, db.first) || !SameDouble(da.second, db.second)) return false;
  *out = ExactValue{ra.value, da.first, da.second, ValueStatus::kDecided};
  return true;
}

// y = beta + t in binary64, for a normal beta and a t = gamma xhat enclosed
// by [a, b] that lies below a quarter of beta's last place. Every value that
// close to beta rounds to it (below a power of two the spacing halves, and a
// quarter ulp is still under half of it), so hi = beta, y - hi = t exactly,
// and lo = RN(t), decided when both ends round to one double, its sign
// included: the exact path's ToDoubleDouble, hi and then RN(y - hi), gives
// the same. This decides the double-double of a y whose t lies below the
// subnormal quantum relative to beta (a subnormal gamma): an enclosure of y
// itself would need it to about 1,100 bits.
bool DecideBesideDouble(double beta, const oracle_internal::Dyadic& a,
                        const oracle_internal::Dyadic& b, ExactValue* out) {
  if (!std::isfinite(beta) || std::fabs(beta) < std::numeric_limits<double>::min()) return false;
  const std::int64_t quarter_ulp = std::ilogb(beta) - 54;  // ulp(beta) = 2^(ilogb(beta) - 52)
  const auto below = [&](const oracle_internal::Dyadic& t) {
    return t.used == 0 || oracle_internal::MsbOf(t) + t.exp + 1 <= quarter_ulp;  // |t| < 2^...
  };
  if (!below(a) || !below(b)) return false;
  const double lo = oracle_internal::ToDouble(a);
  if (!SameDouble(lo, oracle_internal::ToDouble(b))) return false;
  *out = ExactValue{beta, beta, lo, ValueStatus::kDecided};
  return true;
}

// A + P e in the fixed-width dyadics (dyadic.h), with room for
// ToDoubleDouble's remainder; false if something does not fit.
bool AddScaledFixed(const oracle_internal::Dyadic& A, const oracle_internal::Dyadic& P,
                    const oracle_internal::Dyadic& e, oracle_internal::Dyadic* out) {
  oracle_internal::Dyadic product;
  return oracle_internal::MulDyadic(P, e, &product) &&
         oracle_internal::AddDyadic(A, product, out) && oracle_internal::FitsDoubleDouble(*out);
}

// A + P e for a dyadic A and an enclosure end e of r / P.den (den 1):
// A + P.num e 2^P.exp, dyadic.
template <class Int>
oracle_internal::Rat<Int> AddScaled(const oracle_internal::Rat<Int>& A,
                                    const oracle_internal::Rat<Int>& P,
                                    const oracle_internal::Rat<Int>& e) {
  return oracle_internal::Add(A, oracle_internal::Rat<Int>{P.num * e.num, Int(1), P.exp + e.exp});
}

// v = A + P * r for the row's r and a dyadic A (a double, or 0), rounded
// into f. Exact when P = 0 or r is rational; otherwise the Ziv loop on the
// dyadic enclosures of r / P.den (Row::ScaledLevel), in fixed-width integers
// while they fit (the Boost backend only: the MPFR backend's arithmetic
// stays GMP's, so that the two backends share none).
template <class B>
ExactValue EvalAffine(Row<B>& row, const typename Row<B>::R& A, const typename Row<B>::R& P,
                      FloatFormat f, const OracleOptions& o, std::int64_t* undecided) {
  using oracle_internal::Add;
  using oracle_internal::Mul;
  if (!oracle_internal::IsDyadic(A)) throw std::logic_error("oracle: EvalAffine needs a dyadic A");
  if (P.num.is_zero()) return FromRational(A, f);
  if (row.r_exact()) return FromRational(Add(A, Mul(P, row.r_exact_value())), f);
  const int start = StartBits(f);
  const bool negative = P.num.sign() < 0;
  ExactValue out;
  typename Row<B>::R last;
  oracle_internal::Dyadic fa, fp;
  bool fixed_ok = false;
  if constexpr (B::kFixedWidthElements) {
    fixed_ok = oracle_internal::DyadicFromInt(A.num, A.exp, &fa) &&
               oracle_internal::DyadicFromInt(P.num, P.exp, &fp);
  }
  for (int k = 0; (start << k) <= o.max_bits; ++k) {
    const auto& s = row.ScaledLevel(k, start, P.den);
    oracle_internal::Dyadic a_fixed, b_fixed;
    // Not on the last level, so that `last` is always set below.
    if (fixed_ok && s.fits_fixed && (start << (k + 1)) <= o.max_bits &&
        AddScaledFixed(fa, fp, negative ? s.fixed.hi : s.fixed.lo, &a_fixed) &&
        AddScaledFixed(fa, fp, negative ? s.fixed.lo : s.fixed.hi, &b_fixed)) {
      if (DecideEnclosure(a_fixed, b_fixed, f, &out)) return out;
      continue;
    }
    auto a = AddScaled(A, P, negative ? s.e.hi : s.e.lo);
    if (DecideEnclosure(a, AddScaled(A, P, negative ? s.e.lo : s.e.hi), f, &out)) return out;
    last = std::move(a);
  }
  ++*undecided;
  ExactValue u = FromRational(last, f);
  u.status = ValueStatus::kUndecided;
  return u;
}

template <class Int>
oracle_internal::Rat<Int> Param(std::span<const double> v, std::int64_t i, double absent) {
  return oracle_internal::FromDouble<Int>(v.empty() ? absent : v[i]);
}

double ParamD(std::span<const double> v, std::int64_t i, double absent) {
  return v.empty() ? absent : v[i];
}

void Validate(const OracleProblem& p, bool backward) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("oracle: " + why); };
  if (p.d < 1) fail("d must be >= 1");
  if (p.rows < 1) fail("rows must be >= 1");
  if (static_cast<std::int64_t>(p.x.size()) != p.rows * p.d) fail("x must hold rows*d values");
  if (!p.gamma.empty() && static_cast<std::int64_t>(p.gamma.size()) != p.d)
    fail("gamma must hold d values");
  if (!p.beta.empty() && static_cast<std::int64_t>(p.beta.size()) != p.d)
    fail("beta must hold d values");
  if (backward && static_cast<std::int64_t>(p.dy.size()) != p.rows * p.d)
    fail("dy must hold rows*d values");
}

// The forward of a row of x holding NaN or +-inf: the special-value table of
// oracle.h. Only an RMSNorm row with +-inf and no NaN (q = +inf, r = +0) has
// outputs other than NaN; the mean of a LayerNorm row is its IEEE sum.
template <class B>
void NonFiniteRowForward(const Row<B>& row, const OracleProblem& p, ExactValue* y, ExactValue* mean,
                         ExactValue* rstd) {
  if (mean != nullptr) {
    // sum(x)/d, or NaN from Welford's, Kahan's or a max-scaled order.
    *mean = row.infinite_without_nan() ? ByTable(row.InfiniteSum(), true) : ByTable(kNaN);
  }
  const bool r_zero = row.q_kind() == QKind::kPosInf;  // RMSNorm with +-inf: r = +0
  // A max|x|-scaled order divides the infinity by itself: NaN where r = +0.
  *rstd = ByTable(r_zero ? 0.0 : kNaN, r_zero);
  for (std::int64_t i = 0; i < p.d; ++i) {
    if (!r_zero) {
      y[i] = ByTable(kNaN);
      continue;
    }
    // (x r) gamma: NaN at the infinity (inf * 0) or an infinite gamma, else +-0.
    const double v = (row.x()[i] * 0.0) * ParamD(p.gamma, i, 1.0);
    y[i] = ByTable(RoundToFormat(v, p.out_format), true);
  }
}

// Buffers of one row's vectorized decisions, allocated once per call; and
// all-ones gamma and all-zeros beta for problems without them.
struct RowScratch {
  explicit RowScratch(std::int64_t d) : rounded(d), value(d), ok(d) {}
  std::vector<double> rounded, value;
  std::vector<std::uint8_t> ok;
  std::vector<double> ones, zeros;
  std::optional<oracle_internal::WideRow> wide;  // built on first use
  oracle_internal::Decisions Out() { return {rounded.data(), value.data(), ok.data()}; }
  const double* Gamma(const OracleProblem& p) {
    if (!p.gamma.empty()) return p.gamma.data();
    if (ones.empty()) ones.assign(rounded.size(), 1.0);
    return ones.data();
  }
  const double* Beta(std::span<const double> beta) {
    if (!beta.empty()) return beta.data();
    if (zeros.empty()) zeros.assign(rounded.size(), 0.0);
    return zeros.data();
  }
};

// One row's wide tier (wide_path.h): the row's intervals are prepared for
// the first value that needs them (with dy and gamma, the backward's a and b
// too), then each value is decided from its enclosure, or left to the exact
// path (false).
class WideTier {
 public:
  WideTier(RowScratch& scratch, const double* x, const OracleProblem& p, const OracleOptions& o,
           const double* dy = nullptr, const double* gamma = nullptr)
      : scratch_(scratch), p_(p), x_(x), dy_(dy), gamma_(gamma), state_(o.fast_path ? 0 : -1) {}

  template <class Enclose>  // WideIv(WideRow&)
  bool Decide(Enclose enclose, FloatFormat f, ExactValue* out) {
    oracle_internal::Dyadic lo, hi;
    return Ends(enclose, &lo, &hi) && DecideEnclosure(lo, hi, f, out);
  }

  // The ends of an enclosure (WideEnds); false where the tier is off.
  template <class Enclose>
  bool Ends(Enclose enclose, oracle_internal::Dyadic* lo, oracle_internal::Dyadic* hi) {
    if (state_ == 0) Prepare();
    return state_ > 0 && oracle_internal::WideEnds(enclose(*scratch_.wide), lo, hi);
  }

 private:
  void Prepare() {
    if (!scratch_.wide) scratch_.wide.emplace();
    const bool layer = p_.norm == OracleNorm::kLayerNorm;
    state_ = scratch_.wide->PrepareStats(x_, p_.d, layer, p_.eps) ? 1 : -1;
    if (state_ > 0 && dy_ != nullptr) scratch_.wide->PrepareGrad(dy_, gamma_);
  }

  RowScratch& scratch_;
  const OracleProblem& p_;
  const double *x_, *dy_, *gamma_;
  int state_;  // 0: not prepared yet, 1: ready, -1: off, or q not enclosed above 0
};

template <class B>
OracleForwardResult Forward(const OracleProblem& p, const OracleOptions& o) {
  using Int = typename B::Int;
  using R = oracle_internal::Rat<Int>;
  Validate(p, false);
  const bool layer = p.norm == OracleNorm::kLayerNorm;
  const std::span<const double> beta = layer ? p.beta : std::span<const double>{};
  OracleForwardResult res;
  res.y.resize(p.rows * p.d);
  res.xhat.resize(p.rows * p.d);
  res.stats.resize(p.rows);
  res.rstd.resize(p.rows);
  if (layer) res.mean.resize(p.rows);
  const bool try_fast = o.fast_path && p.out_format.precision <= 26;
  RowScratch scratch(p.d);
  Recheck recheck{o.recheck_every, 0, &res.rechecked, &res.recheck_disagreements};
  for (std::int64_t row_i = 0; row_i < p.rows; ++row_i) {
    Row<B> row(p, row_i, o.fast_path);
    RowStats& st = res.stats[row_i];
    ExactValue* y = res.y.data() + row_i * p.d;
    double* xhat = res.xhat.data() + row_i * p.d;
    st.finite = row.finite();
    if (!row.finite()) {
      st = RowStats{false, kNaN, kNaN, kNaN, kNaN};
      NonFiniteRowForward(row, p, y, layer ? &res.mean[row_i] : nullptr, &res.rstd[row_i]);
      for (std::int64_t i = 0; i < p.d; ++i) xhat[i] = kNaN;
      continue;
    }
    st.mean = layer ? row.MeanDouble() : 0.0;
    st.var = row.VarDouble();
    st.mean_abs = row.MeanAbsDouble();
    if (layer && row.MeanValue(p.stat_format, &res.mean[row_i])) {
      recheck.Maybe(
          res.mean[row_i], [&] { return FromRational(row.mu(), p.stat_format); }, p.stat_format);
    }
    if (row.q_kind() != QKind::kPositive) {
      // r is NaN (q < 0 or NaN), +inf (q = 0) or 0 (q = +inf): IEEE on the formula.
      const double r = row.q_kind() == QKind::kZero     ? HUGE_VAL
                       : row.q_kind() == QKind::kPosInf ? 0.0
                                                        : kNaN;
      st.rstd = r;
      res.rstd[row_i] = Special(r);
      for (std::int64_t i = 0; i < p.d; ++i) {
        const int sign = row.N(i).num.sign();
        const double xh =
            std::isnan(r) ? kNaN : (std::isinf(r) ? (sign == 0 ? kNaN : sign * HUGE_VAL) : 0.0);
        xhat[i] = xh;
        const double v = ParamD(p.gamma, i, 1.0) * xh + ParamD(beta, i, 0.0);
        y[i] = Special(RoundToFormat(v, p.out_format));
      }
      continue;
    }
    const bool fast = try_fast && row.PrepareFast();
    const auto exact_rstd = [&] {
      return EvalAffine<B>(row, R{}, R{Int(1), Int(1), 0}, p.stat_format, o, &res.undecided);
    };
    if (o.fast_path && row.PrepareFast() &&
        oracle_internal::DecideFast(oracle_internal::ToEd(row.r_word()), p.stat_format,
                                    &res.rstd[row_i])) {
      recheck.Maybe(res.rstd[row_i], exact_rstd, p.stat_format);
    } else {
      res.rstd[row_i] = exact_rstd();
    }
    st.rstd = row.PrepareFast() ? row.r_word().hi + row.r_word().lo : res.rstd[row_i].hi;
    WideTier wide(scratch, row.x(), p, o);
    // xhat_i, a by-product for the bounds (not an oracle output): the fast
    // double-word product, or hi of the exact value enclosed to binary32's 2p
    // bits (by the wide tier, else the exact path).
    const auto xhat_of = [&](std::int64_t i) {
      if (fast) {
        const oracle_internal::Edd xh = oracle_internal::MulEdd(row.NFastWord(i), row.r_word());
        return xh.hi + xh.lo;
      }
      ExactValue v;
      // Rows whose outputs need more than the double-word path (binary64)
      // still have its operands: xhat to binary32's 2p bits from them, with
      // DecideFast's check of the bound.
      if (o.fast_path && row.PrepareFast() &&
          oracle_internal::DecideFast(
              oracle_internal::ToEd(oracle_internal::MulEdd(row.NFastWord(i), row.r_word())),
              kBinary32, &v)) {
        return v.hi;
      }
      if (wide.Decide([i](oracle_internal::WideRow& w) { return w.Xhat(i); }, kBinary32, &v)) {
        return v.hi;
      }
      std::int64_t not_an_output = 0;
      return EvalAffine<B>(row, R{}, row.N(i), kBinary32, o, &not_an_output).hi;
    };
    // Most elements are decided in one vectorized pass (fast_rows.h); the
    // rest go through double-words, then the exact path.
    if (fast) {
      oracle_internal::DecideForwardRow(p.x.data() + row_i * p.d, scratch.Gamma(p),
                                        scratch.Beta(beta), p.d, row.Operands(), p.out_format, xhat,
                                        scratch.Out());
    }
    const auto exact_y = [&](std::int64_t i) {
      const R P = oracle_internal::Mul(Param<Int>(p.gamma, i, 1.0), row.N(i));
      return EvalAffine<B>(row, Param<Int>(beta, i, 0.0), P, p.out_format, o, &res.undecided);
    };
    for (std::int64_t i = 0; i < p.d; ++i) {
      if (fast && scratch.ok[i]) {
        y[i] = ExactValue{scratch.rounded[i], scratch.value[i], 0.0, ValueStatus::kDecided};
        recheck.Maybe(
            y[i], [&] { return exact_y(i); }, p.out_format);
        continue;
      }
      const double g = ParamD(p.gamma, i, 1.0);
      const double b = ParamD(beta, i, 0.0);
      if (!std::isfinite(g) || !std::isfinite(b)) {
        const int sign = row.N(i).num.sign();
        const double prod = std::isfinite(g) ? 0.0 : g * static_cast<double>(sign);
        y[i] = Special(RoundToFormat(prod + b, p.out_format));
        xhat[i] = xhat_of(i);  // involves neither gamma nor beta: as for finite ones
        continue;
      }
      if (fast) {
        using oracle_internal::Edd;
        const Edd xh = oracle_internal::MulEdd(row.NFastWord(i), row.r_word());
        xhat[i] = xh.hi + xh.lo;
        // y = beta + gamma xhat in double-words, for sums that cancel.
        const Edd yv = oracle_internal::AddEdd(Edd{b, 0.0, 0.0},
                                               oracle_internal::MulEdd(Edd{g, 0.0, 0.0}, xh));
        if (oracle_internal::DecideFast(oracle_internal::ToEd(yv), p.out_format, &y[i])) {
          recheck.Maybe(
              y[i], [&] { return exact_y(i); }, p.out_format);
          continue;
        }
      }
      if (!fast) xhat[i] = xhat_of(i);
      oracle_internal::Dyadic t_lo, t_hi;
      if (wide.Decide([&](oracle_internal::WideRow& w) { return w.Y(i, g, b); }, p.out_format,
                      &y[i]) ||
          (IsBinary64(p.out_format) &&
           wide.Ends([&](oracle_internal::WideRow& w) { return w.GammaXhat(i, g); }, &t_lo,
                     &t_hi) &&
           DecideBesideDouble(b, t_lo, t_hi, &y[i]))) {
        recheck.Maybe(
            y[i], [&] { return exact_y(i); }, p.out_format);
        continue;
      }
      ++res.slow_path;
      y[i] = exact_y(i);
    }
  }
  return res;
}

// IEEE sum of terms where at least one is not finite.
double NonFiniteSum(bool any_nan, bool pos_inf, bool neg_inf) {
  if (any_nan || (pos_inf && neg_inf)) return kNaN;
  return pos_inf ? HUGE_VAL : -HUGE_VAL;
}

// Fast-path a = mean(g) and T/(d q) for one row, as double-words with error
// bounds. g_i = dy_i gamma_i is split exactly into gh + gl (TwoProduct); the
// sums are Ogita, Rump & Oishi's Sum2/Dot2 ("Accurate sum and dot product",
// SIAM J. Sci. Comput. 26(6), 2005, Prop. 4.5 and 5.5), whose unrounded pair
// (hi, lo) is within gamma_n^2 sum|terms| of the exact sum (the u|s| term of
// their bound is the final rounding, which we do not do). They run in
// kLanes chains (lanes.h), each within that bound for its own terms, and
// the chains' merge adds its own bound.
struct FastBackwardRow {
  bool ok = false;
  oracle_internal::Edd a{0.0, 0.0, 0.0};
  oracle_internal::Edd b_over_q{0.0, 0.0, 0.0};
};

template <class B>
FastBackwardRow PrepareFastBackward(Row<B>& row, const OracleProblem& p, const double* dy,
                                    const double* gamma, bool layer) {
  using oracle_internal::Edd;
  FastBackwardRow fb;
  // An overflowing product has no error-free split: the row then goes to the
  // exact path instead of relying on NaNs propagating.
  const oracle_internal::BackwardSums sums =
      oracle_internal::SumBackwardRow(row.x(), dy, gamma, p.d, row.Operands());
  if (!sums.finite) return fb;
  const double s_hi = sums.s_hi, s_lo = sums.s_lo, s_abs = sums.s_abs;
  const double t_hi = sums.t_hi, t_lo = sums.t_lo, t_abs = sums.t_abs, n_err = sums.n_err;
  const double terms = 8.0 * static_cast<double>(p.d) + 2.0;
  const double g2 = oracle_internal::GammaN(terms) * oracle_internal::GammaN(terms);
  const Edd inv_d = oracle_internal::InverseOf(p.d);
  if (layer) {
    double h, l;
    oracle_internal::TwoSum(s_hi, s_lo, &h, &l);  // |s_lo| may exceed |s_hi| after cancellation
    // Sum2's error in each chain, their merge, and one underflowing
    // TwoProduct residual per term.
    fb.a = MulEdd(Edd{h, l, 2 * g2 * s_abs + sums.s_merge + kU2 * std::fabs(h) + terms * 2 * kTiny},
                  inv_d);
  }
  double th, tl;
  oracle_internal::TwoSum(t_hi, t_lo, &th, &tl);
  const Edd t{th, tl,
              2 * g2 * t_abs + sums.t_merge + kU2 * std::fabs(th) + n_err + terms * 4 * kTiny};
  // 1/(d q) = r^2 / d, from the row's r with its bound (no exact q needed).
  const Edd inv_q = MulEdd(row.r_word(), row.r_word());
  if (!std::isfinite(inv_q.hi) || inv_q.hi > 0x1p900 || inv_q.hi < 0x1p-900) return fb;
  fb.b_over_q = MulEdd(MulEdd(t, inv_q), inv_d);
  fb.ok = std::isfinite(fb.b_over_q.hi) && std::isfinite(fb.b_over_q.e) && std::isfinite(fb.a.e) &&
          std::isfinite(fb.a.hi);
  return fb;
}

// The rows' distinct q (one leader row each) grouped by square class: q_k is in
// the class of q_i iff q_i q_k is the square of a rational, and then
// r_k = r_i rho_k with rho_k = sqrt(q_i / q_k) rational, so a class's terms of
// dgamma add up to one rational times the root of its representative. Built
// on first use: only a dgamma on the exact path with two distinct q needs it.
template <class B>
class SquareClasses {
 public:
  using Int = typename B::Int;
  using R = oracle_internal::Rat<Int>;

  void Build(const std::vector<Row<B>>& rows, const std::vector<std::int64_t>& leaders) {
    if (built_) return;
    built_ = true;
    class_of_.resize(leaders.size());
    rho_.resize(leaders.size());
    std::unordered_map<oracle_internal::ClassKey, std::vector<int>, oracle_internal::ClassKeyHash>
        buckets;
    for (std::size_t g = 0; g < leaders.size(); ++g) {
      const auto& q = rows[leaders[g]].qp();
      Int product = q.num * q.den;
      std::vector<int>& bucket = buckets[oracle_internal::SquareClassKey(product)];
      class_of_[g] = -1;
      for (int c : bucket) {
        if (oracle_internal::RationalRootRatio(rows[reps_[c]].qp(), products_[c], q, product,
                                               &rho_[g])) {
          class_of_[g] = c;
          break;
        }
      }
      if (class_of_[g] >= 0) continue;
      class_of_[g] = static_cast<int>(reps_.size());
      rho_[g] = R{Int(1), Int(1), 0};
      bucket.push_back(class_of_[g]);
      reps_.push_back(leaders[g]);
      products_.push_back(std::move(product));
    }
  }

  std::size_t size() const { return reps_.size(); }
  int class_of(std::size_t group) const { return class_of_[group]; }
  const R& rho(std::size_t group) const { return rho_[group]; }
  std::int64_t rep(int cls) const { return reps_[cls]; }

 private:
  bool built_ = false;
  std::vector<int> class_of_;       // by group (leader)
  std::vector<R> rho_;              // by group: r_group = r_rep * rho
  std::vector<std::int64_t> reps_;  // by class: the representative row
  std::vector<Int> products_;       // by class: num * den of the representative's q
};

// A term P * r of dgamma: an exact rational and the row whose r it multiplies.
template <class B>
struct RootTerm {
  typename Row<B>::R coef;
  Row<B>* row;
};

// Sum of P_k r_k for rows with roots of distinct square classes: the enclosures
// are added as dyadic intervals at a common absolute precision 2^-F, refined
// until the rounding is decided or the cap is reached.
template <class B>
ExactValue SumOfRoots(const std::vector<RootTerm<B>>& terms, FloatFormat f, const OracleOptions& o,
                      std::int64_t* undecided) {
  using Int = typename B::Int;
  using R = oracle_internal::Rat<Int>;
  const int start = StartBits(f);
  ExactValue out;
  R last;
  for (int k = 0; (start << k) <= o.max_bits; ++k) {
    std::vector<std::pair<R, R>> iv;
    std::int64_t top = std::numeric_limits<std::int64_t>::min();
    for (const RootTerm<B>& t : terms) {
      Row<B>& row = *t.row;
      const auto& e = row.r_exact() ? oracle_internal::Enclosure<Int>{row.r_exact_value(),
                                                                      row.r_exact_value(), true}
                                    : row.Level(k, start);
      const bool neg = t.coef.num.sign() < 0;
      R lo = oracle_internal::Mul(t.coef, neg ? e.hi : e.lo);
      R hi = oracle_internal::Mul(t.coef, neg ? e.lo : e.hi);
      top = std::max(top, oracle_internal::FloorLog2(lo));
      iv.emplace_back(lo, hi);
    }
    const std::int64_t bits = (static_cast<std::int64_t>(start) << k) + 8 +
                              static_cast<std::int64_t>(std::ceil(std::log2(terms.size() + 1)));
    const std::int64_t F = bits - top;  // absolute precision: 2^-F
    Int lo_sum(0), hi_sum(0);
    for (auto& [lo, hi] : iv) {
      lo_sum += oracle_internal::ScaleToInteger(lo, F, false);
      hi_sum += oracle_internal::ScaleToInteger(hi, F, true);
    }
    R a{lo_sum, Int(1), -F}, b{hi_sum, Int(1), -F};
    if (a.num.is_zero()) a = R{};
    if (b.num.is_zero()) b = R{};
    last = a;
    if (DecideEnclosure(a, b, f, &out)) return out;
  }
  ++*undecided;
  out = FromRational(last, f);
  out.status = ValueStatus::kUndecided;
  return out;
}

// The rows of positive q grouped by equal q: group[r] indexes `leaders`, the
// first row of each q (-1 for rows without a positive q). Equal q have equal
// nearest doubles: q are compared exactly only within such a bucket.
template <class B>
void GroupRowsByQ(const std::vector<Row<B>>& rows, std::vector<int>* group,
                  std::vector<std::int64_t>* leaders) {
  group->assign(rows.size(), -1);
  std::unordered_map<double, std::vector<int>> buckets;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!rows[r].finite() || rows[r].q_kind() != QKind::kPositive) continue;
    std::vector<int>& bucket = buckets[oracle_internal::ToDouble(rows[r].q())];
    for (int k : bucket) {
      if (oracle_internal::Compare(rows[r].q(), rows[(*leaders)[k]].q()) == 0) {
        (*group)[r] = k;
        break;
      }
    }
    if ((*group)[r] < 0) {
      bucket.push_back(static_cast<int>(leaders->size()));
      (*group)[r] = static_cast<int>(leaders->size());
      leaders->push_back(static_cast<std::int64_t>(r));
    }
  }
}

// dgamma_j on the exact path: sum over rows of dy n r. Rows of equal q
// (group[r], led by leaders[group]) share r; groups of one square class share
// a root up to rational factors, so the sum becomes one rational per class
// times that class's root. A class sum that cancels drops out exactly.
template <class B>
ExactValue DgammaExact(std::vector<Row<B>>& rows, std::vector<int>& group,
                       std::vector<std::int64_t>& leaders, SquareClasses<B>& classes,
                       const OracleProblem& p, std::int64_t j, const OracleOptions& o,
                       std::int64_t* undecided) {
  using R = typename Row<B>::R;
  if (group.empty()) GroupRowsByQ<B>(rows, &group, &leaders);  // on first use: it needs exact q
  std::vector<R> per_group(leaders.size());
  for (std::int64_t r = 0; r < p.rows; ++r) {
    if (group[r] < 0) continue;  // r = 0 rows contribute exactly 0
    per_group[group[r]] = oracle_internal::Add(
        per_group[group[r]],
        oracle_internal::Mul(oracle_internal::FromDouble<typename B::Int>(p.dy[r * p.d + j]),
                             rows[r].N(j)));
  }
  std::vector<RootTerm<B>> terms;
  for (std::size_t g = 0; g < per_group.size(); ++g) {
    if (!per_group[g].num.is_zero()) terms.push_back({per_group[g], &rows[leaders[g]]});
  }
  if (terms.size() >= 2) {  // one q, or none, needs no classes
    classes.Build(rows, leaders);
    std::vector<R> per_class(classes.size());
    for (std::size_t g = 0; g < per_group.size(); ++g) {
      if (per_group[g].num.is_zero()) continue;
      R& sum = per_class[classes.class_of(g)];
      sum = oracle_internal::Add(sum, oracle_internal::Mul(per_group[g], classes.rho(g)));
    }
    terms.clear();
    for (std::size_t c = 0; c < per_class.size(); ++c) {
      if (!per_class[c].num.is_zero())
        terms.push_back({per_class[c], &rows[classes.rep(static_cast<int>(c))]});
    }
  }
  if (terms.empty()) return Special(0.0);  // an exact zero is +0 (oracle.h)
  if (terms.size() == 1) {
    return EvalAffine<B>(*terms[0].row, R{}, terms[0].coef, p.param_format, o, undecided);
  }
  return SumOfRoots<B>(terms, p.param_format, o, undecided);
}

// dgamma_j = sum over the finite rows of dy n r (rows with r = +0 add
// nothing) in double-words, summed a row at a time over every column
// (fast_rows.h, AddDgammaRow; rows in order, so each column's sum is the
// same sequence of operations as a column at a time). Empty when the fast
// path is off or a row has no fast operands.
struct FastColumns {
  std::vector<double> hi, lo, e;
  bool ok = false;
  void Start(std::int64_t d) {
    hi.assign(d, 0.0);
    lo.assign(d, 0.0);
    e.assign(d, 0.0);
    ok = true;
  }
  oracle_internal::ColumnSums View() { return {hi.data(), lo.data(), e.data()}; }
};

template <class B>
FastColumns SumDgammaFast(std::vector<Row<B>>& rows, const OracleProblem& p,
                          const OracleOptions& o) {
  FastColumns sums;
  if (!o.fast_path || p.param_format.precision > 26) return sums;
  for (auto& row : rows) {
    if (!row.finite() || row.q_kind() == QKind::kPosInf) continue;
    if (!row.PrepareFast()) return sums;
  }
  sums.Start(p.d);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    if (!rows[r].finite() || rows[r].q_kind() == QKind::kPosInf) continue;
    oracle_internal::AddDgammaRow(rows[r].x(), p.dy.data() + r * p.d, p.d, rows[r].Operands(),
                                  sums.View());
  }
  return sums;
}

// dbeta_j = sum over rows of dy, a row at a time (fast_rows.h, AddDbetaRow).
// Binary64 too: an exact sum decides it (DbetaOfColumn).
FastColumns SumDbetaFast(const OracleProblem& p, const OracleOptions& o) {
  FastColumns sums;
  if (!o.fast_path || (p.param_format.precision > 26 && !IsBinary64(p.param_format))) return sums;
  sums.Start(p.d);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    oracle_internal::AddDbetaRow(p.dy.data() + r * p.d, p.d, sums.View());
  }
  return sums;
}

// dgamma's wide tier (wide_path.h): every row's terms dy n r summed per
// column in intervals, built for the first column that needs it. Not valid
// when a row is not finite or its q is not enclosed above 0.
class WideDgamma {
 public:
  template <class B>
  bool Decide(const std::vector<Row<B>>& rows, const OracleProblem& p, std::int64_t j,
              ExactValue* out) {
    if (!cols_.started()) Build(rows, p);
    oracle_internal::Dyadic lo, hi;
    return cols_.valid() && oracle_internal::WideEnds(cols_.At(j), &lo, &hi) &&
           DecideEnclosure(lo, hi, p.param_format, out);
  }

 private:
  template <class B>
  void Build(const std::vector<Row<B>>& rows, const OracleProblem& p) {
    cols_.Start(p.d);
    oracle_internal::WideRow w;
    const bool layer = p.norm == OracleNorm::kLayerNorm;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (!rows[r].finite() || rows[r].q_kind() != QKind::kPositive ||
          !w.PrepareStats(rows[r].x(), p.d, layer, p.eps)) {
        cols_.Invalidate();
        return;
      }
      w.AddDgamma(p.dy.data() + static_cast<std::int64_t>(r) * p.d, &cols_);
    }
  }

  oracle_internal::WideColumns cols_;
};

// dgamma_j of finite rows: the fast sum's decision, else the wide tier's,
// else the exact path.
template <class B>
ExactValue DgammaOfFiniteRows(std::vector<Row<B>>& rows, std::vector<int>& group,
                              std::vector<std::int64_t>& leaders, SquareClasses<B>& classes,
                              const FastColumns& fast, WideDgamma& wide, const OracleProblem& p,
                              std::int64_t j, const OracleOptions& o, Recheck& recheck,
                              OracleBackwardResult* res) {
  ExactValue v;
  const auto exact = [&] {
    return DgammaExact<B>(rows, group, leaders, classes, p, j, o, &res->undecided);
  };
  if (fast.ok &&
      oracle_internal::DecideFast(oracle_internal::ToEd({fast.hi[j], fast.lo[j], fast.e[j]}),
                                  p.param_format, &v)) {
    recheck.Maybe(v, exact, p.param_format);
    return v;
  }
  if (o.fast_path && wide.Decide(rows, p, j, &v)) {
    recheck.Maybe(v, exact, p.param_format);
    return v;
  }
  ++res->slow_path;
  return exact();
}

// dx of one row: the special-value table for rows of x holding NaN or +-inf,
// IEEE on the formula where q is not positive or g not finite, else the fast
// path first and the exact path behind it.
template <class B>
void DxOfRow(Row<B>& row, const OracleProblem& p, std::int64_t row_i, const OracleOptions& o,
             RowScratch& scratch, Recheck& recheck, OracleBackwardResult* res) {
  using Int = typename B::Int;
  using R = oracle_internal::Rat<Int>;
  using oracle_internal::Add;
  using oracle_internal::Mul;
  using oracle_internal::Sub;
  const bool layer = p.norm == OracleNorm::kLayerNorm;
  const Int dd(static_cast<std::uint64_t>(p.d));
  ExactValue* dx = res->dx.data() + row_i * p.d;
  const double* dy = p.dy.data() + row_i * p.d;
  // Each factor, not their double product: finite dy and gamma whose product
  // overflows binary64 still have an exact, often finite, dx.
  bool g_finite = true;
  for (std::int64_t i = 0; i < p.d; ++i) {
    if (!std::isfinite(dy[i]) || !std::isfinite(ParamD(p.gamma, i, 1.0))) g_finite = false;
  }
  if (!row.finite()) {  // the table: a NaN enters b = mean(g xhat), with either norm
    for (std::int64_t i = 0; i < p.d; ++i) dx[i] = ByTable(kNaN);
    return;
  }
  if (!g_finite || row.q_kind() == QKind::kNaN || row.q_kind() == QKind::kNegative ||
      row.q_kind() == QKind::kZero) {
    for (std::int64_t i = 0; i < p.d; ++i) dx[i] = Special(kNaN);
    return;
  }
  if (row.q_kind() == QKind::kPosInf) {  // r = 0: dx = 0 * (finite) = +0
    for (std::int64_t i = 0; i < p.d; ++i) dx[i] = Special(0.0);
    return;
  }
  // g_i = dy_i gamma_i; a = mean(g); T = sum g_i n_i; dx_i = r (g_i - a - n_i T/(d q)).
  // The exact a and T/(d q) are computed only if some element needs them.
  bool have_exact = false;
  R a, b_over_q;
  auto ensure_exact = [&] {
    if (have_exact) return;
    have_exact = true;
    const auto sums = row.SumsOfG(dy, [&](std::int64_t i) { return ParamD(p.gamma, i, 1.0); });
    a = layer ? R{sums.sum_g.num, Int(sums.sum_g.den * dd), sums.sum_g.exp} : R{};
    if (a.num.is_zero()) a = R{};
    b_over_q = oracle_internal::Div(R{sums.t.num, Int(sums.t.den * dd), sums.t.exp}, row.q());
  };
  const bool fast = o.fast_path && p.out_format.precision <= 26 && row.PrepareFast();
  FastBackwardRow fb;
  if (fast) fb = PrepareFastBackward(row, p, dy, scratch.Gamma(p), layer);
  if (fast && fb.ok) {  // the vectorized pass first (fast_rows.h)
    oracle_internal::DecideBackwardRow(
        row.x(), dy, scratch.Gamma(p), p.d, row.Operands(), fb.a.hi, std::fabs(fb.a.lo) + fb.a.e,
        fb.b_over_q.hi, std::fabs(fb.b_over_q.lo) + fb.b_over_q.e, p.out_format, scratch.Out());
  }
  const auto exact_dx = [&](std::int64_t i) {
    ensure_exact();
    const R g = Mul(oracle_internal::FromDouble<Int>(dy[i]), Param<Int>(p.gamma, i, 1.0));
    const R c = Sub(Sub(g, a), Mul(row.N(i), b_over_q));
    return EvalAffine<B>(row, R{}, c, p.out_format, o, &res->undecided);
  };
  WideTier wide(scratch, row.x(), p, o, dy, scratch.Gamma(p));
  for (std::int64_t i = 0; i < p.d; ++i) {
    if (fast && fb.ok && scratch.ok[i]) {
      dx[i] = ExactValue{scratch.rounded[i], scratch.value[i], 0.0, ValueStatus::kDecided};
      recheck.Maybe(
          dx[i], [&] { return exact_dx(i); }, p.out_format);
      continue;
    }
    if (fast && fb.ok) {
      const double gam = ParamD(p.gamma, i, 1.0);
      const double gh = dy[i] * gam;
      const double gl = std::fma(dy[i], gam, -gh);  // g = gh + gl, exact but for underflow
      using oracle_internal::Edd;
      const Edd g_w{gh, gl, 2 * kTiny};
      const Edd n_w = row.NFastWord(i);
      const Edd c = AddEdd(AddEdd(g_w, oracle_internal::NegEdd(fb.a)),
                           oracle_internal::NegEdd(oracle_internal::MulEdd(n_w, fb.b_over_q)));
      if (oracle_internal::DecideFast(
              oracle_internal::ToEd(oracle_internal::MulEdd(c, row.r_word())), p.out_format,
              &dx[i])) {
        recheck.Maybe(
            dx[i], [&] { return exact_dx(i); }, p.out_format);
        continue;
      }
    }
    if (wide.Decide([i](oracle_internal::WideRow& w) { return w.Dx(i); }, p.out_format, &dx[i])) {
      recheck.Maybe(
          dx[i], [&] { return exact_dx(i); }, p.out_format);
      continue;
    }
    ++res->slow_path;
    dx[i] = exact_dx(i);
  }
}

// The IEEE side of column j's sums: which non-finite terms dbeta = sum dy
// and dgamma = sum dy xhat hold, and whether the special-value table decides.
struct ColumnSpecials {
  bool nan_b = false, pinf_b = false, ninf_b = false;
  bool nan_g = false, pinf_g = false, ninf_g = false;
  // Rows of x holding NaN or +-inf (the table): a term that is NaN in every
  // evaluation order, or the +-0 of an RMSNorm row with +-inf (NaN in the
  // max-scaled order); and whether every row is such a row.
  bool table_nan_g = false, nan_accepted_g = false, only_table_rows = true;
};

template <class B>
ColumnSpecials ClassifyColumn(const std::vector<Row<B>>& rows, const OracleProblem& p,
                              std::int64_t j) {
  ColumnSpecials cs;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const double v = p.dy[r * p.d + j];
    if (std::isnan(v))
      cs.nan_b = true;
    else if (std::isinf(v))
      (v > 0 ? cs.pinf_b : cs.ninf_b) = true;
    const Row<B>& row = rows[r];
    if (!row.finite()) {
      // xhat_j = x_j * (+0) = +-0 only for a finite x_j of an RMSNorm row with r = +0.
      if (row.q_kind() == QKind::kPosInf && std::isfinite(row.x()[j]) && std::isfinite(v)) {
        cs.nan_accepted_g = true;
      } else {
        cs.nan_g = cs.table_nan_g = true;
      }
      continue;
    }
    cs.only_table_rows = false;
    // dy * xhat: q <= 0 and 0 * inf are NaN; inf * nonzero is inf.
    const QKind qk = row.q_kind();
    if (qk == QKind::kNaN || qk == QKind::kNegative || std::isnan(v)) {
      cs.nan_g = true;
      continue;
    }
    if (qk == QKind::kPosInf) {  // xhat = 0
      if (std::isinf(v)) cs.nan_g = true;
      continue;
    }
    if (qk == QKind::kPositive && std::isfinite(v)) continue;  // a finite term
    const int ns = row.N(j).num.sign();
    const bool xhat_inf = qk == QKind::kZero && ns != 0;
    if (qk == QKind::kZero && ns == 0) {
      cs.nan_g = true;
      continue;
    }
    if (std::isinf(v) || xhat_inf) {
      if (v == 0.0 || ns == 0) {
        cs.nan_g = true;
      } else {
        ((v > 0) == (ns > 0) ? cs.pinf_g : cs.ninf_g) = true;
      }
    }
  }
  return cs;
}

// A binary64 output whose exact value is h + l (two doubles): TwoSum gives
// its canonical double-double, hi = the sum rounded to nearest even and lo
// the exact rest, which is what the exact path's ToDoubleDouble gives.
// False for sums of 2^1000 or more, where TwoSum's steps could overflow
// (to a non-finite value, never a wrong finite one; the exact path then
// gives what is left past 2^1024 too). The column sums start at +0, and a
// sum of doubles is -0 only when both are, so an exact zero is +0, as on
// the exact path.
bool Binary64OfExactSum(double h, double l, ExactValue* out) {
  double hi, lo;
  oracle_internal::TwoSum(h, l, &hi, &lo);
  if (!(std::fabs(hi) < 0x1p1000) || !std::isfinite(lo)) return false;
  *out = ExactValue{hi, hi, lo, ValueStatus::kDecided};
  return true;
}

// dbeta_j = sum over rows of dy: IEEE when a term is not finite, else the
// fast sum first and the exact rational behind it.
template <class B>
ExactValue DbetaOfColumn(const OracleProblem& p, std::int64_t j, const ColumnSpecials& cs,
                         const FastColumns& fast, Recheck& recheck) {
  using R = oracle_internal::Rat<typename B::Int>;
  if (cs.nan_b || cs.pinf_b || cs.ninf_b)
    return Special(NonFiniteSum(cs.nan_b, cs.pinf_b, cs.ninf_b));
  const auto exact = [&] {
    R sum_dy;
    for (std::int64_t r = 0; r < p.rows; ++r) {
      sum_dy = oracle_internal::Add(
          sum_dy, oracle_internal::FromDouble<typename B::Int>(p.dy[r * p.d + j]));
    }
    return FromRational(sum_dy, p.param_format);
  };
  ExactValue v;
  if (fast.ok && fast.e[j] == 0.0 && IsBinary64(p.param_format) &&
      Binary64OfExactSum(fast.hi[j], fast.lo[j], &v)) {
    recheck.Maybe(v, exact, p.param_format);
    return v;
  }
  if (fast.ok && fast.e[j] == 0.0 && !IsBinary64(p.param_format) &&
      oracle_internal::RoundDoubleWord(fast.hi[j], fast.lo[j], p.param_format, &v.rounded)) {
    // The sum is exactly hi + lo (fast_rows.h): rounded exactly, ties too.
    oracle_internal::TwoSum(fast.hi[j], fast.lo[j], &v.hi, &v.lo);
    recheck.Maybe(v, exact, p.param_format);
    return v;
  }
  // Otherwise within 2e of hi + lo (e (1 + gamma_rows), rounded up).
  if (fast.ok &&
      oracle_internal::DecideFast(oracle_internal::ToEd({fast.hi[j], fast.lo[j], 2 * fast.e[j]}),
                                  p.param_format, &v)) {
    recheck.Maybe(v, exact, p.param_format);
    return v;
  }
  return exact();
}

template <class B>
OracleBackwardResult Backward(const OracleProblem& p, const OracleOptions& o) {
  Validate(p, true);
  const bool layer = p.norm == OracleNorm::kLayerNorm;
  OracleBackwardResult res;
  res.dx.resize(p.rows * p.d);
  std::vector<Row<B>> rows;
  rows.reserve(p.rows);
  RowScratch scratch(p.d);
  Recheck recheck{o.recheck_every, 0, &res.rechecked, &res.recheck_disagreements};
  for (std::int64_t row_i = 0; row_i < p.rows; ++row_i) {
    rows.emplace_back(p, row_i, o.fast_path);
    DxOfRow<B>(rows.back(), p, row_i, o, scratch, recheck, &res);
  }
  // dbeta_j = sum_rows dy (exact); dgamma_j = sum_rows dy n r, on the exact
  // path grouped by equal q and by square class of q (both on first use).
  std::vector<int> group;
  std::vector<std::int64_t> leaders;
  SquareClasses<B> classes;
  WideDgamma wide_dgamma;
  const FastColumns fast_dgamma = SumDgammaFast<B>(rows, p, o);
  const FastColumns fast_dbeta = layer ? SumDbetaFast(p, o) : FastColumns{};
  if (layer) res.dbeta.resize(p.d);
  res.dgamma.resize(p.d);
  // A column of finite dy over rows of finite x and positive q has no special
  // terms: ClassifyColumn is needed only for the others.
  bool plain_rows = true;
  for (const auto& row : rows) plain_rows &= row.finite() && row.q_kind() == QKind::kPositive;
  std::vector<std::uint8_t> finite_dy(plain_rows ? p.d : 0, 1);
  for (std::int64_t r = 0; plain_rows && r < p.rows; ++r) {
    for (std::int64_t j = 0; j < p.d; ++j) finite_dy[j] &= std::isfinite(p.dy[r * p.d + j]);
  }
  ColumnSpecials plain;
  plain.only_table_rows = false;
  for (std::int64_t j = 0; j < p.d; ++j) {
    const ColumnSpecials cs = plain_rows && finite_dy[j] ? plain : ClassifyColumn<B>(rows, p, j);
    if (layer) res.dbeta[j] = DbetaOfColumn<B>(p, j, cs, fast_dbeta, recheck);
    if (cs.nan_g || cs.pinf_g || cs.ninf_g) {
      res.dgamma[j] =
          cs.table_nan_g ? ByTable(kNaN) : Special(NonFiniteSum(cs.nan_g, cs.pinf_g, cs.ninf_g));
      continue;
    }
    if (cs.only_table_rows) {  // every term +-0: an exact zero (+0, oracle.h), or NaN
      res.dgamma[j] = ByTable(0.0, true);
      continue;
    }
    res.dgamma[j] = DgammaOfFiniteRows<B>(rows, group, leaders, classes, fast_dgamma, wide_dgamma,
                                          p, j, o, recheck, &res);
    res.dgamma[j].nan_accepted = cs.nan_accepted_g;
  }
  return res;
}

}  // namespace

OracleForwardResult OracleForward(const OracleProblem& p, const OracleOptions& o) {
  return o.backend == OracleBackend::kMpfr ? Forward<oracle_internal::MpfrBackend>(p, o)
                                           : Forward<oracle_internal::BoostBackend>(p, o);
}

OracleBackwardResult OracleBackward(const OracleProblem& p, const OracleOptions& o) {
  return o.backend == OracleBackend::kMpfr ? Backward<oracle_internal::MpfrBackend>(p, o)
                                           : Backward<oracle_internal::BoostBackend>(p, o);
}

}  // namespace lnv

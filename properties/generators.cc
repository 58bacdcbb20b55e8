#include "properties/generators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "harness/driver.h"
#include "harness/families.h"
#include "harness/formats.h"
#include "properties/coverage.h"

namespace lnv {

void showValue(const Case& c, std::ostream& os) {
  os << NormName(c.norm) << " " << DTypeName(c.dtype) << "/" << DTypeName(c.param_dtype)
     << " d=" << c.d << " rows=" << c.rows << " eps=" << FormatValue(c.eps);
  if (!c.provenance.family.empty()) {
    os << " family=" << c.provenance.family << " seed=" << c.provenance.seed.value_or(0);
  }
  os << (c.gamma.empty() ? " gamma=absent" : "") << (c.beta.empty() ? " beta=absent" : "")
     << (c.dy.empty() ? " (forward only)" : "");
  // Small cases in full, in the case-file format (hex floats).
  constexpr std::int64_t kPrintedElements = 64;
  if (c.rows * c.d <= kPrintedElements) os << "\n" << FormatCase(c);
}

namespace props {
namespace {

constexpr int kFullSize = 100;  // RapidCheck's nominal size: full ranges

template <typename T>
rc::Gen<T> Full(rc::Gen<T> g) {
  return rc::gen::resize(kFullSize, std::move(g));
}

// gen::weightedOneOf over a list built at run time (RapidCheck's takes an
// initializer_list). Shrinks toward the first choice.
template <typename T>
rc::Gen<T> WeightedOneOf(std::vector<std::pair<std::size_t, rc::Gen<T>>> choices) {
  std::size_t total = 0;
  for (const auto& c : choices) total += c.first;
  return rc::gen::mapcat(Full(rc::gen::inRange<std::size_t>(0, total)), [choices](std::size_t w) {
    for (const auto& c : choices) {
      if (w < c.first) return c.second;
      w -= c.first;
    }
    return choices.back().second;
  });
}

int Clamp(int e, int lo, int hi) { return std::max(lo, std::min(e, hi)); }

// Lowest exponent worth drawing: the format's smallest subnormal.
int MinExponent(FloatFormat f) { return f.emin - f.precision + 1; }

double Fit(double v, FloatFormat f) {
  const double r = RoundToFormat(v, f);
  return std::isinf(r) && std::isfinite(v) ? std::copysign(MaxFinite(f), v) : r;
}

}  // namespace

void showValue(const KernelGroup& g, std::ostream& os) {
  os << NormName(g.norm) << " " << DTypeName(g.dtype) << "/" << DTypeName(g.param_dtype);
}

KernelGroup GroupOf(const ImplInfo& impl) { return {impl.norm, impl.x_dtype, impl.param_dtype}; }

std::vector<KernelGroup> GroupsOf(const std::vector<const ImplInfo*>& kernels) {
  // The driver's grouping, in the order of each group's first kernel.
  std::vector<std::vector<std::size_t>> members = GroupBySignature(kernels);
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  std::vector<KernelGroup> groups;
  for (const std::vector<std::size_t>& m : members) groups.push_back(GroupOf(*kernels[m.front()]));
  return groups;
}

rc::Gen<KernelGroup> OneGroupOf(const std::vector<KernelGroup>& groups) {
  return rc::gen::elementOf(groups);
}

rc::Gen<double> FloatValue(FloatFormat f, int e_lo, int e_hi) {
  e_lo = Clamp(e_lo, MinExponent(f), f.emax);
  e_hi = Clamp(e_hi, e_lo, f.emax);
  const std::int64_t mantissas = std::int64_t{1} << (f.precision - 1);
  return Full(rc::gen::apply(
      [f](bool negative, int e, std::int64_t m) {
        const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(m), 1 - f.precision), e);
        return Fit(negative ? -v : v, f);
      },
      rc::gen::arbitrary<bool>(), rc::gen::inRange(e_lo, e_hi + 1),
      rc::gen::inRange<std::int64_t>(0, mantissas)));
}

rc::Gen<double> ScaledInteger(std::int64_t k_max, int e) {
  return Full(rc::gen::map(rc::gen::inRange<std::int64_t>(-k_max, k_max + 1),
                           [e](std::int64_t k) { return std::ldexp(static_cast<double>(k), e); }));
}

rc::Gen<double> Epsilon(bool allow_zero) {
  const auto as_float = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  std::vector<std::pair<std::size_t, rc::Gen<double>>> choices = {
      {3, rc::gen::map(rc::gen::element(1e-5, 1e-6, 1e-12), as_float)},
      {4, rc::gen::map(FloatValue(kBinary32, -40, -7), [](double v) { return std::fabs(v); })},
  };
  if (allow_zero) choices.push_back({2, rc::gen::just(0.0)});
  return WeightedOneOf(choices);
}

rc::Gen<std::int64_t> RowLength(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> special;
  for (std::int64_t v :
       {1,   2,   3,   7,   8,   9,   15,  16,  17,  31,   32,   33,   63,   64,   65,   127,
        128, 129, 255, 256, 257, 511, 512, 513, 768, 1023, 1024, 1025, 4095, 4096, 4097, 65536}) {
    if (v >= lo && v <= hi) special.push_back(v);
  }
  std::vector<std::pair<std::size_t, rc::Gen<std::int64_t>>> choices;
  const auto bucket = [&](std::size_t w, std::int64_t a, std::int64_t b) {
    a = std::max(a, lo);
    b = std::min(b, hi);
    if (a <= b) choices.push_back({w, rc::gen::inRange<std::int64_t>(a, b + 1)});
  };
  bucket(4, 1, 16);
  bucket(3, 17, 256);
  bucket(2, 257, 4096);
  bucket(1, 4097, 65536 + 17);
  if (!special.empty()) choices.push_back({3, rc::gen::elementOf(special)});
  return WeightedOneOf(choices);
}

rc::Gen<std::int64_t> RowCount(std::int64_t hi) {
  hi = std::max<std::int64_t>(hi, 1);
  return rc::gen::weightedOneOf<std::int64_t>(
      {{4, rc::gen::inRange<std::int64_t>(1, std::min<std::int64_t>(hi, 4) + 1)},
       {1, rc::gen::inRange<std::int64_t>(1, hi + 1)}});
}

const char* RowKindName(RowKind k) {
  switch (k) {
    case RowKind::kStandard:
      return "standard";
    case RowKind::kLargeMean:
      return "large_mean";
    case RowKind::kHeavyTail:
      return "heavy_tail";
    case RowKind::kHuge:
      return "huge";
    case RowKind::kTiny:
      return "tiny";
    case RowKind::kNearConstant:
      return "near_constant";
    case RowKind::kConstant:
      return "constant";
  }
  return "?";
}

std::vector<RowKind> AllRowKinds() {
  return {RowKind::kStandard, RowKind::kLargeMean,    RowKind::kHeavyTail, RowKind::kHuge,
          RowKind::kTiny,     RowKind::kNearConstant, RowKind::kConstant};
}

namespace {

using Row = std::vector<double>;

rc::Gen<Row> Values(std::int64_t d, rc::Gen<double> value) {
  return rc::gen::container<Row>(static_cast<std::size_t>(d), std::move(value));
}

rc::Gen<Row> LargeMeanRow(FloatFormat f, std::int64_t d) {
  // Center C = +-(1 + m) 2^e; step 2^(e - s); x_i = C + k_i step, |k_i| <= 8.
  // kappa = |C| / sigma is about 2^s / 4, up to 2^(p-3).
  const int e_hi = std::min(20, f.emax / 2);
  return rc::gen::exec([=] {
    const double center = *FloatValue(f, 0, e_hi);
    const int s = *Full(rc::gen::inRange(1, f.precision));
    const double step = std::ldexp(1.0, std::ilogb(center) - s);
    const Row k = *Values(d, Full(rc::gen::map(rc::gen::inRange(-8, 9),
                                               [](int v) { return static_cast<double>(v); })));
    Row row;
    for (double ki : k) row.push_back(Fit(center + ki * step, f));
    return row;
  });
}

rc::Gen<Row> HeavyTailRow(FloatFormat f, std::int64_t d) {
  return rc::gen::exec([=] {
    Row row = *Values(d, FloatValue(f, -3, 3));
    const int outliers = *Full(rc::gen::inRange(1, 3));
    for (int o = 0; o < outliers; ++o) {
      const auto at = *Full(rc::gen::inRange<std::int64_t>(0, d));
      row[static_cast<std::size_t>(at)] = *FloatValue(f, 8, std::min(20, f.emax - 4));
    }
    return row;
  });
}

rc::Gen<Row> NearConstantRow(FloatFormat f, std::int64_t d, double eps) {
  // ulp(c) = 2^(e_c - p + 1) ~ sqrt(eps)/64: sigma^2 <= ulp(c)^2 ~ eps/4096.
  const int e_c =
      eps > 0
          ? Clamp(static_cast<int>(std::floor(std::log2(std::sqrt(eps) / 64))) + f.precision - 1,
                  f.emin, f.emax - 1)
          : 0;
  return rc::gen::exec([=] {
    const double c = *FloatValue(f, e_c, e_c);
    const double ulp = FormatUlp(c, f);
    const Row k = *Values(d, Full(rc::gen::map(rc::gen::inRange(-1, 2),
                                               [](int v) { return static_cast<double>(v); })));
    Row row;
    for (double ki : k) row.push_back(Fit(c + ki * ulp, f));
    return row;
  });
}

}  // namespace

rc::Gen<std::vector<double>> RowValues(FloatFormat f, std::int64_t d, RowKind kind, double eps) {
  switch (kind) {
    case RowKind::kStandard:
      return Values(d, FloatValue(f, -3, 3));
    case RowKind::kLargeMean:
      return LargeMeanRow(f, d);
    case RowKind::kHeavyTail:
      return HeavyTailRow(f, d);
    case RowKind::kHuge:
      return Values(d, FloatValue(f, f.emax / 2, f.emax - 2));
    case RowKind::kTiny:
      return Values(d, FloatValue(f, MinExponent(f), f.emin + 2));
    case RowKind::kNearConstant:
      return NearConstantRow(f, d, eps);
    case RowKind::kConstant:
      return rc::gen::exec([=] {
        const int e = *Full(rc::gen::inRange(-4, 5));
        return Row(static_cast<std::size_t>(d), Fit(*ScaledInteger(127, e), f));
      });
  }
  return Values(d, FloatValue(f, -3, 3));
}

rc::Gen<std::vector<double>> SpecialRow(FloatFormat f, std::int64_t d) {
  return rc::gen::exec([=] {
    Row row = *Values(d, FloatValue(f, -3, 3));
    const double inf = std::numeric_limits<double>::infinity();
    const double special = *rc::gen::element(std::numeric_limits<double>::quiet_NaN(), inf, -inf);
    const auto at = *Full(rc::gen::inRange<std::int64_t>(0, d));
    row[static_cast<std::size_t>(at)] = special;
    if (d > 1 && *rc::gen::weightedElement<bool>({{3, false}, {1, true}})) {
      row[static_cast<std::size_t>((at + 1) % d)] = std::isnan(special) ? inf : -special;
    }
    return row;
  });
}

std::vector<std::string> FiniteFamilies() {
  std::vector<std::string> names;
  for (const Family& f : AllFamilies()) {
    if (f.name != "nan_inf_rows") names.emplace_back(f.name);
  }
  return names;
}

namespace {

// The values, with one element set to +inf or -inf in one case of
// kCasesPerInfinity: y_i = gamma_i xhat_i + beta_i then follows IEEE
// arithmetic (oracle.h), and the other elements and rows must not notice.
// Per case, not per element: an infinity in most long vectors would leave
// few finite outputs to check anything else on.
constexpr int kCasesPerInfinity = 16;
rc::Gen<Row> WithAnInfinitySometimes(rc::Gen<Row> values, std::int64_t d) {
  return rc::gen::exec([=] {
    Row row = *values;
    if (d > 0 && *Full(rc::gen::inRange(0, kCasesPerInfinity)) == 0) {
      const auto at = *Full(rc::gen::inRange<std::int64_t>(0, d));
      const double inf = std::numeric_limits<double>::infinity();
      row[static_cast<std::size_t>(at)] = *rc::gen::element(inf, -inf);
    }
    return row;
  });
}

}  // namespace

rc::Gen<std::vector<double>> GammaValues(FloatFormat f, std::int64_t d) {
  // Mostly O(1) gains of either sign, sometimes zeros and subnormals (gamma
  // near 0), now and then an infinite one.
  return WithAnInfinitySometimes(
      Values(d, rc::gen::weightedOneOf<double>({{6, FloatValue(f, -2, 1)},
                                                {1, rc::gen::element(0.0, -0.0)},
                                                {1, FloatValue(f, MinExponent(f), f.emin)}})),
      d);
}

rc::Gen<std::vector<double>> BetaValues(FloatFormat f, std::int64_t d) {
  // Mostly O(1) shifts, sometimes +-0 (y is -0 only where gamma xhat and beta
  // both are) and subnormals (a subnormal y where gamma xhat is 0: constant
  // rows, gamma = 0), now and then an infinite one.
  return WithAnInfinitySometimes(
      Values(d, rc::gen::weightedOneOf<double>({{6, FloatValue(f, -3, 1)},
                                                {1, rc::gen::element(0.0, -0.0)},
                                                {1, FloatValue(f, MinExponent(f), f.emin - 1)}})),
      d);
}

rc::Gen<std::vector<double>> DyValues(FloatFormat f, std::int64_t n) {
  return Values(n, FloatValue(f, -3, 2));
}

void SetAffine(Case* c, Affine mode, const std::vector<double>& gamma,
               const std::vector<double>& beta) {
  const auto d = static_cast<std::size_t>(c->d);
  switch (mode) {
    case Affine::kAbsent:
      c->gamma.clear();
      c->beta.clear();
      break;
    case Affine::kOnes:
      c->gamma.assign(d, 1.0);
      c->beta.assign(d, 0.0);
      break;
    case Affine::kDrawn:
      c->gamma = gamma;
      c->beta = beta;
      break;
  }
  if (c->norm == Norm::kRmsNorm) c->beta.clear();
}

namespace {

rc::Gen<Case> DrawnInput(const KernelGroup& g, const InputSpec& s) {
  return rc::gen::exec([=] {
    const FloatFormat xf = FormatOf(g.dtype);
    const FloatFormat pf = FormatOf(g.param_dtype);
    Case c;
    c.norm = g.norm;
    c.dtype = g.dtype;
    c.param_dtype = g.param_dtype;
    c.d = *RowLength(s.min_d, s.max_d);
    c.rows = *RowCount(s.max_rows);
    c.eps = *Epsilon(s.allow_eps_zero);
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const RowKind kind = *rc::gen::elementOf(s.kinds);
      const Row row = *RowValues(xf, c.d, kind, c.eps);
      c.x.insert(c.x.end(), row.begin(), row.end());
    }
    const Affine mode = *rc::gen::elementOf(s.affine);
    if (mode == Affine::kDrawn) {
      SetAffine(&c, mode, *GammaValues(pf, c.d), *BetaValues(pf, c.d));
    } else {
      SetAffine(&c, mode, {}, {});
    }
    if (s.backward) c.dy = *DyValues(xf, c.rows * c.d);
    return c;
  });
}

rc::Gen<Case> FamilyInput(const KernelGroup& g, const InputSpec& s) {
  return rc::gen::exec([=] {
    FamilyParams p;
    p.norm = g.norm;
    p.dtype = g.dtype;
    p.param_dtype = g.param_dtype;
    p.d = *RowLength(std::max<std::int64_t>(s.min_d, 1), s.max_d);
    p.rows = *RowCount(s.max_rows);
    p.seed = *Full(rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 32));
    p.eps = *Epsilon(s.allow_eps_zero);
    p.with_dy = s.backward;
    p.affine = std::find(s.affine.begin(), s.affine.end(), Affine::kDrawn) != s.affine.end();
    // The long families at the size the spec allows (d, rows bounded by it).
    p.large_d = std::max<std::int64_t>(s.max_d, 1);
    p.many_rows = std::max<std::int64_t>(s.max_rows, 1);
    const std::string name = *rc::gen::elementOf(s.families);
    Case c = GenerateCase(*FindFamily(name), p);
    return c.d < s.min_d ? *DrawnInput(g, s) : c;  // d_one, many_rows may go below min_d
  });
}

}  // namespace

rc::Gen<Case> Input(const KernelGroup& g, const InputSpec& spec) {
  if (spec.families.empty()) return DrawnInput(g, spec);
  return rc::gen::weightedOneOf<Case>({{3, DrawnInput(g, spec)}, {1, FamilyInput(g, spec)}});
}

rc::Gen<ShiftPair> ShiftedInput(const KernelGroup& g, std::int64_t max_d, std::int64_t max_rows) {
  return rc::gen::exec([=] {
    const FloatFormat xf = FormatOf(g.dtype);
    const FloatFormat pf = FormatOf(g.param_dtype);
    const int p = xf.precision;
    const std::int64_t limit = (std::int64_t{1} << p) - 1;  // |integer| < 2^p is exact
    ShiftPair s;
    Case& c = s.base;
    c.norm = g.norm;
    c.dtype = g.dtype;
    c.param_dtype = g.param_dtype;
    c.d = *RowLength(1, max_d);
    // Long rows one at a time (the metamorphic form at large d).
    c.rows = c.d > 4096 ? 1 : *RowCount(max_rows);
    c.eps = *Epsilon(true);
    // The quantum 2^q keeps the largest |k + m| 2^q below 2^(emax - 1) (and
    // below 2^(p+4), inside every kernel's claimed range) and lets the spread
    // k 2^q reach from the subnormals to O(1).
    const int q = *Full(
        rc::gen::inRange(std::max(MinExponent(xf), -p - 6), std::min(xf.emax - p - 1, 4) + 1));
    const int b = *Full(rc::gen::inRange(1, p - 1));  // spread: |k| <= 2^b - 1
    const std::int64_t k_max = (std::int64_t{1} << b) - 1;
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const Row k =
          *Values(c.d, Full(rc::gen::map(rc::gen::inRange<std::int64_t>(-k_max, k_max + 1),
                                         [](std::int64_t v) { return static_cast<double>(v); })));
      // m = +-floor((limit - k_max) / 2^j): log-uniform over the room left.
      const std::int64_t room = limit - k_max;
      const int j = *Full(rc::gen::inRange(0, p));
      const std::int64_t m = (room >> j) * (*rc::gen::arbitrary<bool>() ? -1 : 1);
      for (double ki : k) c.x.push_back(std::ldexp(ki, q));
      s.shift.push_back(std::ldexp(static_cast<double>(m), q));
    }
    const Affine mode = *rc::gen::element(Affine::kAbsent, Affine::kDrawn);
    if (mode == Affine::kDrawn) {
      SetAffine(&c, mode, *GammaValues(pf, c.d), *BetaValues(pf, c.d));
    }
    c.dy = *DyValues(xf, c.rows * c.d);
    s.shifted = c;
    for (std::int64_t r = 0; r < c.rows; ++r) {
      for (std::int64_t i = 0; i < c.d; ++i) s.shifted.x[r * c.d + i] += s.shift[r];  // exact
    }
    return s;
  });
}

rc::Gen<std::vector<std::int64_t>> Permutation(std::int64_t d) {
  using Perm = std::vector<std::int64_t>;
  const auto identity = [d] {
    Perm p(static_cast<std::size_t>(d));
    for (std::int64_t i = 0; i < d; ++i) p[i] = i;
    return p;
  };
  std::vector<std::pair<std::size_t, rc::Gen<Perm>>> choices;
  choices.push_back({1, rc::gen::exec([=] {
                       Perm p = identity();
                       std::reverse(p.begin(), p.end());
                       return p;
                     })});
  choices.push_back({1, rc::gen::exec([=] {
                       Perm p = identity();
                       const auto r = *Full(rc::gen::inRange<std::int64_t>(0, d));
                       std::rotate(p.begin(), p.begin() + r, p.end());
                       return p;
                     })});
  choices.push_back({2, rc::gen::exec([=] {
                       Perm p = identity();
                       const int swaps = *Full(rc::gen::inRange(1, 9));
                       for (int s = 0; s < swaps; ++s) {
                         const auto a = *Full(rc::gen::inRange<std::int64_t>(0, d));
                         const auto b = *Full(rc::gen::inRange<std::int64_t>(0, d));
                         std::swap(p[a], p[b]);
                       }
                       return p;
                     })});
  if (d <= 64) {
    // Fisher-Yates with j = i - t: t shrinks to 0, the permutation to the identity.
    choices.push_back({2, rc::gen::exec([=] {
                         Perm p = identity();
                         for (std::int64_t i = d - 1; i > 0; --i) {
                           const auto t = *Full(rc::gen::inRange<std::int64_t>(0, i + 1));
                           std::swap(p[i], p[i - t]);
                         }
                         return p;
                       })});
  }
  return WeightedOneOf(choices);
}

std::string KappaBucket(const std::vector<RowStats>& stats) {
  double worst = 1.0;
  bool constant = false, finite = false;
  for (const RowStats& s : stats) {
    if (!s.finite) continue;
    finite = true;
    if (s.var == 0) {
      constant = true;
      continue;
    }
    worst = std::max(worst, std::sqrt(1 + s.mean * s.mean / s.var));
  }
  if (!finite) return "no finite row";
  if (constant && worst < 1e1) return "sigma=0";
  if (worst < 1e1) return "<1e1";
  if (worst < 1e3) return "1e1..1e3";
  if (worst < 1e5) return "1e3..1e5";
  return ">=1e5";
}

std::string RowLengthBucket(std::int64_t d) {
  if (d == 1) return "1";
  if (d <= 16) return "2..16";
  if (d <= 256) return "17..256";
  if (d <= 4096) return "257..4096";
  return ">4096";
}

std::string EpsRegime(double eps) {
  if (eps == 0) return "0";
  if (eps <= 1e-8) return "<=1e-8";
  if (eps <= 1e-4) return "1e-8..1e-4";
  return ">1e-4";
}

void Classify(const Case& c, const std::vector<RowStats>& stats) {
  const std::string dtype = std::string(DTypeName(c.dtype)) + " " + std::string(NormName(c.norm));
  const std::string kappa = "kappa " + KappaBucket(stats);
  const std::string d = "d " + RowLengthBucket(c.d);
  const std::string eps = "eps " + EpsRegime(c.eps);
  RC_CLASSIFY(true, dtype);
  RC_CLASSIFY(true, kappa);
  RC_CLASSIFY(true, d);
  RC_CLASSIFY(true, eps);
  Coverage& cov = Coverage::Current();
  cov.CountCase();
  cov.Count("dtype", dtype);
  cov.Count("kappa", KappaBucket(stats));
  cov.Count("d", RowLengthBucket(c.d));
  cov.Count("eps", EpsRegime(c.eps));
}

}  // namespace props
}  // namespace lnv

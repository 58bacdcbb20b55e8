#include "fuzz/feedback.h"

#include <algorithm>
#include <cmath>

#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

// Feature kinds: the first component of every feature tuple.
enum Kind : std::uint64_t {
  kValue = 1,
  kKappa = 2,
  kEpsRegime = 3,
  kVerdict = 4,
  kUlp = 5,
  kBoundUse = 6,
  kOracle = 7,
};

std::uint64_t Mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Clamped ilogb that is defined for 0 and non-finite values.
int SafeIlogb(double v, int lo, int hi) {
  if (!(v > 0)) return lo;
  if (std::isinf(v)) return hi;
  return std::clamp(std::ilogb(v), lo, hi);
}

// ClassOf with the format's smallest normal and top binade's start given:
// a call of ldexp each was most of AddInputFeatures' time.
ValueClass ClassWithin(double v, double min_normal, double top_binade) {
  if (std::isnan(v)) return ValueClass::kNaN;
  if (std::isinf(v)) return ValueClass::kInf;
  const double a = std::fabs(v);
  if (a == 0) return ValueClass::kZero;
  if (a < min_normal) return ValueClass::kSubnormal;
  if (a >= top_binade) return ValueClass::kTopBinade;
  if (a < 0x1p-32) return ValueClass::kSmall;
  if (a < 0x1p32) return ValueClass::kUnit;
  return ValueClass::kLarge;
}

}  // namespace

ValueClass ClassOf(double v, FloatFormat f) {
  return ClassWithin(v, std::ldexp(1.0, f.emin), std::ldexp(1.0, f.emax));
}

const char* ValueClassName(ValueClass c) {
  switch (c) {
    case ValueClass::kZero:
      return "zero";
    case ValueClass::kSubnormal:
      return "subnormal";
    case ValueClass::kSmall:
      return "small";
    case ValueClass::kUnit:
      return "unit";
    case ValueClass::kLarge:
      return "large";
    case ValueClass::kTopBinade:
      return "top_binade";
    case ValueClass::kInf:
      return "inf";
    case ValueClass::kNaN:
      return "nan";
  }
  return "?";
}

int UlpBucket(double ulps) {
  if (std::isnan(ulps) || std::isinf(ulps)) return 14;
  if (ulps <= 0) return 0;
  if (ulps <= 0.5) return 1;
  if (ulps <= 1) return 2;
  if (ulps <= 2) return 3;
  if (ulps <= 4) return 4;
  // ulps in (2^(e-1), 2^e], e >= 3: e = 3..6 -> 5, 7..10 -> 6, ...
  const int e = static_cast<int>(std::ceil(std::log2(ulps)));
  return std::min(13, 5 + (e - 3) / 4);
}

int BoundUseBucket(double bound_use) {
  if (!(bound_use > 0)) return 0;
  // bound_use in [2^e, 2^(e+1)).
  const int e = SafeIlogb(bound_use, -33, 1);
  if (e >= -8) return 16 + e;             // [2^-8, 1) -> 8..15; [1, 2) -> 16; >= 2 -> 17
  if (e >= -32) return 7 - (-e - 9) / 4;  // [2^-12, 2^-8) -> 7, ..., [2^-32, 2^-28) -> 2
  return 1;
}

int KappaBucket(const RowStats& s) {
  if (!s.finite || !std::isfinite(s.var) || !std::isfinite(s.mean)) return 0;
  if (s.var == 0) return 61;
  // kappa^2 = 1 + mu^2 / s2.
  return SafeIlogb(1.0 + (s.mean * s.mean) / s.var, 0, 60);
}

void FeatureSet::Add(std::uint64_t kind, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const auto id = static_cast<std::uint32_t>(Mix(Mix(Mix(Mix(kind) ^ a) ^ b) ^ c) % kFeatureSpace);
  if (std::find(ids_.begin(), ids_.end(), id) == ids_.end()) ids_.push_back(id);
}

void AddInputFeatures(const Case& c, const std::vector<RowStats>& stats, FeatureSet* out) {
  const FloatFormat xf = FormatOf(c.dtype), pf = FormatOf(c.param_dtype);
  const auto dtype = static_cast<std::uint64_t>(c.dtype);
  auto values = [&](const std::vector<double>& v, std::uint64_t array, FloatFormat f) {
    bool seen[kValueClassCount] = {};
    const double min_normal = std::ldexp(1.0, f.emin), top_binade = std::ldexp(1.0, f.emax);
    for (double x : v) seen[static_cast<int>(ClassWithin(x, min_normal, top_binade))] = true;
    for (int k = 0; k < kValueClassCount; ++k) {
      if (seen[k]) out->Add(kValue, array, dtype, static_cast<std::uint64_t>(k));
    }
  };
  values(c.x, 0, xf);
  values(c.gamma, 1, pf);
  values(c.beta, 2, pf);
  values(c.dy, 3, xf);
  for (const RowStats& s : stats) {
    out->Add(kKappa, dtype, static_cast<std::uint64_t>(KappaBucket(s)));
    if (s.finite && c.eps > 0) {
      // ilogb(sigma^2 / eps) in [-40, 40]: where eps starts to dominate q.
      const int r = s.var == 0 ? -41 : SafeIlogb(s.var / c.eps, -40, 40);
      out->Add(kEpsRegime, dtype, static_cast<std::uint64_t>(r + 41));
    }
  }
}

void AddJudgementFeatures(std::size_t slot, const Judgement& j, FeatureSet* out) {
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    const auto output = static_cast<std::uint64_t>(o.output);
    out->Add(kVerdict, slot, output, static_cast<std::uint64_t>(o.verdict));
    out->Add(kUlp, slot, output, static_cast<std::uint64_t>(UlpBucket(o.max_ulp)));
    out->Add(kBoundUse, slot, output, static_cast<std::uint64_t>(BoundUseBucket(o.max_bound_use)));
  }
  out->Add(kVerdict, slot, 99, static_cast<std::uint64_t>(j.verdict));
}

void AddOracleFeatures(std::int64_t slow_path, std::int64_t undecided, FeatureSet* out) {
  out->Add(kOracle, 0,
           static_cast<std::uint64_t>(SafeIlogb(static_cast<double>(slow_path), -1, 20) + 1));
  out->Add(kOracle, 1, undecided > 0 ? 1 : 0);
}

}  // namespace lnv::fuzz

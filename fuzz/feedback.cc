#include "fuzz/feedback.h"

#include <algorithm>
#include <cmath>

#include "harness/formats.h"

namespace lnv::fuzz {
namespace {

// Feature ids, dense: each tuple of the feedback has a counter of its own
// (hashed into twice the space, about one in seven of the 9,700 features a
// five-minute run reaches shared a counter with another). In order: the
// value classes (array x dtype x class), kappa buckets and eps regimes
// (dtype x bucket), the oracle's exact-path buckets, then a block per kernel
// slot: per output the verdict, the ULP bucket and the bound-use bucket,
// then the kernel's overall verdict. Slots past the last whole block share
// blocks (slot modulo their number).
constexpr std::uint32_t kDTypes = 4;  // DType's values are 0 to 3 (lnv_plugin.h)
static_assert(static_cast<int>(DType::kF64) == kDTypes - 1, "a DType past kF64 needs room");
constexpr std::uint32_t kVerdicts = static_cast<std::uint32_t>(Verdict::kBufferOverrun) + 1;
constexpr std::uint32_t kOutputs = kAllOutputs.size();
constexpr std::uint32_t kKappaBuckets = 62;  // KappaBucket: 0 to 61
constexpr std::uint32_t kEpsRegimes = 82;    // ilogb(sigma^2 / eps) + 41: 0 to 81
constexpr std::uint32_t kSlowPathBuckets = 22;

constexpr std::uint32_t kValueBase = 0;
constexpr std::uint32_t kKappaBase = kValueBase + 4 * kDTypes * kValueClassCount;
constexpr std::uint32_t kEpsBase = kKappaBase + kDTypes * kKappaBuckets;
constexpr std::uint32_t kOracleBase = kEpsBase + kDTypes * kEpsRegimes;
constexpr std::uint32_t kSlotBase = kOracleBase + kSlowPathBuckets + 2;
constexpr std::uint32_t kPerOutput = kVerdicts + kUlpBuckets + kBoundUseBuckets;
constexpr std::uint32_t kSlotBlock = kOutputs * kPerOutput + kVerdicts;
static_assert(kSlotBase + kSlotBlock * kFeatureSlots <= kFeatureSpace);

std::uint32_t DTypeIndex(DType t) {
  const auto i = static_cast<std::uint32_t>(t);
  return i < kDTypes ? i : kDTypes - 1;
}

std::uint32_t SlotBase(std::size_t slot) {
  return kSlotBase + kSlotBlock * static_cast<std::uint32_t>(slot % kFeatureSlots);
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

void FeatureSet::Add(std::uint32_t id) {
  if (std::find(ids_.begin(), ids_.end(), id) == ids_.end()) ids_.push_back(id);
}

void AddInputFeatures(const Case& c, const std::vector<RowStats>& stats, FeatureSet* out) {
  const FloatFormat xf = FormatOf(c.dtype), pf = FormatOf(c.param_dtype);
  const std::uint32_t dtype = DTypeIndex(c.dtype);
  auto values = [&](const std::vector<double>& v, std::uint32_t array, FloatFormat f) {
    bool seen[kValueClassCount] = {};
    const double min_normal = std::ldexp(1.0, f.emin), top_binade = std::ldexp(1.0, f.emax);
    for (double x : v) seen[static_cast<int>(ClassWithin(x, min_normal, top_binade))] = true;
    for (std::uint32_t k = 0; k < kValueClassCount; ++k) {
      if (seen[k]) out->Add(kValueBase + (array * kDTypes + dtype) * kValueClassCount + k);
    }
  };
  values(c.x, 0, xf);
  values(c.gamma, 1, pf);
  values(c.beta, 2, pf);
  values(c.dy, 3, xf);
  for (const RowStats& s : stats) {
    out->Add(kKappaBase + dtype * kKappaBuckets + static_cast<std::uint32_t>(KappaBucket(s)));
    if (s.finite && c.eps > 0) {
      // ilogb(sigma^2 / eps) in [-40, 40]: where eps starts to dominate q.
      const int r = s.var == 0 ? -41 : SafeIlogb(s.var / c.eps, -40, 40);
      out->Add(kEpsBase + dtype * kEpsRegimes + static_cast<std::uint32_t>(r + 41));
    }
  }
}

void AddJudgementFeatures(std::size_t slot, const Judgement& j, FeatureSet* out) {
  const std::uint32_t base = SlotBase(slot);
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    const std::uint32_t at = base + static_cast<std::uint32_t>(o.output) * kPerOutput;
    out->Add(at + static_cast<std::uint32_t>(o.verdict));
    out->Add(at + kVerdicts + static_cast<std::uint32_t>(UlpBucket(o.max_ulp)));
    out->Add(at + kVerdicts + kUlpBuckets +
             static_cast<std::uint32_t>(BoundUseBucket(o.max_bound_use)));
  }
  out->Add(base + kOutputs * kPerOutput + static_cast<std::uint32_t>(j.verdict));
}

void AddOracleFeatures(std::int64_t slow_path, std::int64_t undecided, FeatureSet* out) {
  out->Add(kOracleBase +
           static_cast<std::uint32_t>(SafeIlogb(static_cast<double>(slow_path), -1, 20) + 1));
  out->Add(kOracleBase + kSlowPathBuckets + (undecided > 0 ? 1 : 0));
}

}  // namespace lnv::fuzz

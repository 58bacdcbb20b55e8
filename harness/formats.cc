#include "harness/formats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace lnv {

FloatFormat FormatOf(DType t) {
  switch (t) {
    case DType::kF32:
      return kBinary32;
    case DType::kF16:
      return kBinary16;
    case DType::kBF16:
      return kBfloat16;
    case DType::kF64:
      return kBinary64;
  }
  return kBinary64;
}

namespace {

// 2^k, exactly as std::ldexp(1.0, k) gives it, from its bits where it is a
// normal or subnormal double (the judge asks for several per element, and
// ldexp's general path cost a tenth of ln_check's time).
double Pow2(int k) {
  std::uint64_t bits = 0;
  if (k >= -1022 && k <= 1023) {
    bits = static_cast<std::uint64_t>(k + 1023) << 52;
  } else if (k >= -1074 && k < -1022) {
    bits = std::uint64_t{1} << (k + 1074);
  } else {
    return std::ldexp(1.0, k);
  }
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

double UnitRoundoff(FloatFormat f) { return Pow2(-f.precision); }

double UnderflowUnit(FloatFormat f) { return Pow2(f.emin - f.precision + 1); }

bool SameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

double MaxFinite(FloatFormat f) {
  return std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
}

double OverflowThreshold(FloatFormat f) {
  // For binary64 this is 2^1024 - 2^970, beyond double: +inf is the threshold.
  if (f.emax >= 1023 && f.precision >= 53) return std::numeric_limits<double>::infinity();
  return std::ldexp(2.0 - std::ldexp(1.0, -f.precision), f.emax);
}

double FormatUlp(double v, FloatFormat f) {
  if (std::isnan(v)) return v;
  int e = f.emax;
  if (std::isfinite(v) && v != 0.0) {
    e = std::ilogb(v);  // floor(log2|v|), exact for doubles (subnormal doubles too)
    if (e > f.emax) e = f.emax;
  }
  if (v == 0.0 || e < f.emin) e = f.emin;
  return Pow2(e - f.precision + 1);
}

bool IsRepresentable(double v, FloatFormat f) {
  if (!std::isfinite(v) || v == 0.0) return true;
  if (std::fabs(v) > MaxFinite(f)) return false;
  // v is a format value iff it is an integer multiple of its ulp there. The
  // division by a power of two is exact: the quotient is at least 1 when v is
  // a multiple, and it keeps v's significand otherwise.
  const double q = v / FormatUlp(v, f);
  return q == std::trunc(q);
}

bool FormatContains(FloatFormat wide, FloatFormat narrow) {
  return wide.precision >= narrow.precision && wide.emax >= narrow.emax &&
         wide.emin - wide.precision <= narrow.emin - narrow.precision;
}

}  // namespace lnv

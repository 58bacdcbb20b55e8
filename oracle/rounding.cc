// Rounding of a double into a narrower binary format, and ulps.
#include <cmath>

#include "oracle/oracle.h"

namespace lnv {

double RoundToFormat(double v, FloatFormat f) {
  if (!std::isfinite(v) || v == 0.0) return v;
  if (f.precision == 24 && f.emin == -126 && f.emax == 127) {
    return static_cast<float>(v);  // the hardware conversion is this rounding
  }
  const int e = std::max(std::ilogb(v), f.emin);
  // m has at most p significant bits left of the point; nearbyint rounds the
  // rest to nearest even (the default rounding mode). Exact for any double.
  const double m = std::ldexp(v, f.precision - 1 - e);
  const double r = std::ldexp(std::nearbyint(m), e - f.precision + 1);
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  if (std::fabs(r) > max_finite) return std::copysign(HUGE_VAL, v);
  return r;
}

double UlpOf(double v, FloatFormat f) {
  const double a = std::fabs(v);
  const int e = (a == 0.0 || !std::isfinite(a)) ? f.emin : std::max(std::ilogb(a), f.emin);
  return std::ldexp(1.0, std::min(e, f.emax) - f.precision + 1);
}

}  // namespace lnv

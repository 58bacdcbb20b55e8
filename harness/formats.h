// Float-format arithmetic the harness needs beside the oracle: the ABI dtype
// to FloatFormat map, unit roundoff, ulps with the subnormal floor, and an
// exact representability test. Pure functions of FloatFormat (precision p,
// normal exponent range [emin, emax]); every dtype value is a double.
// It also carries the oracle's FloatFormat and RoundToFormat to the kernels'
// tests, which check conversions against correct rounding: impls/ never
// includes oracle/ (docs/DESIGN.md), it reaches the oracle through the harness.
#ifndef LNV_HARNESS_FORMATS_H_
#define LNV_HARNESS_FORMATS_H_

#include "impls/api.h"
#include "oracle/oracle.h"

namespace lnv {

// f32 -> binary32, f16 -> binary16, bf16 -> bfloat16, f64 -> binary64.
FloatFormat FormatOf(DType t);

// u = 2^-p: the relative error bound of one round-to-nearest operation on a
// normal result (Higham, ASNA 2nd ed., Theorem 2.2).
double UnitRoundoff(FloatFormat f);

// The smallest subnormal spacing, 2^(emin - p + 1): a bound on the absolute
// error one rounded multiplication or division can add when its result
// underflows (ASNA §2.1: fl(x op y) = (x op y)(1 + delta) + eta; additions
// that underflow are exact). Round-to-nearest needs only half of it; the
// whole spacing also covers directed rounding.
double UnderflowUnit(FloatFormat f);

// The same bits, or both NaN (any payload): how outputs and oracle answers
// are compared bit for bit.
bool SameBits(double a, double b);

// The largest finite value, (2 - 2^(1-p)) * 2^emax.
double MaxFinite(FloatFormat f);

// The smallest magnitude that rounds to infinity: (2 - 2^-p) * 2^emax.
double OverflowThreshold(FloatFormat f);

// ulp(v) = 2^(max(floor(log2|v|), emin) - p + 1) (the subnormal floor); for
// |v| at or beyond the largest binade, the ulp of that binade. Same
// definition as lnv::UlpOf in oracle.h; kept here so the bound models do not
// depend on the oracle's implementation. NaN for NaN.
double FormatUlp(double v, FloatFormat f);

// True when v is exactly a value of the format (NaN and +-inf count as
// representable: every format has them).
bool IsRepresentable(double v, FloatFormat f);

// True when every finite value of `narrow` is a value of `wide` (so rounding
// from wide to narrow is needed, and rounding narrow into wide is exact).
bool FormatContains(FloatFormat wide, FloatFormat narrow);

}  // namespace lnv

#endif  // LNV_HARNESS_FORMATS_H_

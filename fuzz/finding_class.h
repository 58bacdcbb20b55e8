// The input class of a finding: what a second finding with the same kernel,
// verdict and output most likely shares with the first, so that a night of
// fuzzing yields one entry per cause rather than one per input. Also what
// the known-findings list (known_findings.h) matches against.
//
// Format: <norm>/<dtype>/x:<c>/params:<p>[/dy:<d>/g:<g>]/kappa:<k>/eps:<e>
//   x       the worst row class: nan, inf, huge (a finite row whose exact sum
//           of squares exceeds the accumulation format's max / 8: beyond the
//           scalar kernels' claimed range, impls/cpu/valid_range.h), subnormal
//           (some subnormal value), finite
//   params  finite, or nonfinite (some gamma or beta is +-inf or NaN)
//   dy, g   backward outputs only: dy finite/nonfinite; g huge when a row's
//           sum |dy_i gamma_i| or a column's sum over rows |dy gamma| exceeds
//           the accumulation format's max / 8 (the same margin as the forward
//           range), else ok
//   kappa   constant (sigma^2 = 0), large (kappa >= 2^12), moderate
//   eps     dominant (sigma^2 < eps), small
// A kernel finding's key then adds, for the element that decides the
// verdict, "/claim:none" when it has no bound (+inf: the model makes no claim
// there) and "/worst:<kernel>-vs-<exact>", each side nan, inf, zero or finite
// (the exact side as rounded into the output format).
#ifndef LNV_FUZZ_FINDING_CLASS_H_
#define LNV_FUZZ_FINDING_CLASS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "harness/formats.h"  // FloatFormat, ExactValue, RoundToFormat (the oracle's types)
#include "harness/judge.h"

namespace lnv::fuzz {

// The class of the rows that matter for `output`: `row` for a row output
// (y, mean, rstd, dx), every row for a column output (dgamma, dbeta).
// `acc` is the kernel's accumulation format.
std::string FindingClass(const Case& c, const Reference& ref, Output output,
                         std::optional<std::int64_t> row, FloatFormat acc);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_FINDING_CLASS_H_

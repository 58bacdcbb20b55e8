// RMSNorm that leaves infinities out of its statistics: a NEGATIVE CONTROL
// (status negative_control).
//
// The bug it imitates: a mean square that masks out +-inf, as a guard
//   against saturated activations or an isinf-keyed padding mask does, while
//   still dividing by d. NaN is not masked (a NaN row stays NaN) and finite
//   rows are untouched, but a row holding +-inf gets a finite rstd and
//   finite, nonzero y and dx at its finite elements (+-inf at the infinity)
//   where IEEE arithmetic on the formula gives r = +0, y = +-0 at the finite
//   elements, NaN at the infinity and a NaN dx (the special-value table,
//   oracle/oracle.h).
// Algorithm: otherwise a correct RMSNorm as impls/cpu/rms_serial.h: serial
//   float sum of the squares, ms = sum/d, r = 1/sqrt(ms + eps), y = (x r)
//   gamma; backward (r recomputed from x the same way) dx = r (g - xhat b),
//   g = dy gamma, b = sum(g xhat)/d, dgamma = sum_rows dy xhat, in float.
// Accumulation: float, serial sums; f32 storage.
// Bound: held to the serial bound (every RMSNorm algorithm is bounded by the
//   sum-of-squares model), which it meets on every finite row and must FAIL
//   on rows holding +-inf (the judge's table: rstd not +0 or NaN, y a nonzero
//   finite value where the table says +-0). Caught by ln_check on
//   nan_inf_rows, by the property
//   SpecialValuesStayInTheirRowAndFiniteRowsStayFinite (its check of the
//   finite elements of a row holding +-inf) and by the regression case
//   fuzz/regressions/rms-inf-row-finite-garbage-caught.case.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
#ifndef LNV_IMPLS_BROKEN_RMS_SKIPS_INFINITIES_H_
#define LNV_IMPLS_BROKEN_RMS_SKIPS_INFINITIES_H_

#include "impls/api.h"

namespace lnv::broken {

int RmsSkipsInfinitiesForward(const ForwardArgs* args);
int RmsSkipsInfinitiesBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_RMS_SKIPS_INFINITIES_H_

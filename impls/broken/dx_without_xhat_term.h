// dx without the xhat * b term: a NEGATIVE CONTROL (status negative_control).
//
// The bug it imitates: a hand-derived backward that treats rstd as a
//   constant (as if the variance were detached from the graph), so the
//   gradient keeps only the mean's projection: dx = rstd * (g - mean(g)).
//   The term -rstd * xhat * mean(g * xhat), which comes from d(rstd)/dx, is
//   dropped. Forward outputs are unaffected.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h); backward
//   dx = rstd * (g - mean(g)), g = dy * gamma. dgamma, dbeta are correct.
// Accumulation: float, serial sums; f32 storage.
// Bound: held to the two-pass serial model, which its dx must FAIL whenever
//   b = mean(g * xhat) is not tiny: sum(xhat * dx) comes out as d r b instead
//   of d r b eps/(sigma^2 + eps). Caught by the property
//   InputGradientsSumToZeroAndMeetXhatOnlyThroughEps.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_DX_WITHOUT_XHAT_TERM_H_
#define LNV_IMPLS_BROKEN_DX_WITHOUT_XHAT_TERM_H_

#include "impls/api.h"

namespace lnv::broken {

int DxWithoutXhatTermForward(const ForwardArgs* args);
int DxWithoutXhatTermBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_DX_WITHOUT_XHAT_TERM_H_

// Statistics over the first half of the row: a NEGATIVE CONTROL (status
// negative_control) for the statistical tier (harness/bounds.h,
// TypicalModel).
//
// The bug it imitates: a reduction that sees only half of its input (a
//   split whose second half is never merged, a loop bound of d/2), counting
//   only what it saw, so the mean and variance are those of the first
//   ceil(d/2) elements. Every element is still normalized with them.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), with both sums
//   and the count over x_0 .. x_(ceil(d/2) - 1).
// Accumulation: float, serial sums; f32 storage. Backward correct, from the
//   forward's stored mean and rstd.
// Bound: held to the two-pass serial model. On iid rows its statistics are
//   off by about 1/sqrt(d/2) relative, the size of the worst-case gamma_(d-1)
//   in fp32 near d = 2^17: there the deterministic tier passes it on
//   standard_normal and only beyond_typical catches it (harness/judge_test.cc).
//   At smaller d both tiers catch it, so ln_check's quick budget does.
// Valid range: as the scalar references (impls/cpu/valid_range.h).
#ifndef LNV_IMPLS_BROKEN_FIRST_HALF_STATISTICS_H_
#define LNV_IMPLS_BROKEN_FIRST_HALF_STATISTICS_H_

#include "impls/api.h"

namespace lnv::broken {

int FirstHalfStatisticsForward(const ForwardArgs* args);
int FirstHalfStatisticsBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_FIRST_HALF_STATISTICS_H_

// An odd last row normalized with the previous row's statistics: a NEGATIVE
// CONTROL (status negative_control).
//
// The bug it imitates: a kernel that normalizes two rows per iteration
//   (two rows per warp or thread block) and handles an odd last row with
//   the statistics registers of the pair before it, which it never reloads.
//   A batch of one row takes the one-row path and is right; a batch of 3,
//   5, 7, ... rows gives its last row the statistics of the row before.
// Algorithm: the two-pass reference (impls/cpu/two_pass.h), except that in
//   a batch of an odd number of rows n >= 3, row n - 1 is normalized with
//   (and stores) the mean and rstd of row n - 2.
// Accumulation: float, serial sums; f32 storage. Backward correct, from the
//   forward's stored mean and rstd (so the last row's dx is off too).
// Bound: held to the two-pass serial model, which it must FAIL on every odd
//   batch of 3 or more rows whose last two rows differ: rows of iid values
//   differ by sampling noise only, below the bound at large d, and the other
//   families' batches are even. Caught by the rows_differ family at every odd
//   row count >= 3, not at even ones, and not by standard_normal in even
//   batches or in odd batches of long rows (harness/families_test.cc). The
//   property suite catches it too (negative_controls_are_caught_test.cc;
//   first ShiftingARowLeavesItsOutputUnchanged, whose rows shift by
//   different amounts).
// Valid range: as the scalar references (impls/cpu/valid_range.h).
//   Backward: rows and dgamma/dbeta columns whose weight (valid_range.h:
//   sum |dy gamma| (1 + |xhat|), columns sum |dy| (1 + |xhat|)) is at most
//   MAX/8 of the accumulation type, and for dx rstd times the row weight too.
//   y: elements with |gamma xhat| <= MAX/2 (the product may be formed first).
#ifndef LNV_IMPLS_BROKEN_ODD_LAST_ROW_H_
#define LNV_IMPLS_BROKEN_ODD_LAST_ROW_H_

#include "impls/api.h"

namespace lnv::broken {

int OddLastRowForward(const ForwardArgs* args);
int OddLastRowBackward(const BackwardArgs* args);

}  // namespace lnv::broken

#endif  // LNV_IMPLS_BROKEN_ODD_LAST_ROW_H_

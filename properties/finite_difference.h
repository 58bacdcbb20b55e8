// The oracle's backward against its own forward, by central differences at
// high precision: with L(x, gamma) = sum_j dy_j y_j (a one-row case, the
// oracle's y computed into binary64, exact to 106 bits),
//   dx_i     = dL/dx_i     ~ (L(x + h e_i) - L(x - h e_i)) / 2h,
//   dgamma_j = dL/dgamma_j = (L(gamma + h e_j) - L(gamma - h e_j)) / 2h exactly
// (L is linear in gamma). For the smooth L, the central difference is
// dx_i + c h^2 + O(h^4), so its error falls by 4 per halving of h: over five
// halvings from h0 = 2^(floor(log2 sigma) - 10) it must fall at least 16-fold
// (ideally 1024-fold), unless it is already within the rounding floor (the
// Approx error of the differences). A gradient that is wrong by delta leaves
// an error near delta at every h, which fails this test once delta exceeds
// c h0^2 / 15 plus the floor.
#ifndef LNV_PROPERTIES_FINITE_DIFFERENCE_H_
#define LNV_PROPERTIES_FINITE_DIFFERENCE_H_

#include <string>
#include <vector>

#include "harness/case_file.h"
#include "properties/approx.h"

namespace lnv::props {

struct FiniteDifferenceResult {
  bool checked = false;  // false: the point was unsuitable (message says why)
  std::string message;   // checked: "" when the gradients agree, else the first mismatch
};

// c: one row, d >= 2, with dy. `dx_instead`: a gradient to test in place of
// the oracle's dx (the negative control of this check); nullptr: the oracle's.
FiniteDifferenceResult CheckAgainstFiniteDifferences(const Case& c,
                                                     const std::vector<Approx>* dx_instead);

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_FINITE_DIFFERENCE_H_

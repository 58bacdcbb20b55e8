// A row's statistics in double-word arithmetic with rigorous error bounds, so
// that most rows need no exact integers at all (the exact path builds them
// only for an element, or a statistic, these bounds cannot decide).
// Internal to oracle/.
//
// For a row x of d finite doubles and a finite eps >= 0:
//   s    = sum x_i, and sum |x_i|       Sum2 (Ogita, Rump & Oishi, "Accurate sum
//        and dot product", SIAM J. Sci. Comput. 26(6), 2005, Prop. 4.5): the
//        unrounded pair (hi, lo) is within gamma_{n-1}^2 sum |x_i| of the sum.
//   mu   = s / d                        (LayerNorm; 0 for RMSNorm)
//   S    = sum (x_i - mu_h)^2           x_i - mu_h = a_i + b_i exactly (TwoSum),
//        a_i^2 = p_i + e_i exactly (TwoProduct), the rest c_i = (2 a_i + b_i) b_i;
//        p_i summed by TwoSum, the errors, e_i and c_i by recursive summation.
//        RMSNorm: S = sum x_i^2, with a_i = x_i, b_i = 0.
//   s2   = (S - d (mu - mu_h)^2) / d     exact identity, as sum (x_i - mu) = 0
//   q    = s2 + eps
//   r    = q^(-1/2)                     one Newton step in double-words from
//        1/sqrt(q_h), then proven: with rho = 1 - q r~^2 enclosed, r~ = r
//        sqrt(1 - rho), so |r~ - r| <= |rho| r <= 2 |rho| r~ for |rho| <= 1/2.
// The sums run in kLanes chains (lanes.h) so that they vectorize; each chain
// keeps the bound above for its own terms, and merging them adds its own.
// Each result is a double-word hi + lo with a bound e on its distance from the
// exact value (Edd, fast_path.h). Refused (false): a sum that overflows, q not
// known positive to 2^-60 relative (eps < 0, or s2 + eps cancels), or r
// outside [2^-900, 2^900]; the exact path then decides the row.
#ifndef LNV_ORACLE_FAST_STATS_H_
#define LNV_ORACLE_FAST_STATS_H_

#include <cstdint>

#include "oracle/fast_path.h"

namespace lnv::oracle_internal {

struct FastStats {
  Edd mu{0.0, 0.0, 0.0};        // LayerNorm's mean; exactly 0 for RMSNorm
  Edd var{0.0, 0.0, 0.0};       // s2
  Edd q{0.0, 0.0, 0.0};         // s2 + eps
  Edd r{0.0, 0.0, 0.0};         // q^(-1/2)
  Edd mean_abs{0.0, 0.0, 0.0};  // sum |x_i| / d
};

bool ComputeFastStats(const double* x, std::int64_t d, bool layer, double eps, FastStats* out);

// The double nearest to the value a enclosed by `a`, when the enclosure
// proves which one it is; false otherwise (a tie or too wide an enclosure).
bool NearestDouble(const Edd& a, double* out);

}  // namespace lnv::oracle_internal

#endif  // LNV_ORACLE_FAST_STATS_H_

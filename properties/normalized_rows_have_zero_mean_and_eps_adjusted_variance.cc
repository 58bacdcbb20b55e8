// Property 2, zero mean and the eps-adjusted unit variance:
//   sum_i xhat_i = 0 and sum_i xhat_i^2 = d sigma^2 / (sigma^2 + eps)
// (LayerNorm; RMSNorm: sum xhat^2 = d ms/(ms + eps) with ms = mean(x^2), and
// no zero-mean identity). The variance is "unit" only up to eps.
//
// Inputs: gamma = 1, beta = 0 (absent or given as arrays), so y = xhat.
// Oracle, exactly: the identities on the oracle's xhat (correctly rounded to
// double), with the tolerance of running error analysis (approx.h).
// Kernels: with B_i the judge's bound on |y_i - xhat_i|,
//   |sum y_i| <= sum B_i and |sum y_i^2 - d sigma^2/(sigma^2 + eps)| <=
//   sum (2 |y_i| B_i + B_i^2)   (|y^2 - xhat^2| = |y - xhat| |y + xhat|),
// on every row inside the kernel's range whose elements all carry a claim.
// The unbiased variance (d - 1 in the denominator) fails the second.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

// d sigma^2 / (sigma^2 + eps), from the oracle's correctly rounded variance;
// false when it has no value (approx.h, VarianceFraction).
bool TargetSumOfSquares(const RowStats& s, double eps, std::int64_t d, Approx* out) {
  Approx fraction;
  if (!VarianceFraction(s.var, eps, &fraction)) return false;
  *out = Exact(static_cast<double>(d)) * fraction;
  return true;
}

}  // namespace

void NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance(const Targets& t) {
  PropertyCase pc("NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.allow_eps_zero = true;
  spec.backward = false;
  spec.affine = {Affine::kAbsent, Affine::kOnes};
  spec.families = FiniteFamilies();
  const Case c = *Input(g, spec);
  const Reference ref = ComputeReference(c);
  Classify(c, ref.forward.stats);
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d;

  for (std::int64_t r = 0; r < c.rows; ++r) {
    const RowStats& s = ref.forward.stats[r];
    if (!s.finite || !std::isfinite(s.rstd)) continue;  // NaN rows; q = 0 (eps = 0, constant)
    Approx sum = Exact(0), sum_sq = Exact(0);
    for (std::int64_t i = 0; i < d; ++i) {
      const Approx xh = Rounded(ref.forward.xhat[r * d + i]);
      sum = sum + xh;
      sum_sq = sum_sq + xh * xh;
    }
    Approx target;
    if (!TargetSumOfSquares(s, c.eps, d, &target)) continue;
    if (layer && !Within(sum, Exact(0), 0)) {
      pc.OracleFails(c, "row " + std::to_string(r) + ": sum xhat = " + Num(sum.v));
    }
    if (!Within(sum_sq, target, 0)) {
      pc.OracleFails(c, "row " + std::to_string(r) + ": sum xhat^2 = " + Num(sum_sq.v) +
                            ", d sigma^2/(sigma^2 + eps) = " + Num(target.v));
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto run = pc.Run(*k, c, ref);
    if (!run) continue;
    if (std::string m = NonFiniteWhereExactIsFinite(*run, {Output::kY}); !m.empty()) {
      pc.KernelFails(*k, c, m);
      continue;
    }
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const RowStats& s = ref.forward.stats[r];
      if (!s.finite || !std::isfinite(s.rstd)) continue;
      Approx sum = Exact(0), sum_sq = Exact(0);
      double bound_sum = 0, bound_sq = 0;
      bool claimed = true;
      for (std::int64_t i = 0; i < d && claimed; ++i) {
        const std::int64_t idx = r * d + i;
        claimed = run->Claimed(Output::kY, idx);
        const double y = run->Value(Output::kY, idx);
        const double b = run->At(Output::kY, idx).bound;
        sum = sum + Exact(y);
        sum_sq = sum_sq + Exact(y) * Exact(y);
        bound_sum += b;
        bound_sq += 2 * std::fabs(y) * b + b * b;
      }
      Approx target;
      // Out of range, no claim (bound +inf) somewhere in the row, or no target.
      if (!claimed || !TargetSumOfSquares(s, c.eps, d, &target)) continue;
      const std::string row = "row " + std::to_string(r) + ": ";
      if (layer && !Within(sum, Exact(0), bound_sum)) {
        pc.KernelFails(*k, c,
                       row + "sum y = " + Num(sum.v) + " with gamma = 1, beta = 0; " +
                           "the bounds allow " + Num(bound_sum));
        break;
      }
      if (!Within(sum_sq, target, bound_sq)) {
        pc.KernelFails(*k, c,
                       row + "sum y^2 = " + Num(sum_sq.v) +
                           " with gamma = 1, beta = 0, but d sigma^2/(sigma^2 + eps) = " +
                           Num(target.v) + "; the bounds allow " + Num(bound_sq));
        break;
      }
    }
  }
}

RC_GTEST_PROP(Properties, NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance, ()) {
  NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance(SuiteTargets());
}

}  // namespace lnv::props

// Property 4, gradient orthogonality. With g = dy gamma, a = mean(g),
// b = mean(g xhat), dx = r (g - a - xhat b):
//   sum_i dx_i = 0                                   (LayerNorm; sum xhat = 0)
//   sum_i xhat_i dx_i = d r b eps / (sigma^2 + eps)  (both norms)
// so dx is orthogonal to xhat only when eps = 0 (docs/DESIGN.md §1).
//
// Oracle, exactly: the identities on the oracle's dx computed into binary64
// (hi + lo to 106 bits) on the same inputs, with its xhat and statistics,
// to the tolerance of running error analysis (approx.h).
// Kernels: with B_i the judge's bound on |dx_i - dx_exact_i|,
//   |sum dx_i| <= sum B_i, |sum xhat_i dx_i - d r b eps/(sigma^2 + eps)| <=
//   sum |xhat_i| B_i, on rows inside the kernel's range whose elements all
// carry a claim. A backward that drops the xhat b term fails the second.
// The identities are about a finite g: on a row where some dy_i gamma_i is
// not finite (gamma drawn +-inf now and then), dx is NaN by the contract
// (oracle.h: the infinity enters a and b), which is what the oracle is held
// to there instead; the kernels' dx there is held to it by the judge.
//
// Also here: the oracle's backward is the derivative of its own forward
// (TheOraclesBackwardIsTheDerivativeOfItsForward, finite_difference.h).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "harness/formats.h"
#include "properties/coverage.h"
#include "properties/finite_difference.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

Case AsBinary64(Case c) {
  c.dtype = DType::kF64;
  c.param_dtype = DType::kF64;
  return c;
}

// d r b eps / (sigma^2 + eps) for row r, from the oracle's exact statistics.
Approx XhatDxTarget(const Case& c, const Reference& ref, std::int64_t r) {
  const std::int64_t d = c.d;
  const RowStats& s = ref.forward.stats[r];
  Approx sum_g_xhat = Exact(0);
  for (std::int64_t i = 0; i < d; ++i) {
    const Approx g = Exact(c.dy[r * d + i]) * Exact(c.gamma.empty() ? 1.0 : c.gamma[i]);
    sum_g_xhat = sum_g_xhat + g * Rounded(ref.forward.xhat[r * d + i]);
  }
  Approx fraction;  // sigma^2/(sigma^2 + eps); RowHasClaim guarantees it exists
  VarianceFraction(s.var, c.eps, &fraction);
  // d r b = r sum(g xhat); eps/(sigma^2 + eps) = 1 - fraction.
  return Rounded(s.rstd) * sum_g_xhat * (Exact(1) - fraction);
}

bool RowHasClaim(const RowStats& s, double eps) {
  Approx unused;
  return s.finite && std::isfinite(s.rstd) && s.rstd > 0 && VarianceFraction(s.var, eps, &unused);
}

}  // namespace

void InputGradientsSumToZeroAndMeetXhatOnlyThroughEps(const Targets& t) {
  PropertyCase pc("InputGradientsSumToZeroAndMeetXhatOnlyThroughEps", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.allow_eps_zero = true;
  spec.families = FiniteFamilies();
  const Case c = *Input(g, spec);
  const Reference ref = ComputeReference(c);
  Classify(c, ref.forward.stats);
  RequireEpsOrNoUnderflow(c, ref);
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d;

  // The oracle, on binary64 outputs (same inputs: every value is a double).
  const Reference wide = ComputeReference(AsBinary64(c));
  for (std::int64_t r = 0; r < c.rows; ++r) {
    if (!RowHasClaim(ref.forward.stats[r], c.eps)) continue;
    if (!RowGIsFinite(c, r)) {
      for (std::int64_t i = 0; i < d; ++i) {
        if (!std::isnan(wide.backward->dx[r * d + i].rounded)) {
          pc.OracleFails(c, "row " + std::to_string(r) + ": dy gamma is not finite, but dx[" +
                                std::to_string(i) +
                                "] = " + Num(wide.backward->dx[r * d + i].rounded) + ", not NaN");
        }
      }
      continue;
    }
    Approx sum = Exact(0), dot = Exact(0);
    for (std::int64_t i = 0; i < d; ++i) {
      const Approx dx = FromOracle(wide.backward->dx[r * d + i], kBinary64);
      sum = sum + dx;
      dot = dot + Rounded(ref.forward.xhat[r * d + i]) * dx;
    }
    const Approx target = XhatDxTarget(c, ref, r);
    const std::string row = "row " + std::to_string(r) + ": ";
    if (layer && !Within(sum, Exact(0), 0)) pc.OracleFails(c, row + "sum dx = " + Num(sum.v));
    if (!Within(dot, target, 0)) {
      pc.OracleFails(c, row + "sum xhat dx = " + Num(dot.v) +
                            ", d r b eps/(sigma^2 + eps) = " + Num(target.v));
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    if (k->backward == nullptr) {
      Coverage::Current().Skipped(k->name, "no backward");
      continue;
    }
    const auto run = pc.Run(*k, c, ref);
    if (!run) continue;
    if (std::string m = NonFiniteWhereExactIsFinite(*run, {Output::kDx}); !m.empty()) {
      pc.KernelFails(*k, c, m);
      continue;
    }
    std::string failure;
    for (std::int64_t r = 0; r < c.rows && failure.empty(); ++r) {
      if (!RowHasClaim(ref.forward.stats[r], c.eps)) continue;
      Approx sum = Exact(0), dot = Exact(0);
      double bound_sum = 0, bound_dot = 0;
      bool claimed = true;
      for (std::int64_t i = 0; i < d && claimed; ++i) {
        const std::int64_t idx = r * d + i;
        claimed = run->Claimed(Output::kDx, idx);
        const double dx = run->Value(Output::kDx, idx);
        const double b = run->At(Output::kDx, idx).bound;
        const double xhat = ref.forward.xhat[idx];
        sum = sum + Exact(dx);
        dot = dot + Rounded(xhat) * Exact(dx);
        bound_sum += b;
        bound_dot += std::fabs(xhat) * (1 + kUnitRoundoff64) * b;
      }
      if (!claimed) continue;
      const Approx target = XhatDxTarget(c, ref, r);
      const std::string row = "row " + std::to_string(r) + ": ";
      if (layer && !Within(sum, Exact(0), bound_sum)) {
        failure = row + "sum dx = " + Num(sum.v) + "; the bounds allow " + Num(bound_sum);
      } else if (!Within(dot, target, bound_dot)) {
        failure = row + "sum xhat dx = " + Num(dot.v) +
                  ", but d r b eps/(sigma^2 + eps) = " + Num(target.v) + "; the bounds allow " +
                  Num(bound_dot);
      }
    }
    if (!failure.empty()) pc.KernelFails(*k, c, failure);
  }
}

RC_GTEST_PROP(Properties, InputGradientsSumToZeroAndMeetXhatOnlyThroughEps, ()) {
  InputGradientsSumToZeroAndMeetXhatOnlyThroughEps(SuiteTargets());
}

namespace {

// The first output of `outputs` whose bits differ between the two backwards.
std::string BackwardBitsMismatch(const Reference& a, const Reference& b,
                                 std::initializer_list<Output> outputs) {
  for (Output o : outputs) {
    const std::vector<ExactValue>& va = *ExactValues(a, o);
    for (std::size_t i = 0; i < va.size(); ++i) {
      const auto at = static_cast<std::int64_t>(i);
      if (std::string m =
              CompareExactBits(std::string(OutputName(o)).c_str(), va, at, *ExactValues(b, o), at);
          !m.empty()) {
        return m;
      }
    }
  }
  return "";
}

// An infinite gamma_i (drawn now and then) makes g_i = dy_i gamma_i and
// L = sum dy y infinite: there is no derivative to take. The oracle is held
// to the IEEE-exact results instead: dx NaN (oracle.h), and dgamma =
// sum dy xhat, which involves no gamma: the same bits with gamma absent.
void CheckTheBackwardWithAnInfiniteGamma(const Case& c, const Reference& ref) {
  for (std::int64_t i = 0; i < c.d; ++i) {
    if (!std::isnan(ref.backward->dx[i].rounded)) {
      RC_FAIL("gamma holds an infinity, but dx[" + std::to_string(i) +
              "] = " + Num(ref.backward->dx[i].rounded) + ", not NaN");
    }
  }
  Case no_gamma = c;
  no_gamma.gamma.clear();
  if (std::string m = BackwardBitsMismatch(ref, ComputeReference(no_gamma), {Output::kDgamma});
      !m.empty()) {
    RC_FAIL("dgamma depends on gamma (an infinite one): " + m);
  }
}

}  // namespace

// The oracle's dx and dgamma are the derivatives of its own forward: the
// central differences of L = sum_j dy_j y_j converge to them at second order
// (finite_difference.h). Oracle only; small rows, binary64 outputs. beta
// enters neither dx nor dgamma, so an infinite beta is dropped from L (after
// checking that the backward's bits do not change without it); an infinite
// gamma leaves no derivative (CheckTheBackwardWithAnInfiniteGamma).
RC_GTEST_PROP(Properties, TheOraclesBackwardIsTheDerivativeOfItsForward, ()) {
  const Norm norm = *rc::gen::element(Norm::kLayerNorm, Norm::kRmsNorm);
  const KernelGroup g{norm, DType::kF32, DType::kF32};
  InputSpec spec;
  spec.max_d = 12;
  spec.max_rows = 1;
  spec.kinds = {RowKind::kStandard, RowKind::kLargeMean, RowKind::kHeavyTail};
  spec.allow_eps_zero = true;
  spec.affine = {Affine::kAbsent, Affine::kDrawn};
  const Case c = *Input(g, spec);
  const Reference ref = ComputeReference(c);
  Classify(c, ref.forward.stats);
  RC_PRE(c.d >= 2 && ref.forward.stats[0].var > 0);  // a differentiable point
  if (!RowGIsFinite(c, 0)) {
    RC_TAG("infinite gamma: dx NaN, dgamma without gamma checked");
    CheckTheBackwardWithAnInfiniteGamma(c, ref);
    return;
  }
  Case smooth = c;
  if (!std::all_of(c.beta.begin(), c.beta.end(), [](double v) { return std::isfinite(v); })) {
    smooth.beta.clear();
    if (std::string m =
            BackwardBitsMismatch(ref, ComputeReference(smooth), {Output::kDx, Output::kDgamma});
        !m.empty()) {
      RC_FAIL("the backward depends on beta (an infinite one): " + m);
    }
    RC_TAG("infinite beta dropped from L");
  }
  const FiniteDifferenceResult fd = CheckAgainstFiniteDifferences(smooth, nullptr);
  RC_TAG(fd.checked ? "finite differences checked" : "skipped: " + fd.message);
  if (fd.checked && !fd.message.empty()) RC_FAIL(fd.message);
}

}  // namespace lnv::props

// Property 8, the affine step: y = gamma xhat + beta. With gamma = 1 and
// beta = 0 the output is xhat itself, whether the arrays are given or absent
// (NULL: the ABI's all ones / all zeros); and y is that xhat times gamma
// plus beta, element by element (RMSNorm: no beta).
//
// Runs on one x: A (gamma, beta absent), B (given as ones and zeros), C
// (drawn gamma, beta). Oracle, exactly: A and B agree bit for bit; A's y is
// the oracle's xhat; C's y is gamma xhat + beta (approx.h tolerance).
// Where gamma_i or beta_i is infinite (drawn now and then), C's y is the
// IEEE-exact gamma xhat + beta instead, bit for bit (+-inf, or NaN for
// inf * 0 and inf - inf: oracle.h), with xhat's sign and zeros from A.
// Kernels: B against A within the two judge bounds, and
//   |y_C - (gamma y_A + beta)| <= B_C + |gamma| B_A,
// the judge bounds of C and A (C's exact value is gamma times A's plus beta).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {

void TheOutputIsGammaTimesXhatPlusBeta(const Targets& t) {
  PropertyCase pc("TheOutputIsGammaTimesXhatPlusBeta", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.allow_eps_zero = true;
  spec.affine = {Affine::kDrawn};
  spec.families = FiniteFamilies();
  Case drawn = *Input(g, spec);
  if (drawn.gamma.empty()) {  // families may leave them out
    SetAffine(&drawn, Affine::kDrawn, *GammaValues(FormatOf(g.param_dtype), drawn.d),
              *BetaValues(FormatOf(g.param_dtype), drawn.d));
  }
  Case absent = drawn, ones = drawn;
  SetAffine(&absent, Affine::kAbsent, {}, {});
  SetAffine(&ones, Affine::kOnes, {}, {});
  const Reference ra = ComputeReference(absent);
  const Reference rb = ComputeReference(ones);
  const Reference rc = ComputeReference(drawn);
  Classify(drawn, rc.forward.stats);
  RequireEpsOrNoUnderflow(drawn, rc);
  const std::int64_t n = drawn.rows * drawn.d;
  const FloatFormat out = FormatOf(drawn.dtype);
  const auto gamma = [&](std::int64_t i) { return drawn.gamma[i % drawn.d]; };
  const auto beta = [&](std::int64_t i) {
    return drawn.beta.empty() ? 0.0 : drawn.beta[i % drawn.d];
  };

  if (std::string m = ExactBitsMismatch(ra, rb, {Output::kY, Output::kMean, Output::kRstd});
      !m.empty()) {
    pc.OracleFails(ones, "gamma = 1, beta = 0 given vs absent: " + m);
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(ra.forward.y[i].hi)) continue;  // q = 0 rows (eps = 0, constant)
    const Approx xhat = Rounded(ra.forward.xhat[i]);
    if (!Within(FromOracle(ra.forward.y[i], out), xhat, 0)) {
      pc.OracleFails(absent, "y[" + std::to_string(i) + "] = " + Num(ra.forward.y[i].hi) +
                                 " with gamma = 1, beta = 0, but xhat = " + Num(xhat.v));
    }
    if (!AffineIsFinite(drawn, i % drawn.d)) {
      const double ieee = IeeeAffineY(drawn, ra, i);
      if (!SameBits(rc.forward.y[i].rounded, ieee)) {
        pc.OracleFails(drawn, "y[" + std::to_string(i) + "] = " + Num(rc.forward.y[i].rounded) +
                                  ", IEEE gamma xhat + beta = " + Num(ieee) +
                                  " (gamma = " + Num(gamma(i)) + ", beta = " + Num(beta(i)) + ")");
      }
      continue;
    }
    const Approx expected = Exact(gamma(i)) * xhat + Exact(beta(i));
    if (!Within(FromOracle(rc.forward.y[i], out), expected, 0)) {
      pc.OracleFails(drawn, "y[" + std::to_string(i) + "] = " + Num(rc.forward.y[i].hi) +
                                ", gamma xhat + beta = " + Num(expected.v));
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto a = pc.Run(*k, absent, ra);
    if (!a) continue;
    const auto b = pc.Run(*k, ones, rb);
    if (!b) continue;
    if (std::string m = CompareSameIndex(*b, *a, {Output::kY, Output::kMean, Output::kRstd});
        !m.empty()) {
      pc.KernelFails(*k, ones, "gamma = 1, beta = 0 given vs absent: " + m);
      continue;
    }
    const auto c = pc.Run(*k, drawn, rc);
    if (!c) continue;
    for (std::int64_t i = 0; i < n; ++i) {
      if (!a->Claimed(Output::kY, i) || !c->Claimed(Output::kY, i)) continue;
      const double ya = a->Value(Output::kY, i), yc = c->Value(Output::kY, i);
      const Approx expected = Exact(gamma(i)) * Exact(ya) + Exact(beta(i));
      const double allowed =
          c->At(Output::kY, i).bound + std::fabs(gamma(i)) * a->At(Output::kY, i).bound;
      if (!std::isfinite(yc) || !std::isfinite(ya) || !Within(Exact(yc), expected, allowed)) {
        pc.KernelFails(*k, drawn,
                       "y[" + std::to_string(i) + "] = " + Num(yc) + " but gamma y(gamma = 1, " +
                           "beta = 0) + beta = " + Num(expected.v) + "; the bounds allow " +
                           Num(allowed));
        break;
      }
    }
  }
}

RC_GTEST_PROP(Properties, TheOutputIsGammaTimesXhatPlusBeta, ()) {
  TheOutputIsGammaTimesXhatPlusBeta(SuiteTargets());
}

}  // namespace lnv::props

// Property 1, shift invariance: LN(x + c 1) = LN(x) for LayerNorm.
//
// Inputs: x = k 2^q and c = m 2^q with integers |k + m| < 2^p, so x + c is
// exact in the input dtype (generators.h, ShiftedInput) and the shift drives
// kappa = sqrt(1 + mu^2/sigma^2) up to about 2^(p-b).
// Oracle, exactly: y, rstd, dx, dgamma, dbeta of x + c have the same bits as
// those of x (sigma^2 and xhat do not move); the exact mean moves by c.
// Kernels, the metamorphic form: |(K(x+c) - K(x)) - (E(x+c) - E(x))| <=
// B(x+c) + B(x) element by element, E exact, B the judge's bound. This is
// the check the one-pass variance fails: its error grows like kappa^2 u.
// Rows up to max_long_d (2^16) run one at a time.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {

void ShiftingARowLeavesItsOutputUnchanged(const Targets& t) {
  PropertyCase pc("ShiftingARowLeavesItsOutputUnchanged", t);
  std::vector<KernelGroup> groups;
  for (const KernelGroup& g : GroupsOf(t.kernels)) {
    if (g.norm == Norm::kLayerNorm) groups.push_back(g);
  }
  RC_PRE(!groups.empty());  // RMSNorm has no shift invariance
  const KernelGroup g = *OneGroupOf(groups);
  const Limits lim = CurrentLimits();
  const ShiftPair s = *ShiftedInput(g, lim.max_long_d, lim.max_rows);
  const Reference base = ComputeReference(s.base);
  const Reference shifted = ComputeReference(s.shifted);
  Classify(s.shifted, shifted.forward.stats);
  RequireEpsOrNoUnderflow(s.base, base);

  if (std::string m = ExactBitsMismatch(
          base, shifted, {Output::kY, Output::kRstd, Output::kDx, Output::kDgamma, Output::kDbeta});
      !m.empty()) {
    pc.OracleFails(s.shifted, "shifting changed " + m);
  }
  for (std::int64_t r = 0; r < s.base.rows; ++r) {
    const RowStats& a = base.forward.stats[r];
    const RowStats& b = shifted.forward.stats[r];
    // mean and var are correctly rounded doubles of mu and sigma^2.
    if (!SameBits(a.var, b.var) ||
        !Within(Rounded(b.mean), Rounded(a.mean) + Exact(s.shift[r]), 0)) {
      pc.OracleFails(s.shifted, "row " + std::to_string(r) + ": the exact mean did not move by c " +
                                    "or the variance changed");
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto ka = pc.Run(*k, s.base, base);
    if (!ka) continue;
    const auto kb = pc.Run(*k, s.shifted, shifted);
    if (!kb) continue;
    const std::string m = CompareSameIndex(
        *kb, *ka,
        {Output::kY, Output::kMean, Output::kRstd, Output::kDx, Output::kDgamma, Output::kDbeta});
    if (!m.empty()) pc.KernelFails(*k, s.shifted, "K(x + c) against K(x): " + m);
  }
}

RC_GTEST_PROP(Properties, ShiftingARowLeavesItsOutputUnchanged, ()) {
  ShiftingARowLeavesItsOutputUnchanged(SuiteTargets());
}

}  // namespace lnv::props

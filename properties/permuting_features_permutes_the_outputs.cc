// Property 7, permutation equivariance: permuting the features of x, gamma,
// beta and dy by p (feature j of the new case is feature p[j] of the old)
// permutes y, dx, dgamma and dbeta the same way and leaves mean and rstd
// alone: LN and its gradients see a row as a multiset with labels.
//
// Oracle, exactly: bit equality after the permutation. Kernels: the
// judge-bound metamorphic form (their reduction order changes, so their
// rounding may too). A kernel that reads gamma at the wrong index, or whose
// sums skip a vector tail, fails it.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

Case Permuted(const Case& c, const std::vector<std::int64_t>& p) {
  Case out = c;
  const std::int64_t d = c.d;
  for (std::int64_t j = 0; j < d; ++j) {
    for (std::int64_t r = 0; r < c.rows; ++r) {
      out.x[r * d + j] = c.x[r * d + p[j]];
      if (!c.dy.empty()) out.dy[r * d + j] = c.dy[r * d + p[j]];
    }
    if (!c.gamma.empty()) out.gamma[j] = c.gamma[p[j]];
    if (!c.beta.empty()) out.beta[j] = c.beta[p[j]];
  }
  return out;
}

// Index of element j of permuted output o in the original output.
std::int64_t Source(Output o, std::int64_t index, std::int64_t d,
                    const std::vector<std::int64_t>& p) {
  switch (o) {
    case Output::kY:
    case Output::kDx:
      return (index / d) * d + p[index % d];
    case Output::kDgamma:
    case Output::kDbeta:
      return p[index];
    case Output::kMean:
    case Output::kRstd:
      return index;
  }
  return index;
}

}  // namespace

void PermutingFeaturesPermutesTheOutputs(const Targets& t) {
  PropertyCase pc("PermutingFeaturesPermutesTheOutputs", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.min_d = 2;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.allow_eps_zero = true;
  spec.affine = {Affine::kDrawn, Affine::kDrawn, Affine::kAbsent};  // gamma mostly present
  spec.families = FiniteFamilies();
  const Case c = *Input(g, spec);
  const std::vector<std::int64_t> p = *Permutation(c.d);
  const Case pcase = Permuted(c, p);
  const Reference ref = ComputeReference(c);
  const Reference pref = ComputeReference(pcase);
  Classify(c, ref.forward.stats);
  RequireEpsOrNoUnderflow(c, ref);

  for (Output o : kAllOutputs) {
    const auto* a = ExactValues(pref, o);
    const auto* b = ExactValues(ref, o);
    if (a == nullptr || b == nullptr) continue;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto n = static_cast<std::int64_t>(i);
      if (std::string m =
              CompareExactBits(std::string(OutputName(o)).c_str(), *a, n, *b, Source(o, n, c.d, p));
          !m.empty()) {
        pc.OracleFails(pcase, "permuting the features: " + m);
      }
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto a = pc.Run(*k, c, ref);
    if (!a) continue;
    const auto b = pc.Run(*k, pcase, pref);
    if (!b) continue;
    std::string m;
    for (Output o : kAllOutputs) {
      if (!a->Has(o) || !b->Has(o)) continue;
      for (std::int64_t i = 0; i < b->Count(o) && m.empty(); ++i) {
        m = CompareElements(o, *b, i, *a, Source(o, i, c.d, p));
      }
      if (!m.empty()) break;
    }
    if (!m.empty()) pc.KernelFails(*k, pcase, "K(p x) against p K(x): " + m);
  }
}

RC_GTEST_PROP(Properties, PermutingFeaturesPermutesTheOutputs, ()) {
  PermutingFeaturesPermutesTheOutputs(SuiteTargets());
}

}  // namespace lnv::props

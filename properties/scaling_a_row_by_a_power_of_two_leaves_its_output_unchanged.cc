// Property 5, scale invariance: LN(alpha x) = LN(x) for alpha = 2^k when
// eps = 0, for LayerNorm and RMSNorm alike (xhat = (x - mu)/sigma and x/rms
// are both homogeneous of degree 0), while rstd scales by 1/alpha, the mean
// by alpha and dx by 1/alpha. With eps > 0 the identity is no longer exact:
//   xhat(alpha x) = xhat(x) sqrt((s + eps) / (s + eps/alpha^2)),
// s = sigma^2 (LayerNorm) or mean(x^2) (RMSNorm) of x; near 1 when eps << s.
//
// Inputs: rows whose scaled values stay exactly representable (no value
// enters or leaves the subnormals or overflows); eps = 0 or a drawn eps.
// Oracle, exactly: with eps = 0, y, dgamma, dbeta keep their bits and rstd,
// mean, dx scale exactly (bits, where the scaled value stays normal); with
// eps > 0, the xhat identity above to the tolerance of approx.h.
// Kernels: the judge-bound metamorphic form on y, dgamma, dbeta, alpha *
// rstd(alpha x) against rstd(x), mean/alpha and alpha * dx likewise; the
// exact differences (eps > 0) come from the oracle.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

// True when 2^k v is exact in f and no value crosses into or out of the
// subnormals (there the scaling would round).
bool ScalesExactly(double v, int k, FloatFormat f) {
  if (v == 0 || !std::isfinite(v)) return true;
  const double s = std::ldexp(v, k);
  const double min_normal = std::ldexp(1.0, f.emin);
  return std::fabs(v) >= min_normal && std::fabs(s) >= min_normal && std::fabs(s) <= MaxFinite(f);
}

// True when 2^k v can be compared bit for bit with the scaled result (both normal).
bool ScaledBitsComparable(double v, int k, FloatFormat f) {
  return std::isfinite(v) && v != 0 && ScalesExactly(v, k, f);
}

}  // namespace

void ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged(const Targets& t) {
  PropertyCase pc("ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.kinds = {RowKind::kStandard, RowKind::kLargeMean, RowKind::kHeavyTail,
                RowKind::kNearConstant};
  spec.allow_eps_zero = true;
  spec.affine = {Affine::kAbsent, Affine::kDrawn};
  Case c = *Input(g, spec);
  if (*rc::gen::arbitrary<bool>()) c.eps = 0;  // the exact form, half the time
  const int k = *rc::gen::element(-6, -3, -1, 1, 2, 5);
  const double alpha = std::ldexp(1.0, k);
  const FloatFormat xf = FormatOf(c.dtype);
  Case scaled = c;
  for (double& v : scaled.x) {
    RC_PRE(ScalesExactly(v, k, xf));
    v = std::ldexp(v, k);
  }
  const Reference ref = ComputeReference(c);
  const Reference sref = ComputeReference(scaled);
  Classify(scaled, sref.forward.stats);
  RequireEpsOrNoUnderflow(c, ref);
  RequireEpsOrNoUnderflow(scaled, sref);
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d;

  if (c.eps == 0) {
    if (std::string m = ExactBitsMismatch(ref, sref, {Output::kY, Output::kDgamma, Output::kDbeta});
        !m.empty()) {
      pc.OracleFails(scaled, "scaling by 2^" + std::to_string(k) + " with eps = 0 changed " + m);
    }
    const auto scaled_bits = [&](const char* what, const std::vector<ExactValue>& a,
                                 const std::vector<ExactValue>& b, int shift, FloatFormat f) {
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!ScaledBitsComparable(a[i].rounded, shift, f)) continue;
        if (!SameBits(std::ldexp(a[i].rounded, shift), b[i].rounded)) {
          pc.OracleFails(scaled, std::string(what) + "[" + std::to_string(i) + "] = " +
                                     Num(b[i].rounded) + " after scaling by 2^" + std::to_string(k) +
                                     ", expected " + Num(std::ldexp(a[i].rounded, shift)));
        }
      }
    };
    scaled_bits("rstd", ref.forward.rstd, sref.forward.rstd, -k, kBinary32);
    if (layer) scaled_bits("mean", ref.forward.mean, sref.forward.mean, k, kBinary32);
    scaled_bits("dx", ref.backward->dx, sref.backward->dx, -k, xf);
  } else {
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const RowStats& s = ref.forward.stats[r];
      if (!s.finite || !std::isfinite(s.rstd)) continue;
      // factor^2 = (s + eps)/(s + eps/alpha^2) = 1/(f + (1 - f)/alpha^2), f = s/(s + eps).
      Approx f;
      if (!VarianceFraction(s.var, c.eps, &f)) continue;
      const Approx factor =
          Exact(1) / Sqrt(f + (Exact(1) - f) * Exact(1.0 / (alpha * alpha)));
      for (std::int64_t i = 0; i < d; ++i) {
        const Approx before = Rounded(ref.forward.xhat[r * d + i]);
        const Approx after = Rounded(sref.forward.xhat[r * d + i]);
        if (!Within(after, before * factor, 0)) {
          pc.OracleFails(scaled, "row " + std::to_string(r) + ": xhat(2^k x) = " + Num(after.v) +
                                     ", xhat(x) sqrt((s + eps)/(s + eps/alpha^2)) = " +
                                     Num((before * factor).v));
        }
      }
    }
  }

  for (const ImplInfo* kernel : pc.KernelsFor(g)) {
    const auto a = pc.Run(*kernel, c, ref);
    if (!a) continue;
    const auto b = pc.Run(*kernel, scaled, sref);
    if (!b) continue;
    std::string m = CompareSameIndex(*b, *a, {Output::kY, Output::kDgamma, Output::kDbeta});
    for (std::int64_t r = 0; r < c.rows && m.empty(); ++r) {
      m = CompareElements(Output::kRstd, *b, r, *a, r, alpha, 1.0);
      if (m.empty() && layer) m = CompareElements(Output::kMean, *b, r, *a, r, 1.0 / alpha, 1.0);
    }
    if (b->Has(Output::kDx)) {
      for (std::int64_t i = 0; i < c.rows * d && m.empty(); ++i) {
        m = CompareElements(Output::kDx, *b, i, *a, i, alpha, 1.0);
      }
    }
    if (!m.empty()) {
      pc.KernelFails(*kernel, scaled,
                     "K(2^" + std::to_string(k) + " x) against K(x), eps = " + Num(c.eps) + ": " + m);
    }
  }
}

RC_GTEST_PROP(Properties, ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged, ()) {
  ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged(SuiteTargets());
}

}  // namespace lnv::props

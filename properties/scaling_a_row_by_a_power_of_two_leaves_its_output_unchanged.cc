// Property 5, scale invariance: LN(2^k x) with eps 4^k is LN(x) with eps,
// for LayerNorm and RMSNorm alike (xhat = (x - mu)/sqrt(s + eps), s = sigma^2
// or mean(x^2), is homogeneous of degree 0 in (x, sqrt(eps))), while the mean
// scales by 2^k and rstd and dx by 2^-k; dgamma and dbeta do not change.
//
// Bit for bit, for every kernel. Every operation of a normalization kernel
// (sums, the division by d, products, sqrt, reciprocal, FMA, rounding into
// bf16/fp16) commutes with scaling by a power of two as long as no result is
// subnormal or overflows: then each rounded value of the scaled run is the
// unscaled run's value times 2^(jk), j its degree (x, the mean, deviations:
// 1; squares, variance, eps: 2; rstd, dx: -1; xhat, y, dgamma: 0), with the
// same bits. A sum whose result is subnormal is exact, so only products,
// quotients and roots can break it by underflow. Only a hidden magnitude
// (a branch on a fixed threshold, a clamp, a magic rescaling constant)
// breaks it otherwise: such a kernel must name the branch in its registry
// entry (ImplInfo::exact_relation_exemptions, "scaling: file:line") and is
// then held to the relation within its bounds only, as are plugins.
//
// The precondition (NormalScales), checked on both runs before asserting;
// pairs that fail it are not drawn, never compared loosely. A = the
// accumulation format (binary64 for f64 storage, else binary32), L =
// ceil(log2 d), at scale 2^s:
//   * every nonzero x 2^s is a normal value of x's format, and eps 4^s is 0
//     or a normal binary32 (the ABI passes eps as a float);
//   * for every row with M = max|x| and G its grain (the largest power of two
//     dividing every x), the nonzero intermediates of degree j lie in
//       j = 1:  [F 2^-(L+1) c, H C]      j = 2:  [F^2 2^-(L+1) c, H^2 C]
//       j < 0:  [H^j c, R^-j C]  (rstd, and rstd^2, rstd^3 in some backwards)
//     with F = G 2^-(p_A + L + 2), H = 2^(L+2) max(M, sqrt(eps)),
//     R = 1/sqrt(max(eps, F^2 2^-(L+1))), and the cofactors a kernel may
//     multiply in, c = min(1, min|gamma|) min(1, min|dy|) (nonzero ones) and
//     C = d max(1, max|gamma|) max(1, max|dy|); each window times 2^(js)
//     must lie in A's normal range.
//   Why these windows: sums of x, |x - mean| and sqrt(var + eps) are at most
//   H, squared sums at most H^2. Below: x are multiples of G, so every sum of
//   them is a nonzero multiple of G or 0; the mean S/d is at least G 2^-(L+1)
//   and a multiple of ulp(mean) >= G 2^-(p_A + L + 2) = F, so every deviation
//   x - mean, and every sum of deviations, is 0 or at least F; a quotient by
//   a count or a Welford weight (>= 1/d) loses at most 2^-(L+1). (Welford's
//   running means are taken to obey the final mean's floor.) The last
//   rounding of the scale-carrying outputs (mean, rstd, dx, into binary32 or
//   x's format) is checked on the values themselves: an element whose value
//   at either scale is subnormal or overflows there is not compared
//   (ScaleChangesRounding), since dx = rstd t may cancel to any size.
//
// Inputs: the suite's rows (standard, large mean, heavy tail, near constant,
// constant; the harness families) with subnormal gamma flushed to 0 (gamma
// rstd underflows), at two scales 2^s1 and 2^s2 drawn among those that keep
// the precondition (the extremes often): k = s2 - s1 ranges over dozens of
// binades, across any fixed threshold. Oracle, exactly: the same relation,
// bit for bit (mean, rstd, dx where both roundings are normal).
//
// The eps-fixed form stays too (eps > 0 not scaled, a quarter of the cases):
// xhat(2^k x) = xhat(x) sqrt((s + eps)/(s + eps/4^k)), exactly on the oracle
// to the tolerance of approx.h, and on the kernels the judge-bound
// metamorphic form with the exact differences from the oracle.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/formats.h"
#include "properties/coverage.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

// The widest scale a pair is drawn at, 2^+-kMaxShift (binary64 rows could
// go further; this already spans every binary32 threshold).
constexpr int kMaxShift = 160;

// ---- The precondition ----

// v = m 2^e with m an odd integer (v finite, nonzero): e.
int LowestBitExponent(double v) {
  int e = 0;
  // |v| = m 2^e with m in [0.5, 1), and m 2^53 an exact integer.
  const double m = std::frexp(std::fabs(v), &e);
  const auto bits = static_cast<std::uint64_t>(std::ldexp(m, 53));
  return e - 53 + std::countr_zero(bits);
}

// log2 of the magnitudes a kernel's nonzero intermediates of one degree take.
struct DegreeWindow {
  int degree;
  double lo;
  double hi;
};

FloatFormat AccumulationFormat(const Case& c) {
  return c.dtype == DType::kF64 ? kBinary64 : kBinary32;
}

// log2 of the smallest (least) or largest nonzero magnitude of v; 0 when
// every value is 0 or v is empty (a cofactor of 1).
double Log2Extreme(const std::vector<double>& v, bool least) {
  double out = 0;
  bool any = false;
  for (double e : v) {
    if (e == 0) continue;
    const double l = std::log2(std::fabs(e));
    out = !any ? l : (least ? std::min(out, l) : std::max(out, l));
    any = true;
  }
  return out;
}

// The windows of the header, for every finite row of c (a case with a
// non-finite value gives none: such rows are not drawn here).
std::vector<DegreeWindow> IntermediateWindows(const Case& c) {
  const double p = AccumulationFormat(c).precision;
  const double lg_d = std::ceil(std::log2(static_cast<double>(c.d)));
  const double c_lo =
      std::min(0.0, Log2Extreme(c.gamma, true)) + std::min(0.0, Log2Extreme(c.dy, true));
  const double c_hi =
      lg_d + std::max(0.0, Log2Extreme(c.gamma, false)) + std::max(0.0, Log2Extreme(c.dy, false));
  const double lg_eps = c.eps > 0 ? std::log2(c.eps) : -HUGE_VAL;
  std::vector<DegreeWindow> w;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const auto begin = c.x.begin() + r * c.d;
    const std::vector<double> row(begin, begin + c.d);
    int grain = 0;
    bool nonzero = false;
    for (double v : row) {
      if (v == 0) continue;
      grain = nonzero ? std::min(grain, LowestBitExponent(v)) : LowestBitExponent(v);
      nonzero = true;
    }
    const double lg_m = nonzero ? Log2Extreme(row, false) : -HUGE_VAL;
    const double h = lg_d + 2 + std::max(lg_m, lg_eps / 2);
    if (nonzero) {
      const double f = grain - (p + lg_d + 2);
      const double lg_r = -std::max(lg_eps, 2 * f - (lg_d + 1)) / 2;
      w.push_back({1, f - (lg_d + 1) + c_lo, h + c_hi});
      w.push_back({2, 2 * f - (lg_d + 1) + c_lo, 2 * h + c_hi});
      for (int j = 1; j <= 3; ++j) w.push_back({-j, -j * h + c_lo, j * lg_r + c_hi});
    } else {  // an all-zero row: only rstd = 1/sqrt(eps) carries a scale
      for (int j = 1; j <= 3; ++j) {
        w.push_back({-j, -j * lg_eps / 2 - 1 + c_lo, -j * lg_eps / 2 + 1 + c_hi});
      }
    }
  }
  return w;
}

bool IsNormalIn(double v, FloatFormat f) {
  const double a = std::fabs(v);
  return a >= std::ldexp(1.0, f.emin) && a <= MaxFinite(f);
}

// The precondition at scale 2^s: x 2^s and eps 4^s exact and normal, and
// every window times 2^(js) inside the accumulation format's normal range.
bool StaysNormal(const Case& c, const std::vector<DegreeWindow>& windows, int s) {
  const FloatFormat xf = FormatOf(c.dtype);
  for (double v : c.x) {
    if (v != 0 && !IsNormalIn(std::ldexp(v, s), xf)) return false;
  }
  if (c.eps != 0 && !IsNormalIn(std::ldexp(c.eps, 2 * s), kBinary32)) return false;
  const FloatFormat af = AccumulationFormat(c);
  for (const DegreeWindow& w : windows) {
    if (w.lo + w.degree * s < af.emin || w.hi + w.degree * s > af.emax) return false;
  }
  return true;
}

// Every s in [-kMaxShift, kMaxShift] where the precondition holds (an
// interval: each condition is monotone in s); empty when c holds a
// non-finite value.
std::vector<int> NormalScales(const Case& c) {
  for (double v : c.x) {
    if (!std::isfinite(v)) return {};
  }
  const std::vector<DegreeWindow> windows = IntermediateWindows(c);
  std::vector<int> scales;
  for (int s = -kMaxShift; s <= kMaxShift; ++s) {
    if (StaysNormal(c, windows, s)) scales.push_back(s);
  }
  return scales;
}

// c with x times 2^s and eps times 4^s (both exact under the precondition).
Case Scaled(const Case& c, int s) {
  Case out = c;
  for (double& v : out.x) v = std::ldexp(v, s);
  out.eps = std::ldexp(c.eps, 2 * s);
  return out;
}

std::string Shift(int k) { return "2^" + std::to_string(k); }

// ---- The exact form: x, eps against 2^k x, 4^k eps ----

// The oracle's relation: y, dgamma, dbeta keep their bits; mean, rstd, dx
// scale by 2^k, 2^-k, 2^-k where both roundings are normal.
std::string OracleScalingMismatch(const Reference& a, const Reference& b, int k, FloatFormat xf) {
  if (std::string m = ExactBitsMismatch(a, b, {Output::kY, Output::kDgamma, Output::kDbeta});
      !m.empty()) {
    return m;
  }
  const auto scaled = [&](const char* what, const std::vector<ExactValue>& va,
                          const std::vector<ExactValue>& vb, int shift,
                          FloatFormat f) -> std::string {
    for (std::size_t i = 0; i < va.size() && i < vb.size(); ++i) {
      const double x = va[i].rounded, y = vb[i].rounded;
      if (ScaleChangesRounding(x, y, shift, f) || SameBits(std::ldexp(x, shift), y)) continue;
      return std::string(what) + "[" + std::to_string(i) + "] = " + Num(y) + ", expected " +
             Num(std::ldexp(x, shift));
    }
    return "";
  };
  if (std::string m = scaled("rstd", a.forward.rstd, b.forward.rstd, -k, kBinary32); !m.empty()) {
    return m;
  }
  if (std::string m = scaled("mean", a.forward.mean, b.forward.mean, k, kBinary32); !m.empty()) {
    return m;
  }
  if (a.backward && b.backward) return scaled("dx", a.backward->dx, b.backward->dx, -k, xf);
  return "";
}

// A kernel's two runs, bit for bit: b = a with mean 2^k, rstd and dx 2^-k.
std::string KernelScalingBits(const Judged& a, const Judged& b, int k) {
  const auto all = [&](Output o, int shift) -> std::string {
    if (!a.Has(o) || !b.Has(o)) return "";
    for (std::int64_t i = 0; i < a.Count(o) && i < b.Count(o); ++i) {
      if (std::string m = CompareBits(o, a, i, b, i, shift); !m.empty()) return m;
    }
    return "";
  };
  const std::pair<Output, int> degrees[] = {{Output::kY, 0},     {Output::kDgamma, 0},
                                            {Output::kDbeta, 0}, {Output::kMean, k},
                                            {Output::kRstd, -k}, {Output::kDx, -k}};
  for (const auto& [o, shift] : degrees) {
    if (std::string m = all(o, shift); !m.empty()) return m;
  }
  return "";
}

// The same relation within the two judge bounds (plugins, exempt kernels).
std::string KernelScalingWithinBounds(const Judged& a, const Judged& b, int k, std::int64_t rows,
                                      std::int64_t d) {
  const double alpha = std::ldexp(1.0, k);
  std::string m = CompareSameIndex(b, a, {Output::kY, Output::kDgamma, Output::kDbeta});
  for (std::int64_t r = 0; r < rows && m.empty(); ++r) {
    m = CompareElements(Output::kRstd, b, r, a, r, alpha, 1.0);
    if (m.empty() && b.Has(Output::kMean)) {
      m = CompareElements(Output::kMean, b, r, a, r, 1.0 / alpha, 1.0);
    }
  }
  if (b.Has(Output::kDx)) {
    for (std::int64_t i = 0; i < rows * d && m.empty(); ++i) {
      m = CompareElements(Output::kDx, b, i, a, i, alpha, 1.0);
    }
  }
  return m;
}

// Gamma below the normal range would make gamma rstd underflow: flushed to 0.
void FlushSubnormalGamma(Case* c) {
  const FloatFormat pf = FormatOf(c->param_dtype);
  for (double& v : c->gamma) {
    if (v != 0 && std::fabs(v) < std::ldexp(1.0, pf.emin)) v = 0;
  }
}

// Two scales among `scales` (at least two), the extremes often.
std::pair<int, int> TwoScales(const std::vector<int>& scales) {
  const int s1 = *rc::gen::elementOf(scales);
  std::vector<int> others;
  for (int s : scales) {
    if (s != s1) others.push_back(s);
  }
  const int s2 = *rc::gen::weightedOneOf<int>({{2, rc::gen::elementOf(others)},
                                               {1, rc::gen::just(others.front())},
                                               {1, rc::gen::just(others.back())}});
  return {s1, s2};
}

InputSpec SpecFor(bool allow_eps_zero) {
  const Limits lim = CurrentLimits();
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = lim.max_rows;
  spec.kinds = {RowKind::kStandard, RowKind::kLargeMean, RowKind::kHeavyTail,
                RowKind::kNearConstant, RowKind::kConstant};
  spec.allow_eps_zero = allow_eps_zero;
  spec.affine = {Affine::kAbsent, Affine::kDrawn};
  return spec;
}

void ExactScaling(const PropertyCase& pc, const KernelGroup& g) {
  InputSpec spec = SpecFor(true);
  spec.families = FiniteFamilies();
  Case base = *Input(g, spec);
  FlushSubnormalGamma(&base);
  const std::vector<int> scales = NormalScales(base);
  if (scales.size() < 2) {
    Coverage::Current().Count("form", "exact, skipped: no two scales");
    Coverage::Current().Skipped("(every kernel)",
                                "exact form: no two scales keep every intermediate normal");
    RC_PRE(false);
  }
  const auto [s1, s2] = TwoScales(scales);
  const int k = s2 - s1;
  Coverage::Current().Count("form", std::abs(k) <= 8    ? "exact, |k| <= 8"
                                    : std::abs(k) <= 32 ? "exact, |k| 9..32"
                                                        : "exact, |k| > 32");
  const Case a = Scaled(base, s1);
  const Case b = Scaled(base, s2);
  const Reference ra = ComputeReference(a);
  const Reference rb = ComputeReference(b);
  Classify(b, rb.forward.stats);
  RequireEpsOrNoUnderflow(a, ra);
  RequireEpsOrNoUnderflow(b, rb);
  const std::string what = "K(" + Shift(k) + " x, " + Shift(2 * k) +
                           " eps) against K(x, eps) (x at " + Shift(s1) + ", eps = " + Num(a.eps) +
                           ")";
  if (std::string m = OracleScalingMismatch(ra, rb, k, FormatOf(g.dtype)); !m.empty()) {
    pc.OracleFails(b, "the oracle's " + what + ": " + m);
  }
  for (const ImplInfo* kernel : pc.KernelsFor(g)) {
    const auto ja = pc.Run(*kernel, a, ra);
    if (!ja) continue;
    const auto jb = pc.Run(*kernel, b, rb);
    if (!jb) continue;
    const bool exact = HeldToExactRelation(*kernel, kScalingRelation);
    const std::string m = exact ? KernelScalingBits(*ja, *jb, k)
                                : KernelScalingWithinBounds(*ja, *jb, k, a.rows, a.d);
    if (!m.empty()) {
      pc.KernelFails(*kernel, b, what + (exact ? ", bit for bit: " : ", within bounds: ") + m);
    }
  }
}

// ---- The eps-fixed form: x, eps against 2^k x, eps ----

// The oracle's xhat(2^k x) = xhat(x) sqrt((s + eps)/(s + eps/4^k)), to approx.h's tolerance.
void OracleXhatIdentity(const PropertyCase& pc, const Case& c, const Case& scaled,
                        const Reference& ref, const Reference& sref, double alpha) {
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const RowStats& s = ref.forward.stats[r];
    if (!s.finite || !std::isfinite(s.rstd)) continue;
    // factor^2 = (s + eps)/(s + eps/alpha^2) = 1/(f + (1 - f)/alpha^2), f = s/(s + eps).
    Approx f;
    if (!VarianceFraction(s.var, c.eps, &f)) continue;
    const Approx factor = Exact(1) / Sqrt(f + (Exact(1) - f) * Exact(1.0 / (alpha * alpha)));
    for (std::int64_t i = 0; i < c.d; ++i) {
      const Approx before = Rounded(ref.forward.xhat[r * c.d + i]);
      const Approx after = Rounded(sref.forward.xhat[r * c.d + i]);
      if (!Within(after, before * factor, 0)) {
        pc.OracleFails(scaled, "row " + std::to_string(r) + ": xhat(2^k x) = " + Num(after.v) +
                                   ", xhat(x) sqrt((s + eps)/(s + eps/alpha^2)) = " +
                                   Num((before * factor).v));
      }
    }
  }
}

// True when 2^k v is exact in f and no value crosses into or out of the
// subnormals (there the scaling would round).
bool ScalesExactly(double v, int k, FloatFormat f) {
  return v == 0 || !std::isfinite(v) || (IsNormalIn(v, f) && IsNormalIn(std::ldexp(v, k), f));
}

void FixedEpsScaling(const PropertyCase& pc, const KernelGroup& g) {
  const Case c = *Input(g, SpecFor(false));
  const int k = *rc::gen::element(-6, -3, -1, 1, 2, 5);
  Coverage::Current().Count("form", "eps fixed");
  const double alpha = std::ldexp(1.0, k);
  Case scaled = c;
  for (double& v : scaled.x) {
    RC_PRE(ScalesExactly(v, k, FormatOf(c.dtype)));
    v = std::ldexp(v, k);
  }
  const Reference ref = ComputeReference(c);
  const Reference sref = ComputeReference(scaled);
  Classify(scaled, sref.forward.stats);
  OracleXhatIdentity(pc, c, scaled, ref, sref, alpha);
  for (const ImplInfo* kernel : pc.KernelsFor(g)) {
    const auto a = pc.Run(*kernel, c, ref);
    if (!a) continue;
    const auto b = pc.Run(*kernel, scaled, sref);
    if (!b) continue;
    if (std::string m = KernelScalingWithinBounds(*a, *b, k, c.rows, c.d); !m.empty()) {
      pc.KernelFails(*kernel, scaled,
                     "K(" + Shift(k) + " x) against K(x), eps = " + Num(c.eps) + " fixed: " + m);
    }
  }
}

}  // namespace

void ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged(const Targets& t) {
  PropertyCase pc("ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  if (*rc::gen::weightedElement<bool>({{3, true}, {1, false}})) {
    ExactScaling(pc, g);
  } else {
    FixedEpsScaling(pc, g);
  }
}

RC_GTEST_PROP(Properties, ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged, ()) {
  ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged(SuiteTargets());
}

}  // namespace lnv::props

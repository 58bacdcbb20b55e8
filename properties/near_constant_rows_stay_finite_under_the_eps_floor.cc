// Property 3, the eps floor: on constant and near-constant rows (sigma^2 = 0
// or sigma^2 << eps; for RMSNorm, tiny rows with mean(x^2) << eps) eps keeps
// everything finite and bounded:
//   r = 1/sqrt(sigma^2 + eps) <= 1/sqrt(eps),  |xhat_i| <= |x_i - mu| / sqrt(eps),
// finite inputs give finite outputs (eps in an fp16 kernel must not
// underflow into a NaN), and a LayerNorm row that is exactly constant, with
// sums that are exact in the accumulation type, gives y = beta exactly and,
// when g = dy gamma is constant too, dx = 0 exactly. (In general a constant
// row has dx = r (g - mean(g)), not 0: xhat = 0 removes only the xhat b term.)
//
// "Sums exact": the row is k 2^e with |k| <= 127 and d = 2^j <= 2^10, so
// every partial sum is an integer below 2^17 times 2^e (exact in float and
// double) and so are sum/d and sum * (1/d); then mean = x, x - mean = 0,
// xhat = 0 and y = gamma 0 + beta = beta, whatever the summation order.
// Values are compared as values: the sign of a zero is not claimed.
// An infinite gamma_i or beta_i (drawn now and then) is outside "finite
// inputs": there the oracle's y_i must be the IEEE-exact gamma_i xhat_i +
// beta_i instead (NaN for gamma = +-inf with xhat = 0, oracle.h), and the
// finite-only checks hold on every other element.
// Kernels: the bounds above plus the judge's bound on rstd and y.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

struct Drawn {
  Case c;
  std::vector<bool> exact_constant;  // per row: constant, sums exact
  std::vector<bool> constant_g;      // per row: dy gamma constant (gamma absent, dy constant)
};

rc::Gen<Drawn> NearConstantInput(const KernelGroup& g, std::int64_t max_d, std::int64_t max_rows) {
  return rc::gen::exec([=] {
    const FloatFormat xf = FormatOf(g.dtype);
    const FloatFormat pf = FormatOf(g.param_dtype);
    Drawn out;
    Case& c = out.c;
    c.norm = g.norm;
    c.dtype = g.dtype;
    c.param_dtype = g.param_dtype;
    const bool power_of_two = *rc::gen::arbitrary<bool>();
    c.d = power_of_two ? std::int64_t{1} << *rc::gen::inRange(0, 11) : *RowLength(1, max_d);
    c.rows = *RowCount(max_rows);
    c.eps = *Epsilon(false);
    const bool gamma_absent = *rc::gen::arbitrary<bool>();
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const RowKind kind = *rc::gen::weightedElement<RowKind>(
          {{3, RowKind::kConstant}, {2, RowKind::kNearConstant}, {1, RowKind::kTiny}});
      const std::vector<double> row = *RowValues(xf, c.d, kind, c.eps);
      c.x.insert(c.x.end(), row.begin(), row.end());
      out.exact_constant.push_back(kind == RowKind::kConstant && power_of_two && c.d <= 1024);
      const bool constant_dy = *rc::gen::arbitrary<bool>();
      const std::vector<double> dy =
          constant_dy ? std::vector<double>(static_cast<std::size_t>(c.d),
                                            *ScaledInteger(127, *rc::gen::inRange(-6, 1)))
                      : *DyValues(xf, c.d);
      c.dy.insert(c.dy.end(), dy.begin(), dy.end());
      out.constant_g.push_back(constant_dy && gamma_absent);
    }
    if (!gamma_absent) SetAffine(&c, Affine::kDrawn, *GammaValues(pf, c.d), *BetaValues(pf, c.d));
    if (gamma_absent && *rc::gen::arbitrary<bool>()) {
      c.beta = *BetaValues(pf, c.d);  // beta alone
      if (c.norm == Norm::kRmsNorm) c.beta.clear();
    }
    return out;
  });
}

}  // namespace

void NearConstantRowsStayFiniteUnderTheEpsFloor(const Targets& t) {
  PropertyCase pc("NearConstantRowsStayFiniteUnderTheEpsFloor", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  const Drawn in = *NearConstantInput(g, lim.max_d, lim.max_rows);
  const Case& c = in.c;
  const Reference ref = ComputeReference(c);
  Classify(c, ref.forward.stats);
  const bool layer = c.norm == Norm::kLayerNorm;
  const std::int64_t d = c.d;
  const Approx floor = Exact(1) / Sqrt(Exact(c.eps));  // 1/sqrt(eps)
  const auto gamma = [&](std::int64_t i) { return c.gamma.empty() ? 1.0 : c.gamma[i]; };
  const auto beta = [&](std::int64_t i) { return c.beta.empty() ? 0.0 : c.beta[i]; };
  // y = beta for a constant row, stored in x's dtype: beta rounded once into it
  // (beta may be wider, e.g. f32 scale/shift with bf16 data).
  const auto stored_beta = [&](std::int64_t i) {
    return RoundToFormat(beta(i), FormatOf(c.dtype));
  };
  // |x_i - mu| / sqrt(eps): how far eps lets xhat_i go.
  const auto xhat_cap = [&](std::int64_t r, std::int64_t i) {
    const Approx mu = layer ? Rounded(ref.forward.stats[r].mean) : Exact(0);
    return Abs(Exact(c.x[r * d + i]) - mu) * floor;
  };

  // Only where gamma or beta is infinite: xhat's sign and zeros, exactly.
  const std::optional<Reference> plain =
      std::all_of(c.gamma.begin(), c.gamma.end(), [](double v) { return std::isfinite(v); }) &&
              std::all_of(c.beta.begin(), c.beta.end(), [](double v) { return std::isfinite(v); })
          ? std::nullopt
          : std::optional<Reference>(PlainReference(c));
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const std::string row = "row " + std::to_string(r) + ": ";
    if (!AtMost(FromOracle(ref.forward.rstd[r], kBinary32), floor, 0)) {
      pc.OracleFails(c, row + "rstd " + Num(ref.forward.rstd[r].hi) + " > 1/sqrt(eps)");
    }
    for (std::int64_t i = 0; i < d; ++i) {
      const std::int64_t idx = r * d + i;
      if (!AffineIsFinite(c, i)) {
        const double ieee = IeeeAffineY(c, *plain, idx);
        if (!SameBits(ref.forward.y[idx].rounded, ieee)) {
          pc.OracleFails(c, row + "y[" + std::to_string(i) +
                                "] = " + Num(ref.forward.y[idx].rounded) +
                                " with gamma = " + Num(gamma(i)) + ", beta = " + Num(beta(i)) +
                                ", but IEEE gamma xhat + beta = " + Num(ieee));
        }
      } else if (!std::isfinite(ref.forward.y[idx].rounded)) {
        pc.OracleFails(c, row + "y[" + std::to_string(i) + "] is not finite");
      }
      // xhat involves neither gamma nor beta: where they are infinite, from `plain`.
      const double xhat = AffineIsFinite(c, i) ? ref.forward.xhat[idx] : plain->forward.xhat[idx];
      if (!AtMost(Abs(Rounded(xhat)), xhat_cap(r, i), 0)) {
        pc.OracleFails(c, row + "|xhat| > |x - mu|/sqrt(eps) at " + std::to_string(i));
      }
      // y = gamma 0 + beta = beta needs a finite gamma (inf * 0 is NaN).
      if (layer && in.exact_constant[r] && std::isfinite(gamma(i)) &&
          ref.forward.y[idx].rounded != stored_beta(i)) {
        pc.OracleFails(c, row + "a constant row gives y != beta at " + std::to_string(i));
      }
      if (layer && in.exact_constant[r] && in.constant_g[r] && ref.backward->dx[idx].rounded != 0) {
        pc.OracleFails(c, row + "a constant row with constant g gives dx != 0");
      }
    }
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto run = pc.Run(*k, c, ref);
    if (!run) continue;
    if (std::string m = NonFiniteWhereExactIsFinite(
            *run, {Output::kY, Output::kMean, Output::kRstd, Output::kDx});
        !m.empty()) {
      pc.KernelFails(*k, c, m);
      continue;
    }
    std::string failure;
    for (std::int64_t r = 0; r < c.rows && failure.empty(); ++r) {
      const std::string row = "row " + std::to_string(r) + ": ";
      if (run->Claimed(Output::kRstd, r)) {
        const double rstd = run->Value(Output::kRstd, r);
        if (!AtMost(Exact(rstd), floor, run->At(Output::kRstd, r).bound)) {
          failure = row + "rstd = " + Num(rstd) + " > 1/sqrt(eps) = " + Num(floor.v) +
                    " by more than its bound";
          break;
        }
      }
      for (std::int64_t i = 0; i < d && failure.empty(); ++i) {
        const std::int64_t idx = r * d + i;
        const ElementResult& y = run->At(Output::kY, idx);
        if (y.verdict == Verdict::kOutOfRange) continue;
        if (run->Claimed(Output::kY, idx)) {
          const Approx dev = Abs(Exact(y.kernel) - Exact(beta(i)));
          if (!AtMost(dev, Exact(std::fabs(gamma(i))) * xhat_cap(r, i), y.bound)) {
            failure = row + "|y - beta| = " + Num(dev.v) + " exceeds |gamma| |x - mu|/sqrt(eps)" +
                      " plus its bound at " + std::to_string(i);
          }
        }
        if (layer && in.exact_constant[r] && std::isfinite(gamma(i)) &&
            y.kernel != stored_beta(i)) {
          failure = row + "a constant row with exact sums gives y = " + Num(y.kernel) +
                    ", not beta = " + Num(stored_beta(i)) + ", at " + std::to_string(i);
        }
        if (layer && in.exact_constant[r] && in.constant_g[r] && run->Has(Output::kDx) &&
            run->Value(Output::kDx, idx) != 0) {
          failure = row + "a constant row with exact sums and constant dy gives dx = " +
                    Num(run->Value(Output::kDx, idx)) + ", not 0, at " + std::to_string(i);
        }
      }
    }
    if (!failure.empty()) pc.KernelFails(*k, c, failure);
  }
}

RC_GTEST_PROP(Properties, NearConstantRowsStayFiniteUnderTheEpsFloor, ()) {
  NearConstantRowsStayFiniteUnderTheEpsFloor(SuiteTargets());
}

}  // namespace lnv::props

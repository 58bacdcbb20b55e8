// Property 9, the contract (oracle.h's special values): a NaN or an infinity
// anywhere in a row of x makes y and dx of that row NaN (mean and rstd
// non-finite: the IEEE mean of a row holding +inf is +inf), and touches no
// other row; finite rows inside a kernel's claimed range give finite
// outputs wherever the exact value is finite in the output format.
//
// Inputs: rows of every finite kind, some replaced by rows with NaN, +inf,
// -inf or both infinities; eps > 0 (so finite rows have finite rstd).
// Oracle, exactly: the special rows' y and dx are NaN, the finite rows' y,
// mean and rstd are finite. Kernels: the same, per row; out-of-range finite
// rows are not judged (only the NaN rows' NaN is claimed there).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {

void SpecialValuesStayInTheirRowAndFiniteRowsStayFinite(const Targets& t) {
  PropertyCase pc("SpecialValuesStayInTheirRowAndFiniteRowsStayFinite", t);
  const KernelGroup g = *OneGroupOf(GroupsOf(t.kernels));
  const Limits lim = CurrentLimits();
  const FloatFormat xf = FormatOf(g.dtype);
  InputSpec spec;
  spec.max_d = lim.max_d;
  spec.max_rows = std::max<std::int64_t>(lim.max_rows, 6);
  spec.allow_eps_zero = false;
  Case c = *Input(g, spec);
  std::vector<bool> special(static_cast<std::size_t>(c.rows), false);
  for (std::int64_t r = 0; r < c.rows; ++r) {
    if (!*rc::gen::weightedElement<bool>({{3, false}, {2, true}})) continue;
    const auto row = *SpecialRow(xf, c.d);
    std::copy(row.begin(), row.end(), c.x.begin() + r * c.d);
    special[r] = true;
  }
  const Reference ref = ComputeReference(c);
  Classify(c, ref.forward.stats);
  const std::int64_t d = c.d;
  const bool layer = c.norm == Norm::kLayerNorm;

  for (std::int64_t r = 0; r < c.rows; ++r) {
    const std::string row = "row " + std::to_string(r) + ": ";
    for (std::int64_t i = 0; i < d; ++i) {
      const double y = ref.forward.y[r * d + i].rounded;
      const double dx = ref.backward->dx[r * d + i].rounded;
      if (special[r] && (!std::isnan(y) || !std::isnan(dx))) {
        pc.OracleFails(c, row + "a row with NaN/inf gives y = " + Num(y) + ", dx = " + Num(dx));
      }
      if (!special[r] && !std::isfinite(y)) pc.OracleFails(c, row + "a finite row gives y = " + Num(y));
    }
    // The ABI stores mean and rstd as floats: an fp64 row's mean may round to inf.
    const double rstd = ref.forward.rstd[r].rounded;
    const double mean = layer ? ref.forward.mean[r].rounded : 0.0;
    const double mean_exact = layer ? ref.forward.mean[r].hi : 0.0;
    const bool stats_ok =
        special[r] ? !std::isfinite(rstd) && (!layer || !std::isfinite(mean))
                   : std::isfinite(rstd) && (std::isfinite(mean) || !std::isfinite(mean_exact) ||
                                             std::fabs(mean_exact) >= OverflowThreshold(kBinary32));
    if (!stats_ok) pc.OracleFails(c, row + "mean " + Num(mean) + ", rstd " + Num(rstd));
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto run = pc.Run(*k, c, ref);
    if (!run) continue;
    std::string failure;
    for (std::int64_t r = 0; r < c.rows && failure.empty(); ++r) {
      const std::string row = "row " + std::to_string(r) + ": ";
      if (special[r]) {
        for (Output o : {Output::kY, Output::kDx}) {
          if (!run->Has(o)) continue;
          for (std::int64_t i = 0; i < d && failure.empty(); ++i) {
            if (!std::isnan(run->Value(o, r * d + i))) {
              failure = row + "a row with NaN/inf gives " + std::string(OutputName(o)) + "[" +
                        std::to_string(i) + "] = " + Num(run->Value(o, r * d + i)) + ", not NaN";
            }
          }
        }
        for (Output o : {Output::kMean, Output::kRstd}) {
          if (failure.empty() && run->Has(o) && std::isfinite(run->Value(o, r))) {
            failure = row + "a row with NaN/inf gives a finite " + std::string(OutputName(o)) +
                      " = " + Num(run->Value(o, r));
          }
        }
        continue;
      }
      for (Output o : {Output::kY, Output::kDx}) {
        if (!run->Has(o)) continue;
        for (std::int64_t i = 0; i < d && failure.empty(); ++i) {
          const ElementResult& e = run->At(o, r * d + i);
          if (e.verdict == Verdict::kOutOfRange) break;  // the row is outside the claimed range
          if (std::isfinite(e.exact.rounded) && !std::isfinite(e.kernel)) {
            failure = row + "a finite row gives " + std::string(OutputName(o)) + "[" +
                      std::to_string(i) + "] = " + Num(e.kernel) + " (exact " +
                      Num(e.exact.rounded) + ")";
          }
        }
      }
      for (Output o : {Output::kMean, Output::kRstd}) {
        if (failure.empty() && run->Has(o) && run->At(o, r).verdict != Verdict::kOutOfRange &&
            std::isfinite(run->At(o, r).exact.rounded) && !std::isfinite(run->Value(o, r))) {
          failure = row + "a finite row gives " + std::string(OutputName(o)) + " = " +
                    Num(run->Value(o, r));
        }
      }
    }
    if (!failure.empty()) pc.KernelFails(*k, c, failure);
  }
}

RC_GTEST_PROP(Properties, SpecialValuesStayInTheirRowAndFiniteRowsStayFinite, ()) {
  SpecialValuesStayInTheirRowAndFiniteRowsStayFinite(SuiteTargets());
}

}  // namespace lnv::props

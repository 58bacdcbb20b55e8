// Property 9, the contract (oracle.h's special values): a NaN or an infinity
// in a row of x gives that row the outputs of IEEE arithmetic on the formula,
// and touches no other row; finite rows inside a kernel's claimed range give
// finite outputs wherever the exact value is finite in the output format.
//
// The special rows, by the table of oracle.h (computed here from the IEEE
// rules, not read from the oracle):
//   * a NaN, or LayerNorm with +-inf: y, rstd and dx NaN; the mean NaN, or
//     +-inf when the row's infinities share a sign (its IEEE sum);
//   * RMSNorm with +-inf and no NaN (eps > 0): r = 1/sqrt(+inf) = +0, so
//     rstd = +0, y = (x 0) gamma = +-0 where x_i and gamma_i are finite and
//     NaN elsewhere; dx NaN (b = mean(g xhat) holds inf * 0).
// The oracle gives exactly these values (zeros with their IEEE sign). A
// kernel gives them or an accepted alternative: NaN for a +-0, for the +0
// rstd and for the infinite mean (another evaluation order's IEEE result),
// never a nonzero finite value.
//
// Inputs: rows of every finite kind, some replaced by rows with NaN, +inf,
// -inf or both infinities; eps > 0 (so finite rows have finite rstd).
// gamma and beta are infinite now and then: on a finite row y_i is then the
// IEEE-exact gamma_i xhat_i + beta_i (+-inf or NaN), which the oracle must
// give instead of a finite value. Kernels: the table per row; out-of-range
// finite rows are not judged (only the NaN rows' NaN is claimed there).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "harness/formats.h"
#include "properties/properties.h"

namespace lnv::props {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What the table of oracle.h gives for a row of x holding NaN or +-inf.
struct TableRow {
  bool r_zero = false;  // RMSNorm, +-inf and no NaN: r = +0
  double mean = kNaN;   // LayerNorm: sum(x)/d in IEEE arithmetic
};

TableRow TableFor(const Case& c, std::int64_t r) {
  bool nan = false, pos = false, neg = false;
  for (std::int64_t i = 0; i < c.d; ++i) {
    const double v = c.x[r * c.d + i];
    nan |= std::isnan(v);
    pos |= v == HUGE_VAL;
    neg |= v == -HUGE_VAL;
  }
  TableRow t;
  t.r_zero = c.norm == Norm::kRmsNorm && !nan;  // eps is finite and > 0 here
  if (!nan && pos != neg) t.mean = pos ? HUGE_VAL : -HUGE_VAL;
  return t;
}

// y_i by the table: (x_i r) gamma_i with r = +0, or NaN.
double TableY(const Case& c, const TableRow& t, std::int64_t r, std::int64_t i) {
  if (!t.r_zero) return kNaN;
  const double gamma = c.gamma.empty() ? 1.0 : c.gamma[i];
  return RoundToFormat((c.x[r * c.d + i] * 0.0) * gamma, FormatOf(c.dtype));
}

// The oracle on a special row: the table's values, bit for bit.
std::string OracleSpecialRow(const Case& c, const Reference& ref, std::int64_t r) {
  const TableRow t = TableFor(c, r);
  for (std::int64_t i = 0; i < c.d; ++i) {
    const double y = ref.forward.y[r * c.d + i].rounded;
    const double dx = ref.backward->dx[r * c.d + i].rounded;
    if (!SameBits(y, TableY(c, t, r, i)) || !std::isnan(dx)) {
      return "a row with NaN/inf gives y[" + std::to_string(i) + "] = " + Num(y) +
             ", dx = " + Num(dx) + "; the table says y = " + Num(TableY(c, t, r, i)) + ", dx = NaN";
    }
  }
  const double rstd = ref.forward.rstd[r].rounded;
  if (!SameBits(rstd, t.r_zero ? 0.0 : kNaN)) return "a row with NaN/inf gives rstd " + Num(rstd);
  if (c.norm == Norm::kLayerNorm && !SameBits(ref.forward.mean[r].rounded, t.mean)) {
    return "a row with NaN/inf gives mean " + Num(ref.forward.mean[r].rounded) + ", not " +
           Num(t.mean);
  }
  return "";
}

// A kernel on a special row: the table's value or NaN where the table gives
// +-0 or an infinite mean; NaN alone elsewhere. The finite elements of an
// RMSNorm row come first: their +-0 is what a kernel that treats the row as
// finite gets wrong.
std::string KernelSpecialRow(const Case& c, const Judged& run, std::int64_t r) {
  const TableRow t = TableFor(c, r);
  for (std::int64_t i = 0; i < c.d; ++i) {
    const double want = TableY(c, t, r, i), y = run.Value(Output::kY, r * c.d + i);
    if (!std::isnan(want) && y != 0 && !std::isnan(y)) {
      return "a row with +-inf gives y[" + std::to_string(i) + "] = " + Num(y) +
             " at a finite element: not +-0 or NaN";
    }
  }
  for (Output o : {Output::kY, Output::kDx}) {
    if (!run.Has(o)) continue;
    for (std::int64_t i = 0; i < c.d; ++i) {
      const double want = o == Output::kY ? TableY(c, t, r, i) : kNaN;
      const double v = run.Value(o, r * c.d + i);
      if (std::isnan(want) && !std::isnan(v)) {
        return "a row with NaN/inf gives " + std::string(OutputName(o)) + "[" + std::to_string(i) +
               "] = " + Num(v) + ", not NaN";
      }
    }
  }
  if (run.Has(Output::kRstd)) {
    const double rstd = run.Value(Output::kRstd, r);
    if (!std::isnan(rstd) && !(t.r_zero && rstd == 0)) {
      return "a row with NaN/inf gives rstd = " + Num(rstd) +
             (t.r_zero ? ", not +0 or NaN" : ", not NaN");
    }
  }
  if (run.Has(Output::kMean)) {
    const double mean = run.Value(Output::kMean, r);
    if (!std::isnan(mean) && mean != t.mean) {
      return "a row with NaN/inf gives mean = " + Num(mean) + ", not " + Num(t.mean) + " or NaN";
    }
  }
  return "";
}

// The oracle on a finite row: finite y where gamma_i and beta_i are, the
// IEEE-exact gamma_i xhat_i + beta_i where not; finite statistics.
std::string OracleFiniteRow(const Case& c, const Reference& ref,
                            const std::optional<Reference>& plain, std::int64_t r) {
  for (std::int64_t i = 0; i < c.d; ++i) {
    const double y = ref.forward.y[r * c.d + i].rounded;
    if (AffineIsFinite(c, i)) {
      if (!std::isfinite(y)) return "a finite row gives y = " + Num(y);
    } else if (const double ieee = IeeeAffineY(c, *plain, r * c.d + i); !SameBits(y, ieee)) {
      return "a finite row gives y[" + std::to_string(i) + "] = " + Num(y) +
             " where IEEE gamma xhat + beta = " + Num(ieee);
    }
  }
  // The ABI stores mean and rstd as floats: an fp64 row's mean may round to inf.
  const bool layer = c.norm == Norm::kLayerNorm;
  const double rstd = ref.forward.rstd[r].rounded;
  const double mean = layer ? ref.forward.mean[r].rounded : 0.0;
  const double mean_exact = layer ? ref.forward.mean[r].hi : 0.0;
  if (!std::isfinite(rstd) || !(std::isfinite(mean) || !std::isfinite(mean_exact) ||
                                std::fabs(mean_exact) >= OverflowThreshold(kBinary32))) {
    return "mean " + Num(mean) + ", rstd " + Num(rstd);
  }
  return "";
}

// A kernel on a finite row: finite wherever the exact value is finite.
std::string KernelFiniteRow(const Judged& run, std::int64_t r, std::int64_t d) {
  for (Output o : {Output::kY, Output::kDx}) {
    if (!run.Has(o)) continue;
    for (std::int64_t i = 0; i < d; ++i) {
      const ElementResult& e = run.At(o, r * d + i);
      if (e.verdict == Verdict::kOutOfRange) break;  // the row is outside the claimed range
      if (std::isfinite(e.exact.rounded) && !std::isfinite(e.kernel)) {
        return "a finite row gives " + std::string(OutputName(o)) + "[" + std::to_string(i) +
               "] = " + Num(e.kernel) + " (exact " + Num(e.exact.rounded) + ")";
      }
    }
  }
  for (Output o : {Output::kMean, Output::kRstd}) {
    if (run.Has(o) && run.At(o, r).verdict != Verdict::kOutOfRange &&
        std::isfinite(run.At(o, r).exact.rounded) && !std::isfinite(run.Value(o, r))) {
      return "a finite row gives " + std::string(OutputName(o)) + " = " + Num(run.Value(o, r));
    }
  }
  return "";
}

}  // namespace

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
  bool affine_finite = true;
  for (std::int64_t i = 0; i < c.d; ++i) affine_finite = affine_finite && AffineIsFinite(c, i);
  const std::optional<Reference> plain =
      affine_finite ? std::nullopt : std::optional<Reference>(PlainReference(c));

  for (std::int64_t r = 0; r < c.rows; ++r) {
    const std::string m =
        special[r] ? OracleSpecialRow(c, ref, r) : OracleFiniteRow(c, ref, plain, r);
    if (!m.empty()) pc.OracleFails(c, "row " + std::to_string(r) + ": " + m);
  }

  for (const ImplInfo* k : pc.KernelsFor(g)) {
    const auto run = pc.Run(*k, c, ref);
    if (!run) continue;
    for (std::int64_t r = 0; r < c.rows; ++r) {
      const std::string m =
          special[r] ? KernelSpecialRow(c, *run, r) : KernelFiniteRow(*run, r, c.d);
      if (!m.empty()) {
        pc.KernelFails(*k, c, "row " + std::to_string(r) + ": " + m);
        break;
      }
    }
  }
}

RC_GTEST_PROP(Properties, SpecialValuesStayInTheirRowAndFiniteRowsStayFinite, ()) {
  SpecialValuesStayInTheirRowAndFiniteRowsStayFinite(SuiteTargets());
}

}  // namespace lnv::props

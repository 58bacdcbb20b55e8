#include "harness/measure.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/bounds.h"
#include "harness/formats.h"

namespace lnv {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool ElementCounts(const ElementResult& e) {
  return e.verdict != Verdict::kOutOfRange && e.verdict != Verdict::kOracleUndecided;
}

// A kernel value that agrees with a non-finite exact value (NaN for NaN, inf
// for inf) is not an error sample: it has no ulp.
bool NonFiniteAgreement(const ElementResult& e) {
  return !std::isfinite(e.exact.rounded) && e.error == 0.0;
}

// The per-row points of y or dx.
void AddPoints(const ImplInfo& impl, const Case& c, const Reference& ref, const OutputResult& out,
               std::int32_t item, OutputMeasure* m) {
  // The statistical tier's model: the chart's second line is the bound that
  // tier holds a kernel to (where its family holds the model).
  const BoundModel model = TypicalModel(ModelFor(impl), c.rows, c.d);
  const bool is_y = out.output == Output::kY;
  if (static_cast<std::int64_t>(out.elements.size()) != c.rows * c.d) return;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const RowInput& row_in = ref.rows[r];
    if (!row_in.stats.finite || !(row_in.max_abs > 0)) continue;
    RowPoint p;
    p.kappa = RowKappa(c, ref, r);
    p.log2_mag = std::log2(row_in.max_abs);
    p.item = item;
    p.row = static_cast<std::int32_t>(r);
    const RowBound rb = ForwardRowBound(model, row_in);
    BackwardRowBound bb;
    if (!is_y) bb = BackwardRowBoundFor(model, row_in, rb, ref.backward_rows[r]);
    double err = 0, bound = 0, pbound = 0, max_abs = 0;
    bool any = false;
    for (std::int64_t i = 0; i < c.d; ++i) {
      const std::int64_t idx = r * c.d + i;
      const ElementResult& e = out.elements[idx];
      if (e.verdict == Verdict::kOutOfRange) {
        p.kind = PointKind::kOutOfRange;
        break;
      }
      if (e.verdict == Verdict::kOracleUndecided || NonFiniteAgreement(e)) continue;
      if (!std::isfinite(e.error)) p.kind = PointKind::kNonFinite;
      if (IsFailure(e.verdict)) p.failed = true;
      const double exact = e.exact.hi + e.exact.lo;
      if (std::isfinite(exact)) max_abs = std::max(max_abs, std::fabs(exact));
      err = std::max(err, e.error);
      bound = std::max(bound, e.bound);
      const double gamma = c.gamma.empty() ? 1.0 : c.gamma[i];
      double pb = 0;
      if (is_y) {
        const double beta = c.norm == Norm::kLayerNorm && !c.beta.empty() ? c.beta[i] : 0.0;
        pb = ForwardElementBound(model, row_in, rb, {ref.forward.xhat[idx], gamma, beta, exact});
      } else {
        pb = DxElementBound(model, row_in, ref.backward_rows[r], bb,
                            {ref.forward.xhat[idx], c.dy[idx] * gamma, exact});
      }
      pbound = std::max(pbound, std::isnan(pb) ? kInf : pb);
      any = true;
    }
    if (p.kind == PointKind::kJudged && !any) continue;
    if (p.kind == PointKind::kOutOfRange) {
      p.err = p.bound = p.pbound = std::numeric_limits<double>::quiet_NaN();
    } else {
      const double ulp = FormatUlp(max_abs, out.format);
      p.err = p.kind == PointKind::kNonFinite ? kInf : err / ulp;
      p.bound = bound / ulp;
      p.pbound = pbound / ulp;
    }
    m->points.push_back(p);
  }
}

// The bin of a positive finite ulps value.
int BinOf(double ulps) {
  return static_cast<int>(std::floor(std::log2(ulps) * UlpHistogram::kBinsPerOctave));
}

}  // namespace

void UlpHistogram::Add(double ulps) { AddAll({ulps}); }

void UlpHistogram::AddAll(const std::vector<double>& ulps) {
  // Counted in a flat array over the bins seen, then merged: one map update
  // a bin instead of one an element (they cost more than the logarithms).
  std::vector<int> seen;
  seen.reserve(ulps.size());
  int lo = 0, hi = 0;
  for (double u : ulps) {
    if (u == 0.0) {
      ++zeros;
    } else if (!std::isfinite(u)) {
      ++nonfinite;
    } else {
      const int b = BinOf(u);
      lo = seen.empty() ? b : std::min(lo, b);
      hi = seen.empty() ? b : std::max(hi, b);
      seen.push_back(b);
    }
  }
  if (seen.empty()) return;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(hi - lo) + 1, 0);
  for (int b : seen) ++counts[static_cast<std::size_t>(b - lo)];
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > 0) bins[lo + static_cast<int>(i)] += counts[i];
  }
}

void UlpHistogram::Merge(const UlpHistogram& o) {
  zeros += o.zeros;
  nonfinite += o.nonfinite;
  for (const auto& [b, n] : o.bins) bins[b] += n;
}

std::int64_t UlpHistogram::total() const {
  std::int64_t t = zeros + nonfinite;
  for (const auto& [b, n] : bins) t += n;
  return t;
}

double UlpHistogram::Quantile(double q) const {
  const std::int64_t t = total();
  if (t == 0) return 0.0;
  const auto need = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(t)));
  std::int64_t seen = zeros;
  if (seen >= need) return 0.0;
  for (const auto& [b, n] : bins) {
    seen += n;
    if (seen >= need) return std::exp2(static_cast<double>(b + 1) / kBinsPerOctave);
  }
  return kInf;
}

bool WorseElement(const ElementResult& a, const ElementResult& b) {
  if (a.verdict != b.verdict) return a.verdict > b.verdict;
  if (a.bound_use != b.bound_use) return a.bound_use > b.bound_use;
  return a.ulps > b.ulps;
}

double RowKappa(const Case& c, const Reference& ref, std::int64_t row) {
  double mean = 0, var = 0;
  if (c.norm == Norm::kLayerNorm) {
    mean = ref.forward.stats[row].mean;
    var = ref.forward.stats[row].var;
  } else {
    const double* x = c.x.data() + row * c.d;
    long double s = 0, s2 = 0;
    for (std::int64_t i = 0; i < c.d; ++i) s += x[i];
    const long double mu = s / c.d;
    for (std::int64_t i = 0; i < c.d; ++i) s2 += (x[i] - mu) * (x[i] - mu);
    mean = static_cast<double>(mu);
    var = static_cast<double>(s2 / c.d);
  }
  if (!(var > 0)) return kInf;
  return std::hypot(1.0, mean / std::sqrt(var));
}

CaseMeasure Measure(const ImplInfo& impl, const Case& c, const Reference& ref, const Judgement& j,
                    bool with_points, std::int32_t item) {
  CaseMeasure cm;
  cm.verdict = j.verdict;
  cm.message = j.message;
  cm.d = c.d;
  cm.rows = c.rows;
  cm.rows_out_of_range = j.rows_out_of_range;
  for (const OutputResult& o : j.outputs) {
    if (!o.present) continue;
    OutputMeasure& m = cm.outputs[static_cast<int>(o.output)];
    m.present = true;
    m.verdict = o.verdict;
    m.max_ulp = o.max_ulp;
    m.max_bound_use = o.max_bound_use;
    m.count = o.count;
    m.unclaimed = o.unclaimed;
    m.out_of_range = o.out_of_range;
    m.undecided = o.undecided;
    m.beyond_typical = o.beyond_typical;
    std::vector<double> ulps;
    ulps.reserve(o.elements.size());
    for (const ElementResult& e : o.elements) {
      if (!ElementCounts(e)) continue;
      // The worst judged element: a failure first, then the largest bound use
      // (the judge's own `worst` also ranks out-of-range and undecided ones).
      if (!m.worst || WorseElement(e, *m.worst)) {
        m.worst = e;
        m.worst_row = IsRowOutput(o.output) ? RowOfIndex(o.output, e.index, c.d) : -1;
      }
      if (!NonFiniteAgreement(e)) ulps.push_back(e.ulps);
    }
    m.hist.AddAll(ulps);
    if (with_points && (o.output == Output::kY || o.output == Output::kDx)) {
      AddPoints(impl, c, ref, o, item, &m);
    }
  }
  return cm;
}

}  // namespace lnv

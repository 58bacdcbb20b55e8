#include "harness/measure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "harness/families.h"
#include "harness/sweep_test_support.h"

namespace lnv {
namespace {

Case LargeMean(const ImplInfo& impl, std::int64_t rows) {
  FamilyParams p;
  p.norm = impl.norm;
  p.dtype = impl.x_dtype;
  p.param_dtype = impl.param_dtype;
  p.d = 32;
  p.rows = rows;
  return GenerateCase(*FindFamily("large_mean"), p);
}

CaseMeasure MeasureOn(const ImplInfo& impl, const Case& c) {
  JudgeOptions jo;
  jo.keep_elements = true;
  const Reference ref = ComputeReference(c);
  return Measure(impl, c, ref, JudgeWithReference(impl, c, ref, jo), true, 0);
}

TEST(UlpHistogram, QuantilesAreTheUpperEdgeOfTheirBin) {
  UlpHistogram h;
  for (int i = 0; i < 98; ++i) h.Add(0.25);
  h.Add(0.0);
  h.Add(3.0);
  EXPECT_EQ(h.total(), 100);
  EXPECT_EQ(h.zeros, 1);
  const double q50 = h.Quantile(0.5);
  EXPECT_GE(q50, 0.25);
  EXPECT_LE(q50, 0.25 * std::exp2(1.0 / UlpHistogram::kBinsPerOctave));
  EXPECT_GE(h.Quantile(1.0), 3.0);
  EXPECT_EQ(h.Quantile(0.01), 0.0);  // the exact element comes first
}

TEST(UlpHistogram, NonFiniteErrorsAreCountedApartAndRankLast) {
  UlpHistogram h;
  h.Add(0.5);
  h.Add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(h.nonfinite, 1);
  EXPECT_TRUE(std::isinf(h.Quantile(1.0)));
  UlpHistogram m;
  m.Merge(h);
  m.Merge(h);
  EXPECT_EQ(m.total(), 4);
}

// AddAll counts as the histogram's definition says (bin floor(log2(u) k),
// zeros and non-finite apart), over values whose bins span thousands (both
// signs of log2, with repeats), added to a histogram that already has bins,
// and the same whether the values come in one call or one at a time.
TEST(UlpHistogram, AddAllCountsEveryValueInItsBin) {
  std::vector<double> ulps = {0.0, std::numeric_limits<double>::infinity(),  0.5,       0.5,
                              3.0, std::numeric_limits<double>::quiet_NaN(), 0x1p-1000, 0x1p+900};
  for (int i = 0; i < 2000; ++i) ulps.push_back(std::ldexp(1.0 + (i % 7) / 8.0, i % 97 - 48));
  std::map<int, std::int64_t> bins = {
      {static_cast<int>(std::floor(std::log2(7.0) * UlpHistogram::kBinsPerOctave)), 1}};
  std::int64_t zeros = 0, nonfinite = 0;
  for (double u : ulps) {
    if (u == 0.0) {
      ++zeros;
    } else if (!std::isfinite(u)) {
      ++nonfinite;
    } else {
      ++bins[static_cast<int>(std::floor(std::log2(u) * UlpHistogram::kBinsPerOctave))];
    }
  }
  UlpHistogram all, each;
  all.Add(7.0);
  each.Add(7.0);
  all.AddAll(ulps);
  all.AddAll({});
  for (double u : ulps) each.Add(u);
  EXPECT_EQ(all.zeros, zeros);
  EXPECT_EQ(all.nonfinite, nonfinite);
  EXPECT_EQ(all.bins, bins);
  EXPECT_EQ(each.bins, bins);
  EXPECT_GT(bins.size(), 100u);
}

TEST(RowKappa, IsOneForAZeroMeanRowAndGrowsWithTheMean) {
  Case c;
  c.norm = Norm::kLayerNorm;
  c.dtype = c.param_dtype = DType::kF64;
  c.d = 2;
  c.rows = 2;
  c.eps = 0x1p-20;
  c.x = {-1, 1, 99, 101};  // mu 0, sigma 1; mu 100, sigma 1
  const Reference ref = ComputeReference(c);
  EXPECT_DOUBLE_EQ(RowKappa(c, ref, 0), 1.0);
  EXPECT_DOUBLE_EQ(RowKappa(c, ref, 1), std::hypot(1.0, 100.0));
}

TEST(Measure, AStableKernelsRowsStayUnderTheirBoundsAndTheSqrtKBoundIsTighter) {
  const ImplInfo& impl = Kernel("f32/two_pass/cpu-scalar");
  const CaseMeasure m = MeasureOn(impl, LargeMean(impl, 12));
  EXPECT_EQ(m.verdict, Verdict::kPass);
  for (Output o : {Output::kY, Output::kDx}) {
    const OutputMeasure& om = m.outputs[static_cast<int>(o)];
    ASSERT_FALSE(om.points.empty()) << OutputName(o);
    for (const RowPoint& p : om.points) {
      EXPECT_EQ(p.kind, PointKind::kJudged);
      EXPECT_FALSE(p.failed);
      EXPECT_LE(p.err, p.bound);  // each element's error is under its bound, so the row max too
      EXPECT_LE(p.pbound, p.bound);
      EXPECT_GE(p.kappa, 1.0);
    }
    EXPECT_TRUE(om.worst.has_value());
    EXPECT_GT(om.hist.total(), 0);
  }
}

TEST(Measure, TheOnePassControlBreaksItsBoundOnLargeKappaRows) {
  const ImplInfo& impl = Kernel("f32/one_pass/cpu-scalar");
  const CaseMeasure m = MeasureOn(impl, LargeMean(impl, 12));
  EXPECT_TRUE(IsFailure(m.verdict));
  double smallest_failing_kappa = std::numeric_limits<double>::infinity();
  for (const RowPoint& p : m.outputs[static_cast<int>(Output::kY)].points) {
    if (p.failed) smallest_failing_kappa = std::min(smallest_failing_kappa, p.kappa);
  }
  EXPECT_GT(smallest_failing_kappa, 1.0);  // kappa = 1 rows are fine even for one-pass
  EXPECT_LT(smallest_failing_kappa, 1e7);
  const OutputMeasure& y = m.outputs[static_cast<int>(Output::kY)];
  ASSERT_TRUE(y.worst.has_value());
  EXPECT_TRUE(IsFailure(y.worst->verdict));
  EXPECT_GE(y.worst_row, 0);
}

TEST(Measure, RowsOutsideTheClaimedRangeArePointsWithoutAnError) {
  const ImplInfo& impl = Kernel("f32/two_pass/cpu-scalar");
  FamilyParams p;
  p.d = 16;
  p.rows = 8;
  const Case c = GenerateCase(*FindFamily("huge_magnitude"), p);
  const CaseMeasure m = MeasureOn(impl, c);
  int out_of_range = 0;
  for (const RowPoint& pt : m.outputs[static_cast<int>(Output::kY)].points) {
    if (pt.kind == PointKind::kOutOfRange) {
      ++out_of_range;
      EXPECT_TRUE(std::isnan(pt.err));
    }
  }
  EXPECT_GT(out_of_range, 0);
  EXPECT_GT(m.rows_out_of_range, 0);
}

}  // namespace
}  // namespace lnv

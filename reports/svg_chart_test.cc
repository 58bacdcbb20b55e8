#include "reports/svg_chart.h"

#include <gtest/gtest.h>

#include <limits>

namespace lnv::report {
namespace {

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

Chart TwoSeries() {
  Chart c;
  c.id = "c1";
  c.title = "error vs kappa";
  c.description = "test chart";
  c.x = Axis("kappa", Scale::kLog10);
  c.y = Axis("error (row ulps)", Scale::kLog10);
  ChartSeries m = Series("measured", kPalette[0], Marker::kCircle);
  m.points = {{1, 0.5, "a"}, {10, 2, "b"}, {100, 30, "c"}};
  ChartSeries b = Series("bound", kPalette[1], Marker::kNone, true);
  b.points = {{1, 1, ""}, {10, 10, ""}, {100, 100, ""}};
  c.series = {m, b};
  c.hlines = {{1.0, "use = 1"}};
  return c;
}

TEST(RenderChart, HasAViewBoxTitleAxisLabelsLegendAndOnePointPerDatum) {
  const std::string svg = RenderChart(TwoSeries());
  EXPECT_NE(svg.find("<figure class=\"chart\" id=\"c1\">"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
  EXPECT_NE(svg.find("<title id=\"c1-t\">error vs kappa</title>"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"al\""), 2);
  EXPECT_NE(svg.find(">measured</text>"), std::string::npos);
  EXPECT_NE(svg.find(">bound</text>"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"pt"), 3);  // the line series draws no markers
  EXPECT_EQ(Count(svg, "<polyline class=\"ln\""), 1);
  EXPECT_EQ(PointCount(TwoSeries()), 6);
}

TEST(RenderChart, ValuesALogAxisCannotShowAreDrawnOnItsEdgeNotDropped) {
  Chart c = TwoSeries();
  c.series[0].points.push_back({1000, std::numeric_limits<double>::infinity(), "nonfinite"});
  c.series[0].points.push_back({1000, 0.0, "exact"});
  const std::string svg = RenderChart(c);
  EXPECT_EQ(Count(svg, "class=\"pt off\""), 2);
  EXPECT_NE(svg.find("off the axis"), std::string::npos);  // and the legend says so
}

TEST(RenderChart, ALineConnectsOnlyThePointsOfOneGroup) {
  Chart c = TwoSeries();
  c.series[1].points[2].group = 1;  // a third point in a group of its own: no line to it
  c.series[1].points.push_back({1000, 1000, "", 1});
  EXPECT_EQ(Count(RenderChart(c), "<polyline class=\"ln\""), 2);
}

TEST(RenderChart, TextIsEscaped) {
  Chart c = TwoSeries();
  c.title = "<script>&";
  const std::string svg = RenderChart(c);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;&amp;"), std::string::npos);
}

TEST(RenderChart, UsesNoExternalUrl) {
  const std::string svg = RenderChart(TwoSeries());
  EXPECT_EQ(svg.find("http"), std::string::npos);
  EXPECT_EQ(svg.find("url("), std::string::npos);
}

TEST(ShortNumber, WritesPowersOfTenShortAndInfinityAsAWord) {
  EXPECT_EQ(ShortNumber(1e7), "1e7");
  EXPECT_EQ(ShortNumber(0.5), "0.5");
  EXPECT_EQ(ShortNumber(100), "100");
  EXPECT_EQ(ShortNumber(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(ShortNumber(0), "0");
}

}  // namespace
}  // namespace lnv::report

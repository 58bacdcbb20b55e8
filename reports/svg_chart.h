// Self-contained SVG charts for the report: a figure with an inline <svg>
// (viewBox, <title>, <desc>, axes with ticks and labels, a legend), data
// points as elements of class "pt" (each with a <title> tooltip), lines of
// class "ln". Values a log axis cannot show (zero, non-finite, beyond the
// range) are drawn on the axis edge with a distinct marker, never dropped.
#ifndef LNV_REPORTS_SVG_CHART_H_
#define LNV_REPORTS_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace lnv::report {

// The Okabe-Ito palette (colour-blind safe); yellow is left out (too light on white).
inline constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#000000"};
inline constexpr int kPaletteSize = 7;
inline constexpr const char* kGrey = "#7a7a7a";

enum class Scale {
  kLinear,
  kLog10,        // values > 0, ticks at powers of ten
  kLog2Exponent  // values are already log2 of something; ticks labelled 2^k
};

struct ChartAxis {
  std::string label;
  Scale scale = Scale::kLinear;
  double min = 0.0, max = 0.0;  // used when fixed; else from the data
  bool fixed = false;
  // Replaces the computed ticks (e.g. the bins of a histogram).
  std::vector<std::pair<double, std::string>> ticks;
};

enum class Marker { kCircle, kSquare, kTriangle, kDiamond, kCross, kPlus, kNone };

struct ChartPoint {
  double x = 0.0, y = 0.0;
  std::string tip;  // tooltip text
  int group = 0;    // a line connects only the points of one group (e.g. one case's rows)
};

struct ChartSeries {
  std::string name;
  std::string color = kPalette[0];
  Marker marker = Marker::kCircle;
  bool line = false;  // connect the points of each group in x order
  bool dashed = false;
  bool hollow = false;
  bool bars =
      false;  // a bar from the axis floor up to y, bar_width wide, centred on x + bar_offset
  double bar_width = 0.8, bar_offset = 0.0;
  std::vector<ChartPoint> points;
};

struct ChartHLine {
  double y = 1.0;
  std::string label;
};

struct ChartBand {  // a shaded x range, e.g. "outside the claimed range"
  double x0 = 0.0, x1 = 0.0;
  std::string label;
};

struct Chart {
  std::string id;           // unique in the page
  std::string title;        // shown and in <title>
  std::string description;  // <desc> and the caption
  ChartAxis x, y;
  std::vector<ChartSeries> series;
  std::vector<ChartHLine> hlines;
  std::vector<ChartBand> bands;
};

ChartAxis Axis(std::string label, Scale scale);
ChartAxis FixedAxis(std::string label, Scale scale, double min, double max,
                    std::vector<std::pair<double, std::string>> ticks = {});
ChartSeries Series(std::string name, const char* color, Marker marker, bool line = false,
                   bool dashed = false);

// Number of data points over every series (points and bars).
int PointCount(const Chart& c);

// <figure class="chart" id=...><svg ...>...</svg><figcaption>...</figcaption></figure>
std::string RenderChart(const Chart& c);

// Short numbers for labels: 3 significant digits, powers of ten as 1e7,
// infinity as "inf".
std::string ShortNumber(double v);

std::string HtmlEscape(const std::string& s);

}  // namespace lnv::report

#endif  // LNV_REPORTS_SVG_CHART_H_

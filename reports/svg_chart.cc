#include "reports/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace lnv::report {
namespace {

constexpr double kW = 520;    // viewBox width
constexpr double kLeft = 66;  // plot area
constexpr double kRight = 24;
constexpr double kTop = 30;
constexpr double kPlotH = 210;
constexpr double kLegendRow = 16;
constexpr int kMaxLogDecades = 16;

std::string F(double v) {  // a coordinate
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// The data range of an axis and how to map a value onto [0, 1].
struct Mapped {
  Scale scale = Scale::kLinear;
  double lo = 0, hi = 1;  // in transformed units (log10 for kLog10)
  double step = 1;        // tick step in transformed units
  bool Valid(double v) const { return std::isfinite(v) && (scale != Scale::kLog10 || v > 0); }
  double T(double v) const { return scale == Scale::kLog10 ? std::log10(v) : v; }
  double Frac(double v) const { return (T(v) - lo) / (hi - lo); }
};

double NiceStep(double span, int target) {
  const double raw = span / std::max(1, target);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

Mapped MapAxis(const ChartAxis& a, const std::vector<double>& values, bool include_zero) {
  Mapped m;
  m.scale = a.scale;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  if (a.fixed) {
    lo = m.T(a.min);
    hi = m.T(a.max);
  } else {
    for (double v : values) {
      if (!m.Valid(v)) continue;
      lo = std::min(lo, m.T(v));
      hi = std::max(hi, m.T(v));
    }
    if (!(lo <= hi)) lo = hi = m.scale == Scale::kLog10 ? 0 : 0;
    if (include_zero && m.scale != Scale::kLog10) lo = std::min(lo, 0.0);
  }
  if (m.scale == Scale::kLog10) {
    lo = std::floor(lo);
    hi = std::ceil(hi);
    if (hi <= lo) hi = lo + 1;
    lo = std::max(lo, hi - kMaxLogDecades);
    const double decades = hi - lo;
    m.step = std::max(1.0, std::ceil(decades / 8));
  } else {
    if (hi <= lo) {
      hi = lo + 1;
      lo -= 1;
    }
    m.step = a.scale == Scale::kLog2Exponent ? std::max(1.0, NiceStep(hi - lo, 7))
                                             : NiceStep(hi - lo, 6);
    if (!a.fixed) {
      lo = std::floor(lo / m.step) * m.step;
      hi = std::ceil(hi / m.step) * m.step;
    }
  }
  m.lo = lo;
  m.hi = hi;
  return m;
}

std::string TickLabel(const Mapped& m, double t) {
  if (m.scale == Scale::kLog10) return ShortNumber(std::pow(10.0, t));
  if (m.scale == Scale::kLog2Exponent) {
    char b[32];
    std::snprintf(b, sizeof b, "2^%g", t);
    return b;
  }
  return ShortNumber(t);
}

std::string MarkerSvg(Marker mk, double x, double y, const std::string& color, bool hollow,
                      const std::string& cls, const std::string& tip) {
  const std::string fill = hollow ? "#fff" : color;
  const std::string common =
      " class=\"" + cls + "\" fill=\"" + fill + "\" stroke=\"" + color + "\" stroke-width=\"1.2\"";
  const std::string t = tip.empty() ? "" : "<title>" + HtmlEscape(tip) + "</title>";
  const double s = 3.4;
  switch (mk) {
    case Marker::kNone:
    case Marker::kCircle:
      return "<circle cx=\"" + F(x) + "\" cy=\"" + F(y) + "\" r=\"" + F(s - 0.4) + "\"" + common +
             ">" + t + "</circle>";
    case Marker::kSquare:
      return "<rect x=\"" + F(x - s + 0.5) + "\" y=\"" + F(y - s + 0.5) + "\" width=\"" +
             F(2 * s - 1) + "\" height=\"" + F(2 * s - 1) + "\"" + common + ">" + t + "</rect>";
    case Marker::kTriangle:
      return "<path d=\"M" + F(x) + " " + F(y - s - 0.6) + "L" + F(x + s) + " " + F(y + s - 0.6) +
             "L" + F(x - s) + " " + F(y + s - 0.6) + "Z\"" + common + ">" + t + "</path>";
    case Marker::kDiamond:
      return "<path d=\"M" + F(x) + " " + F(y - s - 0.6) + "L" + F(x + s) + " " + F(y) + "L" +
             F(x) + " " + F(y + s + 0.6) + "L" + F(x - s) + " " + F(y) + "Z\"" + common + ">" + t +
             "</path>";
    case Marker::kCross:
      return "<path d=\"M" + F(x - s) + " " + F(y - s) + "L" + F(x + s) + " " + F(y + s) + "M" +
             F(x - s) + " " + F(y + s) + "L" + F(x + s) + " " + F(y - s) + "\" class=\"" + cls +
             "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.6\">" + t + "</path>";
    case Marker::kPlus:
      return "<path d=\"M" + F(x - s) + " " + F(y) + "L" + F(x + s) + " " + F(y) + "M" + F(x) +
             " " + F(y - s) + "L" + F(x) + " " + F(y + s) + "\" class=\"" + cls +
             "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.6\">" + t + "</path>";
  }
  return "";
}

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += ch;
    }
  }
  return o;
}

std::string ShortNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  const double l = std::log10(a);
  char b[32];
  if (std::fabs(l - std::round(l)) < 1e-9 && (a >= 1e4 || a < 1e-2)) {
    std::snprintf(b, sizeof b, "%s1e%d", v < 0 ? "-" : "", static_cast<int>(std::round(l)));
  } else if (a >= 1e4 || a < 1e-3) {
    std::snprintf(b, sizeof b, "%.2e", v);
  } else {
    std::snprintf(b, sizeof b, "%.3g", v);
  }
  return b;
}

ChartAxis Axis(std::string label, Scale scale) {
  ChartAxis a;
  a.label = std::move(label);
  a.scale = scale;
  return a;
}

ChartAxis FixedAxis(std::string label, Scale scale, double min, double max,
                    std::vector<std::pair<double, std::string>> ticks) {
  ChartAxis a = Axis(std::move(label), scale);
  a.min = min;
  a.max = max;
  a.fixed = true;
  a.ticks = std::move(ticks);
  return a;
}

ChartSeries Series(std::string name, const char* color, Marker marker, bool line, bool dashed) {
  ChartSeries s;
  s.name = std::move(name);
  s.color = color;
  s.marker = marker;
  s.line = line;
  s.dashed = dashed;
  return s;
}

int PointCount(const Chart& c) {
  int n = 0;
  for (const ChartSeries& s : c.series) n += static_cast<int>(s.points.size());
  return n;
}

namespace {

// The plot area and the two axes' mappings, shared by every part of a chart.
struct Frame {
  Mapped mx, my;
  double plot_w = kW - kLeft - kRight;
  double x0 = kLeft, y0 = kTop + kPlotH;  // the plot's bottom-left corner
  double px(double t) const { return x0 + plot_w * std::clamp(t, 0.0, 1.0); }
  double py(double t) const { return y0 - kPlotH * std::clamp(t, 0.0, 1.0); }
};

Frame FrameOf(const Chart& c) {
  std::vector<double> xs, ys;
  bool any_bars = false;
  for (const ChartSeries& s : c.series) {
    any_bars = any_bars || s.bars;
    for (const ChartPoint& p : s.points) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  }
  for (const ChartHLine& h : c.hlines) ys.push_back(h.y);
  Frame f;
  f.mx = MapAxis(c.x, xs, false);
  f.my = MapAxis(c.y, ys, any_bars);
  return f;
}

// Whether some marker lies off the axis (then the legend explains the arrows).
bool AnyOffAxis(const Chart& c, const Frame& f) {
  for (const ChartSeries& s : c.series) {
    if (s.bars) continue;
    for (const ChartPoint& p : s.points) {
      const double fy = f.my.Valid(p.y) ? f.my.Frac(p.y) : 2.0;
      if (!f.my.Valid(p.y) || fy > 1 || fy < 0) return true;
    }
  }
  return false;
}

// Bands (behind everything), grid, ticks, frame and axis labels.
std::string AxesSvg(const Chart& c, const Frame& f) {
  std::string o;
  for (const ChartBand& b : c.bands) {
    const double a = f.px(f.mx.Frac(b.x0)), z = f.px(f.mx.Frac(b.x1));
    o += "<rect class=\"band\" x=\"" + F(std::min(a, z)) + "\" y=\"" + F(kTop) + "\" width=\"" +
         F(std::fabs(z - a)) + "\" height=\"" + F(kPlotH) + "\"><title>" + HtmlEscape(b.label) +
         "</title></rect>";
  }
  o += "<g class=\"axis\">";
  auto xticks = c.x.ticks;
  if (xticks.empty()) {
    for (double t = f.mx.lo; t <= f.mx.hi + 1e-9; t += f.mx.step) {
      xticks.push_back({t, TickLabel(f.mx, t)});
    }
  } else {
    for (auto& [v, label] : xticks) v = f.mx.T(v);
  }
  for (const auto& [t, label] : xticks) {
    const double x = f.px((t - f.mx.lo) / (f.mx.hi - f.mx.lo));
    o += "<line class=\"grid\" x1=\"" + F(x) + "\" y1=\"" + F(kTop) + "\" x2=\"" + F(x) +
         "\" y2=\"" + F(f.y0) + "\"/>";
    o += "<text x=\"" + F(x) + "\" y=\"" + F(f.y0 + 14) + "\" text-anchor=\"middle\">" +
         HtmlEscape(label) + "</text>";
  }
  auto yticks = c.y.ticks;
  if (yticks.empty()) {
    for (double t = f.my.lo; t <= f.my.hi + 1e-9; t += f.my.step) {
      yticks.push_back({t, TickLabel(f.my, t)});
    }
  } else {
    for (auto& [v, label] : yticks) v = f.my.T(v);
  }
  for (const auto& [t, label] : yticks) {
    const double y = f.py((t - f.my.lo) / (f.my.hi - f.my.lo));
    o += "<line class=\"grid\" x1=\"" + F(f.x0) + "\" y1=\"" + F(y) + "\" x2=\"" +
         F(f.x0 + f.plot_w) + "\" y2=\"" + F(y) + "\"/>";
    o += "<text x=\"" + F(f.x0 - 5) + "\" y=\"" + F(y + 3.5) + "\" text-anchor=\"end\">" +
         HtmlEscape(label) + "</text>";
  }
  o += "<rect class=\"frame\" x=\"" + F(f.x0) + "\" y=\"" + F(kTop) + "\" width=\"" + F(f.plot_w) +
       "\" height=\"" + F(kPlotH) + "\"/>";
  o += "<text class=\"al\" x=\"" + F(f.x0 + f.plot_w / 2) + "\" y=\"" + F(f.y0 + 32) +
       "\" text-anchor=\"middle\">" + HtmlEscape(c.x.label) + "</text>";
  o += "<text class=\"al\" transform=\"translate(13 " + F(kTop + kPlotH / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + HtmlEscape(c.y.label) + "</text>";
  o += "</g>";
  return o;
}

// Reference lines, then each line series as polylines (broken at group
// changes and at values the axis cannot show).
std::string LinesSvg(const Chart& c, const Frame& f) {
  std::string o;
  for (const ChartHLine& h : c.hlines) {
    if (!f.my.Valid(h.y)) continue;
    const double y = f.py(f.my.Frac(h.y));
    o += "<line class=\"ref\" x1=\"" + F(f.x0) + "\" y1=\"" + F(y) + "\" x2=\"" +
         F(f.x0 + f.plot_w) + "\" y2=\"" + F(y) + "\"><title>" + HtmlEscape(h.label) +
         "</title></line>";
  }
  for (const ChartSeries& s : c.series) {
    if (!s.line) continue;
    std::vector<const ChartPoint*> pts;
    for (const ChartPoint& p : s.points) pts.push_back(&p);
    std::stable_sort(pts.begin(), pts.end(), [](const ChartPoint* a, const ChartPoint* b) {
      return a->group != b->group ? a->group < b->group : a->x < b->x;
    });
    std::string seg;
    int group = pts.empty() ? 0 : pts.front()->group;
    auto flush = [&] {
      if (seg.find(' ') != std::string::npos) {
        o += "<polyline class=\"ln\" fill=\"none\" stroke=\"" + s.color +
             "\" stroke-width=\"1.6\"" + (s.dashed ? " stroke-dasharray=\"5 3\"" : "") +
             " points=\"" + seg + "\"/>";
      }
      seg.clear();
    };
    for (const ChartPoint* p : pts) {
      if (p->group != group) {
        flush();
        group = p->group;
      }
      if (!f.mx.Valid(p->x) || !f.my.Valid(p->y)) {
        flush();
        continue;
      }
      if (!seg.empty()) seg += ' ';
      seg += F(f.px(f.mx.Frac(p->x))) + "," + F(f.py(f.my.Frac(p->y)));
    }
    flush();
  }
  return o;
}

// One point of a series: a bar, a marker, or an arrow on the edge for a
// value off the axis.
std::string PointSvg(const ChartSeries& s, const ChartPoint& p, const Frame& f) {
  if (s.bars) {
    const double xl = f.px(f.mx.Frac(p.x + s.bar_offset - s.bar_width / 2));
    const double xr = f.px(f.mx.Frac(p.x + s.bar_offset + s.bar_width / 2));
    const double yt = f.py(f.my.Valid(p.y) ? f.my.Frac(p.y) : 0);
    return "<rect class=\"pt bar\" x=\"" + F(xl) + "\" y=\"" + F(yt) + "\" width=\"" +
           F(std::max(0.5, xr - xl)) + "\" height=\"" + F(std::max(0.0, f.y0 - yt)) + "\" fill=\"" +
           s.color + "\"><title>" + HtmlEscape(p.tip) + "</title></rect>";
  }
  if (s.marker == Marker::kNone) return "";
  const double fx = f.mx.Valid(p.x) ? f.mx.Frac(p.x) : (p.x > 0 ? 2.0 : -1.0);
  const double fy = f.my.Valid(p.y) ? f.my.Frac(p.y) : (p.y > 0 ? 2.0 : -1.0);
  const bool off = fy > 1 || fy < 0 || fx > 1 || fx < 0;
  if (!off) return MarkerSvg(s.marker, f.px(fx), f.py(fy), s.color, s.hollow, "pt", p.tip);
  // On the edge, pointing where the value is.
  const double x = f.px(fx), y = f.py(fy);
  const bool up = fy > 1;
  const std::string d = up ? "M" + F(x) + " " + F(y - 1) + "L" + F(x + 4) + " " + F(y + 6) + "L" +
                                 F(x - 4) + " " + F(y + 6) + "Z"
                           : "M" + F(x) + " " + F(y + 1) + "L" + F(x + 4) + " " + F(y - 6) + "L" +
                                 F(x - 4) + " " + F(y - 6) + "Z";
  return "<path class=\"pt off\" d=\"" + d + "\" fill=\"" + s.color +
         "\" stroke=\"#000\" stroke-width=\"0.6\"><title>" +
         HtmlEscape(p.tip + (up ? " (above the axis)" : " (at or below the axis floor)")) +
         "</title></path>";
}

std::string PointsSvg(const Chart& c, const Frame& f) {
  std::string o;
  for (const ChartSeries& s : c.series) {
    o += "<g class=\"series\" data-name=\"" + HtmlEscape(s.name) + "\">";
    for (const ChartPoint& p : s.points) {
      if (!std::isnan(p.x)) o += PointSvg(s, p, f);
    }
    o += "</g>";
  }
  return o;
}

// The legend, two columns under the plot: series, reference lines, bands,
// and the off-axis arrow when some point needs it.
std::string LegendSvg(const Chart& c, const Frame& f, bool any_off) {
  std::string o = "<g class=\"legend\">";
  int item = 0;
  auto slot = [&](double* lx, double* ly) {
    *lx = f.x0 + (item % 2) * (f.plot_w / 2);
    *ly = f.y0 + 48 + (item / 2) * kLegendRow;
    ++item;
  };
  for (const ChartSeries& s : c.series) {
    double lx, ly;
    slot(&lx, &ly);
    if (s.bars) {
      o += "<rect x=\"" + F(lx) + "\" y=\"" + F(ly - 5) + "\" width=\"16\" height=\"8\" fill=\"" +
           s.color + "\"/>";
    } else {
      if (s.line) {
        o += "<line x1=\"" + F(lx) + "\" y1=\"" + F(ly - 1) + "\" x2=\"" + F(lx + 18) + "\" y2=\"" +
             F(ly - 1) + "\" stroke=\"" + s.color + "\" stroke-width=\"1.6\"" +
             (s.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
      }
      if (s.marker != Marker::kNone) {
        o += MarkerSvg(s.marker, lx + 9, ly - 1, s.color, s.hollow, "lm", "");
      }
    }
    o += "<text x=\"" + F(lx + 23) + "\" y=\"" + F(ly + 3) + "\">" + HtmlEscape(s.name) + "</text>";
  }
  for (const ChartHLine& h : c.hlines) {
    double lx, ly;
    slot(&lx, &ly);
    o += "<line class=\"ref\" x1=\"" + F(lx) + "\" y1=\"" + F(ly - 1) + "\" x2=\"" + F(lx + 18) +
         "\" y2=\"" + F(ly - 1) + "\"/><text x=\"" + F(lx + 23) + "\" y=\"" + F(ly + 3) + "\">" +
         HtmlEscape(h.label) + "</text>";
  }
  for (const ChartBand& b : c.bands) {
    double lx, ly;
    slot(&lx, &ly);
    o += "<rect class=\"band\" x=\"" + F(lx) + "\" y=\"" + F(ly - 6) +
         "\" width=\"18\" height=\"10\"/><text x=\"" + F(lx + 23) + "\" y=\"" + F(ly + 3) + "\">" +
         HtmlEscape(b.label) + "</text>";
  }
  if (any_off) {
    double lx, ly;
    slot(&lx, &ly);
    o += "<path d=\"M" + F(lx + 9) + " " + F(ly - 7) + "L" + F(lx + 13) + " " + F(ly + 1) + "L" +
         F(lx + 5) + " " + F(ly + 1) + "Z\" fill=\"#fff\" stroke=\"#000\" stroke-width=\"0.8\"/>" +
         "<text x=\"" + F(lx + 23) + "\" y=\"" + F(ly + 3) +
         "\">off the axis (non-finite, zero or beyond)</text>";
  }
  return o + "</g>";
}

}  // namespace

std::string RenderChart(const Chart& c) {
  const Frame f = FrameOf(c);
  const bool any_off = AnyOffAxis(c, f);
  int legend_items = static_cast<int>(c.series.size() + c.hlines.size() + c.bands.size());
  if (any_off) ++legend_items;
  const int legend_rows = (legend_items + 1) / 2;
  const double height = f.y0 + 40 + legend_rows * kLegendRow + 8;
  const std::string id = HtmlEscape(c.id);
  std::string o;
  o += "<figure class=\"chart\" id=\"" + id + "\">";
  o += "<svg viewBox=\"0 0 " + F(kW) + " " + F(height) + "\" role=\"img\" aria-labelledby=\"" + id +
       "-t " + id + "-d\">";
  o += "<title id=\"" + id + "-t\">" + HtmlEscape(c.title) + "</title>";
  o += "<desc id=\"" + id + "-d\">" + HtmlEscape(c.description) + "</desc>";
  o += "<text class=\"ct\" x=\"" + F(kW / 2) + "\" y=\"16\" text-anchor=\"middle\">" +
       HtmlEscape(c.title) + "</text>";
  o += AxesSvg(c, f) + LinesSvg(c, f) + PointsSvg(c, f) + LegendSvg(c, f, any_off);
  o += "</svg>";
  if (!c.description.empty()) {
    o += "<figcaption>" + HtmlEscape(c.description) + "</figcaption>";
  }
  o += "</figure>\n";
  return o;
}

}  // namespace lnv::report

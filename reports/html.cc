#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "harness/errors_json.h"
#include "reports/svg_chart.h"

namespace lnv::report {
namespace {

using nlohmann::json;

const char* const kOutputs[] = {"y", "mean", "rstd", "dx", "dgamma", "dbeta"};

std::string E(const std::string& s) { return HtmlEscape(s); }

std::string Str(const json& j, const char* key, const std::string& def = "") {
  if (!j.contains(key) || j[key].is_null()) return def;
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

double N(const json& j, const char* key) {
  return j.contains(key) ? ReadNum(j[key]) : std::nan("");
}

std::string Pow2(double log2v) {
  if (!std::isfinite(log2v)) return ShortNumber(log2v);
  char b[32];
  std::snprintf(b, sizeof b, "2^%.0f", std::round(log2v) + 0.0);  // + 0.0: no "2^-0"
  return b;
}

std::string KernelId(const std::string& name) {
  std::string o = "k-";
  for (char ch : name) o += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return o;
}

bool HasRole(const json& plan, int item, const char* role) {
  if (item < 0 || item >= static_cast<int>(plan.size())) return false;
  for (const json& r : plan[item]["roles"]) {
    if (r == role) return true;
  }
  return false;
}

std::string VerdictBadge(const json& impl) {
  const std::string v = Str(impl, "verdict");
  const std::string status = Str(impl, "status");
  const bool expected = impl.value("expected", false);
  std::string cls = expected ? "ok" : "bad";
  std::string text;
  if (status == "negative_control") {
    text = expected ? "caught" : "NOT caught";
  } else if (status == "observed") {
    text = v == "pass" ? "pass" : "findings recorded";
  } else {
    text = v;
  }
  return "<span class=\"badge " + cls + "\">" + (expected ? "&#10003; " : "&#10007; ") + E(text) +
         "</span>";
}

std::string ValidRangeText(const json& impl) {
  const json& vr = impl.value("valid_range", json::object());
  std::vector<std::string> parts;
  auto num = [&](const char* key) { return vr.contains(key) && vr[key].is_number(); };
  if (vr.contains("log2_mag_pass") && vr["log2_mag_pass"].is_array()) {
    parts.push_back("|x| " + Pow2(vr["log2_mag_pass"][0].get<double>()) + "&ndash;" +
                    Pow2(vr["log2_mag_pass"][1].get<double>()));
  }
  if (num("kappa_pass_max")) {
    parts.push_back("&kappa; &le; " + E(ShortNumber(vr["kappa_pass_max"].get<double>())));
  }
  if (num("kappa_fail_min")) {
    parts.push_back("<b>fails from &kappa; " + E(ShortNumber(vr["kappa_fail_min"].get<double>())) +
                    "</b>");
  }
  if (vr.contains("log2_mag_fail") && vr["log2_mag_fail"].is_array()) {
    parts.push_back("<b>fails at |x| " + Pow2(vr["log2_mag_fail"][0].get<double>()) + "&ndash;" +
                    Pow2(vr["log2_mag_fail"][1].get<double>()) + "</b>");
  }
  if (num("log2_mag_out_of_range_from")) {
    parts.push_back("claim ends by " + Pow2(vr["log2_mag_out_of_range_from"].get<double>()));
  }
  if (parts.empty()) return "&ndash;";
  std::string s;
  for (const std::string& p : parts) s += "<span class=\"vr\">" + p + "</span> ";
  return s;
}

// The output with the largest bound use (the one that decides the verdict when it passes).
std::string WorstOutput(const json& impl, const char* measure) {
  std::string best;
  double v = -1;
  for (const char* o : kOutputs) {
    if (!impl["outputs"].contains(o)) continue;
    const double x = N(impl["outputs"][o], measure);
    if (best.empty() || x > v || (std::isnan(v) && !std::isnan(x))) {
      best = o;
      v = x;
    }
  }
  return best;
}

std::string CaseLink(const json& out) {
  const std::string file = Str(out, "worst_case_file");
  const json& w = out.value("worst", json());
  std::string where;
  if (w.is_object()) {
    where = Str(w, "family") + ", case " + Str(w, "case");
    if (!w["row"].is_null()) where += ", row " + Str(w, "row");
  }
  if (file.empty()) return E(where.empty() ? "-" : where);
  return "<a href=\"" + E(file) + "\">" + E(where) + "</a>";
}

// ---- Charts ----

struct Pt {
  double kappa, log2_mag, err, bound, pbound;
  std::string kind;
  bool failed;
  int item, row;
};

std::vector<Pt> Points(const json& out) {
  std::vector<Pt> v;
  if (!out.contains("points")) return v;
  for (const json& r : out["points"]["rows"]) {
    v.push_back({ReadNum(r[0]), ReadNum(r[1]), ReadNum(r[2]), ReadNum(r[3]), ReadNum(r[4]),
                 r[5].get<std::string>(), r[6].get<bool>(), r[7].get<int>(), r[8].get<int>()});
  }
  return v;
}

std::string PointTip(const Pt& p, const json& plan, const char* xname) {
  const std::string fam =
      p.item >= 0 && p.item < static_cast<int>(plan.size()) ? Str(plan[p.item], "family") : "?";
  std::string s = fam + " case " + std::to_string(p.item) + " row " + std::to_string(p.row) + ": ";
  s += std::string(xname) == "kappa" ? "kappa " + ShortNumber(p.kappa)
                                     : "max|x| 2^" + ShortNumber(std::round(p.log2_mag * 10) / 10);
  s += ", error " + ShortNumber(p.err) + ", bound " + ShortNumber(p.bound) + ", probabilistic " +
       ShortNumber(p.pbound) + " (row ulps)";
  if (p.failed) s += ", BOUND BROKEN";
  return s;
}

const char* kYLabelErr = "error (row ulps)";

// Error (and the two bounds) vs kappa or magnitude, for one output.
bool ErrorChart(const json& impl, const json& plan, const char* output, bool by_kappa,
                Chart* chart) {
  if (!impl["outputs"].contains(output)) return false;
  const std::string name = Str(impl, "name");
  const char* role = by_kappa ? "kappa" : "magnitude";
  ChartSeries measured = Series("measured", kPalette[0], Marker::kCircle);
  ChartSeries broken = Series("measured, bound broken", kPalette[1], Marker::kCross);
  ChartSeries bound = Series("bound (deterministic)", kPalette[1], Marker::kNone, true);
  ChartSeries pbound = Series("statistical tier (sqrt k)", kPalette[4], Marker::kNone, true, true);
  double oor_from = std::numeric_limits<double>::infinity(), x_max = -oor_from;
  for (const Pt& p : Points(impl["outputs"][output])) {
    if (!HasRole(plan, p.item, role)) continue;
    const double x = by_kappa ? p.kappa : p.log2_mag;
    if (std::isnan(x)) continue;
    x_max = std::max(x_max, x);
    if (p.kind == "out_of_range") {
      oor_from = std::min(oor_from, x);
      continue;
    }
    const std::string tip = PointTip(p, plan, by_kappa ? "kappa" : "mag");
    (p.failed ? broken : measured).points.push_back({x, p.err, tip});
    // Against kappa, one line per case (its rows in order of kappa); against
    // magnitude, one line across the cases, which sweep it together.
    const int group = by_kappa ? p.item : 0;
    if (std::isfinite(x)) {
      bound.points.push_back({x, p.bound, "deterministic bound " + ShortNumber(p.bound), group});
      pbound.points.push_back({x, p.pbound, "probabilistic bound " + ShortNumber(p.pbound), group});
    }
  }
  if (measured.points.empty() && broken.points.empty()) return false;
  chart->id = KernelId(name) + "-" + output + (by_kappa ? "-kappa" : "-mag");
  chart->title = std::string(output) + (by_kappa ? " error vs kappa" : " error vs magnitude");
  chart->description =
      by_kappa ? std::string(
                     "Each mark is one row of the large_mean family (kappa = sqrt(1 + "
                     "mu^2/sigma^2), 1 to 1e7). Lines: the bound the kernel is held to, "
                     "and the statistical tier's sqrt(k) form (Higham & Mary 2019, lambda from "
                     "a false-alarm budget, about 9-10).")
               : std::string(
                     "Each mark is one row of the tiny_magnitude, standard_normal and "
                     "huge_magnitude families, by its largest |x|. Shaded: rows outside "
                     "the kernel's claimed range, where only the NaN contract is judged.");
  chart->x = Axis(by_kappa ? "kappa (mean-to-spread ratio)" : "max |x| of the row",
                  by_kappa ? Scale::kLog10 : Scale::kLog2Exponent);
  chart->y = Axis(kYLabelErr, Scale::kLog10);
  chart->series.push_back(std::move(bound));
  chart->series.push_back(std::move(pbound));
  chart->series.push_back(std::move(measured));
  if (!broken.points.empty()) chart->series.push_back(std::move(broken));
  if (std::isfinite(oor_from)) {
    chart->bands.push_back({oor_from - 0.5, x_max + 0.5, "outside the claimed range"});
  }
  return true;
}

bool UseByDChart(const json& impl, Chart* chart) {
  const json& t = impl.value("use_by_d", json::object());
  if (!t.contains("rows") || t["rows"].empty()) return false;
  const std::string name = Str(impl, "name");
  const Marker markers[] = {Marker::kCircle,  Marker::kSquare, Marker::kTriangle,
                            Marker::kDiamond, Marker::kCross,  Marker::kPlus};
  for (int o = 0; o < 6; ++o) {
    ChartSeries s = Series(kOutputs[o], kPalette[o], markers[o], true);
    for (const json& row : t["rows"]) {
      if (row[o + 1].is_null()) continue;
      const double d = row[0].get<double>(), u = ReadNum(row[o + 1]);
      s.points.push_back({d, u,
                          std::string(kOutputs[o]) + " at d = " + ShortNumber(d) + ": bound use " +
                              ShortNumber(u)});
    }
    if (!s.points.empty()) chart->series.push_back(std::move(s));
  }
  if (chart->series.empty()) return false;
  chart->id = KernelId(name) + "-use-d";
  chart->title = "max bound use vs d";
  chart->description =
      "Max error / bound over standard-normal rows at each d; above 1 the bound "
      "is broken.";
  chart->x = Axis("d (row length)", Scale::kLog10);
  chart->y = Axis("max error / bound", Scale::kLog10);
  chart->hlines.push_back({1.0, "the bound (use = 1)"});
  return true;
}

bool HistogramChart(const json& impl, Chart* chart) {
  const std::string name = Str(impl, "name");
  // Whole octaves (bin b of 1/k octave lies in octave floor(b / k)), clamped
  // to [kLowest, kHighest]: the end bars hold everything beyond them.
  constexpr int kLowest = -10, kHighest = 20;
  std::map<std::string, std::map<int, double>> frac;
  std::vector<std::pair<std::string, std::pair<double, double>>> zero_nonfinite;  // y, then dx
  int lo = kHighest, hi = kLowest;
  for (const char* o : {"y", "dx"}) {
    if (!impl["outputs"].contains(o)) continue;
    const json& h = impl["outputs"][o]["histogram"];
    const int k = h.value("bins_per_octave", 8);
    double total = h.value("zeros", 0.0) + h.value("nonfinite", 0.0);
    for (const json& b : h["bins"]) total += b[1].get<double>();
    if (total <= 0) continue;
    for (const json& b : h["bins"]) {
      const int oct =
          std::clamp(static_cast<int>(std::floor(b[0].get<double>() / k)), kLowest, kHighest);
      frac[o][oct] += b[1].get<double>() / total;
      lo = std::min(lo, oct);
      hi = std::max(hi, oct);
    }
    zero_nonfinite.push_back(
        {o, {h.value("zeros", 0.0) / total, h.value("nonfinite", 0.0) / total}});
  }
  if (zero_nonfinite.empty()) return false;
  if (hi < lo) lo = hi = 0;
  // Category positions: 0 = exact, 1 + (oct - lo) = an octave, last = NaN/inf.
  const int n_oct = hi - lo + 1;
  auto octave_label = [&](int oct) {
    std::string l = "2^" + std::to_string(oct);
    if (oct == kLowest) return "<" + l;
    if (oct == kHighest) return "\u2265" + l;
    return l;
  };
  std::vector<std::pair<double, std::string>> ticks = {{0, "0"}};
  // About six octave labels, none next to the "0" and "NaN" ones.
  const int label_every = std::max(1, (n_oct + 5) / 6);
  for (int oct = lo; oct <= hi; ++oct) {
    const double at = 1.0 + oct - lo;
    const bool crowded = label_every > 1 && (at < 2 || at > n_oct - 1);
    if ((oct - lo) % label_every == 0 && !crowded) ticks.push_back({at, octave_label(oct)});
  }
  ticks.push_back({n_oct + 1.0, "NaN"});
  const int n_series = static_cast<int>(zero_nonfinite.size());
  int si = 0;
  for (const auto& [o, zn] : zero_nonfinite) {
    ChartSeries s = Series(o, kPalette[o == "y" ? 0 : 1], Marker::kNone);
    s.bars = true;
    s.bar_width = 0.8 / n_series;
    s.bar_offset = (si - (n_series - 1) / 2.0) * s.bar_width;
    ++si;
    auto pct = [](double f) { return ShortNumber(100 * f) + "%"; };
    if (zn.first > 0) s.points.push_back({0, zn.first, o + ": exact (0 ulp) " + pct(zn.first)});
    for (const auto& [oct, f] : frac[o]) {
      s.points.push_back({1.0 + oct - lo, f, o + ": " + octave_label(oct) + " ulp " + pct(f)});
    }
    if (zn.second > 0) {
      s.points.push_back({n_oct + 1.0, zn.second, o + ": NaN/inf mismatch " + pct(zn.second)});
    }
    if (!s.points.empty()) chart->series.push_back(std::move(s));
  }
  if (chart->series.empty()) return false;
  chart->id = KernelId(name) + "-hist";
  chart->title = "ULP histogram (y, dx)";
  chart->description =
      "Share of elements by error in ulps of each element's exact value, one bar "
      "per octave [2^k, 2^(k+1)); 0 = exactly the exact value.";
  chart->x = FixedAxis("error in ulps", Scale::kLinear, -0.6, n_oct + 1.6, ticks);
  chart->y = FixedAxis("share of elements", Scale::kLinear, 0, 1);
  return true;
}

// Every kernel of one dtype and norm: error vs kappa, binned per quarter decade.
bool OverlayChart(const json& report, const std::string& dtype, const std::string& norm,
                  const char* output, Chart* chart) {
  const json& plan = report["plan"];
  const Marker markers[] = {Marker::kCircle,  Marker::kSquare, Marker::kTriangle,
                            Marker::kDiamond, Marker::kCross,  Marker::kPlus};
  int n = 0;
  for (const json& impl : report["impls"]) {
    if (Str(impl, "x_dtype") != dtype || Str(impl, "norm") != norm) continue;
    if (!impl["outputs"].contains(output)) continue;
    std::map<int, std::pair<double, double>> bins;  // quarter decade -> (kappa, max err)
    for (const Pt& p : Points(impl["outputs"][output])) {
      if (!HasRole(plan, p.item, "kappa") || !std::isfinite(p.kappa) || p.kind == "out_of_range") {
        continue;
      }
      const int b = static_cast<int>(std::lround(std::log10(p.kappa) * 4));
      auto [it, fresh] = bins.try_emplace(b, p.kappa, p.err);
      if (!fresh) it->second.second = std::max(it->second.second, p.err);
    }
    if (bins.empty()) continue;
    ChartSeries s = Series(Str(impl, "name"), kPalette[n % kPaletteSize],
                           markers[(n / kPaletteSize + n) % 6], true, n >= kPaletteSize);
    for (const auto& [b, ke] : bins) {
      s.points.push_back({ke.first, ke.second,
                          Str(impl, "name") + ": kappa " + ShortNumber(ke.first) + ", error " +
                              ShortNumber(ke.second) + " row ulps"});
    }
    chart->series.push_back(std::move(s));
    ++n;
  }
  if (chart->series.empty()) return false;
  chart->id = "overlay-" + dtype + "-" + norm + "-" + output;
  chart->title = dtype + " " + norm + ": " + output + " error vs kappa, every kernel";
  chart->description =
      "Max error per quarter decade of kappa (large_mean rows), in ulps of the "
      "row's largest |" +
      std::string(output) +
      "|. The bounds differ per kernel: "
      "see each kernel's own chart.";
  chart->x = Axis("kappa (mean-to-spread ratio)", Scale::kLog10);
  chart->y = Axis(kYLabelErr, Scale::kLog10);
  return true;
}

// ---- Sections ----

const char* kCss = R"css(
:root{--fg:#1b1b1b;--muted:#555;--line:#d0d0d0;--ok:#0072B2;--bad:#D55E00}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);max-width:1200px;margin:0 auto;padding:0 14px 48px}
h1{font-size:1.55rem;margin:18px 0 4px}h2{font-size:1.25rem;margin:28px 0 8px;border-bottom:2px solid var(--line)}
h3{font-size:1.05rem;margin:22px 0 6px}p{margin:6px 0}
.meta{color:var(--muted);font-size:13px}
.banner{padding:8px 12px;border-left:6px solid;margin:12px 0;font-weight:600}
.banner.ok{border-color:var(--ok);background:#e6f1f9}.banner.bad{border-color:var(--bad);background:#fbeadf}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border-bottom:1px solid var(--line);padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f3f3;position:sticky;top:0}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.group td{background:#fafafa;font-weight:600}
th.wide{min-width:13em}.vr{white-space:nowrap;display:inline-block;margin-right:4px}
.badge{display:inline-block;padding:0 6px;border-radius:3px;font-weight:600;font-size:12px;border:1px solid;white-space:nowrap}
.badge.ok{color:#074a78;background:#e6f1f9;border-color:var(--ok)}
.badge.bad{color:#8c3200;background:#fbeadf;border-color:var(--bad)}
.status{font-size:12px;color:var(--muted)}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:10px;margin:8px 0}
figure.chart{margin:0;border:1px solid #e2e2e2;padding:4px;break-inside:avoid;page-break-inside:avoid}
figure.chart svg{width:100%;height:auto;display:block}
figcaption{font-size:12px;color:var(--muted);padding:2px 4px}
svg text{font:11px system-ui,Arial,sans-serif;fill:#222}svg .ct{font-weight:600;font-size:12px}svg .al{fill:#444}
svg .grid{stroke:#e8e8e8}svg .frame{fill:none;stroke:#8a8a8a}svg .ref{stroke:#111;stroke-dasharray:2 3}
svg .band{fill:#e9e9e9}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
pre{white-space:pre-wrap;word-break:break-all;background:#f5f5f5;padding:5px 8px;margin:4px 0}
nav ul{columns:3 14em;padding-left:18px;font-size:13px}
.finding{border:1px solid var(--line);border-left:5px solid var(--bad);padding:6px 10px;margin:8px 0;break-inside:avoid}
.finding.expected{border-left-color:var(--ok)}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:1px 12px;font-size:13px;margin:4px 0}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0}
.better{color:#074a78}.worse{color:#8c3200;font-weight:600}
@media (max-width:640px){body{font-size:14px;padding:0 8px 32px}.charts{grid-template-columns:1fr}nav ul{columns:1}h1{font-size:1.3rem}}
@media print{nav,.noprint{display:none}body{max-width:none;font-size:11px;padding:0}
section.kernel{break-before:page}a{color:inherit;text-decoration:none}th{position:static}
.charts{grid-template-columns:repeat(2,1fr)}}
)css";

std::string HowToRead() {
  return R"html(<section id="how"><h2>How to read this</h2>
<p><b>ULP</b>: the error of one element, |kernel &minus; exact|, divided by the spacing of the
output's format at the exact value (with the subnormal floor): 0.5 ulp is correctly rounded. The
exact value comes from the oracle (exact rational statistics, one irrational step, rounded once),
so errors are measured against the exact value, not against another float computation. ULPs of
values near zero can be huge while the error is tiny next to the row: that is why verdicts use the bound.</p>
<p><b>Bound use</b>: error / bound, where the bound is derived for the kernel's algorithm
(two-pass, Welford, Kahan; serial or tree reduction, k its longest rounding chain), its accumulation
format and the exact statistics of the row: per element
B<sub>i</sub> = &frac12;ulp(y<sub>i</sub>) + |&gamma;<sub>i</sub>|&middot;[&gamma;<sub>k</sub>&kappa;<sub>&epsilon;</sub> + |x&#770;<sub>i</sub>|(|&rho;| + 2u)] + u(|&gamma;<sub>i</sub>x&#770;<sub>i</sub>| + |&beta;<sub>i</sub>|),
&gamma;<sub>k</sub> = ku/(1&minus;ku) (harness/bounds.h, after Higham, <i>Accuracy and Stability of
Numerical Algorithms</i>, 2nd ed., &sect;3.1 and ch. 4; Chan, Golub &amp; LeVeque 1983). A
<code>claims_bound</code> kernel must keep every bound use &le; 1; a <code>negative_control</code>
(e.g. the one-pass &Sigma;x&sup2; &minus; (&Sigma;x)&sup2;/d variance) must break it somewhere, which proves the
check can fail. Backward bounds are absolute, scaled by r&middot;(mean|g| + |g<sub>i</sub>| + |x&#770;<sub>i</sub>|&middot;mean|g x&#770;|).</p>
<p><b>&kappa;</b> = &radic;(1 + &mu;&sup2;/&sigma;&sup2;), the row's mean-to-spread ratio: stable algorithms lose about
k&kappa;u, the one-pass formula k&kappa;&sup2;u. The <b>probabilistic</b> line replaces &gamma;<sub>k</sub> by
Higham &amp; Mary's (2019) &radic;k form, with &lambda; (about 9&ndash;10) chosen for at most 10<sup>&minus;3</sup>
expected false alarms in 10<sup>11</sup> elements: the statistical tier's bound. On the random-data families
whose rounding errors behave as its model assumes (standard_normal, large_d, many_rows, two_halves,
rows_differ) an error beyond it is the finding <code>beyond_typical</code>; elsewhere the line is for reading only.</p>
<p><b>Charts of error vs &kappa; and vs magnitude</b> plot one mark per row: its largest error and its
largest bound, both divided by the ulp of the row's largest exact output, so that a row's error and
its bound share one unit. Marks on an edge with an arrow are off the axis (an exact 0, or a non-finite result).
<b>Valid range found</b>: the largest |x| and &kappa; of rows where the kernel met its bound, and where its
claimed range (the rows whose &Sigma;x&sup2; it can hold) ends.</p>
<p>Every finding, and every kernel's worst case, is a case file (hex floats) under
<code>cases/</code>; the command next to it replays it element by element.
Colours follow the Okabe&ndash;Ito palette, and every verdict is also a word and a mark
(&#10003; as its status expects, &#10007; not).</p></section>
)html";
}

std::string SummaryTable(const json& report) {
  std::string o =
      "<section id=\"summary\"><h2>Summary</h2><div class=\"scroll\"><table>"
      "<thead><tr><th>kernel</th><th>verdict</th><th>max bound use (output)</th>"
      "<th>max ULP (output)</th><th>p99 ULP y / dx</th>"
      "<th class=\"wide\">valid range found</th><th>worst case</th><th>norm</th>"
      "<th>status</th></tr></thead><tbody>";
  std::vector<std::string> dtypes;
  for (const json& i : report["impls"]) {
    const std::string d = Str(i, "x_dtype");
    if (std::find(dtypes.begin(), dtypes.end(), d) == dtypes.end()) dtypes.push_back(d);
  }
  for (const std::string& dtype : dtypes) {
    o += "<tr class=\"group\"><td colspan=\"9\">" + E(dtype) + "</td></tr>";
    for (const json& i : report["impls"]) {
      if (Str(i, "x_dtype") != dtype) continue;
      const json& outs = i["outputs"];
      const std::string ulp_o = WorstOutput(i, "max_ulp");
      const std::string use_o = WorstOutput(i, "max_bound_use");
      auto cell = [&](const std::string& out, const char* m) {
        return out.empty() ? std::string("&ndash;")
                           : E(ShortNumber(N(outs[out], m))) + " <span class=\"status\">(" +
                                 E(out) + ")</span>";
      };
      auto p99 = [&](const char* out) {
        return outs.contains(out) ? E(ShortNumber(N(outs[out], "p99_ulp")))
                                  : std::string("&ndash;");
      };
      const std::string params =
          Str(i, "param_dtype") != dtype ? ", params " + E(Str(i, "param_dtype")) : "";
      o += "<tr><td><a href=\"#" + KernelId(Str(i, "name")) + "\">" + E(Str(i, "name")) +
           "</a></td><td>" + VerdictBadge(i) + "</td><td class=\"n\">" +
           cell(use_o, "max_bound_use") + "</td><td class=\"n\">" + cell(ulp_o, "max_ulp") +
           "</td><td class=\"n\">" + p99("y") + " / " + p99("dx") + "</td><td>" +
           ValidRangeText(i) + "</td><td>" + (use_o.empty() ? "&ndash;" : CaseLink(outs[use_o])) +
           "</td><td>" + E(Str(i, "norm")) + params + "</td><td class=\"status\">" +
           E(Str(i, "status")) + "</td></tr>";
    }
  }
  o += "</tbody></table></div></section>\n";
  return o;
}

std::string FindingsSection(const json& report) {
  const json& f = report["findings"];
  std::string o = "<section id=\"findings\"><h2>Findings (" + std::to_string(f.size()) + ")</h2>";
  if (f.empty()) o += "<p>None: no kernel broke a bound or the NaN contract on these inputs.</p>";
  for (const json& x : f) {
    const bool expected = x.value("expected", false);
    o += "<div class=\"finding" + std::string(expected ? " expected" : "") + "\"><p><b>" +
         E(Str(x, "kernel")) + "</b> &mdash; " + E(Str(x, "what")) + ": <b>" + E(Str(x, "kind")) +
         "</b> on " + E(Str(x, "output")) + "</p><dl class=\"kv\">";
    o += "<dt>case</dt><dd>" + E(Str(x, "family")) + ", d = " + E(Str(x, "d")) +
         ", rows = " + E(Str(x, "rows")) +
         (x["row"].is_null() ? "" : ", worst row " + E(Str(x, "row"))) + "</dd>";
    if (std::isfinite(N(x, "kappa"))) {
      o += "<dt>row</dt><dd>&kappa; = " + E(ShortNumber(N(x, "kappa"))) +
           ", max|x| = " + Pow2(N(x, "log2_mag")) + "</dd>";
    }
    if (x["worst"].is_object()) {
      const json& w = x["worst"];
      o += "<dt>worst element</dt><dd>index " + E(Str(w, "index")) + ": kernel <code>" +
           E(Str(w, "kernel_hex")) + "</code>, exact <code>" + E(Str(w, "exact_hex")) +
           "</code>; error " + E(ShortNumber(N(w, "error"))) + " = " +
           E(ShortNumber(N(w, "ulps"))) + " ulp, bound " + E(ShortNumber(N(w, "bound"))) +
           ", use " + E(ShortNumber(N(w, "bound_use"))) + " (" + E(Str(w, "verdict")) + ")</dd>";
    }
    o += "<dt>broke</dt><dd>" + E(Str(x, "bound")) + "</dd>";
    o += "<dt>result</dt><dd>" + E(Str(x, "summary")) + "</dd>";
    if (!x["case_file"].is_null()) {
      o += "<dt>case file</dt><dd><a href=\"" + E(Str(x, "case_file")) + "\">" +
           E(Str(x, "case_file")) + "</a></dd>";
    }
    o += "</dl>";
    if (!x["replay"].is_null()) o += "<pre>" + E(Str(x, "replay")) + "</pre>";
    o += "</div>";
  }
  const json errs = report.value("load_errors", json::array());
  if (!errs.empty()) {
    o += "<h3>Plugins that did not load</h3><ul>";
    for (const json& e : errs) o += "<li>" + E(e.get<std::string>()) + "</li>";
    o += "</ul>";
  }
  o += "</section>\n";
  return o;
}

std::string OverviewSection(const json& report) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const json& i : report["impls"]) {
    const auto k = std::make_pair(Str(i, "x_dtype"), Str(i, "norm"));
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  std::string charts;
  for (const auto& [dtype, norm] : keys) {
    for (const char* out : {"y", "dx"}) {
      Chart c;
      if (OverlayChart(report, dtype, norm, out, &c)) charts += RenderChart(c);
    }
  }
  if (charts.empty()) return "";
  return "<section id=\"overview\"><h2>Every kernel against &kappa;</h2><div class=\"charts\">" +
         charts + "</div></section>\n";
}

std::string KernelSection(const json& report, const json& impl) {
  const json& plan = report["plan"];
  const std::string name = Str(impl, "name");
  std::string o = "<section class=\"kernel\" id=\"" + KernelId(name) + "\"><h3>" + E(name) + " " +
                  VerdictBadge(impl) + "</h3><dl class=\"kv\">";
  o +=
      "<dt>status</dt><dd>" + E(Str(impl, "status")) + ": " + E(Str(impl, "expectation")) + "</dd>";
  o += "<dt>bound</dt><dd>" + E(Str(impl, "bound")) + "</dd>";
  o += "<dt>types</dt><dd>" + E(Str(impl, "norm")) + ", x " + E(Str(impl, "x_dtype")) +
       ", params " + E(Str(impl, "param_dtype")) + ", accumulation " + E(Str(impl, "acc_dtype")) +
       "; claimed range: row &Sigma;x&sup2; &le; " +
       E(ShortNumber(N(impl, "claimed_max_row_sumsq"))) +
       (impl.contains("claimed_max_backward_weight")
            ? ", backward weight &le; " + E(ShortNumber(N(impl, "claimed_max_backward_weight")))
            : std::string()) +
       "</dd>";
  o += "<dt>source</dt><dd><code>" + E(Str(impl, "source")) + "</code></dd>";
  o += "<dt>cases</dt><dd>" + E(Str(impl, "cases")) + " judged, " + E(Str(impl, "findings")) +
       " finding(s)" +
       (impl["first_error"].is_null() ? "" : "; first error: " + E(Str(impl, "first_error"))) +
       "</dd>";
  o += "<dt>valid range found</dt><dd>" + ValidRangeText(impl) + "</dd></dl>";
  o += "<div class=\"scroll\"><table><thead><tr><th>output</th><th>verdict</th><th>max ULP</th>"
       "<th>p99 ULP</th><th>max bound use</th><th>elements</th><th>no claim / out of range</th>"
       "<th>worst case</th></tr></thead><tbody>";
  for (const char* out : kOutputs) {
    if (!impl["outputs"].contains(out)) continue;
    const json& x = impl["outputs"][out];
    // out_of_range and oracle_undecided elements are not failures: the
    // counts column says how many there were.
    const std::string v = Str(x, "verdict");
    const bool failed =
        v == "bound_exceeded" || v == "not_finite" || v == "nan_mismatch" || v == "kernel_error";
    o += "<tr><td>" + std::string(out) + "</td><td>" + (failed ? "<b>" + E(v) + "</b>" : "pass") +
         "</td><td class=\"n\">" + E(ShortNumber(N(x, "max_ulp"))) + "</td><td class=\"n\">" +
         E(ShortNumber(N(x, "p99_ulp"))) + "</td><td class=\"n\" title=\"" +
         E(Str(x, "max_bound_use_hex")) + "\">" + E(ShortNumber(N(x, "max_bound_use"))) +
         "</td><td class=\"n\">" + E(Str(x, "elements")) + "</td><td class=\"n\">" +
         E(Str(x, "unclaimed")) + " / " + E(Str(x, "out_of_range")) + "</td><td>" + CaseLink(x) +
         "</td></tr>";
  }
  o += "</tbody></table></div><div class=\"charts\">";
  int charts = 0;
  for (const char* out : {"y", "dx"}) {
    for (bool by_kappa : {true, false}) {
      Chart c;
      if (ErrorChart(impl, plan, out, by_kappa, &c)) {
        o += RenderChart(c);
        ++charts;
      }
    }
  }
  Chart use;
  if (UseByDChart(impl, &use)) {
    o += RenderChart(use);
    ++charts;
  }
  Chart hist;
  if (HistogramChart(impl, &hist)) {
    o += RenderChart(hist);
    ++charts;
  }
  o += "</div>";
  if (charts == 0) o += "<p>No charted rows (the kernel did not run on them).</p>";
  o += "</section>\n";
  return o;
}

std::string CompareSection(const Comparison& c) {
  std::string o =
      "<section id=\"compare\"><h2>Compared with " + E(c.old_commit) + "</h2><p>" + E(c.old_date) +
      ", budget " + E(c.old_budget) + ": <span class=\"worse\">" + std::to_string(c.worse) +
      " worse</span>, <span class=\"better\">" + std::to_string(c.better) + " better</span>, " +
      std::to_string(c.other) + " other change(s)." +
      (c.same_inputs ? "" : " The budget or seed differs, so the inputs differ too.") + "</p>";
  if (!c.changes.empty()) {
    o += "<div class=\"scroll\"><table><thead><tr><th>kernel</th><th>output</th><th>measure</th>"
         "<th>old</th><th>new</th><th>change</th></tr></thead><tbody>";
    for (const Change& ch : c.changes) {
      const std::string word = ch.direction > 0   ? "&#9650; worse"
                               : ch.direction < 0 ? "&#9660; better"
                                                  : "changed";
      o += "<tr><td>" + E(ch.kernel) + "</td><td>" + E(ch.output) + "</td><td>" + E(ch.measure) +
           "</td><td class=\"n\">" + E(ch.old_value) + "</td><td class=\"n\">" + E(ch.new_value) +
           "</td><td class=\"" +
           (ch.direction > 0   ? "worse"
            : ch.direction < 0 ? "better"
                               : "") +
           "\">" + word + "</td></tr>";
    }
    o += "</tbody></table></div>";
  }
  return o + "</section>\n";
}

std::string ContextSection(const json& report) {
  const json& c = report["context"];
  std::string o = "<section id=\"context\"><h2>Context</h2><dl class=\"kv\">";
  for (auto it = c.begin(); it != c.end(); ++it) {
    o += "<dt>" + E(it.key()) + "</dt><dd><code>" +
         E(it.value().is_string() ? it.value().get<std::string>() : it.value().dump()) +
         "</code></dd>";
  }
  o += "</dl><h3>Cases (every kernel of a dtype group runs each)</h3><div class=\"scroll\"><table>"
       "<thead><tr><th>#</th><th>family</th><th>d</th><th>rows</th><th>seed</th><th>charts</th>"
       "</tr></thead><tbody>";
  for (const json& p : report["plan"]) {
    std::string roles;
    for (const json& r : p["roles"]) roles += (roles.empty() ? "" : ", ") + r.get<std::string>();
    o += "<tr><td class=\"n\">" + E(Str(p, "index")) + "</td><td>" + E(Str(p, "family")) +
         "</td><td class=\"n\">" + E(Str(p, "case_d")) + "</td><td class=\"n\">" +
         E(Str(p, "case_rows")) + "</td><td class=\"n\">" + E(Str(p, "seed")) + "</td><td>" +
         E(roles) + "</td></tr>";
  }
  return o + "</tbody></table></div></section>\n";
}

// JSON inside <script>: '<' only occurs in strings, where \u003c is the same character.
std::string EmbeddedJson(const json& j) {
  const std::string s = j.dump();
  std::string o;
  o.reserve(s.size());
  for (char ch : s) {
    if (ch == '<') {
      o += "\\u003c";
    } else {
      o += ch;
    }
  }
  return o;
}

}  // namespace

std::string RenderHtml(const json& report, const Comparison* comparison) {
  const json& ctx = report["context"];
  const int status = ExitStatusOf(report);
  int n = 0, ok = 0, controls = 0, caught = 0;
  for (const json& i : report["impls"]) {
    ++n;
    ok += i.value("expected", false);
    if (Str(i, "status") == "negative_control") {
      ++controls;
      caught += i.value("expected", false);
    }
  }
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>lnverify error-bound report</title><style>" +
      std::string(kCss) + "</style></head><body>\n";
  o += "<header><h1>LayerNorm / RMSNorm error-bound report</h1><p class=\"meta\">commit <code>" +
       E(Str(ctx, "git_commit", "unknown")) + "</code> &middot; " + E(Str(ctx, "date")) +
       " &middot; budget " + E(Str(ctx, "budget")) + " &middot; seed " + E(Str(ctx, "seed")) +
       " &middot; " + std::to_string(n) + " kernels &middot; " + E(ShortNumber(N(ctx, "seconds"))) +
       " s &middot; schema " + E(Str(report, "schema_version")) + "</p>";
  o += "<div class=\"banner " + std::string(status == 0 ? "ok" : "bad") + "\">" +
       (status == 0 ? "&#10003; Every claim holds: " : "&#10007; Findings: ") + std::to_string(ok) +
       " of " + std::to_string(n) + " kernels as their status expects; " + std::to_string(caught) +
       " of " + std::to_string(controls) + " negative controls caught; " +
       std::to_string(report["findings"].size()) + " finding(s)." + "</div></header>\n";
  o += "<nav class=\"noprint\"><ul><li><a href=\"#how\">How to read this</a></li>"
       "<li><a href=\"#summary\">Summary</a></li><li><a href=\"#overview\">Every kernel against "
       "&kappa;</a></li><li><a href=\"#findings\">Findings</a></li>";
  if (comparison != nullptr) o += "<li><a href=\"#compare\">Comparison</a></li>";
  for (const json& i : report["impls"]) {
    o += "<li><a href=\"#" + KernelId(Str(i, "name")) + "\">" + E(Str(i, "name")) + "</a></li>";
  }
  o += "<li><a href=\"#context\">Context</a></li></ul></nav>\n<main>";
  o += HowToRead();
  o += SummaryTable(report);
  o += OverviewSection(report);
  o += FindingsSection(report);
  if (comparison != nullptr) o += CompareSection(*comparison);
  o += "<section id=\"kernels\"><h2>Kernels</h2>";
  for (const json& i : report["impls"]) o += KernelSection(report, i);
  o += "</section>";
  o += ContextSection(report);
  o += "</main>\n<script type=\"application/json\" id=\"lnv-data\">" + EmbeddedJson(report) +
       "</script>\n</body></html>\n";
  return o;
}

}  // namespace lnv::report

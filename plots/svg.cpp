// The SVG history figure (plots/svg.h).
#include "plots/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <kainjow/mustache.hpp>
#include <limits>
#include <stdexcept>

#include "plots/ticks.h"

namespace nightjar {
namespace {

namespace mu = kainjow::mustache;

// Every label goes through {{...}} (HTML/XML-escaped by mustache); numbers are
// formatted here. No {{{...}}} appears: nothing is inserted unescaped.
constexpr const char* kTemplate =
    R"TPL(<svg xmlns="http://www.w3.org/2000/svg" class="nightjar-figure{{#small}} small{{/small}}" width="{{w}}" height="{{h}}" viewBox="0 0 {{w}} {{h}}" role="img" aria-label="{{title}}">
<title>{{title}}</title>
<rect class="background" x="0" y="0" width="{{w}}" height="{{h}}" fill="#ffffff"/>
{{^small}}<rect class="plot-area" x="{{left}}" y="{{top}}" width="{{pw}}" height="{{ph}}" fill="none" stroke="#999999"/>
<text class="title" x="{{cx}}" y="18" text-anchor="middle" font-family="sans-serif" font-size="13">{{title}}</text>
{{#yticks}}<line class="y-tick" x1="{{x0}}" x2="{{x1}}" y1="{{y}}" y2="{{y}}" stroke="#dddddd"/><text class="y-tick-label" x="{{tx}}" y="{{ty}}" text-anchor="end" font-family="sans-serif" font-size="10">{{text}}</text>
{{/yticks}}{{#xticks}}<text class="x-tick-label" x="{{x}}" y="{{y}}" text-anchor="middle" font-family="sans-serif" font-size="10">{{text}}</text>
{{/xticks}}<text class="x-label" x="{{cx}}" y="{{xly}}" text-anchor="middle" font-family="sans-serif" font-size="11">{{x_label}}</text>
<text class="y-label" x="{{ylx}}" y="{{cy}}" transform="rotate(-90 {{ylx}} {{cy}})" text-anchor="middle" font-family="sans-serif" font-size="11">{{y_label}}</text>
{{/small}}{{#series}}<g class="series" data-cell="{{cell}}" data-label="{{label}}">
{{#dots}}<circle class="sample" cx="{{x}}" cy="{{y}}" r="1.8" fill="{{colour}}" fill-opacity="0.45"/>
{{/dots}}<polyline class="mean-line" fill="none" stroke="{{colour}}" stroke-width="{{stroke}}" points="{{points}}"/>
{{#emulated}}<path class="emulated" data-build="{{build}}" d="M{{x}},{{y}} l5,9 h-10 z" fill="none" stroke="#000000" stroke-width="1.2"/>
{{/emulated}}{{#changes}}<line class="change-point" data-build="{{build}}" x1="{{x}}" x2="{{x}}" y1="{{y0}}" y2="{{y1}}" stroke="{{colour}}" stroke-dasharray="4 3" stroke-width="1.5"/>
{{/changes}}</g>
{{/series}}{{#emulation_legend}}<text class="emulated-legend" x="{{lx}}" y="{{ly}}" text-anchor="end" font-family="sans-serif" font-size="10">&#9651; {{emulation_legend}}</text>
{{/emulation_legend}}</svg>
)TPL";

constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#17becf"};

std::string px(double v) {
  return fmt::format("{:.1f}", v);
}

// The font size of the tick labels and the width of one of their characters: DejaVu Sans (Debian's
// default sans-serif) draws a digit 0.636 em wide, wider than any other character of a tick.
constexpr double kTickFont = 10, kCharWidth = 0.64 * kTickFont;

/// The estimated width in pixels of tick label `text` (UTF-8: "µ" is one).
double text_width(const std::string& text) {
  double chars = 0;
  for (unsigned char c : text) chars += (c & 0xc0) != 0x80;
  return chars * kCharWidth;
}

// The pixel box of the plot area, the data ranges it shows and the y ticks.
struct Frame {
  double left, top, width, height;
  double x_lo, x_hi, y_lo, y_hi;
  AxisTicks y_ticks;
  double sx(double x) const { return left + (x - x_lo) / (x_hi - x_lo) * width; }
  double sy(double y) const { return top + height - (y - y_lo) / (y_hi - y_lo) * height; }
};

// The rotated y label's baseline, from the left edge, and the gap between
// the glyphs of the y label (they reach about one font size left of it) and
// the widest tick label.
constexpr double kYLabelX = 14, kYLabelGap = 6;

Frame frame_of(const PlotData& data, const SvgFigureSpec& spec) {
  Frame f{};
  f.top = spec.small ? 3 : 30;
  f.height = spec.height - f.top - (spec.small ? 3 : 48);
  double xl = std::numeric_limits<double>::infinity(), xh = -xl, yl = xl, yh = -xl;
  for (const auto& s : data.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.mean)) continue;
      xl = std::min(xl, p.x_drawn);
      xh = std::max(xh, p.x_drawn);
      yl = std::min(yl, p.mean);
      yh = std::max(yh, p.mean);
      if (spec.small) continue;
      for (double v : p.samples)
        if (std::isfinite(v)) yl = std::min(yl, v), yh = std::max(yh, v);
    }
  if (!std::isfinite(xl)) xl = 0, xh = 1, yl = 0, yh = 1;
  if (xh - xl < 1e-12) xl -= 0.5, xh += 0.5;
  double pad = (yh - yl) * 0.06;
  if (pad < 1e-12) pad = std::max(std::abs(yh) * 0.05, 1e-9);
  // Half a build's spacing on each side, so that the first and last builds
  // (and their labels) sit inside the plot area, not on its edges.
  const double x_pad =
      spec.small || data.x_ticks.size() < 2 ? 0 : (xh - xl) / (2.0 * (data.x_ticks.size() - 1));
  f.x_lo = xl - x_pad;
  f.x_hi = xh + x_pad;
  f.y_lo = yl - pad;
  f.y_hi = yh + pad;
  // The plot area starts right of the widest tick label, which starts right
  // of the rotated y label: neither is drawn over the other.
  double widest = 0;
  if (!spec.small) {
    f.y_ticks = nice_ticks(f.y_lo, f.y_hi, 4);
    for (const auto& l : f.y_ticks.labels) widest = std::max(widest, text_width(l));
  }
  f.left = spec.small ? 3 : kYLabelX + kYLabelGap + widest + 4;
  f.width = spec.width - f.left - (spec.small ? 3 : 16);
  return f;
}

mu::data series_data(const PlotSeries& s, const Frame& f, const SvgFigureSpec& spec,
                     const char* colour) {
  mu::data d;
  d.set("cell", s.cell);
  d.set("label", s.label);
  d.set("colour", colour);
  d.set("stroke", spec.small ? "1.5" : "2");
  mu::data dots{mu::data::type::list};
  std::string points;
  for (const auto& p : s.points) {
    if (!std::isfinite(p.mean)) continue;
    points += (points.empty() ? "" : " ") + px(f.sx(p.x_drawn)) + "," + px(f.sy(p.mean));
    if (spec.small) continue;
    for (double v : p.samples) {
      if (!std::isfinite(v)) continue;
      mu::data dot;
      dot.set("x", px(f.sx(p.x_drawn)));
      dot.set("y", px(f.sy(v)));
      dot.set("colour", colour);
      dots.push_back(dot);
    }
  }
  d.set("dots", dots);
  d.set("points", points);
  // Points of runs under qemu TCG: an open triangle over the mean (not in a
  // sparkline, too small for it).
  mu::data emulated{mu::data::type::list};
  for (const auto& p : s.points) {
    if (spec.small || !p.emulated || !std::isfinite(p.mean)) continue;
    mu::data m;
    m.set("build", p.label);
    m.set("x", px(f.sx(p.x_drawn)));
    m.set("y", px(f.sy(p.mean) - 6));
    emulated.push_back(m);
  }
  d.set("emulated", emulated);
  mu::data changes{mu::data::type::list};
  for (const auto& cp : s.change_points) {
    if (cp.index >= s.points.size()) continue;
    // Between the last build before and the first after: where the level moved.
    double x = s.points[cp.index].x_drawn;
    if (cp.index > 0) x = (x + s.points[cp.index - 1].x_drawn) / 2;
    mu::data c;
    c.set("build", s.points[cp.index].label);
    c.set("x", px(f.sx(x)));
    c.set("y0", px(f.top));
    c.set("y1", px(f.top + f.height));
    c.set("colour", cp.pct_change < 0 ? "#d62728" : "#2ca02c");
    changes.push_back(c);
  }
  d.set("changes", changes);
  return d;
}

mu::data axis_ticks(const PlotData& data, const Frame& f, const SvgFigureSpec& spec) {
  mu::data d;
  mu::data ys{mu::data::type::list};
  for (std::size_t i = 0; i < f.y_ticks.values.size(); ++i) {
    const double v = f.y_ticks.values[i];
    mu::data t;
    t.set("x0", px(f.left));
    t.set("x1", px(f.left + f.width));
    t.set("y", px(f.sy(v)));
    t.set("tx", px(f.left - 4));
    t.set("ty", px(f.sy(v) + 3));
    t.set("text", f.y_ticks.labels[i]);
    ys.push_back(t);
  }
  d.set("yticks", ys);
  mu::data xs{mu::data::type::list};
  // At most about 8 labels: every k-th tick.
  const std::size_t k = std::max<std::size_t>(1, (data.x_ticks.size() + 7) / 8);
  for (std::size_t i = 0; i < data.x_ticks.size(); i += k) {
    // A label centred on its tick, moved in when it would run off the figure.
    const double half = text_width(data.x_ticks[i].second) / 2;
    const double x = std::clamp(f.sx(data.x_ticks[i].first), std::min(half + 2, f.left),
                                std::max(spec.width - half - 2, f.left + f.width));
    mu::data t;
    t.set("x", px(x));
    t.set("y", px(f.top + f.height + 14));
    t.set("text", data.x_ticks[i].second);
    xs.push_back(t);
  }
  d.set("xticks", xs);
  return d;
}

}  // namespace

std::string render_history_svg(const PlotData& data, const SvgFigureSpec& spec) {
  if (data.kind != PlotKind::history)
    throw std::invalid_argument("render_history_svg: not a history figure");
  if (spec.width < 40 || spec.height < 20)
    throw std::invalid_argument("render_history_svg: figure smaller than 40x20");
  const Frame f = frame_of(data, spec);
  mu::data d = spec.small ? mu::data{} : axis_ticks(data, f, spec);
  d.set("small", spec.small);
  d.set("w", std::to_string(spec.width));
  d.set("h", std::to_string(spec.height));
  d.set("title", data.title.substr(0, data.title.find('\n')));
  d.set("left", px(f.left));
  d.set("top", px(f.top));
  d.set("pw", px(f.width));
  d.set("ph", px(f.height));
  d.set("cx", px(f.left + f.width / 2));
  d.set("cy", px(f.top + f.height / 2));
  d.set("xly", px(spec.height - 8));
  d.set("ylx", px(kYLabelX));
  d.set("x_label", data.x_label);
  d.set("y_label", data.y_label);
  mu::data series{mu::data::type::list};
  std::size_t i = 0;
  for (const auto& s : data.series)
    series.push_back(series_data(s, f, spec, kColours[i++ % std::size(kColours)]));
  d.set("series", series);
  // The legend of the triangles, when a point has one.
  bool emulated = false;
  for (const auto& s : data.series)
    for (const auto& p : s.points) emulated = emulated || p.emulated;
  d.set("emulation_legend", emulated && !spec.small ? mu::data{kEmulationMark} : mu::data{false});
  d.set("lx", px(f.left + f.width - 4));
  d.set("ly", px(f.top + 12));
  mu::mustache tmpl{kTemplate};
  if (!tmpl.is_valid())
    throw std::logic_error("render_history_svg: template: " + tmpl.error_message());
  return tmpl.render(d);
}

}  // namespace nightjar

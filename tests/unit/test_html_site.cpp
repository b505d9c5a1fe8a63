// Unit under test: the SVG history figure (plots/svg.h) and the pages of
// `nightjar publish` (results/render/html_site.h) on hand-made records: what
// is drawn (a dot per sample, a line per series, a marker per change point),
// the numbers of the builds table, and that every label is escaped.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <stdexcept>
#include <vector>

#include "plots/svg.h"
#include "results/render/html_site.h"

namespace nightjar {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

PlotData history(const std::string& label) {
  PlotData d;
  d.kind = PlotKind::history;
  d.title = "job <x>: throughput by build\nsecond line";
  d.x_label = "build";
  d.y_label = "throughput (ops/s)";
  PlotSeries s;
  s.label = label;
  s.cell = "name=" + label;
  for (int i = 0; i < 4; ++i) {
    PlotPoint p;
    p.x = p.x_drawn = i;
    p.label = "b" + std::to_string(i);
    p.mean = i < 2 ? 100 : 90;
    p.samples = {p.mean - 1, p.mean, p.mean + 1};
    s.points.push_back(p);
    d.x_ticks.emplace_back(i, p.label);
  }
  stats::ChangePoint cp;
  cp.index = 2;
  cp.pct_change = -10;
  s.change_points.push_back(cp);
  d.series.push_back(s);
  return d;
}

TEST(SvgFigure, DrawsSamplesMeansAndChangePointsWithEscapedText) {
  std::string svg = render_history_svg(history("<script>\"q\"\xc3\xbc"), {});
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_EQ(count(svg, "class=\"sample\""), 12u);
  EXPECT_EQ(count(svg, "class=\"mean-line\""), 1u);
  EXPECT_EQ(count(svg, "class=\"change-point\" data-build=\"b2\""), 1u);
  EXPECT_EQ(count(svg, "<script"), 0u);
  EXPECT_NE(svg.find("&lt;script&gt;&quot;q&quot;\xc3\xbc"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>job &lt;x&gt;: throughput by build</title>"), std::string::npos);
  EXPECT_NE(svg.find(">b0</text>"), std::string::npos);
  // The regression's marker is red, and lies between b1 and b2.
  EXPECT_NE(svg.find("stroke=\"#d62728\" stroke-dasharray"), std::string::npos);

  std::string small = render_history_svg(history("a"), {160, 36, true});
  EXPECT_EQ(count(small, "class=\"sample\""), 0u);
  EXPECT_EQ(count(small, "<text"), 0u);
  EXPECT_EQ(count(small, "class=\"mean-line\""), 1u);
  EXPECT_NE(small.find("nightjar-figure small"), std::string::npos);
}

// Points of runs under qemu TCG get an open triangle and the figure a legend
// naming the mark; the sparkline stays plain (issue 16).
TEST(SvgFigure, PointsOfRunsUnderTcgAreMarked) {
  PlotData d = history("a");
  EXPECT_EQ(count(render_history_svg(d, {}), "emulated"), 0u);
  d.series[0].points[1].emulated = d.series[0].points[3].emulated = true;
  const std::string svg = render_history_svg(d, {});
  EXPECT_EQ(count(svg, "class=\"emulated\""), 2u) << svg;
  EXPECT_EQ(count(svg, "class=\"emulated\" data-build=\"b3\""), 1u) << svg;
  EXPECT_NE(svg.find("class=\"emulated-legend\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("TCG: measures emulation</text>"), std::string::npos) << svg;
  EXPECT_EQ(count(render_history_svg(d, {160, 36, true}), "emulated"), 0u);
}

// Attribute `name` of every element of `svg` with class `cls`, in order.
std::vector<std::string> attributes(const std::string& svg, const std::string& cls,
                                    const std::string& name) {
  std::vector<std::string> out;
  const std::regex element("<[a-z]+ class=\"" + cls + "\"[^>]*>");
  const std::regex attribute(" " + name + "=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it) {
    std::smatch m;
    const std::string tag = it->str();
    if (std::regex_search(tag, m, attribute)) out.push_back(m[1]);
  }
  return out;
}

// The text of every element of `svg` with class `cls`, in order.
std::vector<std::string> texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::regex element("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element);
       it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// Pixels a tick label takes at most: DejaVu Sans (Debian's sans-serif)
// draws a digit 0.636 em wide, at font size 10.
double label_width(const std::string& text) {
  return 6.4 * static_cast<double>(text.size());
}

// Issue 36: the y ticks of a metric near 485 500 read as numbers ("485.5k"),
// not "4.855e+05"; the rotated y label is drawn left of the widest tick label,
// not over it; and the last build's label is not cut off at the right edge.
TEST(SvgFigure, TicksReadAsNumbersAndNoLabelIsCoveredOrCut) {
  PlotData d = history("a");
  d.x_ticks.clear();
  for (std::size_t i = 0; i < d.series[0].points.size(); ++i) {
    auto& p = d.series[0].points[i];
    p.label = "nightly-" + std::to_string(i + 3);
    p.mean = 485500 + 300.0 * static_cast<double>(i);
    p.samples = {p.mean - 120, p.mean, p.mean + 140};
    d.x_ticks.emplace_back(p.x, p.label);
  }
  const SvgFigureSpec spec;
  const std::string svg = render_history_svg(d, spec);
  const auto ticks = texts(svg, "y-tick-label");
  ASSERT_GE(ticks.size(), 3u) << svg;
  for (const auto& t : ticks) {
    EXPECT_EQ(t.find('e'), std::string::npos) << t;
    EXPECT_EQ(t.back(), 'k') << t;
  }
  // The y label's glyphs reach from about one font size (11) left of its
  // baseline to 3 px right of it; every tick label ends at its x.
  const auto label_x = attributes(svg, "y-label", "x");
  ASSERT_EQ(label_x.size(), 1u);
  const auto tick_x = attributes(svg, "y-tick-label", "x");
  ASSERT_EQ(tick_x.size(), ticks.size());
  for (std::size_t i = 0; i < ticks.size(); ++i)
    EXPECT_GE(std::stod(tick_x[i]) - label_width(ticks[i]), std::stod(label_x[0]) + 3)
        << ticks[i] << " is drawn under the y label";
  // Every build label lies inside the figure, the last one whole.
  const auto x_labels = texts(svg, "x-tick-label");
  const auto x_at = attributes(svg, "x-tick-label", "x");
  ASSERT_EQ(x_labels.size(), 4u) << svg;
  EXPECT_EQ(x_labels.back(), "nightly-6");
  for (std::size_t i = 0; i < x_labels.size(); ++i) {
    EXPECT_GE(std::stod(x_at[i]) - label_width(x_labels[i]) / 2, 0) << x_labels[i];
    EXPECT_LE(std::stod(x_at[i]) + label_width(x_labels[i]) / 2, spec.width) << x_labels[i];
  }
}

TEST(SvgFigure, RefusesAScalingFigureAndATinySize) {
  PlotData d = history("a");
  EXPECT_THROW(render_history_svg(d, {10, 10, false}), std::invalid_argument);
  d.kind = PlotKind::scaling;
  EXPECT_THROW(render_history_svg(d, {}), std::invalid_argument);
}

SiteCell cell_of(const std::string& id) {
  SiteCell c;
  c.job = "j<1>";
  c.workload = "exec";
  c.page = "cells/0123456789abcdef.html";
  c.testboxes = "box\"1\"";
  c.kernels = "6.1.0";
  c.metric = {.name = "throughput", .unit = "ops/s", .doc = "ops"};
  c.series.workload = "exec";
  c.series.cell = id;
  for (int i = 0; i < 12; ++i) {
    TrendPoint p;
    p.build = "n" + std::to_string(i + 1);
    p.date = "2026-12-01T00:00:00Z";
    p.run_ids = {i + 1};
    p.n = 5;
    p.invalid = i == 3 ? 2 : 0;
    p.mean = i < 6 ? 100.5 : 90.25;
    p.coeff_var = i == 0 ? NAN : 1.5;
    c.series.points.push_back(p);
  }
  stats::ChangePoint cp;
  cp.index = 6;
  cp.segment_end = 12;
  cp.mean_before = 100.5;
  cp.mean_after = 90.25;
  cp.pct_change = -10.2;
  cp.p = 1e-9;
  c.series.change_points.push_back(cp);
  c.figure_svg = "<svg class=\"nightjar-figure\"></svg>";
  c.sparkline_svg = "<svg class=\"nightjar-figure small\"></svg>";
  return c;
}

TEST(HtmlSite, CellPageHoldsTheBuildsTableAndChangePoints) {
  SiteIndex site;
  site.info = {"/db/<r>.db", "2026-12-02T00:00:00Z", "", ""};
  SiteCell c = cell_of("name=<script>alert('x')</script>");
  std::string html = render_site_cell_html(site, c);
  EXPECT_EQ(count(html, "<tr class=\"build-row\">"), 12u);
  EXPECT_EQ(count(html, "<td class=\"num\">100.5</td>"), 6u + 1);  // + the "before" column
  EXPECT_EQ(count(html, "<td class=\"num\">90.25</td>"), 6u + 1);  // + the "after" column
  EXPECT_EQ(count(html, "<td class=\"num\">1.50%</td>"), 11u);
  EXPECT_EQ(count(html, "<td class=\"num\">undefined</td>"), 1u);        // CoeffVar of n1
  EXPECT_EQ(count(html, "<td class=\"num\">2</td><td></td></tr>"), 1u);  // invalid samples of n4
  EXPECT_EQ(count(html, "<tr class=\"change-row\"><td>n7</td>"), 1u);
  // Issue 36: "runs" counts the runs pooled, their ids have a column of
  // their own, and every column has a header.
  EXPECT_EQ(count(html, "<td class=\"num runs\">1</td><td class=\"run-ids\">"), 12u) << html;
  EXPECT_EQ(count(html, "<td class=\"run-ids\">12</td>"), 1u) << html;
  EXPECT_EQ(count(html, "<th></th>"), 0u) << html;
  EXPECT_NE(html.find("<th>invalid samples</th><th>change point</th></tr>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\">-10.20%</td><td class=\"num\">1.0e-09</td>"
                      "<td class=\"regression\">regression</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<dd class=\"testbox\">box&quot;1&quot;</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dd class=\"database\">/db/&lt;r&gt;.db</dd>"), std::string::npos);
  EXPECT_NE(html.find("name=&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "<svg class=\"nightjar-figure\"></svg>"), 1u);  // the figure, as markup
}

TEST(HtmlSite, IndexListsCellsWithFiltersAndStatus) {
  SiteIndex site;
  site.cells.push_back(cell_of("a=1"));
  site.cells.push_back(cell_of("a=2"));
  site.cells[1].series.change_points.clear();
  site.cells[1].job = "other";
  site.notes.push_back("job x left out: <why>");
  std::string html = render_site_index_html(site);
  EXPECT_EQ(count(html, "<tr class=\"cell-row\""), 2u);
  EXPECT_EQ(count(html, "<a href=\"cells/0123456789abcdef.html\">"), 2u);
  EXPECT_EQ(count(html, "<td class=\"status regression\">regression since n7 (-10.20%)</td>"), 1u)
      << html;
  EXPECT_EQ(count(html, "<td class=\"status none\">no change</td>"), 1u);
  EXPECT_EQ(count(html, "<option>j&lt;1&gt;</option>"), 1u);
  EXPECT_EQ(count(html, "<option>other</option>"), 1u);
  EXPECT_EQ(count(html, "<option>box&quot;1&quot;</option>"), 1u);
  EXPECT_NE(html.find("job x left out: &lt;why&gt;"), std::string::npos);
  EXPECT_EQ(count(html, "<svg class=\"nightjar-figure small\"></svg>"), 2u);
  EXPECT_EQ(count(html, "<script"), 1u);  // the filter script only
}

// Issue 36: a long history's row lists only its newest three change points
// (the cell page lists every one), with a count of the earlier ones, so the
// index does not grow wider with the history.
TEST(HtmlSite, IndexListsTheNewestThreeChangePoints) {
  SiteIndex site;
  site.cells.push_back(cell_of("a=1"));
  auto& cps = site.cells[0].series.change_points;
  const stats::ChangePoint first = cps[0];
  cps.clear();
  for (std::size_t i : {2, 4, 6, 8, 10}) {
    stats::ChangePoint cp = first;
    cp.index = i;
    cp.pct_change = static_cast<double>(i);
    cps.push_back(cp);
  }
  std::string html = render_site_index_html(site);
  EXPECT_EQ(count(html, "<span class=\"earlier\">2 earlier</span>"), 1u) << html;
  EXPECT_EQ(count(html, "n3 +2.00%"), 0u) << html;
  EXPECT_EQ(count(html, "n5 +4.00%"), 0u) << html;
  EXPECT_NE(html.find("n7 +6.00%</span> <span class=\"improvement\">n9 +8.00%</span> "
                      "<span class=\"improvement\">n11 +10.00%</span>"),
            std::string::npos)
      << html;
  cps.resize(3);
  html = render_site_index_html(site);
  EXPECT_EQ(count(html, "earlier"), 0u) << html;
  EXPECT_EQ(count(html, "n3 +2.00%"), 1u) << html;
}

// cell_of(id) whose job's latest comparison (base build `base`) gives its
// row verdict `verdict` at `pct` %change.
SiteCell with_verdict(const std::string& id, const std::string& verdict, double pct,
                      const std::string& base) {
  SiteCell c = cell_of(id);
  c.latest_verdict_class = verdict;
  c.latest_verdict = verdict + fmt::format(" ({:+.2f}%)", pct);
  c.latest_pct = pct;
  c.latest_base = base;
  c.latest_comparison = {"build=" + base + " vs build=n12", "compare/1.html"};
  return c;
}

// Issue 36: the status of a cell with a latest verdict comes from that
// verdict, so the two columns agree: a +7.81% improvement the trend has no
// change point for yet reads "improvement vs BASE (+7.81%), not yet a change
// point", not "no change"; a regression the trend dates after the base reads
// "regression since BUILD"; an unchanged cell reads "no change since BASE".
TEST(HtmlSite, StatusAndLatestVerdictComeFromTheSameDecision) {
  SiteIndex site;
  SiteCell up = with_verdict("c=up", "improvement", 7.8125, "n6");
  up.series.change_points.clear();
  SiteCell down = with_verdict("c=down", "regression", -10.2, "n6");  // change point at n7
  SiteCell flat = with_verdict("c=flat", "unchanged", 0.1, "n6");
  flat.series.change_points.clear();
  // Its change point (n7) lies before the comparison's base.
  SiteCell old = with_verdict("c=old", "regression", -3, "n9");
  site.cells = {up, down, flat, old};
  const std::string html = render_site_index_html(site);
  EXPECT_EQ(count(html,
                  "<td class=\"status improvement\">improvement vs n6 (+7.81%), not yet a "
                  "change point</td>"),
            1u)
      << html;
  EXPECT_EQ(count(html, "<td class=\"status regression\">regression since n7 (-10.20%)</td>"), 1u)
      << html;
  EXPECT_EQ(count(html, "<td class=\"status unchanged\">no change since n6</td>"), 1u) << html;
  EXPECT_EQ(count(html,
                  "<td class=\"status regression\">regression vs n9 (-3.00%), not yet a "
                  "change point</td>"),
            1u)
      << html;
  EXPECT_EQ(count(html, "no change</td>"), 0u) << html;
}

// A comparison page: one column group per side, the NEW side's verdict
// columns, a mean measured under qemu TCG tagged as in the text layouts, and
// the warnings (here: the sides' testboxes differ) with the notes.
TEST(HtmlSite, ComparisonPageTagsTcgMeansAndShowsTheWarnings) {
  SiteComparison sc;
  sc.title = "theirs vs mine";
  sc.page = "compare/0001.html";
  Comparison& c = sc.comparison;
  c.verdict = "1 regression, 0 improvements, 0 unchanged, 0 inconclusive";
  c.sides = {{"theirs", {1}, {"a"}, {}, {"6.1.0"}, {"sender-box"}, {}},
             {"mine", {2}, {"b"}, {}, {"6.1.0"}, {"box1"}, {}}};
  c.warnings = {
      "sides ran on different testboxes: theirs (sender-box) vs mine (box1): the "
      "difference includes the machines, not only the change"};
  c.notes = {"a <note>"};
  ComparisonRow r;
  r.cell = "clients=1";
  r.name = "throughput";
  r.unit = "ops/s";
  r.sides.resize(2);
  r.sides[0].mean = 100;
  r.sides[1].mean = 90;
  r.sides[1].emulated = true;
  r.change_pct = r.plain_change_pct = {0, -10};
  stats::Significance sig;
  sig.verdict = stats::Verdict::regression;
  sig.p = sig.q = 1e-5;
  r.significance = {std::nullopt, sig};
  c.rows = {r};
  ComparisonRow m = r;
  m.kind = ComparisonRow::Kind::monitor;
  m.name = "vmstat.pgfault";
  m.sides[1].emulated = false;
  c.rows.push_back(m);
  const std::string html = render_site_comparison_html(SiteIndex{}, sc);
  EXPECT_EQ(count(html, "<tr class=\"compare-row\">"), 1u) << html;
  EXPECT_EQ(count(html, "<tr class=\"monitor-row\">"), 1u) << html;
  EXPECT_NE(html.find("<th>theirs: mean</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<th>mine: %change</th>"), std::string::npos) << html;
  EXPECT_EQ(count(html, "<th>theirs: %change</th>"), 0u) << html;
  // Issue 36: the decision (%change, verdict, p, q) comes right after the
  // means, before the spread, and every table scrolls in its own box.
  EXPECT_NE(html.find("<th>theirs: mean</th><th>mine: mean</th><th>mine: %change</th>"
                      "<th>verdict</th><th>p</th><th>q</th><th>theirs: CoeffVar</th>"),
            std::string::npos)
      << html;
  EXPECT_EQ(count(html, "<div class=\"scroll\"><table"), 3u) << html;  // sides, metrics, monitors
  EXPECT_EQ(count(html, "<span class=\"emulated\" title=\"TCG: measures emulation\">[TCG]</span>"),
            1u)
      << html;
  EXPECT_NE(html.find("<p class=\"note\">warning: sides ran on different testboxes: theirs "
                      "(sender-box) vs mine (box1)"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<p class=\"note\">note: a &lt;note&gt;</p>"), std::string::npos) << html;
  EXPECT_NE(html.find("<dd class=\"testbox\">box1, sender-box</dd>"), std::string::npos) << html;
}

}  // namespace
}  // namespace nightjar

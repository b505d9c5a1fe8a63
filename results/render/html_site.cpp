// The pages of `nightjar publish` (results/render/html_site.h).
#include "results/render/html_site.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <kainjow/mustache.hpp>
#include <ranges>
#include <set>
#include <span>
#include <stdexcept>
#include <utility>

#include "results/model/text.h"
#include "results/render/environment.h"

namespace nightjar {
namespace {

namespace mu = kainjow::mustache;

// Shared by every page: style and the source header. {{{...}}} appears only
// for markup this file or plots/svg.h rendered through a template.
constexpr const char* kHead = R"TPL(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{page_title}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.4em; text-align: left; vertical-align: middle; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.regression { color: #b00000; font-weight: bold; }
.improvement { color: #006000; font-weight: bold; }
.possible { color: #a06000; }
.source { color: #555; font-size: 0.9em; }
.filters select { margin-right: 1em; }
.cell-id { overflow-wrap: anywhere; min-width: 9em; }
table.cells { width: 100%; }
pre { overflow-x: auto; }
.scroll { overflow-x: auto; }
.emulated { font-size: 0.85em; color: #7a4a00; }
.confounder { color: #a06000; font-weight: bold; }
</style>
</head>
<body>
<h1>{{page_title}}</h1>
<dl class="source">
<dt>database</dt><dd class="database">{{database}}</dd>
<dt>testbox</dt><dd class="testbox">{{testboxes}}</dd>
<dt>kernels</dt><dd class="kernels">{{kernels}}</dd>
<dt>generated</dt><dd class="generated">{{generated_at}}</dd>
</dl>
{{#back}}<p><a href="../index.html">index</a></p>
{{/back}})TPL";

constexpr const char* kIndex = R"TPL({{{head}}}<p>{{method}}</p>
<form class="filters" id="filters">
{{#filters}}<label>{{name}} <select data-filter="{{key}}"><option value="">(all)</option>{{#values}}<option>{{.}}</option>{{/values}}</select></label>
{{/filters}}</form>
<table class="cells" id="cells">
<thead><tr><th>job</th><th>workload</th><th>cell</th><th>metric</th><th>history</th><th>builds</th><th>latest build</th><th>latest value</th><th>change points</th><th>status</th><th>latest verdict</th></tr></thead>
<tbody>
{{#cells}}<tr class="cell-row" data-job="{{job}}" data-workload="{{workload}}" data-testbox="{{testboxes}}" data-kernel="{{kernels}}">
<td>{{job}}</td><td>{{workload}}</td><td class="cell-id"><a href="{{page}}">{{cell}}</a></td><td>{{metric}}</td><td>{{{sparkline}}}</td><td class="num">{{builds}}</td><td>{{latest_build}}</td><td class="num">{{latest_value}}</td>
<td class="changes">{{#earlier}}<span class="earlier">{{.}}</span> {{/earlier}}{{#changes}}<span class="{{verdict}}">{{build}} {{pct}}</span> {{/changes}}{{^changes}}none{{/changes}}</td><td class="status {{status_class}}">{{status}}</td><td class="verdict {{verdict_class}}">{{#verdict_page}}<a href="{{verdict_page}}">{{verdict}}</a>{{/verdict_page}}{{^verdict_page}}none{{/verdict_page}}</td></tr>
{{/cells}}</tbody>
</table>
{{#has_comparisons}}<h2>Comparisons</h2>
<ul class="comparisons">
{{#comparisons}}<li><a href="{{page}}">{{title}}</a>: {{verdict}}{{#confounders}} <span class="confounder">({{.}})</span>{{/confounders}}</li>
{{/comparisons}}</ul>
{{/has_comparisons}}{{#has_bisects}}<h2>Bisect sessions</h2>
<ul class="bisects">
{{#bisects}}<li><a href="{{page}}">bisect session {{id}}</a>: {{job}} {{metric}}, {{status}}{{#first_bad}}, first bad commit {{first_bad}}{{/first_bad}}</li>
{{/bisects}}</ul>
{{/has_bisects}}{{#notes}}<p class="note">{{.}}</p>
{{/notes}}<script>
(function () {
  var selects = document.querySelectorAll('#filters select');
  function apply() {
    var rows = document.querySelectorAll('#cells tr.cell-row');
    for (var i = 0; i < rows.length; i++) {
      var show = true;
      for (var j = 0; j < selects.length; j++) {
        var want = selects[j].value, key = selects[j].getAttribute('data-filter');
        if (want !== '' && rows[i].getAttribute('data-' + key).split(', ').indexOf(want) < 0) show = false;
      }
      rows[i].style.display = show ? '' : 'none';
    }
  }
  for (var k = 0; k < selects.length; k++) selects[k].addEventListener('change', apply);
})();
</script>
)TPL";

constexpr const char* kCell = R"TPL({{{head}}}<dl class="cell-facts">
<dt>job</dt><dd>{{job}}</dd><dt>workload</dt><dd>{{workload}}</dd>
<dt>cell</dt><dd class="cell-id">{{cell}}</dd>
<dt>metric</dt><dd>{{metric}} ({{unit}}, {{better}} is better, {{mean_kind}})</dd>
</dl>
<figure>{{{figure}}}<figcaption>every sample as a dot, the {{mean_kind}} of each build as a line, change points as dashed lines</figcaption></figure>
{{#has_audits}}<h2>Error rates on this testbox</h2>
<p>measured by <code>nightjar audit</code>: A/A pairs compared as compare does (false alarms, decided unchanged) and with a known regression injected (power); 95% Wilson intervals</p>
<ul class="audits">
{{#audits}}<li class="audit">{{.}}</li>
{{/audits}}</ul>
{{/has_audits}}<h2>Change points</h2>
<p>{{method}}</p>
{{#has_changes}}<table class="changes">
<thead><tr><th>at build</th><th>date</th><th>before</th><th>after</th><th>%change</th><th>p</th><th>verdict</th></tr></thead>
<tbody>
{{#changes}}<tr class="change-row"><td>{{build}}</td><td>{{date}}</td><td class="num">{{before}}</td><td class="num">{{after}}</td><td class="num">{{pct}}</td><td class="num">{{p}}</td><td class="{{verdict}}">{{verdict}}</td></tr>
{{/changes}}</tbody>
</table>
{{/has_changes}}{{^has_changes}}<p class="no-changes">no change point in {{builds}} build(s){{#too_short}} (too short: needs {{needed}} builds){{/too_short}}</p>
{{/has_changes}}{{#possible}}<p class="possible">{{.}}</p>
{{/possible}}<h2>Builds</h2>
<table class="builds">
<thead><tr><th>#</th><th>build</th><th>date</th><th>runs</th><th>run ids</th><th>n</th><th>{{mean_kind}} ({{unit}})</th><th>CoeffVar</th><th>invalid samples</th><th>change point</th></tr></thead>
<tbody>
{{#points}}<tr class="build-row"><td class="num">{{i}}</td><td>{{build}}</td><td>{{date}}</td><td class="num runs">{{runs}}</td><td class="run-ids">{{run_ids}}</td><td class="num">{{n}}</td><td class="num">{{mean}}</td><td class="num">{{cv}}</td><td class="num">{{invalid}}</td><td>{{#change}}<span class="{{change}}">change point</span>{{/change}}</td></tr>
{{/points}}</tbody>
</table>
{{#has_comparisons}}<h2>Comparisons</h2>
<ul class="comparisons">
{{#comparisons}}<li><a href="../{{page}}">{{text}}</a></li>
{{/comparisons}}</ul>
{{/has_comparisons}})TPL";

constexpr const char* kCompare = R"TPL({{{head}}}<h2>Sides</h2>
<div class="scroll"><table class="sides">
<thead><tr><th>side</th><th>selector</th><th>runs</th><th>variants</th><th>builds</th><th>kernels</th><th>testboxes</th><th>excluded runs</th></tr></thead>
<tbody>
{{#sides}}<tr><td>{{role}}</td><td>{{name}}</td><td>{{runs}}</td><td>{{variants}}</td><td>{{builds}}</td><td>{{kernels}}</td><td>{{testboxes}}</td><td>{{excluded}}</td></tr>
{{/sides}}</tbody>
</table></div>
<p class="verdict-line"><strong>{{verdict}}</strong></p>
{{#flame_page}}<p class="flame-link"><a href="../{{flame_page}}">differential flame graph</a> of the perf-profile samples (red: more in NEW, blue: fewer than BASE)</p>
{{/flame_page}}
<h2>Metrics</h2>
<div class="scroll"><table class="compare">
<thead><tr><th>cell</th><th>metric</th>{{#side_names}}<th>{{.}}: mean</th>{{/side_names}}{{#new_names}}<th>{{.}}: %change</th><th>verdict</th><th>p</th><th>q</th>{{/new_names}}{{#side_names}}<th>{{.}}: CoeffVar</th><th>n</th><th>within / between-run CoeffVar</th>{{/side_names}}</tr></thead>
<tbody>
{{#rows}}<tr class="compare-row"><td class="cell-id">{{cell}}</td><td>{{metric}}</td>{{#sides}}<td class="num">{{mean}}{{#emulated}} <span class="emulated" title="TCG: measures emulation">{{emulated}}</span>{{/emulated}}</td>{{/sides}}{{#news}}<td class="num">{{pct}}</td><td class="{{verdict}}" title="{{reason}}">{{verdict}}</td><td class="num">{{p}}</td><td class="num">{{q}}</td>{{/news}}{{#sides}}<td class="num">{{cv}}</td><td>{{n}}</td><td class="num">{{within}} / {{between}}</td>{{/sides}}</tr>
{{/rows}}</tbody>
</table></div>
{{#has_monitors}}<h2>Monitors</h2>
<div class="scroll"><table class="monitors">
<thead><tr><th>cell</th><th>monitor</th>{{#side_names}}<th>{{.}}: Amean</th>{{/side_names}}{{#new_names}}<th>{{.}}: %change</th>{{/new_names}}</tr></thead>
<tbody>
{{#monitors}}<tr class="monitor-row"><td class="cell-id">{{cell}}</td><td>{{metric}}</td>{{#sides}}<td class="num">{{mean}}</td>{{/sides}}{{#news}}<td class="num">{{pct}}</td>{{/news}}</tr>
{{/monitors}}</tbody>
</table></div>
{{/has_monitors}}{{#environment}}<h2>Environment: {{new}} against {{base}}</h2>
<p class="environment-header">{{header}}</p>
<div class="scroll"><table class="environment">
<thead><tr><th>kind</th><th>fact</th><th>{{base}}</th><th>{{new}}</th></tr></thead>
<tbody>
{{#facts}}<tr class="fact-row {{kind}}"><td class="{{kind}}">{{kind}}</td><td>{{key}}</td><td>{{base_value}}</td><td>{{new_value}}</td></tr>
{{/facts}}</tbody>
</table></div>
{{#kconfig_title}}<p class="kconfig-title">{{kconfig_title}}</p>
{{/kconfig_title}}{{#has_kconfig}}<pre class="kconfig">{{#kconfig}}{{.}}
{{/kconfig}}</pre>
{{/has_kconfig}}{{/environment}}{{#unmatched}}<p class="unmatched">cell {{cell}} of {{job}} only on {{sides}}</p>
{{/unmatched}}{{#messages}}<p class="note">{{.}}</p>
{{/messages}}<h2>As nightjar compare prints it</h2>
<pre class="mmtests">{{mmtests}}</pre>
)TPL";

constexpr const char* kBisect = R"TPL({{{head}}}<dl class="bisect-session">
<dt>kind</dt><dd>{{kind}}</dd><dt>repository</dt><dd>{{repo}}</dd>
<dt>good</dt><dd>{{good_rev}} ({{good}})</dd><dt>bad</dt><dd>{{bad_rev}} ({{bad}})</dd>
<dt>job</dt><dd>{{job}}</dd><dt>metric</dt><dd>{{metric}}</dd>
<dt>status</dt><dd class="bisect-status">{{status}}</dd><dt>result</dt><dd>{{result}}</dd>
<dt>first bad commit</dt><dd class="first-bad">{{first_bad}}</dd>
<dt>started</dt><dd>{{started_at}}</dd><dt>ended</dt><dd>{{ended_at}}</dd>
</dl>
{{#table_page}}<p class="first-bad-table">the first bad commit against the good one: <a href="../{{table_page}}">{{table_text}}</a></p>
{{/table_page}}<h2>Steps</h2>
<div class="scroll"><table class="bisect-steps">
<thead><tr><th>step</th><th>commit</th><th>subject</th><th>role</th><th>build</th><th>build s</th><th>decision</th><th>verdict</th><th>%change</th><th>p</th><th>q</th><th>n base / new</th><th>runs</th><th>reason</th></tr></thead>
<tbody>
{{#steps}}<tr class="bisect-step{{#first_bad}} first-bad{{/first_bad}}"><td class="num">{{step}}</td><td><code>{{commit}}</code></td><td>{{subject}}</td><td>{{role}}</td><td>{{build}}</td><td class="num">{{build_seconds}}</td><td class="{{decision}}">{{decision}}</td><td>{{verdict}}</td><td class="num">{{pct}}</td><td class="num">{{p}}</td><td class="num">{{q}}</td><td class="num">{{n}}</td><td>{{runs}}</td><td>{{reason}}</td></tr>
{{/steps}}</tbody>
</table></div>
<h2>As nightjar bisect log prints it</h2>
<pre class="bisect-log">{{log}}</pre>
)TPL";

// A mustache list of `items`, each element made by `make(item)` (a
// mu::data: an object, or a string for {{.}}): the one loop that builds
// every list of the pages.
template <class Range, class Make>
mu::data list_of(Range&& items, Make make) {
  mu::data out{mu::data::type::list};
  for (auto&& x : items) out.push_back(mu::data(make(x)));
  return out;
}

// A list of strings, each shown by {{.}}.
template <class Range>
mu::data list_of(Range&& items) {
  return list_of(std::forward<Range>(items), [](const std::string& x) { return x; });
}

// The indexes [from, to) of a list whose elements need their position.
auto positions(std::size_t from, std::size_t to) {
  return std::views::iota(from, std::max(from, to));
}

// A page: `text` rendered with `d`, then the end of the document.
std::string render(const char* text, const mu::data& d) {
  mu::mustache tmpl{text};
  if (!tmpl.is_valid()) throw std::logic_error("html_site: template: " + tmpl.error_message());
  return tmpl.render(d) + "</body>\n</html>\n";
}

std::string value_text(double v) {
  return std::isfinite(v) ? fmt::format("{:.6g}", v) : "undefined";
}

// The page header; `back`: a page one folder below the index, with a link to it.
std::string head(const HtmlPageInfo& info, const std::string& title, bool back = true) {
  mu::data d;
  d.set("back", back);
  d.set("page_title", title);
  d.set("database", info.database);
  d.set("testboxes", info.testboxes);
  d.set("kernels", info.kernels);
  d.set("generated_at", info.generated_at);
  mu::mustache tmpl{kHead};
  return tmpl.render(d);
}

std::string method_text(const stats::ChangePointOptions& o) {
  return fmt::format(
      "Change points: E-divisive means with a Welch t-test on log values (nightjar trend), kept "
      "when p <= {:g} and |%change| >= {:g}%, at least {} builds on each side.",
      o.max_p, o.min_effect_pct, o.min_segment);
}

// Change points listed per cell on the index: the newest three (a long
// history has more than a row can hold; the cell page lists every one).
constexpr std::size_t kIndexChanges = 3;

// The trend's newest change: the possible change of the newest builds, else
// the last change point; nullptr when there is none.
const stats::ChangePoint* newest_change(const TrendSeries& s) {
  if (s.possible_change) return &*s.possible_change;
  return s.change_points.empty() ? nullptr : &s.change_points.back();
}

// The trend's status of the newest builds: the possible change, else the
// last change point's verdict, else "no change".
std::pair<std::string, std::string> trend_status(const TrendSeries& s) {
  const stats::ChangePoint* cp = newest_change(s);
  if (!cp) return {"no change", "none"};
  const bool possible = s.possible_change && cp == &*s.possible_change;
  return {fmt::format("{}{} since {} ({:+.2f}%)", possible ? "possible " : "",
                      stats::verdict_word(*cp), s.points[cp->index].build, cp->pct_change),
          possible ? "possible" : stats::verdict_word(*cp)};
}

// The status of a cell on the index. With a latest verdict, that verdict
// decides, so that the status and verdict columns never disagree: a
// regression or improvement is dated by the trend's newest change when that
// change goes the same way and starts after the comparison's base build,
// else it says that the trend has no change point for it yet. Without a
// latest verdict, the trend's status.
std::pair<std::string, std::string> status_of(const SiteCell& c) {
  const std::string& verdict = c.latest_verdict_class;
  if (verdict.empty()) return trend_status(c.series);
  const std::string pct =
      std::isfinite(c.latest_pct) ? fmt::format(" ({:+.2f}%)", c.latest_pct) : std::string();
  if (verdict != "regression" && verdict != "improvement")
    return {verdict == "unchanged" ? "no change since " + c.latest_base
                                   : verdict + " vs " + c.latest_base,
            verdict};
  const auto& pts = c.series.points;
  const auto base = std::find_if(pts.begin(), pts.end(),
                                 [&](const TrendPoint& p) { return p.build == c.latest_base; });
  const stats::ChangePoint* cp = newest_change(c.series);
  if (cp && verdict == stats::verdict_word(*cp) && base != pts.end() &&
      cp->index > static_cast<std::size_t>(base - pts.begin()))
    return {
        fmt::format("{}{} since {}{}",
                    c.series.possible_change && cp == &*c.series.possible_change ? "possible " : "",
                    verdict, pts[cp->index].build, pct),
        verdict};
  return {fmt::format("{} vs {}{}, not yet a change point", verdict, c.latest_base, pct), verdict};
}

mu::data filter(const std::string& name, const std::string& key, const std::set<std::string>& v) {
  mu::data f;
  f.set("name", name);
  f.set("key", key);
  f.set("values", list_of(v));
  return f;
}

mu::data index_row(const SiteCell& c) {
  mu::data row;
  row.set("job", c.job);
  row.set("workload", c.workload);
  row.set("testboxes", c.testboxes);
  row.set("kernels", c.kernels);
  row.set("page", c.page);
  row.set("cell", c.series.cell.empty() ? "(no parameters)" : c.series.cell);
  row.set("metric", c.metric.name);
  row.set("sparkline", c.sparkline_svg);
  row.set("builds", std::to_string(c.series.points.size()));
  const TrendPoint* last = c.series.points.empty() ? nullptr : &c.series.points.back();
  row.set("latest_build", last ? last->build : "");
  row.set("latest_value", last ? value_text(last->mean) + " " + c.metric.unit : "");
  // The newest kIndexChanges change points; the cell page lists them all.
  const auto& all = c.series.change_points;
  const std::size_t shown = std::min(all.size(), kIndexChanges);
  row.set("earlier", all.size() > shown ? mu::data{std::to_string(all.size() - shown) + " earlier"}
                                        : mu::data{false});
  row.set("changes",
          list_of(std::span(all).subspan(all.size() - shown), [&](const stats::ChangePoint& cp) {
            mu::data ch;
            ch.set("build", c.series.points[cp.index].build);
            ch.set("pct", fmt::format("{:+.2f}%", cp.pct_change));
            ch.set("verdict", stats::verdict_word(cp));
            return ch;
          }));
  auto [status, cls] = status_of(c);
  row.set("status", status);
  row.set("status_class", cls);
  row.set("verdict", c.latest_verdict);
  row.set("verdict_class", c.latest_verdict_class);
  row.set("verdict_page",
          c.latest_comparison.page.empty() ? mu::data{false} : mu::data{c.latest_comparison.page});
  return row;
}

}  // namespace

std::string render_site_index_html(const SiteIndex& site) {
  mu::data d;
  d.set("head", head(site.info, "nightjar: nightly history", false));
  d.set("method", method_text(site.detection));
  std::set<std::string> jobs, workloads, testboxes, kernels;
  for (const auto& c : site.cells) {
    jobs.insert(c.job);
    workloads.insert(c.workload);
    for (const auto& t : split(c.testboxes, ',')) testboxes.insert(std::string(trim(t)));
    for (const auto& k : split(c.kernels, ',')) kernels.insert(std::string(trim(k)));
  }
  mu::data filters{mu::data::type::list};
  filters.push_back(filter("job", "job", jobs));
  filters.push_back(filter("workload", "workload", workloads));
  filters.push_back(filter("testbox", "testbox", testboxes));
  filters.push_back(filter("kernel", "kernel", kernels));
  d.set("filters", filters);
  d.set("cells", list_of(site.cells, index_row));
  d.set("has_comparisons", !site.comparisons.empty());
  d.set("comparisons", list_of(site.comparisons, [](const SiteComparison& c) {
          mu::data l;
          l.set("title", c.title);
          l.set("page", c.page);
          l.set("verdict", c.comparison.verdict);
          std::size_t confounders = 0;
          for (const auto& e : c.comparison.environment) confounders += e.confounders().size();
          l.set("confounders",
                confounders == 0 ? mu::data{false}
                                 : mu::data{fmt::format("{} environment confounder{}", confounders,
                                                        confounders == 1 ? "" : "s")});
          return l;
        }));
  d.set("has_bisects", !site.bisects.empty());
  d.set("bisects", list_of(site.bisects, [](const SiteBisect& b) {
          mu::data l;
          l.set("id", std::to_string(b.session.id));
          l.set("page", b.page);
          l.set("job", b.session.job);
          l.set("metric", b.session.metric);
          l.set("status", to_string(b.session.status));
          l.set("first_bad",
                b.session.first_bad.empty() ? mu::data{false} : mu::data{b.session.first_bad});
          return l;
        }));
  d.set("notes", list_of(site.notes));
  return render(kIndex, d);
}

std::string render_site_cell_html(const SiteIndex& site, const SiteCell& c) {
  HtmlPageInfo info = site.info;
  info.testboxes = c.testboxes;
  info.kernels = c.kernels;
  const TrendSeries& s = c.series;
  mu::data d;
  d.set("head", head(info, "nightjar: " + c.job + " " + c.metric.name));
  d.set("job", c.job);
  d.set("workload", c.workload);
  d.set("cell", s.cell.empty() ? "(no parameters)" : s.cell);
  d.set("metric", c.metric.name);
  d.set("unit", c.metric.unit.empty() ? "no unit" : c.metric.unit);
  d.set("better", c.metric.direction == Direction::higher_is_better ? "higher" : "lower");
  d.set("mean_kind", mean_label(c.metric.mean));
  d.set("figure", c.figure_svg);
  d.set("has_audits", !c.audits.empty());
  d.set("audits", list_of(c.audits));
  d.set("method", method_text(site.detection));
  d.set("builds", std::to_string(s.points.size()));
  d.set("too_short", s.points.size() < 2 * site.detection.min_segment);
  d.set("needed", std::to_string(2 * site.detection.min_segment));
  d.set("has_changes", !s.change_points.empty());
  std::map<std::size_t, std::string> at;
  for (const auto& cp : s.change_points) at[cp.index] = stats::verdict_word(cp);
  d.set("changes", list_of(s.change_points, [&](const stats::ChangePoint& cp) {
          const TrendPoint& p = s.points[cp.index];
          mu::data r;
          r.set("build", p.build);
          r.set("date", p.date);
          r.set("before", value_text(cp.mean_before));
          r.set("after", value_text(cp.mean_after));
          r.set("pct", fmt::format("{:+.2f}%", cp.pct_change));
          r.set("p", p_text(cp.p));
          r.set("verdict", stats::verdict_word(cp));
          return r;
        }));
  std::vector<std::string> possible;
  if (s.possible_change) possible.push_back(trend_status(s).first + ", needs confirmation");
  d.set("possible", list_of(possible));
  d.set("points", list_of(positions(0, s.points.size()), [&](std::size_t i) {
          const TrendPoint& p = s.points[i];
          mu::data r;
          r.set("i", std::to_string(i + 1));
          r.set("build", p.build);
          r.set("date", p.date);
          std::vector<std::string> runs;
          for (auto id : p.run_ids) runs.push_back(std::to_string(id));
          r.set("runs", std::to_string(p.run_ids.size()));
          r.set("run_ids", join(runs));
          r.set("n", std::to_string(p.n));
          r.set("mean", value_text(p.mean));
          r.set("cv",
                std::isfinite(p.coeff_var) ? fmt::format("{:.2f}%", p.coeff_var) : "undefined");
          r.set("invalid", std::to_string(p.invalid));
          r.set("change", at.count(i) ? mu::data{at[i]} : mu::data{false});
          return r;
        }));
  d.set("has_comparisons", !c.comparisons.empty());
  d.set("comparisons", list_of(c.comparisons, [](const SiteLink& l) {
          mu::data x;
          x.set("text", l.text);
          x.set("page", l.page);
          return x;
        }));
  return render(kCell, d);
}

namespace {

std::string optional_p(const std::optional<double>& p) {
  return p ? p_text(*p) : "-";
}

std::string cv_text(double cv) {
  return std::isfinite(cv) ? fmt::format("{:.2f}%", cv) : "undefined";
}

mu::data comparison_sides(const Comparison& c) {
  return list_of(positions(0, c.sides.size()), [&](std::size_t i) {
    const ComparisonSide& s = c.sides[i];
    mu::data d;
    d.set("role", i == 0 ? std::string("BASE") : "NEW " + std::to_string(i));
    d.set("name", s.name);
    d.set("runs", std::to_string(s.run_ids.size()));
    d.set("variants", join(s.variants));
    d.set("builds", join(s.builds));
    d.set("kernels", join(s.kernels));
    d.set("testboxes", join(s.testboxes));
    std::vector<std::string> excluded;
    for (const auto& e : s.excluded)
      excluded.push_back(std::to_string(e.id) + " " + to_string(e.status));
    d.set("excluded", excluded.empty() ? std::string("none") : join(excluded));
    return d;
  });
}

mu::data comparison_row(const Comparison& c, const ComparisonRow& r) {
  mu::data d;
  d.set("cell", r.cell.empty() ? "(no parameters)" : r.cell);
  d.set("metric", r.unit.empty() ? r.name : r.name + " (" + r.unit + ")");
  d.set("sides", list_of(r.sides, [&](const SideFigures& f) {
          mu::data x;
          x.set("mean", f.mean ? value_text(*f.mean) : "undefined");
          // Figures of a run under qemu TCG: the tag the text layouts print.
          x.set("emulated", f.emulated ? mu::data{kEmulationTag} : mu::data{false});
          x.set("cv", cv_text(f.summary.coeff_var));
          x.set("n", sample_count_text(f, c.include_invalid));
          x.set("within", cv_text(f.within_cv_pct));
          x.set("between", cv_text(f.between_cv_pct));
          return x;
        }));
  d.set("news", list_of(positions(1, r.sides.size()), [&](std::size_t i) {
          mu::data x;
          const double pct = i < r.change_pct.size() ? r.change_pct[i] : NAN;
          x.set("pct", std::isfinite(pct) ? fmt::format("{:+.2f}%", pct) : "undefined");
          const auto& sig = i < r.significance.size() ? r.significance[i] : std::nullopt;
          x.set("p", sig ? optional_p(sig->p) : "-");
          x.set("q", sig ? optional_p(sig->q) : "-");
          x.set("verdict", sig ? std::string(to_string(sig->verdict)) : "-");
          x.set("reason", sig ? sig->reason : "");
          return x;
        }));
  return d;
}

// One NEW side's environment diff on the compare page: the header, a row per
// differing fact (classed by kind, so confounders stand out), and the whole
// kernel config diff (docs/environment.md).
mu::data environment_block(const EnvironmentDiff& e) {
  mu::data x;
  x.set("base", e.base_name);
  x.set("new", e.now_name);
  x.set("header", environment_header(e));
  x.set("facts", list_of(e.facts, [](const FactDifference& f) {
          mu::data r;
          r.set("kind", fact_kind(f));
          r.set("key", f.key);
          r.set("base_value", f.base);
          r.set("new_value", f.now);
          return r;
        }));
  if (e.kconfig && e.kconfig->count() > 0) {
    x.set("kconfig_title", "kernel config: " + kconfig_count_text(*e.kconfig));
    x.set("has_kconfig", true);
    x.set("kconfig", list_of(kconfig_lines(*e.kconfig)));
  } else if (!e.kconfig_note.empty()) {
    x.set("kconfig_title", "kernel config: " + e.kconfig_note);
  }
  return x;
}

}  // namespace

std::string render_site_comparison_html(const SiteIndex& site, const SiteComparison& sc) {
  const Comparison& c = sc.comparison;
  HtmlPageInfo info = site.info;
  std::set<std::string> testboxes, kernels;
  for (const auto& s : c.sides) {
    testboxes.insert(s.testboxes.begin(), s.testboxes.end());
    kernels.insert(s.kernels.begin(), s.kernels.end());
  }
  info.testboxes = join(std::vector<std::string>(testboxes.begin(), testboxes.end()));
  info.kernels = join(std::vector<std::string>(kernels.begin(), kernels.end()));
  mu::data d;
  d.set("head", head(info, "nightjar: " + sc.title));
  d.set("sides", comparison_sides(c));
  d.set("verdict", c.verdict);
  if (!sc.flame_page.empty()) d.set("flame_page", sc.flame_page);
  std::vector<std::string> names;
  for (const auto& side : c.sides) names.push_back(side.name);
  d.set("side_names", list_of(names));
  d.set("new_names", list_of(std::span(names).subspan(1)));
  auto rows_of = [&](ComparisonRow::Kind kind) {
    return list_of(c.rows | std::views::filter([kind](const auto& r) { return r.kind == kind; }),
                   [&](const ComparisonRow& r) { return comparison_row(c, r); });
  };
  d.set("rows", rows_of(ComparisonRow::Kind::metric));
  d.set("has_monitors", std::any_of(c.rows.begin(), c.rows.end(), [](const ComparisonRow& r) {
          return r.kind == ComparisonRow::Kind::monitor;
        }));
  d.set("monitors", rows_of(ComparisonRow::Kind::monitor));
  d.set("unmatched", list_of(c.unmatched, [](const UnmatchedCell& u) {
          mu::data x;
          x.set("cell", u.cell);
          x.set("job", u.job);
          x.set("sides", join(u.present_on));
          return x;
        }));
  d.set("environment", list_of(c.environment | std::views::filter([](const EnvironmentDiff& e) {
                                 return !e.empty();
                               }),
                               environment_block));
  std::vector<std::string> messages;
  for (const auto& w : c.warnings) messages.push_back("warning: " + w);
  for (const auto& n : c.notes) messages.push_back("note: " + n);
  d.set("messages", list_of(messages));
  d.set("mmtests", sc.mmtests);
  return render(kCompare, d);
}

namespace {

std::string opt_number(const std::optional<double>& v, const char* format) {
  return v && std::isfinite(*v) ? fmt::format(fmt::runtime(format), *v) : "-";
}

mu::data bisect_step_row(const BisectStep& st, const BisectSession& session) {
  mu::data r;
  r.set("step", std::to_string(st.step));
  r.set("commit", st.commit);
  r.set("first_bad", !session.first_bad.empty() && st.commit == session.first_bad);
  r.set("subject", st.subject);
  r.set("role", to_string(st.role));
  r.set("build", to_string(st.build_status));
  r.set("build_seconds", opt_number(st.build_seconds, "{:.1f}"));
  r.set("decision", to_string(st.decision));
  r.set("verdict", st.verdict.empty() ? "-" : st.verdict);
  r.set("pct", opt_number(st.pct_change, "{:+.2f}%"));
  r.set("p", st.p ? p_text(*st.p) : "-");
  r.set("q", st.q ? p_text(*st.q) : "-");
  r.set("n", (st.n_base ? std::to_string(*st.n_base) : "-") + " / " +
                 (st.n_now ? std::to_string(*st.n_now) : "-"));
  std::vector<std::string> runs;
  for (auto id : st.runs) runs.push_back(std::to_string(id));
  r.set("runs", join(runs));
  r.set("reason", st.reason);
  return r;
}

}  // namespace

std::string render_site_bisect_html(const SiteIndex& site, const SiteBisect& b) {
  const BisectSession& s = b.session;
  mu::data d;
  d.set("head", head(site.info, "nightjar: bisect session " + std::to_string(s.id)));
  d.set("kind", s.kind);
  d.set("repo", s.repo);
  d.set("good_rev", s.good_rev);
  d.set("good", s.good);
  d.set("bad_rev", s.bad_rev);
  d.set("bad", s.bad);
  d.set("job", s.job);
  d.set("metric", s.metric);
  d.set("status", to_string(s.status));
  d.set("result", s.result);
  d.set("first_bad", s.first_bad.empty() ? std::string("none") : s.first_bad);
  d.set("started_at", s.started_at);
  d.set("ended_at", s.ended_at.empty() ? std::string("running") : s.ended_at);
  d.set("table_page",
        b.first_bad_table.page.empty() ? mu::data{false} : mu::data{b.first_bad_table.page});
  d.set("table_text", b.first_bad_table.text);
  d.set("steps", list_of(b.steps, [&](const BisectStep& st) { return bisect_step_row(st, s); }));
  d.set("log", b.log);
  return render(kBisect, d);
}

}  // namespace nightjar

// `nightjar publish [SELECTOR...] -o DIR`: a static HTML site of the nightly
// history (docs/publish.md). For each published job it computes the trend
// record (results/compare/trend.h) and the history figure (plots/plot.h, as
// `plot --x build --mark-changes`), draws the figures as SVG (plots/svg.h)
// and renders the pages (results/render/html_site.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "harness/bisect/bisect.h"
#include "harness/cli/commands.h"
#include "plots/plot.h"
#include "plots/svg.h"
#include "results/compare/audit.h"
#include "results/compare/trend.h"
#include "results/compare/why.h"
#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"
#include "results/render/compare.h"
#include "results/render/flame.h"
#include "results/render/html_site.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

struct PublishArgs {
  std::string db, out, metric;
  std::vector<std::string> selectors;
  std::vector<std::string> compare;  // "BASE NEW..." each
};

// What the selected runs of one job hold: per cell, its testboxes and kernels.
struct JobRuns {
  std::string workload;
  std::map<std::string, std::set<std::string>> testboxes, kernels;  // by cell id
  std::set<std::string> all_testboxes, all_kernels;
};

std::map<std::string, JobRuns> selected_jobs(const ResultsStore& store,
                                             const std::vector<Selector>& selectors) {
  auto ids = select_export_runs(store, selectors, "", "");
  std::set<std::int64_t> wanted(ids.begin(), ids.end());
  std::map<std::string, JobRuns> jobs;
  for (const auto& r : store.runs({})) {
    if (!wanted.count(r.id)) continue;
    JobRuns& j = jobs[r.job];
    j.workload = r.workload;
    j.testboxes[r.cell].insert(r.hostname);
    j.kernels[r.cell].insert(r.kernel_release);
    j.all_testboxes.insert(r.hostname);
    j.all_kernels.insert(r.kernel_release);
  }
  return jobs;
}

std::string joined(const std::set<std::string>& s) {
  return join(std::vector<std::string>(s.begin(), s.end()));
}

// How bad the newest news of a cell is (%change, negative = worse): the
// possible change, else the last change point, else 0.
double badness(const TrendSeries& s) {
  if (s.possible_change) return s.possible_change->pct_change;
  if (!s.change_points.empty()) return s.change_points.back().pct_change;
  return 0;
}

// The history figure of one cell: the job's figure with that cell's lines.
PlotData cell_figure(const PlotData& job_figure, const std::string& cell) {
  PlotData d = job_figure;
  d.series.clear();
  for (const auto& s : job_figure.series)
    if (s.cell == cell) d.series.push_back(s);
  return d;
}

// The published cells of one job, added to `site`.
void add_job(const ResultsStore& store, const std::string& job, const JobRuns& runs,
             const std::string& metric_flag, SiteIndex& site) {
  std::string metric = metric_flag;
  if (metric.empty()) {
    auto metrics = trend_metrics(store, job, workload_catalog());
    if (metrics.empty()) return;
    metric = metrics.front();
  } else if (!store.metrics_with_samples(job).count(metric)) {
    site.notes.push_back("job " + job + ": no samples of metric " + metric + "; left out");
    return;
  }
  TrendOptions o;
  o.job = job;
  o.metric = metric;
  o.detection = site.detection;
  TrendReport trend = compute_trend(store, o);
  for (const auto& n : trend.notes) site.notes.push_back("job " + job + ": " + n);
  PlotRequest pr;
  pr.query.job = job;
  pr.query.declared = &workload_catalog();
  pr.x = "build";
  pr.metric = metric;
  pr.mark_changes = true;
  pr.detection = site.detection;
  PlotData figure = build_plot_data(store, pr);
  for (auto& s : trend.series) {
    if (!runs.testboxes.count(s.cell)) continue;  // not selected
    SiteCell c;
    c.job = job;
    c.workload = s.workload;
    c.page = "cells/" + fnv1a64_hex(job + '\n' + s.workload + '\n' + s.cell) + ".html";
    c.testboxes = joined(runs.testboxes.at(s.cell));
    c.kernels = joined(runs.kernels.at(s.cell));
    c.metric = trend.metric;
    PlotData one = cell_figure(figure, s.cell);
    c.figure_svg = render_history_svg(one, {});
    c.sparkline_svg = render_history_svg(one, {160, 36, true});
    for (const auto& testbox : runs.testboxes.at(s.cell)) {
      std::map<std::string, std::vector<AuditRow>> by_mode;
      for (auto& a : store.audits({s.workload, job, s.cell, trend.metric.name, testbox}))
        by_mode[a.mode].push_back(std::move(a));
      for (const auto& [mode, rows] : by_mode)
        if (auto text = audit_text(rows); !text.empty()) c.audits.push_back(testbox + ": " + text);
    }
    c.series = std::move(s);
    site.cells.push_back(std::move(c));
  }
}

// The builds of `job`'s latest comparison: the newest build, and the last
// good one: the build before the newest regression change point of any of
// the job's cells, else the build before the newest. nullopt with fewer than
// two labelled builds.
std::optional<std::pair<std::string, std::string>> latest_pair(const SiteIndex& site,
                                                               const std::string& job) {
  const TrendSeries* longest = nullptr;
  const TrendPoint* bad = nullptr;
  std::string good;
  for (const auto& c : site.cells) {
    if (c.job != job) continue;
    const auto& pts = c.series.points;
    if (!longest || pts.size() > longest->points.size()) longest = &c.series;
    for (const auto& cp : c.series.change_points)
      if (cp.pct_change < 0 && cp.index > 0 && (!bad || pts[cp.index].date > bad->date)) {
        bad = &pts[cp.index];
        good = pts[cp.index - 1].build;
      }
  }
  if (!longest || longest->points.size() < 2) return std::nullopt;
  const std::string& newest = longest->points.back().build;
  if (good.empty() || good == newest) good = longest->points[longest->points.size() - 2].build;
  if (good.rfind("run:", 0) == 0 || newest.rfind("run:", 0) == 0) return std::nullopt;
  return std::make_pair(good, newest);
}

// The selector "build=LABEL" of a stored build label.
Selector build_selector(const std::string& label) {
  return {.text = "build=" + label, .build = label};
}

// Builds a published comparison of `selectors` ([0] = BASE), as `nightjar
// compare` does with its default options, or adds a note and returns false.
bool add_comparison(const ResultsStore& store, const std::vector<Selector>& selectors,
                    const std::string& job, SiteIndex& site) {
  SiteComparison sc;
  for (const auto& s : selectors) sc.title += (sc.title.empty() ? "" : " vs ") + s.text;
  try {
    SideQuery query{job, "", {}, &workload_catalog(), false};
    const stats::SignificanceOptions options = significance_options("welch", 0.05, 1.0);
    sc.comparison = compare_selectors(store, selectors, query, options);
    sc.why = explain_monitors(sc.comparison, store, selectors, query, options);
  } catch (const UsageError& e) {
    site.notes.push_back("comparison " + sc.title + " left out: " + e.what());
    return false;
  }
  const std::string id = fnv1a64_hex(job + '\n' + sc.title);
  sc.page = "compare/" + id + ".html";
  if (has_flame_graphs(sc.why)) sc.flame_page = "flame/" + id + ".html";
  sc.mmtests = render_mmtests(sc.comparison);
  site.comparisons.push_back(std::move(sc));
  return true;
}

// Every comparison: the latest of each job, then --compare's; each cell
// links to those that hold it and shows its latest verdict.
void add_comparisons(const ResultsStore& store, const std::vector<std::string>& jobs,
                     const std::vector<std::vector<Selector>>& compare, SiteIndex& site) {
  std::map<std::string, std::size_t> latest;   // job -> index in site.comparisons
  std::map<std::string, std::string> base_of;  // job -> the base build of its latest
  for (const auto& job : jobs) {
    auto pair = latest_pair(site, job);
    if (!pair) continue;
    if (pair->first.find(',') != std::string::npos || pair->second.find(',') != std::string::npos)
      continue;  // a selector value cannot hold a comma
    if (add_comparison(store, {build_selector(pair->first), build_selector(pair->second)}, job,
                       site)) {
      latest[job] = site.comparisons.size() - 1;
      base_of[job] = pair->first;
    }
  }
  for (const auto& sides : compare) add_comparison(store, sides, "", site);
  for (auto& cell : site.cells) {
    for (std::size_t i = 0; i < site.comparisons.size(); ++i) {
      const SiteComparison& sc = site.comparisons[i];
      for (const auto& r : sc.comparison.rows) {
        if (r.kind != ComparisonRow::Kind::metric || r.job != cell.job ||
            r.cell != cell.series.cell)
          continue;
        if (cell.comparisons.empty() || cell.comparisons.back().page != sc.page)
          cell.comparisons.push_back({sc.title, sc.page});
        auto it = latest.find(cell.job);
        if (it == latest.end() || it->second != i || r.name != cell.metric.name) continue;
        if (r.significance.size() < 2 || !r.significance[1]) continue;
        const auto& sig = *r.significance[1];
        cell.latest_verdict_class = std::string(to_string(sig.verdict));
        cell.latest_verdict =
            cell.latest_verdict_class + (std::isfinite(sig.pct_change)
                                             ? fmt::format(" ({:+.2f}%)", sig.pct_change)
                                             : std::string());
        cell.latest_pct = sig.pct_change;
        cell.latest_base = base_of.at(cell.job);
        cell.latest_comparison = {sc.title, sc.page};
      }
    }
  }
}

// Every bisect session of a published job (of any job without selectors),
// oldest first, with the comparison of its good commit and first bad commit
// (runs of a bisect are labelled with their commit id).
void add_bisects(const ResultsStore& store, const std::map<std::string, JobRuns>& jobs,
                 bool every_job, SiteIndex& site) {
  auto newest = store.newest_bisect_session({});
  if (!newest) return;
  for (std::int64_t id = 1; id <= newest->id; ++id) {
    auto session = store.bisect_session(id);
    if (!session || (!every_job && !jobs.count(session->job))) continue;
    SiteBisect b;
    b.session = *session;
    b.steps = store.bisect_steps(id);
    b.page = "bisect/" + std::to_string(id) + ".html";
    b.log = render_bisect_log(store, id);
    const std::string& bad = session->first_bad;
    if (session->status == BisectStatus::found && !session->good.empty() && !bad.empty() &&
        bad.find_first_of(", ") == std::string::npos &&
        add_comparison(store, {build_selector(session->good), build_selector(bad)}, session->job,
                       site))
      b.first_bad_table = {site.comparisons.back().title, site.comparisons.back().page};
    site.bisects.push_back(std::move(b));
  }
}

void write_file(const fs::path& path, const std::string& text) {
  write_file_replacing(path.string(), text, "check that -o names a writable directory (publish)");
}

ExitCode cmd_publish(const PublishArgs& a) {
  // Every selector is parsed here, before the database is opened.
  const std::vector<Selector> selectors = parse_selectors(a.selectors);
  std::vector<std::vector<Selector>> compare;
  for (const auto& c : a.compare) {
    auto sides = split_blanks(c);
    if (sides.size() < 2)
      throw UsageError("publish: --compare '" + c +
                       "': give a BASE and at least one NEW selector separated by blanks, e.g. "
                       "--compare 'build=v6.17 build=v6.18'");
    compare.push_back(parse_selectors(sides));
  }
  ResultsStore store = open_existing_store(a.db);
  SiteIndex site;
  site.info.database = store.path();
  site.info.generated_at = utc_now_iso8601();
  auto jobs = selected_jobs(store, selectors);
  std::set<std::string> testboxes, kernels;
  for (const auto& [job, runs] : jobs) {
    try {
      add_job(store, job, runs, a.metric, site);
    } catch (const UsageError& e) {
      site.notes.push_back("job " + job + " left out: " + e.what());
    }
    testboxes.insert(runs.all_testboxes.begin(), runs.all_testboxes.end());
    kernels.insert(runs.all_kernels.begin(), runs.all_kernels.end());
  }
  if (site.cells.empty())
    throw UsageError("publish: no selected cell has a history to publish" +
                     (site.notes.empty() ? std::string() : " (" + join(site.notes, "; ") + ")"));
  std::vector<std::string> job_names;
  for (const auto& [job, runs] : jobs) job_names.push_back(job);
  add_comparisons(store, job_names, compare, site);
  add_bisects(store, jobs, a.selectors.empty(), site);
  site.info.testboxes = joined(testboxes);
  site.info.kernels = joined(kernels);
  std::stable_sort(site.cells.begin(), site.cells.end(), [](const SiteCell& x, const SiteCell& y) {
    return badness(x.series) < badness(y.series);
  });
  std::error_code ec;
  for (const char* sub : {"cells", "compare", "bisect", "flame"}) {
    fs::create_directories(fs::path(a.out) / sub, ec);
    if (ec)
      throw EnvironmentError("publish: cannot create " + (fs::path(a.out) / sub).string() + ": " +
                             ec.message() + "; check that -o names a writable directory");
  }
  write_file(fs::path(a.out) / "index.html", render_site_index_html(site));
  for (const auto& c : site.cells)
    write_file(fs::path(a.out) / c.page, render_site_cell_html(site, c));
  for (const auto& c : site.comparisons)
    write_file(fs::path(a.out) / c.page, render_site_comparison_html(site, c));
  for (const auto& c : site.comparisons)
    if (!c.flame_page.empty())
      write_file(fs::path(a.out) / c.flame_page,
                 render_flame_html(c.why, "Differential flame graph: " + c.title, "../" + c.page));
  for (const auto& b : site.bisects)
    write_file(fs::path(a.out) / b.page, render_site_bisect_html(site, b));
  for (const auto& n : site.notes) std::cerr << "nightjar: " << n << "\n";
  std::cerr << "nightjar: published " << site.cells.size() << " cell(s) of " << jobs.size()
            << " job(s), " << site.comparisons.size() << " comparison(s) and "
            << site.bisects.size() << " bisect session(s) to "
            << (fs::path(a.out) / "index.html").string() << "\n";
  return ExitCode::ok;
}

}  // namespace

Subcommand add_publish_command(CLI::App& app) {
  auto a = std::make_shared<PublishArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand(
      "publish", "Write a static HTML site of every cell's history, change points and figures");
  cmd->add_option("selectors", a->selectors,
                  "runs to publish: selectors as in compare (default: every run)");
  cmd->add_option("-o,--output", a->out, "directory to write the site into")->required();
  cmd->add_option("--metric", a->metric,
                  "metric shown (default: each job's first metric with samples)");
  cmd->add_option("--compare", a->compare,
                  "'BASE NEW...': also publish this comparison (selectors as in compare, "
                  "separated by blanks); repeatable");
  cmd->add_option("--db", a->db, "results database path");
  s.cmd = cmd;
  s.run = [a] { return cmd_publish(*a); };
  return s;
}

}  // namespace nightjar

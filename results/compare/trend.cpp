// `nightjar trend`: see results/compare/trend.h.
#include "results/compare/trend.h"
#include "results/model/metric.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/stats/descriptive.h"

namespace nightjar {

namespace {

std::string job_name(const std::string& job) {
  if (job.size() > 5 && (job.ends_with(".yaml") || job.ends_with(".yml")))
    return std::filesystem::path(job).stem().string();
  return job;
}

std::vector<std::pair<std::string, std::string>> parse_cell_filter(
    const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : items) {
    std::stringstream in(item);
    std::string kv;
    while (in >> kv) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw UsageError("--cell '" + item +
                         "': write parameter=value pairs as `nightjar show` prints them, such as "
                         "--cell clients=2 or --cell 'clients=2 mode=threads'");
      out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return out;
}

// The runs of job `job` (variant, host as `o` narrows them); UsageError,
// listing the jobs, when there are none.
std::vector<RunRow> job_runs(const ResultsStore& store, const TrendOptions& o,
                             const std::string& job) {
  RunFilter f;
  f.job = job;
  f.variant = o.variant;
  f.hostname = o.host;
  std::vector<RunRow> runs = store.runs(f);
  if (runs.empty()) {
    std::set<std::string> jobs;
    for (const auto& r : store.runs(RunFilter{})) jobs.insert(r.job);
    throw UsageError(
        fmt::format("trend: no runs of job '{}'{}{}; the database holds jobs: {}", job,
                    o.variant.empty() ? "" : " variant '" + o.variant + "'",
                    o.host.empty() ? "" : " on '" + o.host + "'",
                    jobs.empty() ? std::string("none") : join({jobs.begin(), jobs.end()})));
  }
  return runs;
}

// The descriptor of `metric` recorded for `workload`; UsageError listing the
// workload's metrics when it has none.
MetricDescriptor find_metric(const ResultsStore& store, const std::string& workload,
                             const std::string& metric, const std::string& job) {
  const std::vector<MetricDescriptor> metrics = store.metrics(workload);
  std::optional<MetricDescriptor> found;
  for (const auto& m : metrics)
    if (m.name == metric) found = m;
  if (found) return *found;
  std::vector<std::string> names;
  for (const auto& m : metrics) names.push_back(m.name);
  throw UsageError(
      fmt::format("trend: --metric {}: job '{}' ({}) has no such metric; its metrics are {}",
                  metric, job, workload, join(names)));
}

// The pooled samples of one build of one cell.
struct Pool {
  std::string build, date;
  std::int64_t first_run = 0;
  std::vector<std::int64_t> run_ids;
  std::vector<double> samples;  // the valid ones
  std::size_t invalid = 0;      // invalid samples left out
};

// One cell's builds.
struct CellData {
  std::int64_t first_run = 0;
  std::string workload;
  std::map<std::string, Pool> builds;
};

bool cell_matches(const ResultsStore& store, std::int64_t run_id,
                  const std::vector<std::pair<std::string, std::string>>& filter) {
  if (filter.empty()) return true;
  auto params = store.run_params(run_id);
  return std::all_of(filter.begin(), filter.end(), [&](const auto& kv) {
    auto it = params.find(kv.first);
    return it != params.end() && it->second == kv.second;
  });
}

// Pools the samples of `metric` of the complete and aborted runs in cells
// matching `filter`, by cell id and build. Adds every cell id of `runs` to
// `all_cells` (for messages).
std::map<std::string, CellData> pool_runs(
    const ResultsStore& store, const std::vector<RunRow>& runs, const std::string& metric,
    const std::vector<std::pair<std::string, std::string>>& filter,
    std::set<std::string>& all_cells) {
  std::map<std::string, CellData> cells;
  for (const auto& run : runs) {
    all_cells.insert(run.cell);
    if (run.status != RunStatus::complete && run.status != RunStatus::aborted) continue;
    if (!cell_matches(store, run.id, filter)) continue;
    std::vector<double> values;
    std::size_t invalid = 0;
    for (const auto& s : store.samples(run.id, SampleSet::all)) {
      if (s.metric != metric) continue;
      if (s.invalid.empty())
        values.push_back(s.value);
      else
        ++invalid;
    }
    if (values.empty() && invalid == 0) continue;
    CellData& cd = cells[run.cell];
    if (cd.first_run == 0) {
      cd.first_run = run.id;
      cd.workload = run.workload;
    }
    const std::string key = run.build.empty() ? fmt::format("run:{}", run.id) : run.build;
    Pool& p = cd.builds[key];
    if (p.first_run == 0) {
      p.first_run = run.id;
      p.build = key;
      p.date = run.started_at;
    }
    p.date = std::min(p.date, run.started_at);
    p.run_ids.push_back(run.id);
    p.samples.insert(p.samples.end(), values.begin(), values.end());
    p.invalid += invalid;
  }
  return cells;
}

// The history of one cell: its builds in date order (or in --order, noting
// the builds found in `ordered_seen`), each at its summary mean, and the
// change points of those means.
TrendSeries make_series(const std::string& id, const CellData& cd, const TrendOptions& o,
                        TrendReport& report, std::set<std::string>& ordered_seen) {
  TrendSeries series;
  series.workload = cd.workload;
  series.cell = id;
  std::vector<const Pool*> pools;
  if (o.order.empty()) {
    for (const auto& [key, p] : cd.builds) pools.push_back(&p);
    std::sort(pools.begin(), pools.end(), [](const Pool* a, const Pool* b) {
      return std::tie(a->date, a->first_run) < std::tie(b->date, b->first_run);
    });
  } else {
    for (const auto& b : o.order) {
      auto it = cd.builds.find(b);
      if (it == cd.builds.end()) continue;
      pools.push_back(&it->second);
      ordered_seen.insert(b);
    }
  }
  for (const Pool* p : pools) {
    if (p->samples.empty()) {
      report.notes.push_back(fmt::format("{}: build {} left out: its {} sample(s) are all invalid",
                                         id, p->build, p->invalid));
      continue;
    }
    auto mean = stats::mean_of(p->samples, report.metric.mean);
    if (!mean) {
      report.notes.push_back(
          fmt::format("{}: build {} left out: its {} is undefined (a sample <= 0)", id, p->build,
                      mean_label(report.metric.mean)));
      continue;
    }
    TrendPoint point;
    point.build = p->build;
    point.date = p->date;
    point.run_ids = p->run_ids;
    point.n = p->samples.size();
    point.invalid = p->invalid;
    point.mean = *mean;
    point.coeff_var = stats::summarize(p->samples).coeff_var;
    series.points.push_back(std::move(point));
  }
  std::vector<double> values;
  for (const auto& p : series.points) values.push_back(p.mean);
  series.change_points = stats::detect_change_points(values, report.detection);
  series.possible_change =
      stats::detect_recent_change(values, series.change_points, report.detection);
  series.short_changes =
      stats::detect_short_changes(values, series.change_points, report.detection);
  return series;
}

}  // namespace

TrendReport compute_trend(const ResultsStore& store, const TrendOptions& o) {
  if (o.job.empty())
    throw UsageError("trend: --job is required; write --job NAME (the job file's stem)");
  if (o.metric.empty()) throw UsageError("trend: --metric is required; write --metric NAME");
  TrendReport report;
  report.job = job_name(o.job);
  report.detection = o.detection;
  const std::vector<RunRow> runs = job_runs(store, o, report.job);
  report.metric = find_metric(store, runs.front().workload, o.metric, report.job);
  report.detection.mean = report.metric.mean;
  report.detection.direction = report.metric.direction;
  // Checks the detection parameters before any work (std::invalid_argument).
  (void)stats::detect_change_points(std::vector<double>{}, report.detection);

  const auto filter = parse_cell_filter(o.cell);
  std::set<std::string> all_cells;
  std::map<std::string, CellData> cells = pool_runs(store, runs, o.metric, filter, all_cells);
  if (cells.empty()) {
    throw UsageError(fmt::format(
        "trend: no complete run of job '{}' has samples of {}{}; its cells are: {}", report.job,
        o.metric, filter.empty() ? "" : " in a cell matching --cell " + join(o.cell, " "),
        join({all_cells.begin(), all_cells.end()}, "; ")));
  }

  std::vector<std::pair<std::int64_t, std::string>> cell_order;
  for (const auto& [id, cd] : cells) cell_order.emplace_back(cd.first_run, id);
  std::sort(cell_order.begin(), cell_order.end());
  std::set<std::string> ordered_seen;
  for (const auto& [first, id] : cell_order)
    report.series.push_back(make_series(id, cells[id], o, report, ordered_seen));
  for (const auto& b : o.order)
    if (!ordered_seen.count(b)) report.notes.push_back("--order: build " + b + " has no runs here");
  if (!o.order.empty() && ordered_seen.empty())
    throw UsageError("trend: --order: none of the builds " + join(o.order) + " has runs of job '" +
                     report.job + "' with samples of " + o.metric);
  return report;
}

std::vector<std::string> trend_metrics(const ResultsStore& store, const std::string& job,
                                       const WorkloadCatalog& catalog) {
  RunFilter f;
  f.job = job_name(job);
  std::vector<RunRow> runs = store.runs(f);
  if (runs.empty()) {
    std::set<std::string> jobs;
    for (const auto& r : store.runs(RunFilter{})) jobs.insert(r.job);
    throw UsageError(
        fmt::format("trend: no runs of job '{}'; the database holds jobs: {}", f.job,
                    jobs.empty() ? std::string("none") : join({jobs.begin(), jobs.end()})));
  }
  const std::set<std::string> with_samples = store.metrics_with_samples(f.job);
  std::vector<std::string> out;
  std::set<std::string> workloads;
  for (const auto& r : runs) workloads.insert(r.workload);
  for (const auto& w : workloads) {
    // Job-declared metrics (exec's) first, then the workload's own, in order.
    std::vector<std::string> declared, names;
    if (const WorkloadDeclaration* reg = catalog.find(w))
      for (const auto& d : reg->metrics) declared.push_back(d.name);
    for (const auto& d : store.metrics(w))
      if (std::find(declared.begin(), declared.end(), d.name) == declared.end())
        names.push_back(d.name);
    names.insert(names.end(), declared.begin(), declared.end());
    for (const auto& n : names)
      if (with_samples.count(n) && std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
  }
  return out;
}

}  // namespace nightjar

// `nightjar plot` data: see plots/plot.h.
#include "plots/plot.h"
#include "results/model/metric.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/stats/descriptive.h"
#include "results/stats/tests.h"

namespace nightjar {
namespace {

// The longest first title line, bytes: about what an 800-pixel image shows
// in gnuplot's default font.
constexpr std::size_t kTitleBytes = 72;

// "a, b, c", or the first `max` and how many there are in all.
std::string list_of(const std::vector<std::string>& items, std::size_t max = 12) {
  std::vector<std::string> head(
      items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(max, items.size())));
  std::string out = join(head);
  if (items.size() > max) out += fmt::format(", ... ({} in all)", items.size());
  return out;
}

using Params = std::vector<std::pair<std::string, std::string>>;

Params parse_cell_filter(const std::vector<std::string>& items) {
  Params out;
  for (const auto& item : items) {
    std::stringstream in(item);
    std::string kv;
    while (in >> kv) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
        throw UsageError("plot: --cell '" + item +
                         "': write parameter=value pairs as `nightjar show` prints them, such as "
                         "--cell clients=2 or --cell 'clients=2 mode=threads'");
      out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return out;
}

const std::string* param_of(const Params& params, const std::string& name) {
  for (const auto& [k, v] : params)
    if (k == name) return &v;
  return nullptr;
}

bool cell_matches(const Params& params, const Params& filter) {
  return std::all_of(filter.begin(), filter.end(), [&](const auto& kv) {
    const std::string* v = param_of(params, kv.first);
    return v && *v == kv.second;
  });
}

std::string cell_text(const CellKey& key) {
  return key.cell.empty() ? "(no parameters)" : key.cell;
}

// "kernel X", "kernels X, Y, Z" or "5 kernels".
std::string name_list(const std::set<std::string>& names, const char* one, const char* many) {
  std::vector<std::string> v;
  for (const auto& n : names) v.push_back(n.empty() ? "(unknown)" : n);
  if (v.empty()) return "";
  if (v.size() == 1) return std::string(one) + " " + v.front();
  if (v.size() <= 3) return std::string(many) + " " + join(v);
  return fmt::format("{} {}", v.size(), many);
}

// One side of the figure, loaded.
struct Side {
  Selector selector;
  LoadedSide loaded;
};

std::string describe_query(const SideQuery& q) {
  std::string out;
  if (!q.job.empty()) out += " --job " + q.job;
  if (!q.workload.empty()) out += " --workload " + q.workload;
  return out.empty() ? "" : " (with" + out + ")";
}

// The sides: the selectors given, or one per variant in first-run order.
std::vector<Side> load_sides(const ResultsStore& store, const PlotRequest& r,
                             std::vector<std::string>& notes) {
  std::vector<Selector> selectors = r.selectors;
  const bool automatic = r.selectors.empty();
  if (automatic) {
    // Runs without a variant label could only be named by a selector that
    // matches everything: they need an explicit selector (run=ID, build=B).
    for (auto& variant : store.variants_by_first_run(r.query.job, r.query.workload)) {
      Selector s;
      s.variant = std::move(variant);
      s.text = s.variant;
      selectors.push_back(std::move(s));
    }
    if (selectors.empty())
      throw UsageError(fmt::format("plot: no runs to plot{}; {}", describe_query(r.query),
                                   describe_stored_runs(store)));
  }
  std::vector<Side> sides;
  for (const auto& sel : selectors) {
    try {
      sides.push_back({sel, load_side(store, sel, r.query, "plot")});
    } catch (const Error& e) {
      if (e.code() != ExitCode::inconclusive) throw;
      // Runs match but none has samples (skipped, failed, still running).
      if (!automatic) throw UsageError(e.what());
      notes.push_back(fmt::format("variant {} left out: its runs have no samples", sel.text));
    }
  }
  if (sides.empty())
    throw UsageError(fmt::format("plot: no run{} has samples; {}", describe_query(r.query),
                                 describe_stored_runs(store)));
  return sides;
}

// A cell of one side that passed --cell.
struct UsedCell {
  std::size_t side = 0;
  const CellKey* key = nullptr;
  const CellSamples* cell = nullptr;
};

// The samples of `metric` of each run in `ids`, sorted (a history splits
// pooled cells by build).
std::map<std::int64_t, std::vector<double>> load_run_samples(const ResultsStore& store,
                                                             const std::set<std::int64_t>& ids,
                                                             const std::string& metric,
                                                             bool include_invalid) {
  auto out = store.metric_samples(ids, metric, include_invalid ? SampleSet::all : SampleSet::valid);
  for (auto& [id, v] : out) std::sort(v.begin(), v.end());
  return out;
}

// Fills a point's figures from its samples (sorted ascending). False when the
// summary mean is undefined.
bool fill_point(PlotPoint& p, std::vector<double> samples, const MetricDescriptor& m,
                ErrorBars bars, double alpha) {
  auto interval = stats::mean_confidence_interval(samples, m.mean, alpha);
  if (!interval) return false;
  const stats::Summary s = stats::summarize(samples);
  p.n = s.n;
  p.mean = interval->mean;
  p.min = s.min;
  p.max = s.max;
  p.coeff_var = s.coeff_var;
  switch (bars) {
    case ErrorBars::ci:
      p.lo = interval->lo;
      p.hi = interval->hi;
      break;
    case ErrorBars::minmax:
      p.lo = s.min;
      p.hi = s.max;
      break;
    case ErrorBars::none:
      p.lo = p.hi = p.mean;
      break;
  }
  p.samples = std::move(samples);
  return true;
}

// "n = 5 per point" or "n = 3-5 per point", and the invalid samples the
// points leave out ("n = 4 per point, 1 invalid left out"; `included`:
// --include-invalid, "1 invalid included").
std::string n_text(const std::vector<PlotSeries>& series, bool included) {
  std::size_t lo = SIZE_MAX, hi = 0, invalid = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) {
      lo = std::min(lo, p.n);
      hi = std::max(hi, p.n);
      invalid += p.invalid;
    }
  if (hi == 0) return "";
  std::string n =
      lo == hi ? fmt::format("n = {} per point", lo) : fmt::format("n = {}-{} per point", lo, hi);
  if (invalid) n += fmt::format(", {} invalid {}", invalid, included ? "included" : "left out");
  return n;
}

std::string bars_text(ErrorBars bars, double confidence_pct, MeanKind kind) {
  switch (bars) {
    case ErrorBars::ci:
      return fmt::format("error bars: {:g}% CI of the {} (t, n-1 df)", confidence_pct,
                         mean_label(kind));
    case ErrorBars::minmax:
      return "error bars: min to max of the samples";
    case ErrorBars::none:
      return "";
  }
  return "";
}

// The parameters whose value differs among `cells` (a missing one counts as
// ""), excluding `except`, in name order.
std::vector<std::string> varying_params(const std::vector<UsedCell>& cells,
                                        const std::string& except) {
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> names;
  for (const auto& c : cells)
    for (const auto& [k, v] : c.cell->params) names.insert(k);
  for (const auto& c : cells)
    for (const auto& n : names) {
      const std::string* v = param_of(c.cell->params, n);
      values[n].insert(v ? *v : "");
    }
  std::vector<std::string> out;
  for (const auto& [n, vs] : values)
    if (n != except && vs.size() > 1) out.push_back(n);
  return out;
}

// The line label of a cell: side, then job (when several), then the varying parameters.
std::string line_label(const std::string& side, const UsedCell& c, bool several_jobs,
                       const std::vector<std::string>& varying) {
  std::string label = side;
  if (several_jobs) label += " " + c.key->job;
  std::string params;
  for (const auto& n : varying) {
    const std::string* v = param_of(c.cell->params, n);
    params += (params.empty() ? "" : " ") + n + "=" + (v ? *v : "");
  }
  if (!params.empty()) label += " " + params;
  return label;
}

// Parameter listing for an unknown --x: "clients (1, 2, 4), mode (threads)".
std::string describe_params(const std::vector<UsedCell>& cells) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& c : cells)
    for (const auto& [k, v] : c.cell->params) {
      auto& vs = values[k];
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
  std::vector<std::string> items;
  for (const auto& [k, vs] : values) items.push_back(k + " (" + list_of(vs, 6) + ")");
  return items.empty() ? "(none)" : join(items);
}

// The declared type and unit of parameter `name` of `workload`, when registered.
std::optional<ParamDescriptor> param_descriptor(const WorkloadCatalog* declared,
                                                const std::string& workload,
                                                const std::string& name) {
  if (const WorkloadDeclaration* w = declared ? declared->find(workload) : nullptr)
    if (const ParamDescriptor* d = w->param(name)) return *d;
  return std::nullopt;
}

bool numeric_type(ParamType t) {
  return t == ParamType::count || t == ParamType::size || t == ParamType::duration ||
         t == ParamType::number;
}

std::optional<double> parse_number(const std::string& text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Tick labels for categories: every one up to 30, else every k-th.
std::vector<std::pair<double, std::string>> category_ticks(const std::vector<std::string>& names) {
  std::vector<std::pair<double, std::string>> ticks;
  const std::size_t step = names.size() <= 30 ? 1 : (names.size() + 29) / 30;
  for (std::size_t i = 0; i < names.size(); i += step)
    ticks.emplace_back(static_cast<double>(i), names[i]);
  return ticks;
}

// The cells that have parameter r.x; the others are noted as left out.
// UsageError, listing the parameters, when none has it.
std::vector<UsedCell> cells_with_param(const PlotRequest& r, const std::vector<Side>& sides,
                                       const std::vector<UsedCell>& cells_with_metric,
                                       PlotData& d) {
  std::vector<UsedCell> cells;
  for (const auto& c : cells_with_metric) {
    if (param_of(c.cell->params, r.x))
      cells.push_back(c);
    else
      d.notes.push_back(fmt::format("{} {} [{}] left out: it has no parameter {}",
                                    sides[c.side].selector.text, c.key->job, cell_text(*c.key),
                                    r.x));
  }
  if (cells.empty())
    throw UsageError(fmt::format(
        "plot: --x {}: no plotted cell has a parameter '{}'; their parameters are {}; or write "
        "--x build or --x date for a history",
        r.x, r.x, describe_params(cells_with_metric)));
  return cells;
}

// The x axis of a scaling plot: each cell's position, and the categories
// when the parameter is not numeric.
struct ScalingAxis {
  std::map<const CellSamples*, double> x_of;
  std::vector<std::string> categories;  // in first-run order; empty when numeric
  bool numeric = true;
  std::optional<ParamDescriptor> desc;  // the parameter's declaration, when registered
};

// Numeric or categorical axis, from the parameter's declared type: a declared
// numeric parameter at its stored number, an undeclared one at its text read
// as a number; else (or when a value is no number) categories.
ScalingAxis scaling_axis(const ResultsStore& store, const PlotRequest& r,
                         const std::vector<UsedCell>& cells) {
  ScalingAxis a;
  std::set<std::string> workloads;
  for (const auto& c : cells) workloads.insert(c.key->workload);
  bool declared = true;
  for (const auto& w : workloads) {
    auto pd = param_descriptor(r.query.declared, w, r.x);
    if (!pd) {
      declared = false;
      continue;
    }
    if (!a.desc) a.desc = pd;
    if (!numeric_type(pd->type)) a.numeric = false;
  }
  for (const auto& c : cells) {
    const std::string& text = *param_of(c.cell->params, r.x);
    std::optional<double> x;
    if (declared && a.numeric)
      x = store.param_number(c.cell->first_run, r.x);
    else if (!declared)
      x = parse_number(text);
    if (!x) {
      a.numeric = false;
      break;
    }
    a.x_of[c.cell] = *x;
  }
  if (a.numeric) return a;
  std::vector<UsedCell> by_run = cells;
  std::sort(by_run.begin(), by_run.end(), [](const UsedCell& x, const UsedCell& y) {
    return x.cell->first_run < y.cell->first_run;
  });
  for (const auto& c : by_run) {
    const std::string& text = *param_of(c.cell->params, r.x);
    if (std::find(a.categories.begin(), a.categories.end(), text) == a.categories.end())
      a.categories.push_back(text);
  }
  for (const auto& c : cells) {
    auto it = std::find(a.categories.begin(), a.categories.end(), *param_of(c.cell->params, r.x));
    a.x_of[c.cell] = static_cast<double>(it - a.categories.begin());
  }
  return a;
}

// The axis's scale, ticks and label; UsageError for --log-x on a non-numeric
// axis or a value <= 0.
void apply_scaling_axis(const PlotRequest& r, const std::vector<UsedCell>& cells,
                        const ScalingAxis& a, PlotData& d) {
  if (r.log_x) {
    if (!a.numeric)
      throw UsageError(
          fmt::format("plot: --log-x: parameter {} is not numeric (values {}); drop "
                      "--log-x",
                      r.x, list_of(a.categories)));
    for (const auto& [cell, x] : a.x_of)
      if (!(x > 0))
        throw UsageError(
            fmt::format("plot: --log-x: parameter {} has the value {} <= 0; drop "
                        "--log-x or leave that cell out with --cell",
                        r.x, *param_of(cell->params, r.x)));
  }
  d.x_scale = !a.numeric ? XScale::category : r.log_x ? XScale::log : XScale::linear;
  // Ticks: every value with its stored text (512M, 60s), unless there are many.
  if (a.numeric) {
    std::map<double, std::string> ticks;
    for (const auto& c : cells) ticks.emplace(a.x_of.at(c.cell), *param_of(c.cell->params, r.x));
    if (ticks.size() <= 25) d.x_ticks.assign(ticks.begin(), ticks.end());
  } else {
    d.x_ticks = category_ticks(a.categories);
  }
  d.x_label = r.x;
  const auto& desc = a.desc;
  if (desc && !desc->unit.empty() &&
      !((desc->type == ParamType::size || desc->type == ParamType::duration) && !d.x_ticks.empty()))
    d.x_label += " (" + desc->unit + ")";
}

void build_scaling(const ResultsStore& store, const PlotRequest& r, const std::vector<Side>& sides,
                   const std::vector<UsedCell>& cells_with_metric, PlotData& d) {
  const std::vector<UsedCell> cells = cells_with_param(r, sides, cells_with_metric, d);
  const ScalingAxis axis = scaling_axis(store, r, cells);
  apply_scaling_axis(r, cells, axis, d);

  // Lines: side, job (when several), the other parameters that vary.
  std::set<std::string> jobs;
  for (const auto& c : cells) jobs.insert(c.key->job);
  const auto varying = varying_params(cells, r.x);
  std::vector<std::pair<std::size_t, std::string>> order;  // (side, label) in first-run order
  std::map<std::pair<std::size_t, std::string>, std::vector<UsedCell>> lines;
  std::map<std::pair<std::size_t, std::string>, std::int64_t> first_run;
  for (const auto& c : cells) {
    auto key = std::make_pair(c.side,
                              line_label(sides[c.side].selector.text, c, jobs.size() > 1, varying));
    lines[key].push_back(c);
    auto [it, fresh] = first_run.emplace(key, c.cell->first_run);
    if (!fresh) it->second = std::min(it->second, c.cell->first_run);
  }
  for (const auto& [key, v] : lines) order.push_back(key);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return std::tie(a.first, first_run[a]) < std::tie(b.first, first_run[b]);
  });
  const double alpha = 1 - r.confidence_pct / 100;
  for (const auto& key : order) {
    PlotSeries s;
    s.label = key.second;
    s.side = sides[key.first].selector.text;
    for (const auto& c : lines[key]) {
      PlotPoint p;
      p.x = axis.x_of.at(c.cell);
      p.label = *param_of(c.cell->params, r.x);
      p.run_ids = c.cell->run_ids;
      p.emulated = runs_emulated(sides[c.side].loaded, p.run_ids);
      if (auto inv = c.cell->invalid.find(r.metric); inv != c.cell->invalid.end())
        p.invalid = static_cast<std::size_t>(inv->second.count);
      if (!fill_point(p, c.cell->metrics.at(r.metric), d.metric, r.error_bars, alpha)) {
        d.notes.push_back(fmt::format("{} [{}] left out: its {} is undefined (a sample <= 0)",
                                      s.side, cell_text(*c.key), mean_label(d.metric.mean)));
        continue;
      }
      s.points.push_back(std::move(p));
    }
    std::sort(s.points.begin(), s.points.end(),
              [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
    if (!s.points.empty()) d.series.push_back(std::move(s));
  }
  d.title = fmt::format("{}: {} by {}", d.job, d.metric.name, r.x);
}

// One point of a history line before it is summarised: the runs of one
// build (or of one unlabelled run, "run:<id>") of one cell, pooled.
struct HistoryPool {
  std::string build, date;  ///< date: the earliest started_at of its runs
  std::int64_t first_run = 0;
  std::vector<std::int64_t> run_ids;
  std::vector<double> samples;  ///< sorted
  std::size_t invalid = 0;
};

// One history line: a cell of a side and its pools, by (date, first run).
struct HistoryLine {
  UsedCell cell;
  std::vector<HistoryPool> pools;
};

// The history lines of `cells`, and the builds of every line on one shared
// axis in `builds`: ordered by the date of their first run anywhere.
std::vector<HistoryLine> history_lines(const ResultsStore& store, const PlotRequest& r,
                                       const std::vector<UsedCell>& cells,
                                       std::vector<std::string>& builds) {
  std::set<std::int64_t> ids;
  for (const auto& c : cells) ids.insert(c.cell->run_ids.begin(), c.cell->run_ids.end());
  const auto info = store.run_labels(ids);
  const auto samples = load_run_samples(store, ids, r.metric, r.query.include_invalid);
  const auto invalid = store.invalid_sample_counts(ids, r.metric);

  std::map<std::string, std::pair<std::string, std::int64_t>> build_order;  // build -> (date, run)
  std::vector<HistoryLine> line_list;
  for (const auto& c : cells) {
    std::map<std::string, HistoryPool> pools;
    for (auto id : c.cell->run_ids) {
      auto s = samples.find(id);
      if (s == samples.end()) continue;  // this run has no samples of the metric
      const RunLabels& ri = info.at(id);
      const std::string key = ri.build.empty() ? fmt::format("run:{}", id) : ri.build;
      HistoryPool& p = pools[key];
      if (p.first_run == 0) {
        p.build = key;
        p.first_run = id;
        p.date = ri.started_at;
      }
      p.date = std::min(p.date, ri.started_at);
      p.run_ids.push_back(id);
      p.samples.insert(p.samples.end(), s->second.begin(), s->second.end());
      if (auto inv = invalid.find(id); inv != invalid.end())
        p.invalid += static_cast<std::size_t>(inv->second);
    }
    HistoryLine line{c, {}};
    for (auto& [key, p] : pools) {
      std::sort(p.samples.begin(), p.samples.end());
      auto [it, fresh] = build_order.emplace(key, std::make_pair(p.date, p.first_run));
      if (!fresh) it->second = std::min(it->second, std::make_pair(p.date, p.first_run));
      line.pools.push_back(std::move(p));
    }
    std::sort(line.pools.begin(), line.pools.end(), [](const HistoryPool& a, const HistoryPool& b) {
      return std::tie(a.date, a.first_run) < std::tie(b.date, b.first_run);
    });
    line_list.push_back(std::move(line));
  }
  builds.clear();
  for (const auto& [b, when] : build_order) builds.push_back(b);
  std::sort(builds.begin(), builds.end(), [&](const std::string& a, const std::string& b) {
    return build_order[a] < build_order[b];
  });
  return line_list;
}

// The points of one history line (x: the build's date, or its place in
// `builds`), with its change points when asked; pools left out get a note in d.
void fill_history_series(const PlotRequest& r, const std::vector<Side>& sides,
                         const HistoryLine& line, const std::vector<std::string>& builds,
                         PlotSeries& s, PlotData& d) {
  const bool by_date = r.x == "date";
  const double alpha = 1 - r.confidence_pct / 100;
  for (const auto& pool : line.pools) {
    PlotPoint p;
    p.label = pool.build;
    p.date = pool.date;
    p.run_ids = pool.run_ids;
    p.invalid = pool.invalid;
    std::sort(p.run_ids.begin(), p.run_ids.end());
    p.emulated = runs_emulated(sides[line.cell.side].loaded, p.run_ids);
    if (by_date) {
      auto t = utc_seconds(pool.date);
      if (!t) {
        d.notes.push_back(fmt::format("{}: build {} left out: its date '{}' is not ISO 8601 UTC",
                                      s.label, pool.build, pool.date));
        continue;
      }
      p.x = static_cast<double>(*t);
    } else {
      p.x =
          static_cast<double>(std::find(builds.begin(), builds.end(), pool.build) - builds.begin());
    }
    if (!fill_point(p, pool.samples, d.metric, r.error_bars, alpha)) {
      d.notes.push_back(fmt::format("{}: build {} left out: its {} is undefined (a sample <= 0)",
                                    s.label, pool.build, mean_label(d.metric.mean)));
      continue;
    }
    s.points.push_back(std::move(p));
  }
  if (s.points.empty() || !r.mark_changes) return;
  stats::ChangePointOptions detection = r.detection;
  detection.mean = d.metric.mean;
  detection.direction = d.metric.direction;
  std::vector<double> means;
  for (const auto& p : s.points) means.push_back(p.mean);
  s.change_points = stats::detect_change_points(means, detection);
  if (s.points.size() < 2 * detection.min_segment)
    d.notes.push_back(
        fmt::format("{}: {} build(s), too few to find change points (needs {}, {} on each side)",
                    s.label, s.points.size(), 2 * detection.min_segment, detection.min_segment));
}

void build_history(const ResultsStore& store, const PlotRequest& r, const std::vector<Side>& sides,
                   const std::vector<UsedCell>& cells, PlotData& d) {
  std::set<std::string> jobs;
  for (const auto& c : cells) jobs.insert(c.key->job);
  const auto varying = varying_params(cells, "");
  std::vector<std::string> builds;
  const std::vector<HistoryLine> line_list = history_lines(store, r, cells, builds);

  const bool by_date = r.x == "date";
  d.x_scale = by_date ? XScale::time : XScale::category;
  if (!by_date) d.x_ticks = category_ticks(builds);
  d.x_label = by_date ? "date of the build's first run (UTC)" : "build (ordered by first run)";

  for (const auto& line : line_list) {
    PlotSeries s;
    s.side = sides[line.cell.side].selector.text;
    s.cell = line.cell.key->cell;
    s.label = line_label(s.side, line.cell, jobs.size() > 1, varying);
    fill_history_series(r, sides, line, builds, s, d);
    if (!s.points.empty()) d.series.push_back(std::move(s));
  }
  d.title = fmt::format("{}: {} by {}", d.job, d.metric.name, r.x);
  std::set<std::string> cell_ids;
  for (const auto& c : cells) cell_ids.insert(c.key->cell);
  if (cell_ids.size() == 1) {
    // A long cell is shortened from the middle in the title and written out
    // whole in the footnote.
    const std::string cell = cell_text(*cells.front().key), head = d.title + " of cell ";
    if (head.size() + cell.size() <= kTitleBytes) {
      d.title = head + cell;
    } else {
      d.title = head + cut_middle(cell, std::max<std::size_t>(kTitleBytes - head.size(), 24));
      d.footnote_cell = cell;
    }
  }
}

// The cells of the sides that pass --cell; UsageError listing the cells when none does.
std::vector<UsedCell> filtered_cells(const PlotRequest& r, const Params& filter,
                                     const std::vector<Side>& sides) {
  std::vector<UsedCell> cells;
  std::vector<std::string> all_cells;
  for (std::size_t i = 0; i < sides.size(); ++i)
    for (const auto& [key, cs] : sides[i].loaded.cells) {
      all_cells.push_back(sides[i].selector.text + " " + key.job + " [" + cell_text(key) + "]");
      if (cell_matches(cs.params, filter)) cells.push_back({i, &key, &cs});
    }
  if (cells.empty())
    throw UsageError(fmt::format("plot: --cell {}: no cell matches; the cells are {}",
                                 join(r.cell, " "), list_of(all_cells)));
  return cells;
}

// The metrics the cells hold: in the catalog's order, then the rest by name.
std::vector<std::string> present_metrics(const std::vector<UsedCell>& cells,
                                         const MetricCatalog& catalog) {
  std::vector<std::string> present;
  std::set<std::string> names;
  for (const auto& c : cells) {
    for (const auto& [name, v] : c.cell->metrics) names.insert(name);
    for (const auto& [name, v] : c.cell->invalid) names.insert(name);
  }
  for (const auto& [w, descs] : catalog)
    for (const auto& m : descs)
      if (names.count(m.name) && std::find(present.begin(), present.end(), m.name) == present.end())
        present.push_back(m.name);
  for (const auto& n : names)
    if (std::find(present.begin(), present.end(), n) == present.end()) present.push_back(n);
  return present;
}

// The descriptor of r.metric in the cells' workloads (d.metric; noted when
// there is none); UsageError when two workloads describe it differently.
void choose_descriptor(const PlotRequest& r, const std::vector<UsedCell>& with_metric,
                       const MetricCatalog& catalog, PlotData& d) {
  std::optional<MetricDescriptor> desc;
  std::string desc_workload;
  for (const auto& c : with_metric) {
    auto it = catalog.find(c.key->workload);
    if (it == catalog.end()) continue;
    for (const auto& m : it->second) {
      if (m.name != r.metric) continue;
      if (!desc) {
        desc = m;
        desc_workload = c.key->workload;
      } else if (desc->unit != m.unit || desc->direction != m.direction || desc->mean != m.mean) {
        throw UsageError(fmt::format(
            "plot: metric {} is {} ({}) in workload {} but {} ({}) in {}; plot one workload with "
            "--workload {}",
            r.metric, desc->unit, to_string(desc->mean), desc_workload, m.unit, to_string(m.mean),
            c.key->workload, desc_workload));
      }
    }
  }
  if (desc) {
    d.metric = *desc;
  } else {
    d.metric = {.name = r.metric, .mean = MeanKind::arithmetic, .doc = ""};
    d.notes.push_back("metric " + r.metric +
                      " has no descriptor in the store: plotted as its Amean, without a unit");
  }
}

// The cells with samples of r.metric (the others are noted as left out), and
// the metric's descriptor in d.metric. UsageError, listing the metrics the
// cells hold, when --metric is missing or no cell has it.
std::vector<UsedCell> cells_with_metric(const ResultsStore& store, const PlotRequest& r,
                                        const std::vector<Side>& sides,
                                        const std::vector<UsedCell>& cells, PlotData& d) {
  std::set<std::string> workloads;
  for (const auto& c : cells) workloads.insert(c.key->workload);
  const MetricCatalog catalog = load_metric_catalog(
      store, workloads, r.query.declared ? *r.query.declared : WorkloadCatalog::empty());
  const std::vector<std::string> present = present_metrics(cells, catalog);
  if (r.metric.empty())
    throw UsageError(fmt::format("plot: --metric is required; write --metric NAME, one of {}",
                                 list_of(present)));
  if (std::find(present.begin(), present.end(), r.metric) == present.end())
    throw UsageError(
        fmt::format("plot: --metric {}: no plotted cell has samples of '{}'; the "
                    "plotted runs hold metrics {}",
                    r.metric, r.metric, list_of(present)));
  std::vector<UsedCell> with_metric;
  for (const auto& c : cells) {
    if (c.cell->metrics.count(r.metric)) {
      with_metric.push_back(c);
      continue;
    }
    auto inv = c.cell->invalid.find(r.metric);
    d.notes.push_back(fmt::format(
        "{} {} [{}] left out: {}", sides[c.side].selector.text, c.key->job, cell_text(*c.key),
        inv == c.cell->invalid.end()
            ? "no samples of " + r.metric
            : fmt::format("its {} sample(s) of {} are all invalid (first: run {} iteration {}: {})",
                          inv->second.count, r.metric, inv->second.run_id, inv->second.iteration,
                          inv->second.reason)));
  }
  choose_descriptor(r, with_metric, catalog, d);
  return with_metric;
}

// The title's second line, the y label and the footnote.
void finish_labels(const ResultsStore& store, const PlotRequest& r,
                   const std::set<std::string>& jobs, PlotData& d) {
  // Title: what, then job, kernel and testbox of the runs drawn.
  std::set<std::int64_t> ids;
  for (const auto& s : d.series)
    for (const auto& p : s.points) ids.insert(p.run_ids.begin(), p.run_ids.end());
  std::set<std::string> kernels, testboxes;
  for (const auto& [id, ri] : store.run_labels(ids)) {
    kernels.insert(ri.kernel_release);
    testboxes.insert(ri.hostname);
  }
  d.kernels = join({kernels.begin(), kernels.end()});
  d.testboxes = join({testboxes.begin(), testboxes.end()});
  d.title += "\n" + std::string(jobs.size() == 1 ? "job " : "jobs ") + d.job + ", " +
             name_list(kernels, "kernel", "kernels") + ", " +
             name_list(testboxes, "testbox", "testboxes");
  d.y_label = std::string(mean_label(d.metric.mean)) + " " + d.metric.name +
              (d.metric.unit.empty() ? "" : " (" + d.metric.unit + ")");
  std::vector<std::string> foot;
  if (d.kind == PlotKind::history)
    foot.push_back(fmt::format("dots: samples; line: {} per build", mean_label(d.metric.mean)));
  if (auto b = bars_text(r.error_bars, r.confidence_pct, d.metric.mean); !b.empty())
    foot.push_back(b);
  foot.push_back(n_text(d.series, r.query.include_invalid));
  if (!d.footnote_cell.empty()) foot.push_back("cell " + d.footnote_cell);
  if (r.mark_changes)
    foot.push_back("dashed: change points (E-divisive + Welch, as nightjar trend)");
  const bool emulated = std::any_of(d.series.begin(), d.series.end(), [](const PlotSeries& s) {
    return std::any_of(s.points.begin(), s.points.end(),
                       [](const PlotPoint& p) { return p.emulated; });
  });
  if (emulated)
    foot.push_back(std::string("triangles: ") + kEmulationMark +
                   " (points of runs under qemu TCG, not figures of hardware)");
  d.footnote = join(foot, "; ");
}

// PlotPoint::x_drawn: each line's points moved by its own small step, so
// that error bars at the same x stay apart.
void dodge(PlotData& d) {
  double lo = INFINITY, hi = -INFINITY;
  for (auto& s : d.series)
    for (auto& p : s.points) {
      p.x_drawn = p.x;
      lo = std::min(lo, p.x);
      hi = std::max(hi, p.x);
    }
  const std::size_t k = d.series.size();
  if (k < 2 || !(hi >= lo)) return;
  for (std::size_t i = 0; i < k; ++i) {
    const double step = static_cast<double>(i) - static_cast<double>(k - 1) / 2;
    for (auto& p : d.series[i].points) {
      switch (d.x_scale) {
        case XScale::log:
          if (lo > 0 && hi > lo) p.x_drawn = p.x * std::pow(hi / lo, 0.012 * step);
          break;
        case XScale::category:
          p.x_drawn = p.x + 0.06 * step;
          break;
        case XScale::linear:
        case XScale::time:
          p.x_drawn = p.x + 0.012 * step * (hi > lo ? hi - lo : 1.0);
          break;
      }
    }
  }
}

}  // namespace

std::string_view to_string(ErrorBars e) {
  switch (e) {
    case ErrorBars::ci:
      return "ci";
    case ErrorBars::minmax:
      return "minmax";
    case ErrorBars::none:
      return "none";
  }
  return "ci";
}

ErrorBars error_bars_from_string(std::string_view s) {
  if (s == "ci") return ErrorBars::ci;
  if (s == "minmax") return ErrorBars::minmax;
  if (s == "none") return ErrorBars::none;
  throw std::invalid_argument("error bars '" + std::string(s) + "': write ci, minmax or none");
}

PlotData build_plot_data(const ResultsStore& store, const PlotRequest& r) {
  if (!(r.confidence_pct > 0 && r.confidence_pct < 100))
    throw UsageError(fmt::format(
        "plot: --confidence {}: write a percentage between 0 and 100 (exclusive), e.g. 95",
        r.confidence_pct));
  const Params filter = parse_cell_filter(r.cell);
  if (r.mark_changes && r.x != "build" && r.x != "date")
    throw UsageError(
        "plot: --mark-changes marks change points over builds; write --x build or "
        "--x date with it");
  PlotData d;
  d.error_bars = r.error_bars;
  d.confidence_pct = r.confidence_pct;
  d.mark_changes = r.mark_changes;
  d.kind = (r.x == "build" || r.x == "date") ? PlotKind::history : PlotKind::scaling;

  std::vector<Side> sides = load_sides(store, r, d.notes);
  if (r.labels.size() > sides.size())
    throw UsageError(fmt::format(
        "plot: --label given {} times for {} side(s); give at most one --label per side, in the "
        "order of the sides",
        r.labels.size(), sides.size()));
  if (r.query.include_invalid)
    d.notes.push_back(
        "--include-invalid: invalid samples are plotted with the valid ones, for inspection");

  const std::vector<UsedCell> cells = filtered_cells(r, filter, sides);
  const std::vector<UsedCell> with_metric = cells_with_metric(store, r, sides, cells, d);
  if (r.x.empty())
    throw UsageError(fmt::format(
        "plot: --x is required; write --x PARAMETER for a scaling plot (the parameters are {}), "
        "or --x build or --x date for a history",
        describe_params(with_metric)));

  std::set<std::string> jobs;
  for (const auto& c : with_metric) jobs.insert(c.key->job);
  d.job = join({jobs.begin(), jobs.end()});

  if (d.kind == PlotKind::scaling)
    build_scaling(store, r, sides, with_metric, d);
  else
    build_history(store, r, sides, with_metric, d);
  if (d.series.empty())
    throw UsageError("plot: nothing to plot: " +
                     (d.notes.empty() ? std::string("no point has samples") : join(d.notes, "; ")));

  finish_labels(store, r, jobs, d);
  // The user's names: --label per side, --title for the first title line.
  for (auto& s : d.series)
    for (std::size_t i = 0; i < r.labels.size(); ++i)
      if (s.side == sides[i].selector.text && s.label.compare(0, s.side.size(), s.side) == 0) {
        s.label = r.labels[i] + s.label.substr(s.side.size());
        break;
      }
  dodge(d);
  if (!r.title.empty())
    d.title = r.title + d.title.substr(std::min(d.title.find('\n'), d.title.size()));
  return d;
}

}  // namespace nightjar

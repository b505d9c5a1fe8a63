#include "results/compare/comparison.h"
#include "results/compare/audit.h"
#include "results/model/metric.h"
#include "results/model/text.h"
#include "results/stats/sorting.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace nightjar {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxListed = 10;  // notes listing cells/rows stop after this many

double value_or_nan(const std::optional<double>& v) {
  return v ? *v : kNaN;
}

// %change of every side against side 0; side 0 gets 0 (NaN when its own value
// is undefined).
std::vector<double> changes(const std::vector<double>& value, Direction dir) {
  std::vector<double> pct(value.size(), kNaN);
  for (std::size_t i = 0; i < value.size(); ++i)
    pct[i] = std::isfinite(value[0]) ? stats::percent_change(value[0], value[i], dir) : kNaN;
  return pct;
}

StatLine make_line(std::string name, bool main, std::vector<double> value, Direction dir) {
  StatLine l;
  l.name = std::move(name);
  l.main = main;
  l.pct = changes(value, dir);
  l.value = std::move(value);
  return l;
}

// Samples of one row on every side (empty span when the side lacks the metric).
using SideSamples = std::vector<std::span<const double>>;

// The invalid samples of metric `name` in `cell` (0 when none).
int invalid_count(const CellSamples& cell, const std::string& name) {
  auto it = cell.invalid.find(name);
  return it == cell.invalid.end() ? 0 : it->second.count;
}

// The figures of one side of a row whose samples `summary` summarises.
SideFigures figures(const stats::Summary& summary, const CellSamples& cell,
                    const ComparisonRow& row) {
  SideFigures f;
  f.summary = summary;
  if (row.kind == ComparisonRow::Kind::metric) f.invalid = invalid_count(cell, row.name);
  if (summary.n > 0 || f.invalid > 0) {
    f.runs = static_cast<int>(cell.run_ids.size());
    f.aborted_runs = cell.aborted_runs;
  }
  f.mean = stats::summary_mean(summary, row.mean);
  return f;
}

// The mmtests statistic lines of a metric row (docs/reference.md "mmtests compare table"):
// Min, mean, Stddev, CoeffVar, Max, B<mean>-50/95/99; then CVwithin and
// CVbetween (within- and between-run CoeffVar) when a side has >= 2 runs.
std::vector<StatLine> metric_lines(const ComparisonRow& row, const SideSamples& samples) {
  const std::size_t n = row.sides.size();
  auto per_side = [&](auto get) {
    std::vector<double> v(n, kNaN);
    for (std::size_t i = 0; i < n; ++i)
      if (row.sides[i].summary.n > 0) v[i] = get(i);
    return v;
  };
  const std::string m = mean_label(row.mean);
  std::vector<StatLine> lines;
  lines.push_back(make_line("Min", false,
                            per_side([&](std::size_t i) { return row.sides[i].summary.min; }),
                            row.direction));
  lines.push_back(
      make_line(m, true, per_side([&](std::size_t i) { return value_or_nan(row.sides[i].mean); }),
                row.direction));
  // Spread: less is better whatever the metric's direction (mmtests pndiff).
  lines.push_back(make_line("Stddev", false,
                            per_side([&](std::size_t i) { return row.sides[i].summary.stddev; }),
                            Direction::lower_is_better));
  lines.push_back(make_line("CoeffVar", false,
                            per_side([&](std::size_t i) { return row.sides[i].summary.coeff_var; }),
                            Direction::lower_is_better));
  lines.push_back(make_line("Max", false,
                            per_side([&](std::size_t i) { return row.sides[i].summary.max; }),
                            row.direction));
  for (double pct : {50.0, 95.0, 99.0}) {
    lines.push_back(
        make_line(fmt::format("B{}-{:.0f}", m, pct), false, per_side([&](std::size_t i) {
                    return value_or_nan(stats::best_mean(samples[i], pct, row.mean, row.direction));
                  }),
                  row.direction));
  }
  // Runs as the unit: the two components when a side has >= 2 runs (last, so
  // that the lines of every row keep their positions).
  bool components = false;
  for (const auto& f : row.sides) components = components || std::isfinite(f.between_cv_pct);
  if (components) {
    lines.push_back(make_line("CVwithin", false,
                              per_side([&](std::size_t i) { return row.sides[i].within_cv_pct; }),
                              Direction::lower_is_better));
    lines.push_back(make_line("CVbetween", false,
                              per_side([&](std::size_t i) { return row.sides[i].between_cv_pct; }),
                              Direction::lower_is_better));
  }
  return lines;
}

void fill_changes(ComparisonRow& row, Direction dir) {
  std::vector<double> means(row.sides.size(), kNaN);
  for (std::size_t i = 0; i < row.sides.size(); ++i) means[i] = value_or_nan(row.sides[i].mean);
  row.change_pct = changes(means, dir);
  row.plain_change_pct = changes(means, Direction::higher_is_better);
}

std::string plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string cell_text(const std::string& job, const std::string& cell) {
  return job + (cell.empty() ? "" : " [" + cell + "]");
}

// Operation labels of the matched cells, see the header comment.
std::map<CellKey, std::string> cell_suffixes(const std::vector<CellKey>& matched,
                                             const LoadedSide& base) {
  std::map<std::pair<std::string, std::string>, std::vector<const CellKey*>> groups;
  for (const auto& k : matched) groups[{k.workload, k.job}].push_back(&k);
  std::map<CellKey, std::string> out;
  for (const auto& [group, keys] : groups) {
    // name -> the distinct values it takes in this group ("" = not set)
    std::map<std::string, std::set<std::string>> values;
    for (const auto* k : keys)
      for (const auto& [name, value] : base.cells.at(*k).params) values[name];
    for (const auto* k : keys) {
      const auto& params = base.cells.at(*k).params;
      for (auto& [name, set] : values) {
        auto it = std::find_if(params.begin(), params.end(),
                               [&](const auto& p) { return p.first == name; });
        set.insert(it == params.end() ? "" : it->second);
      }
    }
    for (const auto* k : keys) {
      const auto& params = base.cells.at(*k).params;
      std::string suffix;
      for (const auto& [name, set] : values) {
        if (set.size() < 2) continue;
        auto it = std::find_if(params.begin(), params.end(),
                               [&](const auto& p) { return p.first == name; });
        suffix += "-" + (it == params.end() ? std::string() : it->second);
      }
      out[*k] = suffix;
    }
  }
  return out;
}

std::string full_suffix(const CellKey& k) {
  std::string s = k.cell;
  std::replace(s.begin(), s.end(), ' ', ',');
  return s.empty() ? "" : "-" + s;
}

// The header figures of every side.
std::vector<ComparisonSide> describe_sides(const std::vector<LoadedSide>& sides) {
  std::vector<ComparisonSide> out;
  for (const auto& s : sides) {
    ComparisonSide cs;
    cs.name = s.selector.text;
    cs.run_ids = s.run_ids;
    cs.variants.assign(s.variants.begin(), s.variants.end());
    cs.builds.assign(s.builds.begin(), s.builds.end());
    cs.kernels.assign(s.kernels.begin(), s.kernels.end());
    cs.testboxes.assign(s.testboxes.begin(), s.testboxes.end());
    cs.excluded = s.excluded;
    out.push_back(std::move(cs));
  }
  return out;
}

// The UsageError when no cell was run on every side: each side's cells.
UsageError no_common_cell(const std::vector<LoadedSide>& sides) {
  std::string what;
  for (const auto& s : sides) {
    std::vector<std::string> cells;
    for (const auto& [k, _] : s.cells) cells.push_back(cell_text(k.job, k.cell));
    std::string listed;
    for (std::size_t i = 0; i < cells.size() && i < 5; ++i) listed += (i ? ", " : "") + cells[i];
    if (cells.size() > 5) listed += fmt::format(", ... ({} cells)", cells.size());
    what += fmt::format("; '{}' has {}", s.selector.text, listed);
  }
  return UsageError(
      "no cell was run on every side, so there is nothing to compare" + what +
      "; select runs of the same job and parameters (--job J), or name parameters that may "
      "differ with --ignore-param NAME");
}

// The cells present on every side, in the order they were first run on the
// base side; the others are appended to `unmatched`. Throws UsageError when
// no cell is on every side.
std::vector<CellKey> match_cells(const std::vector<LoadedSide>& sides,
                                 std::vector<UnmatchedCell>& unmatched) {
  std::set<CellKey> all;
  for (const auto& s : sides)
    for (const auto& [k, _] : s.cells) all.insert(k);
  std::vector<CellKey> matched;
  for (const auto& k : all) {
    std::vector<std::string> present;
    for (const auto& s : sides)
      if (s.cells.count(k)) present.push_back(s.selector.text);
    if (present.size() == sides.size())
      matched.push_back(k);
    else
      unmatched.push_back({k.workload, k.job, k.cell, present});
  }
  if (matched.empty()) throw no_common_cell(sides);
  const LoadedSide& base = sides[0];
  std::stable_sort(matched.begin(), matched.end(), [&](const CellKey& a, const CellKey& b) {
    return base.cells.at(a).first_run < base.cells.at(b).first_run;
  });
  return matched;
}

// Operation labels of the matched cells' rows (see comparison.h).
class Labels {
 public:
  Labels(const std::vector<CellKey>& matched, const LoadedSide& base)
      : suffixes_(cell_suffixes(matched, base)) {
    std::set<std::pair<std::string, std::string>> jobs;
    for (const auto& k : matched) jobs.insert({k.workload, k.job});
    several_jobs_ = jobs.size() > 1;
  }

  /// The label of `name` in cell k, before collisions are resolved.
  std::string operator()(const CellKey& k, const std::string& name) const {
    return prefix(k.job) + name + suffixes_.at(k);
  }
  /// "JOB:" when the comparison holds cells of several jobs, else "".
  std::string prefix(const std::string& job) const { return several_jobs_ ? job + ":" : ""; }

 private:
  std::map<CellKey, std::string> suffixes_;
  bool several_jobs_ = false;
};

// Every statistic is order-free, so each side's samples of a row are used
// sorted: summarize() and best_mean() then skip their own sorts (this keeps
// a 1M-sample compare fast; bench/compare_bench.cpp). load_side() sorts
// already; other callers' samples are sorted into a copy kept here.
class SortedSamples {
 public:
  std::span<const double> operator()(const std::vector<double>& v) {
    if (std::is_sorted(v.begin(), v.end())) return std::span<const double>(v);
    auto& copy = copies_.emplace_back(v);
    stats::sort_ascending(copy);
    return std::span<const double>(copy);
  }

 private:
  std::deque<std::vector<double>> copies_;  // a deque: spans stay valid as it grows
};

// One side's runs of a row (null: one run, its pooled samples).
using SideRuns = std::vector<const std::vector<std::vector<double>>*>;

// What each row of Comparison::rows is computed from, by row index.
struct RowSources {
  std::vector<SideSamples> samples;   // per row, per side
  std::vector<SideRuns> runs;         // per row, per side (metric rows)
  std::vector<const CellKey*> cells;  // per row
  // Per metric row, per side: summary, logs and run components, which the
  // figures and the significance both read (prepare_rows).
  std::vector<std::vector<stats::PreparedSide>> prepared;
};

// The runs of metric `name` in cell k on every side.
SideRuns runs_of(const std::vector<LoadedSide>& sides, const CellKey& k, const std::string& name) {
  SideRuns runs;
  for (const auto& s : sides) {
    const auto& m = s.cells.at(k).metric_runs;
    auto it = m.find(name);
    runs.push_back(it == m.end() || it->second.size() < 2 ? nullptr : &it->second);
  }
  return runs;
}

// The samples of `name` in cell k on every side (an empty span where a side
// lacks it), from the cells' metrics or their monitors; nullopt when no side
// has it.
std::optional<SideSamples> samples_of(const std::vector<LoadedSide>& sides, const CellKey& k,
                                      const std::string& name, ComparisonRow::Kind kind,
                                      SortedSamples& sorted) {
  SideSamples samples;
  bool any = false;
  for (const auto& s : sides) {
    const CellSamples& cell = s.cells.at(k);
    const auto& m = kind == ComparisonRow::Kind::metric ? cell.metrics : cell.monitors;
    auto it = m.find(name);
    samples.push_back(it == m.end() ? std::span<const double>() : sorted(it->second));
    // A metric whose samples are all invalid on a side still has its row.
    any = any || it != m.end() || (kind == ComparisonRow::Kind::metric && cell.invalid.count(name));
  }
  if (!any) return std::nullopt;
  return samples;
}

// A row of cell k without figures.
ComparisonRow empty_row(ComparisonRow::Kind kind, const CellKey& k, const std::string& name,
                        const std::vector<LoadedSide>& sides, const Labels& label) {
  ComparisonRow row;
  row.kind = kind;
  row.workload = k.workload;
  row.job = k.job;
  row.cell = k.cell;
  row.params = sides[0].cells.at(k).params;
  row.name = name;
  row.operation = label(k, name);
  row.significance.resize(sides.size());
  return row;
}

void add_row(Comparison& cmp, RowSources& src, ComparisonRow row, SideSamples samples,
             const CellKey& k, SideRuns runs = {}) {
  if (runs.empty()) runs.resize(samples.size(), nullptr);
  cmp.rows.push_back(std::move(row));
  src.samples.push_back(std::move(samples));
  src.runs.push_back(std::move(runs));
  src.cells.push_back(&k);
}

// The metrics of one job's cells: the catalog's, in declared order, then any
// with samples but no descriptor (as results/render/run_summary.cpp: higher is better, Amean).
std::vector<MetricDescriptor> job_metrics(const std::string& workload,
                                          const std::vector<const CellKey*>& cells,
                                          const std::vector<LoadedSide>& sides,
                                          const MetricCatalog& catalog) {
  std::vector<MetricDescriptor> metrics;
  if (auto it = catalog.find(workload); it != catalog.end()) metrics = it->second;
  std::set<std::string> seen;
  for (const auto* k : cells)
    for (const auto& s : sides) {
      for (const auto& [name, _] : s.cells.at(*k).metrics) seen.insert(name);
      for (const auto& [name, _] : s.cells.at(*k).invalid) seen.insert(name);
    }
  for (const auto& d : metrics) seen.erase(d.name);
  for (const auto& name : seen)
    metrics.push_back({.name = name, .mean = MeanKind::arithmetic, .doc = ""});
  return metrics;
}

// Metric rows: per job (in first-run order), metric in declared order, cell.
void add_metric_rows(Comparison& cmp, RowSources& src, const std::vector<CellKey>& matched,
                     const std::vector<LoadedSide>& sides, const MetricCatalog& catalog,
                     const Labels& label, SortedSamples& sorted) {
  std::vector<std::pair<std::string, std::string>> job_order;
  for (const auto& k : matched)
    if (std::find(job_order.begin(), job_order.end(), std::pair{k.workload, k.job}) ==
        job_order.end())
      job_order.push_back({k.workload, k.job});
  for (const auto& [workload, job] : job_order) {
    std::vector<const CellKey*> cells;
    for (const auto& k : matched)
      if (k.workload == workload && k.job == job) cells.push_back(&k);
    for (const auto& d : job_metrics(workload, cells, sides, catalog)) {
      for (const auto* k : cells) {
        auto samples = samples_of(sides, *k, d.name, ComparisonRow::Kind::metric, sorted);
        if (!samples) continue;
        ComparisonRow row = empty_row(ComparisonRow::Kind::metric, *k, d.name, sides, label);
        row.unit = d.unit;
        row.direction = d.direction;
        row.mean = d.mean;
        add_row(cmp, src, std::move(row), std::move(*samples), *k, runs_of(sides, *k, d.name));
      }
    }
  }
}

// Monitor rows: names in order (grouping them by prefix), then cells.
void add_monitor_rows(Comparison& cmp, RowSources& src, const std::vector<CellKey>& matched,
                      const std::vector<LoadedSide>& sides, const Labels& label,
                      SortedSamples& sorted) {
  std::set<std::string> names;
  for (const auto& k : matched)
    for (const auto& s : sides)
      for (const auto& [name, _] : s.cells.at(k).monitors) names.insert(name);
  for (const auto& name : names) {
    for (const auto& k : matched) {
      auto samples = samples_of(sides, k, name, ComparisonRow::Kind::monitor, sorted);
      if (!samples) continue;
      ComparisonRow row = empty_row(ComparisonRow::Kind::monitor, k, name, sides, label);
      row.direction = Direction::higher_is_better;  // only used for the plain change
      row.mean = MeanKind::arithmetic;
      add_row(cmp, src, std::move(row), std::move(*samples), k);
    }
  }
}

// The within- and between-run CoeffVar of one side of a metric row, from its
// run components (stats::prepare_side: of its runs, or of its pooled
// samples as one run).
void fill_components(SideFigures& f, const std::optional<stats::RunComponents>& c) {
  if (!c) return;
  f.within_cv_pct = stats::log_variance_coeff_var(c->within_var);
  f.between_cv_pct = stats::log_variance_coeff_var(c->between_var);
}

// Calls fn(r) for r in [0, n) on as many threads as there are CPUs (at most
// 8; each thread takes every threads-th r).
template <class F>
void for_each_row(std::size_t n, F&& fn) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::future<void>> work;
  for (std::size_t t = 1; t < threads && t < n; ++t)
    work.push_back(std::async(std::launch::async, [&, t] {
      for (std::size_t r = t; r < n; r += threads) fn(r);
    }));
  try {
    for (std::size_t r = 0; r < n; r += threads) fn(r);
  } catch (...) {
    for (auto& w : work) w.wait();  // they read what the caller owns
    throw;
  }
  for (auto& w : work) w.get();
}

// The prepared sides of every metric row (RowSources::prepared): each side's
// summary, logs and run components, computed once for the figures and the
// significance.
void prepare_rows(RowSources& src, std::size_t metric_rows) {
  src.prepared.resize(metric_rows);
  for_each_row(metric_rows, [&](std::size_t r) {
    auto& sides = src.prepared[r];
    for (std::size_t i = 0; i < src.samples[r].size(); ++i) {
      const auto* runs = src.runs[r][i];
      sides.push_back(stats::prepare_side(
          src.samples[r][i], runs ? std::span(*runs) : std::span<const std::vector<double>>()));
    }
  });
}

// The figures of one row: each side's summary, the statistic lines, %changes.
// `prepared`: the metric row's prepared sides (empty for a monitor row).
void fill_row(ComparisonRow& row, const SideSamples& samples,
              const std::vector<stats::PreparedSide>& prepared, const CellKey& k,
              const std::vector<LoadedSide>& sides) {
  for (std::size_t i = 0; i < sides.size(); ++i) {
    if (row.kind == ComparisonRow::Kind::metric) {
      row.sides.push_back(figures(prepared[i].summary, sides[i].cells.at(k), row));
      fill_components(row.sides.back(), prepared[i].components);
    } else {
      row.sides.push_back(figures(stats::summarize(samples[i]), sides[i].cells.at(k), row));
    }
  }
  if (row.kind == ComparisonRow::Kind::metric) {
    row.lines = metric_lines(row, samples);
  } else {
    std::vector<double> means(sides.size(), kNaN);
    for (std::size_t i = 0; i < sides.size(); ++i) means[i] = value_or_nan(row.sides[i].mean);
    row.lines.push_back(make_line("Amean", false, means, Direction::higher_is_better));
  }
  fill_changes(row, row.direction);
}

// The figures of every row, on as many threads as there are CPUs (rows are
// independent and each thread fills its own rows).
void fill_rows(Comparison& cmp, const RowSources& src, const std::vector<LoadedSide>& sides) {
  static const std::vector<stats::PreparedSide> kNone;
  for_each_row(cmp.rows.size(), [&](std::size_t r) {
    fill_row(cmp.rows[r], src.samples[r], r < src.prepared.size() ? src.prepared[r] : kNone,
             *src.cells[r], sides);
  });
}

bool uses_run_model(const stats::SignificanceOptions& o) {
  return o.run_model && o.test == stats::TestKind::welch;
}

void count_verdict(VerdictCounts& c, stats::Verdict v) {
  switch (v) {
    case stats::Verdict::regression:
      ++c.regressions;
      break;
    case stats::Verdict::improvement:
      ++c.improvements;
      break;
    case stats::Verdict::unchanged:
      ++c.unchanged;
      break;
    case stats::Verdict::inconclusive:
      ++c.inconclusive;
      break;
    case stats::Verdict::undefined:
      ++c.undefined;
      break;
  }
}

// The reason of a row's verdict says what the invalid samples of both sides
// did: "...; invalid samples left out: base 0, new 2".
void add_invalid_to_reason(stats::Significance& sig, const ComparisonRow& row, std::size_t side,
                           bool included) {
  const int base = row.sides[0].invalid, now = row.sides[side].invalid;
  if (base == 0 && now == 0) return;
  sig.reason += fmt::format("; invalid samples {}: base {}, new {}",
                            included ? "included" : "left out", base, now);
}

// Significance, step 1: one family per NEW side, all of its metric rows (the
// first `metric_rows` rows), with the calibrations and minimum effects of
// each row. Reads only what add_metric_rows set (kind, names, direction,
// mean), so the families can be decided while fill_rows fills the figures.
// `one_run`: some row has one run on a side and no calibration.
std::vector<std::vector<stats::RowInput>> significance_families(
    const Comparison& cmp, const RowSources& src, std::size_t metric_rows,
    const std::vector<LoadedSide>& sides, const CalibrationLookup& calibration,
    const MinEffects& min_effects, bool& one_run) {
  std::vector<std::vector<stats::RowInput>> families;
  for (std::size_t side = 1; side < sides.size(); ++side) {
    std::vector<stats::RowInput>& family = families.emplace_back();
    family.reserve(metric_rows);
    for (std::size_t r = 0; r < metric_rows; ++r) {
      const ComparisonRow& row = cmp.rows[r];
      stats::RowInput in{src.samples[r][0], src.samples[r][side], row.direction, row.mean};
      if (src.runs[r][0]) in.base_runs = *src.runs[r][0];
      if (src.runs[r][side]) in.now_runs = *src.runs[r][side];
      in.base_prepared = &src.prepared[r][0];
      in.now_prepared = &src.prepared[r][side];
      if ((in.base_runs.size() < 2 || in.now_runs.size() < 2) && uses_run_model(cmp.options)) {
        // Never the iterations alone: the calibration, the cell's history,
        // else the prior (docs/statistics.md "Where the between-run
        // variation comes from").
        const std::string& stored = sides[0].cells.at(*src.cells[r]).stored_cell;
        const auto& boxes = sides[0].testboxes;
        if (calibration)
          in.between = calibration({row.workload, row.job, stored.empty() ? row.cell : stored,
                                    row.name, boxes.empty() ? "" : *boxes.begin()});
        if (!in.between) {
          in.between = stats::prior_between_variance();
          one_run = true;
        }
      }
      if (auto it = min_effects.find({row.workload, row.job, row.name}); it != min_effects.end())
        in.min_effect_pct = it->second;
      else if (auto job = min_effects.find({row.workload, row.job, ""}); job != min_effects.end())
        in.min_effect_pct = job->second;
      family.push_back(in);
    }
  }
  return families;
}

// Significance, step 2, once the rows are filled: each NEW side's decisions
// (`decided[side - 1]`, stats::decide_significance of its family) into its
// rows and the counts.
void apply_decisions(Comparison& cmp, std::vector<std::vector<stats::Significance>> decided,
                     bool one_run) {
  cmp.counts.resize(decided.size());
  for (std::size_t side = 1; side <= decided.size(); ++side) {
    for (const auto& d : decided[side - 1])
      if (d.basis == stats::RunBasis::calibrated && d.between)
        ++cmp.between_rows[d.between->source];
    for (std::size_t r = 0; r < decided[side - 1].size(); ++r) {
      stats::Significance& sig = decided[side - 1][r];
      count_verdict(cmp.counts[side - 1], sig.verdict);
      add_invalid_to_reason(sig, cmp.rows[r], side, cmp.include_invalid);
      cmp.rows[r].significance[side] = std::move(sig);
    }
  }
  if (one_run) cmp.warnings.push_back(kOneRunWarning);
}

// The figures of every row (fill_rows) and the significance of the metric
// rows (decide_significance of each NEW side's family): both read the rows'
// samples only, so the decisions run on a thread of their own meanwhile
// (about a tenth of a 1M-sample compare, bench/compare_bench.cpp); then they
// go into the rows.
void fill_and_decide(Comparison& cmp, RowSources& src, std::size_t metric_rows,
                     const std::vector<LoadedSide>& sides, const CalibrationLookup& calibration,
                     const MinEffects& min_effects) {
  bool one_run = false;
  prepare_rows(src, metric_rows);
  const auto families =
      significance_families(cmp, src, metric_rows, sides, calibration, min_effects, one_run);
  auto deciding = std::async(std::launch::async, [&] {
    std::vector<std::vector<stats::Significance>> decided;
    for (const auto& family : families)
      decided.push_back(stats::decide_significance(family, cmp.options));
    return decided;
  });
  try {
    fill_rows(cmp, src, sides);
  } catch (...) {
    deciding.wait();  // it reads cmp: let it end before the exception unwinds
    throw;
  }
  apply_decisions(cmp, deciding.get(), one_run);
}

// Unique labels: rows sharing a label fall back to the full parameter list;
// should that still collide, "#2", "#3", ... is appended.
void make_labels_unique(std::vector<ComparisonRow>& rows, const Labels& label) {
  std::map<std::string, std::vector<std::size_t>> by_label;
  for (std::size_t r = 0; r < rows.size(); ++r) by_label[rows[r].operation].push_back(r);
  for (const auto& [l, same] : by_label) {
    if (same.size() < 2) continue;
    for (auto r : same) {
      auto& row = rows[r];
      row.operation =
          label.prefix(row.job) + row.name + full_suffix({row.workload, row.job, row.cell});
    }
  }
  std::set<std::string> used;
  for (auto& row : rows) {
    std::string l = row.operation;
    for (int k = 2; !used.insert(l).second; ++k) l = row.operation + "#" + std::to_string(k);
    row.operation = l;
  }
}

std::string verdict_line(const Comparison& cmp, const std::vector<LoadedSide>& sides) {
  std::string line;
  if (sides.size() == 2) {
    line = format_counts(cmp.counts[0]);
  } else {
    for (std::size_t i = 1; i < sides.size(); ++i)
      line +=
          (i > 1 ? "; " : "") + sides[i].selector.text + ": " + format_counts(cmp.counts[i - 1]);
  }
  return line;
}

// Notes on one side's pooling: one line when every matched cell pooled the
// same number (> 1) of runs, else one per pooled cell (at most kMaxListed).
void add_pooling_notes(std::vector<std::string>& notes, const LoadedSide& s,
                       const std::vector<CellKey>& matched) {
  const std::string& n = s.selector.text;
  std::map<std::size_t, std::vector<const CellKey*>> by_runs;
  for (const auto& k : matched) by_runs[s.cells.at(k).run_ids.size()].push_back(&k);
  if (by_runs.size() == 1 && by_runs.begin()->first > 1) {
    notes.push_back(fmt::format("{}: pooled {} runs per cell", n, by_runs.begin()->first));
    return;
  }
  std::size_t listed = 0, more = 0;
  for (const auto& [runs, keys] : by_runs) {
    if (runs < 2) continue;
    for (const auto* k : keys) {
      if (listed++ < kMaxListed)
        notes.push_back(
            fmt::format("{}: pooled {} runs of {}", n, runs, cell_text(k->job, k->cell)));
      else
        ++more;
    }
  }
  if (more) notes.push_back(fmt::format("{}: ... and {} more pooled cells", n, more));
}

// Notes on the invalid samples of side `side`: one per metric row holding
// some, with its count and the first one's reason (at most kMaxListed).
void add_invalid_notes(std::vector<std::string>& notes, const Comparison& cmp, std::size_t side,
                       const LoadedSide& s) {
  std::size_t listed = 0, more = 0;
  for (const auto& row : cmp.rows) {
    if (row.kind != ComparisonRow::Kind::metric || row.sides[side].invalid == 0) continue;
    if (listed++ >= kMaxListed) {
      ++more;
      continue;
    }
    const CellKey key{row.workload, row.job, row.cell};
    const InvalidSamples& inv = s.cells.at(key).invalid.at(row.name);
    notes.push_back(fmt::format(
        "{}: {} {}: run {} iteration {}: {}{}", s.selector.text, row.operation,
        sample_count_text(row.sides[side], cmp.include_invalid), inv.run_id, inv.iteration,
        inv.reason, inv.count > 1 ? fmt::format(" (and {} more)", inv.count - 1) : ""));
  }
  if (more)
    notes.push_back(
        fmt::format("{}: ... and {} more rows with invalid samples", s.selector.text, more));
}

// Notes on one side: pooling, aborted runs, matching runs without samples.
void add_side_notes(std::vector<std::string>& notes, const LoadedSide& s,
                    const std::vector<CellKey>& matched) {
  const std::string& n = s.selector.text;
  add_pooling_notes(notes, s, matched);
  int aborted = 0;
  for (const auto& k : matched) aborted += s.cells.at(k).aborted_runs;
  if (aborted)
    notes.push_back(fmt::format(
        "{}: includes {} aborted run(s); their completed iterations are used", n, aborted));
  if (!s.excluded.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < s.excluded.size() && i < 5; ++i)
      listed += fmt::format("{}run {} {}", i ? ", " : "", s.excluded[i].id,
                            to_string(s.excluded[i].status));
    if (s.excluded.size() > 5) listed += ", ...";
    notes.push_back(fmt::format("{}: {} matching run(s) without samples not used ({})", n,
                                s.excluded.size(), listed));
  }
}

void add_unmatched_notes(std::vector<std::string>& notes,
                         const std::vector<UnmatchedCell>& unmatched) {
  for (std::size_t i = 0; i < unmatched.size(); ++i) {
    if (i == kMaxListed) {
      notes.push_back(fmt::format("... and {} more unmatched cells", unmatched.size() - i));
      break;
    }
    const auto& u = unmatched[i];
    std::string on;
    for (std::size_t j = 0; j < u.present_on.size(); ++j) on += (j ? ", " : "") + u.present_on[j];
    notes.push_back(fmt::format("unmatched: {} only on {}", cell_text(u.job, u.cell), on));
  }
}

// Per NEW side, the reason of each inconclusive or undefined row (at most
// kMaxListed, then one "... more" line).
void add_undecided_notes(Comparison& cmp, const std::vector<LoadedSide>& sides) {
  for (std::size_t side = 1; side < sides.size(); ++side) {
    std::size_t listed = 0;
    for (const auto& row : cmp.rows) {
      const auto& sig = row.significance[side];
      if (!sig || (sig->verdict != stats::Verdict::inconclusive &&
                   sig->verdict != stats::Verdict::undefined))
        continue;
      if (listed++ == kMaxListed) {
        cmp.notes.push_back(fmt::format("{}: ... more {} rows", sides[side].selector.text,
                                        stats::to_string(sig->verdict)));
        break;
      }
      cmp.notes.push_back(fmt::format("{}: {} {}: {}", sides[side].selector.text, row.operation,
                                      stats::to_string(sig->verdict), sig->reason));
    }
  }
}

}  // namespace

std::string sample_count_text(const SideFigures& f, bool included) {
  std::string text = fmt::format("n={}", f.summary.n);
  if (f.invalid > 0) text += fmt::format(" ({} invalid{})", f.invalid, included ? " included" : "");
  return text;
}

bool row_emulated(const ComparisonRow& row) {
  return std::any_of(row.sides.begin(), row.sides.end(),
                     [](const SideFigures& f) { return f.emulated; });
}

std::string format_counts(const VerdictCounts& c) {
  std::string s = plural(c.regressions, "regression", "regressions") + ", " +
                  plural(c.improvements, "improvement", "improvements") + ", " +
                  fmt::format("{} unchanged, {} inconclusive", c.unchanged, c.inconclusive);
  if (c.undefined) s += fmt::format(", {} undefined", c.undefined);
  return s;
}

namespace {

// "tcg" / "kvm" / "bare metal" for one side's accelerators, joined.
std::string accelerator_text(const std::vector<std::string>& accels) {
  std::vector<std::string> named;
  for (const auto& a : accels) named.push_back(a.empty() ? "bare metal" : a);
  return join(named, "+");
}

// The marks and warnings of sides measured in qemu: each row's figures
// pooled from a run under TCG are marked (SideFigures::emulated), and the
// warning that explains kEmulationTag names the sides; the sides differing
// in accelerator or guest size are warned about (their figures are then not
// comparable: docs/qemu.md).
void add_guest_warnings(Comparison& cmp, const std::vector<LoadedSide>& sides) {
  std::vector<std::string> emulated;
  for (const auto& s : sides) {
    SideGuest g;
    g.accelerators.assign(s.accelerators.begin(), s.accelerators.end());
    g.guest_sizes.assign(s.guest_sizes.begin(), s.guest_sizes.end());
    g.emulated = !s.emulated_runs.empty() || s.accelerators.count("tcg") > 0;
    if (g.emulated) emulated.push_back(s.selector.text);
    cmp.guests.push_back(std::move(g));
  }
  for (auto& row : cmp.rows)
    for (std::size_t i = 0; i < sides.size() && i < row.sides.size(); ++i) {
      if (!cmp.guests[i].emulated) continue;
      const auto cell = sides[i].cells.find(CellKey{row.workload, row.job, row.cell});
      if (cell != sides[i].cells.end())
        row.sides[i].emulated = runs_emulated(sides[i], cell->second.run_ids);
    }
  if (!emulated.empty())
    cmp.warnings.push_back(fmt::format(
        "{} {}: {} ran under qemu TCG (software emulation, no KVM); figures marked {} are not "
        "those of hardware",
        kEmulationTag, kEmulationMark,
        emulated.size() == sides.size() ? std::string("every side") : join(emulated, ", "),
        kEmulationTag));
  const SideGuest& base = cmp.guests[0];
  for (std::size_t i = 1; i < cmp.guests.size(); ++i) {
    const SideGuest& s = cmp.guests[i];
    if (s.accelerators != base.accelerators)
      cmp.warnings.push_back(
          fmt::format("the sides ran under different accelerators ({}: {}, {}: {}): the difference "
                      "measures the accelerator, not the change",
                      cmp.sides[0].name, accelerator_text(base.accelerators), cmp.sides[i].name,
                      accelerator_text(s.accelerators)));
    else if (s.guest_sizes != base.guest_sizes)
      cmp.warnings.push_back(fmt::format(
          "the sides ran in different guest sizes ({}: {}, {}: {}): compare with the same "
          "--vm-cpus and --vm-memory",
          cmp.sides[0].name, join(base.guest_sizes, "; "), cmp.sides[i].name,
          join(s.guest_sizes, "; ")));
  }
}

// The warning of each NEW side whose runs were measured on other testboxes
// than the base's (a bundle imported next to one's own runs, issue 20): the
// difference then includes the machines.
void add_testbox_warnings(Comparison& cmp) {
  const ComparisonSide& base = cmp.sides[0];
  for (std::size_t i = 1; i < cmp.sides.size(); ++i) {
    const ComparisonSide& s = cmp.sides[i];
    if (s.testboxes == base.testboxes) continue;
    cmp.warnings.push_back(fmt::format(
        "sides ran on different testboxes: {} ({}) vs {} ({}): the difference includes the "
        "machines, not only the change",
        base.name, join(base.testboxes), s.name, join(s.testboxes)));
  }
}

// One note per source of the between-run variation of rows with one run on a
// side: "2 row(s) with one run on a side tested with the between-run
// variation from this cell's history (10 runs)".
void add_between_notes(Comparison& cmp) {
  for (const auto& [source, rows] : cmp.between_rows) {
    std::set<std::string> texts;  // history: one per distinct run count
    for (const auto& row : cmp.rows)
      for (const auto& sig : row.significance)
        if (sig && sig->between && sig->between->source == source)
          texts.insert(stats::between_source_text(*sig->between));
    cmp.notes.push_back(fmt::format(
        "{} row(s) with one run on a side tested with the between-run variation from {}{}", rows,
        join(std::vector<std::string>(texts.begin(), texts.end()), "; "),
        source == stats::BetweenSource::calibration ? " (`nightjar calibrate`)" : ""));
  }
}

}  // namespace

Comparison build_comparison(const std::vector<LoadedSide>& sides, const MetricCatalog& catalog,
                            const stats::SignificanceOptions& options, bool include_invalid,
                            const CalibrationLookup& calibration, const MinEffects& min_effects) {
  if (sides.size() < 2)
    throw std::invalid_argument("build_comparison: needs BASE and at least one NEW side");
  // Validate the options before any work (decide_significance would, but only
  // when there are rows).
  (void)stats::decide_significance({}, options);
  Comparison cmp;
  cmp.options = options;
  cmp.include_invalid = include_invalid;
  cmp.sides = describe_sides(sides);
  const std::vector<CellKey> matched = match_cells(sides, cmp.unmatched);
  const Labels label(matched, sides[0]);

  SortedSamples sorted;
  RowSources src;
  add_metric_rows(cmp, src, matched, sides, catalog, label, sorted);
  const std::size_t metric_rows = cmp.rows.size();
  add_monitor_rows(cmp, src, matched, sides, label, sorted);
  fill_and_decide(cmp, src, metric_rows, sides, calibration, min_effects);
  make_labels_unique(cmp.rows, label);
  cmp.verdict = verdict_line(cmp, sides);
  add_guest_warnings(cmp, sides);
  add_testbox_warnings(cmp);

  if (include_invalid)
    cmp.notes.push_back(
        "--include-invalid: invalid samples are pooled with the valid ones; these figures are "
        "for inspection, not for verdicts");
  for (std::size_t i = 0; i < sides.size(); ++i) {
    add_side_notes(cmp.notes, sides[i], matched);
    add_invalid_notes(cmp.notes, cmp, i, sides[i]);
  }
  add_unmatched_notes(cmp.notes, cmp.unmatched);
  add_undecided_notes(cmp, sides);
  add_between_notes(cmp);
  return cmp;
}

// The job files' `min_effect:` as the runner stored it in the context of the
// base side's first run of each cell ("min_effect", "min_effect.METRIC").
static MinEffects stored_min_effects(const ResultsStore& store, const LoadedSide& base) {
  MinEffects out;
  for (const auto& [k, cell] : base.cells) {
    // Only the context: the whole run_record (iterations, samples, flags) of
    // every cell was 4% of a 1M-sample compare (issue 19).
    for (const auto& [key, value] : store.run_context(cell.first_run)) {
      if (key != "min_effect" && key.rfind("min_effect.", 0) != 0) continue;
      try {
        out[{k.workload, k.job, key == "min_effect" ? "" : key.substr(11)}] = std::stod(value);
      } catch (const std::exception&) {
        // Not written by nightjar run: ignored.
      }
    }
  }
  return out;
}

Comparison compare_selectors(const ResultsStore& store, const std::vector<Selector>& selectors,
                             const SideQuery& query, const stats::SignificanceOptions& options,
                             const std::set<std::string>& accepted_env) {
  if (selectors.size() < 2)
    throw UsageError(
        "compare: give a BASE and at least one NEW selector, e.g. `nightjar compare vanilla "
        "patched`");
  // Sides load in parallel, each on its own read-only connection; errors are
  // reported in side order (BASE first).
  std::vector<std::future<LoadedSide>> loading;
  for (std::size_t i = 0; i < selectors.size(); ++i)
    loading.push_back(std::async(std::launch::async, [&, i] {
      return load_side(store, selectors[i], query, i == 0 ? "BASE" : "NEW");
    }));
  std::vector<LoadedSide> sides;
  for (auto& f : loading) f.wait();
  for (auto& f : loading) sides.push_back(f.get());
  return compare_loaded_sides(store, sides, sides_metric_catalog(store, sides, query), query,
                              options, accepted_env);
}

MetricCatalog sides_metric_catalog(const ResultsStore& store, const std::vector<LoadedSide>& sides,
                                   const SideQuery& query) {
  std::set<std::string> workloads;
  for (const auto& s : sides)
    for (const auto& [k, _] : s.cells) workloads.insert(k.workload);
  return load_metric_catalog(store, workloads,
                             query.declared ? *query.declared : WorkloadCatalog::empty());
}

Comparison compare_loaded_sides(const ResultsStore& store, const std::vector<LoadedSide>& sides,
                                const MetricCatalog& catalog, const SideQuery& query,
                                const stats::SignificanceOptions& options,
                                const std::set<std::string>& accepted_env) {
  check_ignored_params(sides, query.ignore_params);
  // For rows with one run on a side: the testbox's calibration, else the
  // cell's history (build_comparison falls back to the prior).
  Comparison c =
      build_comparison(sides, catalog, options, query.include_invalid,
                       stored_between_lookup(store, sides), stored_min_effects(store, sides.at(0)));
  for (std::size_t i = 1; i < sides.size(); ++i) {
    c.environment.push_back(diff_sides(store, sides[0], sides[i], accepted_env));
    if (auto w = confounder_warning(c.environment.back())) c.warnings.push_back(*w);
  }
  // The testbox's measured error rates for these cells (`nightjar audit`).
  for (auto& n : audit_notes(store, c, sides)) c.notes.push_back(std::move(n));
  return c;
}

ExitCode check_exit_code(const Comparison& c) {
  bool inconclusive = false;
  for (const auto& row : c.rows) {
    if (row.kind != ComparisonRow::Kind::metric) continue;
    for (const auto& sig : row.significance) {
      if (!sig) continue;
      if (sig->verdict == stats::Verdict::regression) return ExitCode::regression;
      if (sig->verdict == stats::Verdict::inconclusive || sig->verdict == stats::Verdict::undefined)
        inconclusive = true;
    }
  }
  return inconclusive ? ExitCode::inconclusive : ExitCode::ok;
}

}  // namespace nightjar

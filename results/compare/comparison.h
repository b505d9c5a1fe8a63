// The comparison record of `nightjar compare` / `nightjar check`: sides,
// matched cells, one row per metric × matched cell with both sides' pooled
// samples summarised, %change and the significance of each NEW side against
// the BASE (decided over the whole family of rows of that BASE-vs-NEW pair by
// stats::decide_significance), then monitor deltas as extra rows without a
// verdict. Renderers (results/render/) read only this record; every number
// in it comes from the statistics module (results/stats/).
//
// Operation labels (mmtests' "metric-parameter", e.g. `faults_per_sec-4`):
// the metric (or monitor) name, then the values of the parameters that vary
// among the matched cells, in parameter-name order, each after a '-'
// (`faults_per_sec-2-threads` for clients=2 mode=threads when both clients and
// mode vary). Nothing varies (one cell): the bare metric name. Cells of more
// than one job: the job name and ':' in front. Should two labels still collide
// (a value containing '-'), the colliding rows use the full parameter list
// (`throughput-a=x-y,b=z`); labels are unique within a comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "results/compare/between_runs.h"
#include "results/compare/environment.h"
#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/model/metric.h"
#include "results/stats/descriptive.h"
#include "results/stats/significance.h"
#include "results/store/store.h"

namespace nightjar {

/// One side of the comparison, for headers and notes.
struct ComparisonSide {
  std::string name;                   ///< the selector as written (column header)
  std::vector<std::int64_t> run_ids;  ///< runs whose samples were used
  std::vector<std::string> variants, builds, kernels, testboxes;  ///< distinct, sorted
  std::vector<ExcludedRun> excluded;                              ///< matching runs without samples
};

/// Where one side's runs were measured: qemu's accelerator and guest size.
struct SideGuest {
  /// LoadedSide::accelerators and guest_sizes ("" = not in qemu), sorted.
  std::vector<std::string> accelerators, guest_sizes;
  /// Some of the side's runs were measured under qemu TCG: renderers show
  /// kEmulationMark with its figures.
  bool emulated = false;
};

/// One side's figures of one row.
struct SideFigures {
  int runs = 0;          ///< runs pooled (0 when the cell has no such metric on this side)
  int aborted_runs = 0;  ///< of which aborted
  /// Invalid samples of the metric on this side: left out of `summary` (or,
  /// with Comparison::include_invalid, counted in it); 0 for monitor rows.
  int invalid = 0;
  stats::Summary summary;
  std::optional<double> mean;  ///< the row's summary mean (Hmean/Amean/Gmean); nullopt = undefined
  /// Variance components of the side's runs (stats::run_components, on ln x)
  /// as CoeffVar, percent: the pooled within-run spread and the spread
  /// between runs beyond it. NaN when unknown (one run: between; a sample
  /// <= 0 or one sample per run: both).
  double within_cv_pct = std::numeric_limits<double>::quiet_NaN();
  double between_cv_pct = std::numeric_limits<double>::quiet_NaN();
  /// Some of the runs pooled here were measured under qemu TCG
  /// (LoadedSide::emulated_runs): every layout marks these figures with
  /// kEmulationTag.
  bool emulated = false;
};

/// One statistic line of a row as the mmtests layout prints it (Min, Hmean,
/// Stddev, CoeffVar, Max, BHmean-50, ...).
struct StatLine {
  std::string name;           ///< "Min", "Hmean", "BAmean-95", ...
  bool main = false;          ///< the summary mean line: the only one that carries stars
  std::vector<double> value;  ///< per side; NaN = undefined
  /// Per side, %change against the base, positive = better (Stddev/CoeffVar:
  /// lower is better); [0] = 0; NaN = undefined.
  std::vector<double> pct;
};

/// One row: a metric (or monitor) of one matched cell.
struct ComparisonRow {
  enum class Kind { metric, monitor };
  Kind kind = Kind::metric;
  std::string workload, job, cell;  ///< cell = matching identity (canonical id)
  /// The cell's parameters (canonical text, sorted by name, without ignored
  /// and unset ones), as CellSamples::params: the axes of `nightjar report --by`.
  std::vector<std::pair<std::string, std::string>> params;
  std::string name;                                   ///< metric or monitor name
  std::string unit;                                   ///< metric unit; "" for monitors
  std::string operation;                              ///< unique label, see the file comment
  Direction direction = Direction::higher_is_better;  ///< metric rows
  MeanKind mean = MeanKind::arithmetic;               ///< metric rows; monitors use Amean
  std::vector<SideFigures> sides;                     ///< [0] = BASE, [i] = NEW i
  std::vector<StatLine> lines;  ///< metric rows: the 8 mmtests lines; monitor rows: Amean only
  /// Per side, %change of the summary mean, positive = better ([0] = 0; NaN =
  /// undefined). Monitor rows have no direction: their change is plain
  /// (new − base)/base, like `plain_change_pct`.
  std::vector<double> change_pct;
  /// Per side, (new − base)/base·100 of the summary mean: the sign is the sign
  /// of new − base whatever the direction (LKP's %change).
  std::vector<double> plain_change_pct;
  /// Per side, the verdict of NEW i against BASE ([0] and monitor rows: nullopt).
  std::vector<std::optional<stats::Significance>> significance;
};

/// True when some side of `row` holds figures measured under qemu TCG
/// (SideFigures::emulated): the row carries kEmulationTag.
bool row_emulated(const ComparisonRow& row);

/// A cell present on some sides only.
struct UnmatchedCell {
  std::string workload, job, cell;
  std::vector<std::string> present_on;  ///< side names holding it
};

/// Verdict counts of one NEW side's metric rows.
struct VerdictCounts {
  int regressions = 0, improvements = 0, unchanged = 0, inconclusive = 0, undefined = 0;
};

/// The whole comparison.
struct Comparison {
  std::vector<ComparisonSide> sides;  ///< [0] = BASE
  std::vector<SideGuest> guests;      ///< [i] = sides[i]
  stats::SignificanceOptions options;
  /// Metric rows (cells in the order they were first run, metrics in declared
  /// order within a job), then monitor rows (grouped by name prefix).
  std::vector<ComparisonRow> rows;
  std::vector<UnmatchedCell> unmatched;
  std::vector<VerdictCounts> counts;  ///< [i-1] = NEW i
  /// "2 regressions, 1 improvement, 14 unchanged, 3 inconclusive" (", N undefined"
  /// when any); with several NEW sides each is prefixed "NAME: " and joined by "; ".
  std::string verdict;
  /// Plain-text notes: pooling, aborted and excluded runs, invalid samples
  /// left out (or included), unmatched cells, what inconclusive rows would
  /// need.
  std::vector<std::string> notes;
  /// --include-invalid: the invalid samples are in the figures
  /// (SideQuery::include_invalid), for inspection.
  bool include_invalid = false;
  /// Warnings every layout shows next to the verdict (kOneRunWarning when a
  /// metric row has one run on a side and no calibration; the legend of
  /// kEmulationTag, "[TCG] TCG: measures emulation: ...", when a side ran
  /// under TCG; sides under different accelerators or guest sizes; sides
  /// that ran on different testboxes, "sides ran on different testboxes: a
  /// (box1) vs b (box2) ..."): each text layout prints them on the line
  /// after the verdict line, as "warning: ...".
  std::vector<std::string> warnings;
  /// Metric rows with one run on a side, by where their between-run
  /// variance came from (docs/statistics.md "Where the between-run variation
  /// comes from"); each source has a note in `notes`.
  std::map<stats::BetweenSource, int> between_rows;
  /// [i-1] = what else differs between BASE and NEW i (docs/environment.md),
  /// filled by compare_selectors; each diff's confounders are also a warning
  /// (confounder_warning). Empty, or every diff empty: nothing differs, and no
  /// layout prints an environment section.
  std::vector<EnvironmentDiff> environment;
};

/// The sample count of one side of a row as every layout prints it:
/// "n=4", "n=4 (1 invalid)" (left out), "n=5 (1 invalid included)"
/// (`included`: Comparison::include_invalid).
std::string sample_count_text(const SideFigures& f, bool included);

/// The warning of a comparison with a row of one run on a side and no
/// measured between-run variance, tested with the conservative prior
/// (docs/statistics.md "The prior").
inline constexpr const char* kOneRunWarning =
    "one run on a side and run-to-run variation not measured: tested with the conservative prior "
    "(between-run CoeffVar 10%), so only large changes are flagged — `--runs 3`, `nightjar "
    "calibrate` or more runs of this cell measure it";

/// Per-job, per-metric minimum effects (the job file's `min_effect:`,
/// docs/jobs.md), percent: (workload, job, metric) -> margin; metric "" is
/// the job's default for its metrics.
using MinEffects = std::map<std::tuple<std::string, std::string, std::string>, double>;

/// Builds the comparison of already loaded sides ([0] = BASE). Cells are
/// matched by CellKey and must be present on every side; others are listed as
/// unmatched. A metric with only invalid samples on a side still has its row
/// (n=0 there: inconclusive, never a regression). Rows with >= 2 runs on both
/// sides are tested on runs; with the run model (welch, options.run_model) a
/// row with one run on a side uses `calibration` when it has a value for it,
/// else the conservative prior (stats::prior_between_variance) and
/// Comparison::warnings gets kOneRunWarning: never the iterations alone. Rows take their minimum
/// effect from `min_effects` (the metric's, else the job's ""), else from options.
/// `include_invalid`: the sides were loaded with SideQuery::include_invalid (said in the notes).
/// Throws UsageError when no cell is present on every side (naming each
/// side's cells), std::invalid_argument for bad options (alpha, power, min
/// effect).
Comparison build_comparison(const std::vector<LoadedSide>& sides, const MetricCatalog& catalog,
                            const stats::SignificanceOptions& options, bool include_invalid = false,
                            const CalibrationLookup& calibration = {},
                            const MinEffects& min_effects = {});

/// Loads every side of `selectors` (parsed by parse_selector) from `store`
/// and builds the comparison. selectors[0] is BASE. Throws UsageError for
/// fewer than two selectors; else errors as load_side and build_comparison.
/// The environment diff of each NEW side against BASE (diff_sides) is put in
/// Comparison::environment and its confounders in the warnings;
/// `accepted_env` are the fact keys of --accept-env.
Comparison compare_selectors(const ResultsStore& store, const std::vector<Selector>& selectors,
                             const SideQuery& query, const stats::SignificanceOptions& options,
                             const std::set<std::string>& accepted_env = {});

/// The metric descriptors of every workload with a cell on some side
/// (load_metric_catalog, in the declared order of `query.declared`).
MetricCatalog sides_metric_catalog(const ResultsStore& store, const std::vector<LoadedSide>& sides,
                                   const SideQuery& query);

/// The comparison of sides already loaded by load_side (sides[0] = BASE),
/// exactly as compare_selectors builds it: with the store's calibrations for
/// rows with one run on a side and the minimum effects stored with the base
/// side's jobs. For callers that also need the sides' samples (`export
/// --format kcidb`), with each NEW side's environment diff as
/// compare_selectors gives it (`accepted_env`: the keys of --accept-env).
/// Errors as build_comparison.
Comparison compare_loaded_sides(const ResultsStore& store, const std::vector<LoadedSide>& sides,
                                const MetricCatalog& catalog, const SideQuery& query,
                                const stats::SignificanceOptions& options,
                                const std::set<std::string>& accepted_env = {});

/// The exit code of `nightjar check` (and `compare --fail-on-regression`) over
/// the key metrics (metric rows, never monitor rows) of every NEW side:
/// regression (1) when any row is a significant regression — this wins over
/// inconclusive rows; else inconclusive (3) when any row is inconclusive or
/// undefined (nothing can vouch for it); else ok (0).
ExitCode check_exit_code(const Comparison& comparison);

/// "2 regressions, 1 improvement, 14 unchanged, 3 inconclusive" for `c`.
std::string format_counts(const VerdictCounts& c);

}  // namespace nightjar

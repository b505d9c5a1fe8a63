// The data of a `nightjar plot` figure, built from the results store: a
// record that the renderer (plots/gnuplot.h) only reads. Building it is
// where every figure is computed, and every figure comes from the statistics
// module (results/stats/); the renderer computes nothing.
//
// Two kinds of figure (docs/plots.md):
//  - scaling: a metric against a cell parameter (`--x clients`): one line per
//    side (selector, as in `nightjar compare`), and per value of any other
//    parameter that varies among the plotted cells; each point is the pooled
//    samples of one cell, at the metric's summary mean (Hmean for rates, Amean
//    for times) with error bars;
//  - history: a metric over builds (`--x build`) or dates (`--x date`), one
//    line per side and cell: every sample as a dot and the per-build summary
//    mean as a line, optionally with the change points of `nightjar trend`
//    (stats::detect_change_points on the per-build means) marked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/compare/selector.h"
#include "results/model/metric.h"
#include "results/stats/change_points.h"
#include "results/store/store.h"

namespace nightjar {

/// Which figure: a metric against a cell parameter, or over builds/dates.
enum class PlotKind { scaling, history };

/// What the error bars of a point show (`--error-bars`).
enum class ErrorBars {
  ci,      ///< the confidence interval of the summary mean (mean_confidence_interval)
  minmax,  ///< the smallest and largest sample
  none,    ///< no error bars
};

/// "ci", "minmax", "none".
std::string_view to_string(ErrorBars e);
/// Inverse of to_string(ErrorBars); throws std::invalid_argument on anything else.
ErrorBars error_bars_from_string(std::string_view s);

/// How the x axis maps positions.
enum class XScale {
  linear,    ///< a numeric parameter, in its base unit (bytes, seconds, count, number)
  log,       ///< the same on a log2 scale (`--log-x`)
  category,  ///< text values or build labels at positions 0, 1, 2, ...
  time,      ///< Unix time in seconds (UTC), labelled as dates
};

/// What `nightjar plot` was asked.
struct PlotRequest {
  /// Sides, as `nightjar compare` selectors (results/compare/selector.h): one line (or
  /// one group of lines) per selector. Empty: one side per variant of the runs
  /// that `query` admits, in the order the variants were first run.
  std::vector<std::string> selectors;
  SideQuery query;  ///< --job, --workload, --ignore-param, --include-invalid (every side)
  /// `k=v` items (one or several per string, space separated); a cell is
  /// plotted when its parameters hold every one. Empty: every cell.
  std::vector<std::string> cell;
  std::string x;       ///< a cell parameter (scaling plot), or "build" / "date" (history)
  std::string metric;  ///< metric name, as stored in the sample table
  ErrorBars error_bars = ErrorBars::ci;
  double confidence_pct = 95;  ///< level of the CI error bars, percent, in (0, 100)
  bool log_x = false;          ///< scaling plot of a numeric parameter: log2 x axis
  bool mark_changes = false;   ///< history plot: mark the change points of each line
  /// --title: replaces the first title line (what is plotted); the second
  /// line (job, kernels, testboxes) stays. Empty: the generated title.
  std::string title;
  /// --label, one per side in order: each line of side i is named labels[i]
  /// instead of the selector text (the parameters that tell its lines apart
  /// follow). Fewer labels than sides: the rest keep their selector.
  std::vector<std::string> labels;
  /// Change-point parameters for mark_changes; `mean` and `direction` are
  /// replaced by the metric's. The defaults are `nightjar trend`'s.
  stats::ChangePointOptions detection;
};

/// One point: the pooled samples of one cell (scaling) or one build (history).
struct PlotPoint {
  /// Position on the x axis: the parameter's number in its base unit (linear,
  /// log), the category index (category), or Unix seconds (time).
  double x = 0;
  /// Where the point and its error bar are drawn: x moved a little per line
  /// (dodged) when several lines share the plot, so that bars of equal x do
  /// not hide each other: line k of K by (k - (K-1)/2) steps of 1.2% of the
  /// x span (a factor on a log axis, 0.06 of a position on a category axis).
  /// Equal to x with one line. Ticks and labels stay at x.
  double x_drawn = 0;
  std::string label;  ///< parameter value as stored, build label ("run:ID" unlabelled), or date
  std::string date;   ///< history: started_at of the first run (ISO 8601 UTC); else ""
  std::vector<std::int64_t> run_ids;  ///< runs pooled, ascending
  std::size_t n = 0;                  ///< samples (the valid ones, unless --include-invalid)
  std::size_t invalid = 0;      ///< invalid samples of the point's runs (left out or included)
  double mean = 0;              ///< summary mean of the metric (its MeanKind), metric unit
  double lo = 0, hi = 0;        ///< error bar bounds (== mean for ErrorBars::none)
  double min = 0, max = 0;      ///< smallest and largest sample
  double coeff_var = 0;         ///< CoeffVar, percent (NaN when n < 2)
  std::vector<double> samples;  ///< every sample, ascending (drawn as dots in a history)
  /// Some of run_ids were measured under qemu TCG (runs_emulated()):
  /// the renderers mark the point and explain the mark with kEmulationMark.
  bool emulated = false;
};

/// One line of the figure.
struct PlotSeries {
  std::string label;  ///< side (selector text), then the parameters that tell lines apart
  std::string side;   ///< the selector text alone
  std::string cell;   ///< history: the canonical cell id; scaling: ""
  std::vector<PlotPoint> points;  ///< ascending x
  /// history with mark_changes: the change points of the per-build means
  /// (indexes into points); empty otherwise.
  std::vector<stats::ChangePoint> change_points;
};

/// Everything the renderer draws.
struct PlotData {
  PlotKind kind = PlotKind::scaling;
  std::string title;  ///< lines separated by '\n': what, then job/kernel/testbox
  std::string x_label, y_label;
  /// What the error bars and dots show, and n; when a point is emulated,
  /// what its mark means ("triangles: TCG: measures emulation ...").
  std::string footnote;
  /// History of one cell whose name is too long for the title (over 72 bytes
  /// with the rest of the first line): the title shows it shortened from the
  /// middle, the footnote ends with it whole. "" otherwise.
  std::string footnote_cell;
  XScale x_scale = XScale::linear;
  /// Tick positions and their text; empty: the renderer lets gnuplot choose.
  std::vector<std::pair<double, std::string>> x_ticks;
  MetricDescriptor metric;  ///< name, unit, direction, mean of the plotted metric
  ErrorBars error_bars = ErrorBars::ci;
  double confidence_pct = 95;
  bool mark_changes = false;
  std::string job;        ///< job names, comma separated
  std::string kernels;    ///< kernel releases of the plotted runs, comma separated
  std::string testboxes;  ///< testbox hostnames of the plotted runs, comma separated
  std::vector<PlotSeries> series;
  std::vector<std::string> notes;  ///< cells or builds left out and why (the CLI prints them)
};

/// Builds the figure's data from the store. Throws UsageError (exit 2), with
/// the list of what exists, when: a selector is bad or matches no runs; --cell
/// matches no cell; the metric is missing or has no samples in the plotted
/// cells (lists the metrics that do); the axis is missing or no plotted cell
/// has that parameter (lists the parameters, their values, and build/date);
/// --log-x with a non-numeric axis or a value <= 0; nothing is left to plot
/// (every mean undefined). Also a UsageError when every matching run has no
/// samples (skipped, failed or running).
PlotData build_plot_data(const ResultsStore& store, const PlotRequest& request);

}  // namespace nightjar

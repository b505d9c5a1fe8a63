// `nightjar trend`: the history of one metric of a job's cells, build by
// build, and the change points in it (E-divisive means with a Welch test,
// after Apache Otava / Hunter: stats::detect_change_points). docs/bisect.md
// "trend" documents the method, its parameters and defaults.
//
// A point of the history is a build: every complete or aborted run of the
// cell with that build label, pooled; its value is the metric's summary mean
// (Hmean for rates, Amean for times) of the pooled valid samples (invalid
// ones are left out and counted; a build with no valid sample is no point). Runs without a
// build label are a point each ("run:ID"). Builds are ordered by the time of
// their first run ("build date"), or by an explicit --order list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/metric.h"
#include "results/stats/change_points.h"
#include "results/store/store.h"

namespace nightjar {

/// What `nightjar trend` was asked.
struct TrendOptions {
  std::string job;     ///< job name (file stem; a path is reduced to its stem); required
  std::string metric;  ///< metric name; required (the CLI loops over trend_metrics() without one)
  /// `k=v` items; a cell is included when its parameters hold every one
  /// (canonical text, as `nightjar show` prints). Empty: every cell.
  std::vector<std::string> cell;
  std::string variant;             ///< only runs of this variant ("" = any)
  std::string host;                ///< only runs on this testbox hostname ("" = any)
  std::vector<std::string> order;  ///< explicit build order; builds not listed are left out
  /// Detection parameters; `mean` and `direction` are taken from the metric.
  stats::ChangePointOptions detection;
};

/// One point of a history: one build.
struct TrendPoint {
  std::string build;                  ///< build label, or "run:ID" for an unlabelled run
  std::string date;                   ///< started_at of its first run (ISO 8601 UTC)
  std::vector<std::int64_t> run_ids;  ///< runs pooled
  std::size_t n = 0;                  ///< valid samples pooled
  std::size_t invalid = 0;  ///< invalid samples left out (docs/compare.md "Invalid samples")
  double mean = 0;          ///< summary mean of the samples
  double coeff_var = 0;     ///< CoeffVar of the samples, percent (NaN when n < 2)
};

/// The history of one cell and its change points.
struct TrendSeries {
  std::string workload, cell;  ///< cell = canonical cell id
  std::vector<TrendPoint> points;
  std::vector<stats::ChangePoint> change_points;  ///< indexes into points
  /// A shift in the newest builds, too few (k < min_segment) to be a change
  /// point yet: stats::detect_recent_change after the last change point;
  /// `index` is the first of the k builds, `p` the adjusted p.
  std::optional<stats::ChangePoint> possible_change;
  /// Changes between short segments (fewer than min_segment builds on a
  /// side) before the newest builds: stats::detect_short_changes, shown as
  /// possible changes; `p` is the adjusted p.
  std::vector<stats::ChangePoint> short_changes;
};

/// Everything `trend` prints.
struct TrendReport {
  std::string job;
  MetricDescriptor metric;
  stats::ChangePointOptions detection;  ///< as used (mean/direction of the metric)
  std::vector<TrendSeries> series;      ///< one per matching cell, in first-run order
  std::vector<std::string> notes;       ///< skipped points, builds in --order without runs
};

/// Loads the history and finds its change points. Throws UsageError (exit 2)
/// naming what the database holds when the job, metric, cell filter or an
/// --order build matches nothing; std::invalid_argument for bad detection
/// parameters (mapped to a usage error by the CLI).
TrendReport compute_trend(const ResultsStore& store, const TrendOptions& options);

/// The metrics of job `job` (a name or a path) with stored samples, in the
/// workload's declared order (from `catalog`; name order for a workload
/// it does not know): what `nightjar trend` without --metric shows.
/// Throws UsageError when the job has no runs.
std::vector<std::string> trend_metrics(const ResultsStore& store, const std::string& job,
                                       const WorkloadCatalog& catalog);

}  // namespace nightjar

// Records of the query behind one side of `nightjar compare` / `check` /
// `plot`: the runs matching a filter and their samples, grouped by cell
// (results/compare/selector.h turns a selector into the filter and the cells
// into matched cells). Plain data: results/store/store.h declares the
// functions (ResultsStore::side_samples, ResultsStore::stored_runs_summary).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "results/store/runs.h"

namespace nightjar {

/// Which runs a side reads. Empty fields match everything; every condition
/// holds at once (AND).
struct SideFilter {
  std::optional<std::int64_t> run_id;
  /// Only runs whose id is one of these (r.id IN (...)); empty: any run.
  std::vector<std::int64_t> run_ids;
  std::string variant, build;
  std::string kernel_release;          ///< kernel.release (`uname -r`)
  std::string hostname;                ///< testbox.hostname
  std::vector<std::string> jobs;       ///< run.job equals each one (a selector's job= and --job)
  std::vector<std::string> workloads;  ///< run.workload equals each one
  /// Also pool the invalid samples (and the monitor deltas of invalid
  /// iterations) with the valid ones: `--include-invalid`, for inspection.
  /// They are counted in StoredCell::invalid either way.
  bool include_invalid = false;
  /// Also use runs still `running`: `nightjar run --until-decided` looks at
  /// the samples its own runs have committed so far, between iterations.
  bool include_running = false;
  /// run_context keys whose facts StoredSide::fact_sets gathers (e.g. the
  /// vm.* facts compare warns about); none: fact_sets stays empty.
  std::vector<std::string> fact_keys;
};

/// The invalid samples of one metric of a stored cell.
struct InvalidSamples {
  int count = 0;            ///< samples stored invalid
  std::string reason;       ///< the reason of the first of them (lowest run, iteration)
  std::int64_t run_id = 0;  ///< its run
  int iteration = 0;        ///< its iteration
};

/// A matching run that gives no samples.
struct ExcludedRun {
  std::int64_t id = 0;
  RunStatus status = RunStatus::failed;
  std::string reason;
};

/// The samples of the runs of one stored cell: one (workload, job, canonical
/// cell id) of the run table.
struct StoredCell {
  std::string workload, job;
  std::string cell;                   ///< canonical cell id (run.cell)
  std::int64_t first_run = 0;         ///< smallest run id
  std::vector<std::int64_t> run_ids;  ///< ascending
  int aborted_runs = 0;               ///< how many of them ended aborted
  /// The parameters of its first run (canonical text), sorted by name,
  /// without unset (empty) values.
  std::vector<std::pair<std::string, std::string>> params;
  /// metric -> samples and monitor name -> deltas, in run order (unsorted):
  /// the valid samples only (SideFilter::include_invalid: all of them), and
  /// the deltas of the iterations not stored invalid (include_invalid: all).
  std::map<std::string, std::vector<double>> metrics, monitors;
  /// metric -> its invalid samples (in `metrics` too when include_invalid);
  /// a metric whose samples are all invalid is only here.
  std::map<std::string, InvalidSamples> invalid;
  /// metric -> how many of its samples each run gave, one entry per run_ids
  /// entry (0 for a run without it): splits `metrics` into runs (issue 13,
  /// docs/statistics.md "Runs as the unit").
  std::map<std::string, std::vector<std::size_t>> metric_run_sizes;
};

/// What one side's query read.
struct StoredSide {
  std::size_t matched = 0;            ///< runs matching the filter, whatever their status
  std::vector<std::int64_t> run_ids;  ///< runs whose samples are used, ascending
  std::vector<ExcludedRun> excluded;  ///< matching runs not used (running, failed, skipped)
  std::set<std::string> variants, builds, kernels, testboxes;  ///< labels of run_ids
  std::vector<StoredCell> cells;                               ///< in first-run order
  /// The distinct sets of SideFilter::fact_keys facts (key -> value) of the
  /// runs in run_ids: one map per distinct set, an empty map when some run
  /// has none of the keys. Empty when no fact_keys were asked for. Read as
  /// range scans of run_context over run_ids (none at all when the database
  /// holds none of the keys), not one query per run.
  std::set<std::map<std::string, std::string>> fact_sets;
};

/// What the database holds, for error messages: up to 11 distinct values of
/// each label (sorted; "" for an empty one) and the range of run ids.
struct StoredRunsSummary {
  std::int64_t runs = 0;                   ///< rows of the run table
  std::int64_t first_id = 0, last_id = 0;  ///< smallest and largest run id (0 when none)
  std::vector<std::string> variants, builds, kernels, jobs;
};

}  // namespace nightjar

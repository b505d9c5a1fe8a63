// Records of data coming in from and going out to files: a finished run
// recreated from data measured elsewhere (tidy CSV, Google Benchmark JSON:
// results/io/), and the runs and descriptors a tidy CSV export writes. Plain
// data: results/store/store.h declares the functions
// (ResultsStore::insert_imported_run, export_runs, scan_samples, ...).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/model/identity.h"
#include "results/model/metric.h"
#include "results/model/params.h"
#include "results/store/runs.h"

namespace nightjar {

/// What an import knows of a run beyond its samples when the run comes from
/// another nightjar database (a bundle of format 2, results/io/bundle_runs.h):
/// the run's end, its iteration rows, monitor deltas and flags as the sender
/// stored them. The defaults are a plain import's: complete, `ok` rows, no
/// monitor deltas, no flags.
struct ImportedRunDetail {
  RunStatus status = RunStatus::complete;
  std::string reason;  ///< why the run ended so ("" when complete)
  int warmup = 0;      ///< warm-up iterations planned
  /// The iteration rows, by iteration; empty: one `ok` row per iteration
  /// that has samples, started at the run's start, duration 0.
  std::vector<IterationRow> iteration_rows;
  /// Monitor deltas and workload counters: iteration, name, value (`invalid`
  /// unused); each (iteration, name) at most once.
  std::vector<SampleRow> monitors;
  std::vector<std::string> warnings;  ///< run-level flags, in the order recorded
  /// Flags of iterations: (iteration, message), in the order recorded.
  std::vector<std::pair<int, std::string>> flags;
};

/// A finished run recreated from data measured elsewhere: a tidy CSV written
/// by `nightjar export` (results/io/csv.h), a Google Benchmark JSON report
/// (results/io/gbench.h) or a bundle (results/io/bundle_runs.h). It is
/// stored as `detail` says: by default with status `complete`, one `ok`
/// iteration row per iteration that has samples, and no monitor deltas.
struct ImportedRun {
  /// Keep this run id (the caller checked that it is free); nullopt: the next id.
  std::optional<std::int64_t> id;
  std::string job;       ///< job name
  std::string job_path;  ///< "" for imports
  std::string workload;  ///< workload name (need not be registered)
  std::string variant;
  std::string build;  ///< may be ""
  /// Cell parameters (canonical text; number in base units, 0 when unknown).
  /// The run's cell id is Cell{workload, params}.id().
  std::map<std::string, ParamValue> params;
  KernelIdentity kernel;  ///< only `release` is known for CSV imports
  Testbox testbox;        ///< only `hostname` is known for CSV imports
  /// true: reuse the oldest kernel row with kernel.release and the oldest
  /// testbox row with testbox.hostname when there is one (what a CSV file
  /// names); false: the exact identity, as `nightjar run` records it.
  bool match_by_name = false;
  int iterations = 0;      ///< planned iterations (the highest iteration imported)
  std::string started_at;  ///< ISO 8601 UTC; "" = now
  std::map<std::string, std::string> context;  ///< run_context facts (e.g. import.file)
  /// iteration (1-based), metric, value, and the reason of an invalid one
  std::vector<SampleRow> samples;
  /// What the source knows beyond the samples (a bundle of format 2); the
  /// defaults are what a CSV file or a Google Benchmark report gives.
  ImportedRunDetail detail;
  /// Where the run was measured, stable across files and imports (e.g. "csv
  /// testbox=h run=7 started_at=2026-12-01T10:00:00Z"), and a digest of
  /// everything imported with it (labels, parameters, samples): stored as the
  /// facts import.identity and import.digest when not empty, so that a second
  /// import of the same run is found (ResultsStore::imported_as).
  std::string identity, digest;
};

/// A run imported before under an identity (ResultsStore::imported_as).
struct ImportedOrigin {
  std::int64_t run_id = 0;
  std::string digest;  ///< the import.digest it was stored with
};

/// A metric descriptor with the workload it belongs to (a row of the metric table).
struct WorkloadMetric {
  std::string workload;
  MetricDescriptor descriptor;
};

/// A run as a tidy CSV export writes it: its labels and its set parameters.
struct ExportRun {
  RunLabels labels;
  std::map<std::string, std::string> params;  ///< name -> canonical text, without empty values
};

/// One sample as ResultsStore::scan_samples passes it on. `metric` points
/// into the row being read: copy it to keep it.
struct SampleView {
  std::int64_t run_id = 0;
  int iteration = 0;
  std::string_view metric;
  double value = 0;
  /// Why the sample is invalid; empty when valid. Points into the row like
  /// `metric`.
  std::string_view invalid;
};

}  // namespace nightjar

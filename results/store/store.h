// The results store: one SQLite database holding every run, sample and
// monitor delta nightjar has measured (DESIGN.md "Nothing measured is lost").
//
// Schema (version in PRAGMA user_version; forward migrations in store.cpp):
//   testbox(id, hostname, cpu_model, cpus, memory_bytes)
//   kernel(id, release, version, cmdline, config_hash)
//   metric(workload, name, unit, direction, mean)          -- descriptors
//   run(id, job, job_path, workload, cell, variant, build, kernel_id,
//       testbox_id, status, reason, iterations, warmup, started_at, ended_at,
//       host, boot_id, pid, pid_start)
//   run_param(run_id, name, value, number)                 -- one row per cell parameter
//   run_context(run_id, key, value)                        -- system facts, --context, workload
//   facts iteration(run_id, iteration, status, reason, started_at, duration_sec) sample(run_id,
//   iteration, metric, value)               -- one row per metric per iteration monitor(run_id,
//   iteration, name, value)                -- monitor deltas and workload counters flag(run_id,
//   iteration, message)                       -- warnings; iteration NULL = whole run
//   bisect_session(id, kind, repo, good_rev, bad_rev, good, bad, job_path, job,
//       metric, options, status, result, first_bad, started_at, ended_at)
//   bisect_step(session_id, step, commit_id, subject, role, build_status,
//       build_seconds, build_output, decision, verdict, reason, pct_change, p, q,
//       ratio_lo, ratio_hi, n_base, n_now, started_at, ended_at)
//   bisect_run(session_id, step, run_id)                   -- runs measured for a step
// The database runs in WAL mode with a busy timeout so that several nightjar
// processes can write it at once; each iteration is one transaction.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/model/identity.h"
#include "results/model/iteration.h"
#include "results/model/metric.h"
#include "results/model/params.h"

namespace nightjar {

/// Status of a run (DESIGN.md "Behaviour every part keeps").
enum class RunStatus { running, complete, aborted, failed, skipped };
/// "running", "complete", ...: the spelling stored in the database.
const char* to_string(RunStatus s);

/// Everything known about a run when it starts.
struct NewRun {
  std::string job;       ///< job name (file stem)
  std::string job_path;  ///< job file path as given
  Cell cell;
  std::string variant;
  std::string build;   ///< user's --build label (commit or name), may be ""
  int iterations = 0;  ///< measured iterations planned
  int warmup = 0;      ///< warm-up iterations planned
  KernelIdentity kernel;
  Testbox testbox;
  std::map<std::string, std::string> context;  ///< system facts and --context pairs
};

/// One row of `nightjar show`.
struct RunRow {
  std::int64_t id = 0;
  std::string job, workload, cell, variant, build, kernel_release, hostname;
  std::string status, reason, started_at, ended_at;
  int iterations = 0;  ///< planned
  int samples = 0;     ///< iterations stored with status ok
  int failed = 0;      ///< iterations stored as failed
};

/// Filters of `nightjar show` and of selectors; empty fields match everything.
struct RunFilter {
  std::optional<std::int64_t> run_id;
  std::string job, workload, variant, build, kernel_release, status, hostname;
  std::optional<int> limit;  ///< newest N runs
};

/// One stored sample value.
struct SampleRow {
  int iteration = 0;
  std::string metric;
  double value = 0;
};

/// The SQLite results database. Not thread-safe; one instance per process.
class ResultsStore {
 public:
  /// Resolves the database path: `explicit_path` if non-empty, else
  /// $NIGHTJAR_DB, else $XDG_DATA_HOME/nightjar/results.db, else
  /// ~/.local/share/nightjar/results.db.
  static std::string resolve_path(const std::string& explicit_path);

  /// Opens (creating directories and the file if needed) and migrates the
  /// database, then marks as aborted any run left "running" by a process that
  /// no longer exists on this host. Throws EnvironmentError naming the path
  /// when the file cannot be opened, is not a nightjar database, or has a
  /// newer schema than this binary knows.
  explicit ResultsStore(const std::string& path);

  /// The schema version this binary writes.
  static constexpr int kSchemaVersion = 3;

  const std::string& path() const { return path_; }
  /// Runs marked aborted when the store was opened (stale "running" runs).
  int stale_runs_aborted() const { return stale_aborted_; }

  /// Records the workload's metric descriptors (insert or replace).
  void register_metrics(const std::string& workload, const std::vector<MetricDescriptor>& metrics);
  /// Inserts a run with status running and returns its id.
  std::int64_t begin_run(const NewRun& run);
  /// Inserts a run directly as skipped with `reason` and returns its id.
  std::int64_t record_skipped(const NewRun& run, const std::string& reason);
  /// Commits one iteration (samples, monitor deltas, workload counters, flags)
  /// in a single transaction. `duration_sec` is its wall time in seconds.
  void add_iteration(std::int64_t run_id, int iteration, const IterationResult& result,
                     const std::map<std::string, double>& monitors, double duration_sec);
  /// Adds a fact to the run's context (workload facts such as cgroup paths).
  void add_context(std::int64_t run_id, const std::string& key, const std::string& value);
  /// Adds a run-level warning.
  void add_warning(std::int64_t run_id, const std::string& message);
  /// Ends a run with its final status and reason.
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& reason = "");

  /// Runs matching `filter`, oldest first.
  std::vector<RunRow> runs(const RunFilter& filter) const;
  /// Samples of one run, by iteration then metric.
  std::vector<SampleRow> samples(std::int64_t run_id) const;
  /// Monitor deltas and counters of one run, by iteration then name.
  std::vector<SampleRow> monitors(std::int64_t run_id) const;
  /// Cell parameters of one run.
  std::map<std::string, std::string> run_params(std::int64_t run_id) const;
  /// Context facts of one run.
  std::map<std::string, std::string> run_context(std::int64_t run_id) const;
  /// The metric descriptors recorded for `workload`, in name order.
  std::vector<MetricDescriptor> metrics(const std::string& workload) const;
  /// Total rows in the run table (used by tests: "nothing written").
  std::int64_t run_count() const;

  /// The underlying connection, for queries of other modules (compare, export).
  SQLite::Database& db() { return db_; }
  const SQLite::Database& db() const { return db_; }

 private:
  void migrate();
  int abort_stale_runs();
  std::int64_t ensure_kernel(const KernelIdentity& k);
  std::int64_t ensure_testbox(const Testbox& t);
  std::int64_t insert_run(const NewRun& run, RunStatus status, const std::string& reason);

  std::string path_;
  SQLite::Database db_;
  int stale_aborted_ = 0;
};

/// Current UTC time as ISO 8601 ("2026-11-30T05:10:34Z").
std::string utc_now_iso8601();

// ---------------------------------------------------------------------------
// Imports (appended for results/csv_io.h and results/gbench_import.h)
// ---------------------------------------------------------------------------

/// A finished run recreated from data measured elsewhere: a tidy CSV written
/// by `nightjar export` (results/csv_io.h) or a Google Benchmark JSON report
/// (results/gbench_import.h). It is stored with status `complete`, one `ok`
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
  std::vector<SampleRow> samples;              ///< iteration (1-based), metric, value
};

/// Inserts `run` and its parameters, context, iteration rows and samples.
/// Opens no transaction of its own: the caller wraps a whole import in one
/// (SQLite::Transaction on store.db()), so that a failure stores nothing.
/// Returns the run id. Throws SQLite::Exception on a constraint violation
/// (a run id already used, a sample given twice).
std::int64_t insert_imported_run(ResultsStore& store, const ImportedRun& run);

/// The descriptor recorded for `workload`'s metric `name`, or nullopt.
std::optional<MetricDescriptor> stored_metric(const ResultsStore& store,
                                              const std::string& workload, const std::string& name);

/// Records the descriptors of `metrics` that `workload` does not have yet;
/// recorded ones are never replaced (unlike register_metrics). No
/// transaction of its own (see insert_imported_run).
void add_missing_metrics(ResultsStore& store, const std::string& workload,
                         const std::vector<MetricDescriptor>& metrics);

}  // namespace nightjar

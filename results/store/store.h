// The results store: one SQLite database holding every run, sample and
// monitor delta nightjar has measured (DESIGN.md "Nothing measured is lost"),
// and every SQL statement of nightjar. Callers get typed records and call
// typed functions; nothing outside results/store/ names SQLiteCpp or sqlite3
// (docs/architecture.md). docs/results.md documents the schema.
//
// The folder, by concern (the records each part reads and writes are in the
// header named beside it):
//   store.cpp           opening (read-only/read-write), WAL, stale runs, transactions
//   schema.cpp          the schema and its forward migrations (PRAGMA user_version)
//   run_writes.cpp      begin_run, add_iteration, finish_run, ...     runs.h
//   run_reads.cpp       runs, samples, iterations, run_record, ...    runs.h
//   side_queries.cpp    the samples of a compare/check/plot side      side_query.h
//   history_queries.cpp what trend and plot read besides the sides    runs.h
//   imports.cpp         imported runs, export scans                   imports.h
//   bisect_log.cpp      bisect sessions and steps                     bisect_log.h
//   calibration.cpp     calibrated between-run variances (table calibration)
//   lava_jobs.cpp       LAVA jobs submitted to a server (table lava_job)  lava_jobs.h
//   detail.h/.cpp       helpers shared by those files (kernel/testbox rows, ...)
//
// The database runs in WAL mode with a busy timeout so that several nightjar
// processes can write it at once; each iteration is one transaction. Errors
// of SQLite itself leave as exceptions that is_database_error() recognises.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "results/model/iteration.h"
#include "results/model/metric.h"
#include "results/store/bisect_log.h"
#include "results/store/imports.h"
#include "results/store/lava_jobs.h"
#include "results/store/runs.h"
#include "results/store/side_query.h"

namespace SQLite {
class Database;
class Statement;
class Transaction;
}  // namespace SQLite

namespace nightjar {

/// The SQLite results database. Not thread-safe; one instance per process
/// (side_samples alone opens a connection of its own and may run on several
/// threads at once).
class ResultsStore {
 public:
  // -------------------------------------------------------------------------
  // Opening (store.cpp)
  // -------------------------------------------------------------------------

  /// Resolves the database path: `explicit_path` if non-empty, else
  /// $NIGHTJAR_DB, else $XDG_DATA_HOME/nightjar/results.db, else
  /// ~/.local/share/nightjar/results.db.
  static std::string resolve_path(const std::string& explicit_path);
  /// The default location, used when neither --db nor $NIGHTJAR_DB names a
  /// file: $XDG_DATA_HOME/nightjar/results.db, else
  /// ~/.local/share/nightjar/results.db. Only its directory is ever created.
  static std::string default_path();

  /// How a command uses the database (docs/data.md "Which commands write").
  enum class Access {
    /// Commands that only read (show, compare, check, report, trend, plot,
    /// export): SQLITE_OPEN_READONLY, nothing created, migrated or switched
    /// to WAL; the file must exist and carry exactly kSchemaVersion.
    read_only,
    /// Commands that store (run, import, calibrate, bisect): the file is
    /// created if missing, migrated forward and put in WAL mode.
    read_write,
  };

  /// Opens the database at `path` for `access`. Before anything is written
  /// the file is checked: a regular file (or, read_write only, absent with an
  /// existing directory; the default location's directory, default_path(),
  /// is created), its PRAGMA user_version within 0..kSchemaVersion, and its
  /// tables nightjar's. Then (read_write) it is switched to WAL, migrated,
  /// and runs left "running" by a process that no longer exists on this host
  /// are marked aborted. Throws EnvironmentError naming the path (and the
  /// version found and known) otherwise; a file this call created is removed
  /// again when opening fails.
  explicit ResultsStore(const std::string& path, Access access = Access::read_write);
  ~ResultsStore();
  ResultsStore(ResultsStore&&) noexcept;
  ResultsStore& operator=(ResultsStore&&) noexcept;
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  /// The schema version this binary writes, and the newest it knows; a
  /// database whose user_version is outside 0..kSchemaVersion is refused.
  static constexpr int kSchemaVersion = 7;
  /// The oldest schema version the read-only commands read as it is,
  /// without a migration: version 4, since 4 -> 5 and 6 -> 7 only add
  /// indexes (imports use the first; sides read without the second as they
  /// did before it) and 5 -> 6 only lets bisect_step.role be `branch`
  /// (docs/results.md "Schema versioning"). Older files need a
  /// command that writes, which migrates them.
  static constexpr int kOldestReadableVersion = 4;

  const std::string& path() const { return path_; }
  /// Runs marked aborted when the store was opened (stale "running" runs).
  int stale_runs_aborted() const { return stale_aborted_; }

  /// One write transaction (BEGIN IMMEDIATE) for a caller that stores several
  /// things atomically (an import): everything written through the store
  /// until commit() appears together, or, when the Transaction is destroyed
  /// uncommitted (an exception), not at all. Inside it, call only functions
  /// that open no transaction of their own (insert_imported_run,
  /// add_missing_metrics, stored_metric and the read functions); one at a
  /// time per store.
  class Transaction {
   public:
    explicit Transaction(ResultsStore& store);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    /// Makes everything written since the constructor permanent.
    void commit();

   private:
    std::unique_ptr<SQLite::Transaction> tx_;
  };

  /// One read transaction: every read function called while it lives sees
  /// the same snapshot of the database (WAL), even while other processes
  /// write. Ends (writing nothing) when destroyed. Not inside a Transaction.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(const ResultsStore& store);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    const ResultsStore& store_;
  };

  // -------------------------------------------------------------------------
  // Run writes (run_writes.cpp); each is one transaction of its own
  // -------------------------------------------------------------------------

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

  // -------------------------------------------------------------------------
  // Run reads (run_reads.cpp)
  // -------------------------------------------------------------------------

  /// Runs matching `filter`, oldest first.
  std::vector<RunRow> runs(const RunFilter& filter) const;
  /// Samples of one run, by iteration then metric: the valid ones, or
  /// (SampleSet::all) every one, each invalid one with its reason.
  std::vector<SampleRow> samples(std::int64_t run_id, SampleSet which = SampleSet::valid) const;
  /// Monitor deltas and counters of one run, by iteration then name.
  std::vector<SampleRow> monitors(std::int64_t run_id) const;
  /// Iteration rows of one run (ok, failed and invalid), by iteration.
  std::vector<IterationRow> iterations(std::int64_t run_id) const;
  /// Cell parameters of one run (canonical text).
  std::map<std::string, std::string> run_params(std::int64_t run_id) const;
  /// Context facts of one run.
  std::map<std::string, std::string> run_context(std::int64_t run_id) const;
  /// The value of context fact `key` of every run that has it: run id ->
  /// value (`nightjar show --fact KEY`, the LAVA job column).
  std::map<std::int64_t, std::string> fact_values(const std::string& key) const;
  /// The metric descriptors recorded for `workload`, in name order.
  std::vector<MetricDescriptor> metrics(const std::string& workload) const;
  /// Total rows in the run table (used by tests: "nothing written").
  std::int64_t run_count() const;
  /// The labels of run `run_id`, or nullopt when there is no such run.
  std::optional<RunLabels> run_labels(std::int64_t run_id) const;
  /// Run `run_id` with everything stored for it, or nullopt when there is no
  /// such run (what a qemu guest sends to the host: harness/vm/qemu.cpp).
  std::optional<RunRecord> run_record(std::int64_t run_id) const;
  /// The kernel and testbox rows run `run_id` refers to (run_machine.cpp;
  /// `nightjar bundle`); each nullopt when the run has none (or no such
  /// run). config_source is not stored and stays "".
  std::pair<std::optional<KernelIdentity>, std::optional<Testbox>> run_machine(
      std::int64_t run_id) const;

  // -------------------------------------------------------------------------
  // Sides of compare/check/plot (side_queries.cpp)
  // -------------------------------------------------------------------------

  /// The runs matching `filter` and the samples and monitor deltas of those
  /// whose status is complete or aborted (an aborted run's iterations were
  /// measured in full and committed one by one); the other matching runs are
  /// listed as excluded. Reads through a read-only connection of its own
  /// (memory-mapped, no per-call mutex): it may run on several threads at
  /// once, one call per thread. Throws EnvironmentError when the file cannot
  /// be opened for reading.
  StoredSide side_samples(const SideFilter& filter) const;
  /// What the database holds (for "matched no runs" messages).
  StoredRunsSummary stored_runs_summary() const;

  // -------------------------------------------------------------------------
  // What trend and plot read besides the sides (history_queries.cpp)
  // -------------------------------------------------------------------------

  /// The metrics with at least one stored sample in a run of job `job`.
  std::set<std::string> metrics_with_samples(const std::string& job) const;
  /// The non-empty variant labels of the runs of `job` and `workload` (""
  /// = any), in the order of their first run.
  std::vector<std::string> variants_by_first_run(const std::string& job,
                                                 const std::string& workload) const;
  /// The labels of the runs `run_ids` that exist.
  std::map<std::int64_t, RunLabels> run_labels(const std::set<std::int64_t>& run_ids) const;
  /// The samples of `metric` of each of the runs `run_ids` that has some
  /// (unsorted): the valid ones, or (SampleSet::all) the invalid ones too.
  std::map<std::int64_t, std::vector<double>> metric_samples(
      const std::set<std::int64_t>& run_ids, const std::string& metric,
      SampleSet which = SampleSet::valid) const;
  /// How many samples of `metric` each of the runs `run_ids` holds invalid
  /// (runs without any are absent).
  std::map<std::int64_t, int> invalid_sample_counts(const std::set<std::int64_t>& run_ids,
                                                    const std::string& metric) const;
  /// The stored number (run_param.number, base units) of parameter `name` of
  /// run `run_id`, or nullopt when the run has no such parameter or no number.
  std::optional<double> param_number(std::int64_t run_id, const std::string& name) const;

  // -------------------------------------------------------------------------
  // Imports and exports (imports.cpp)
  // -------------------------------------------------------------------------

  /// Inserts `run` and its parameters, context, iteration rows and samples.
  /// Opens no transaction of its own: the caller wraps a whole import in one
  /// Transaction, so that a failure stores nothing. Returns the run id.
  /// Throws (is_database_error) on a constraint violation: a run id already
  /// used, a sample given twice.
  std::int64_t insert_imported_run(const ImportedRun& run);
  /// The run stored with fact import.identity = `identity` (the oldest, when
  /// several), or nullopt: how an import finds a run it stored before. One
  /// indexed lookup (index run_context_by_fact, schema version 5).
  std::optional<ImportedOrigin> imported_as(const std::string& identity) const;
  /// The descriptor recorded for `workload`'s metric `name`, or nullopt.
  std::optional<MetricDescriptor> stored_metric(const std::string& workload,
                                                const std::string& name) const;
  /// Records the descriptors of `metrics` that `workload` does not have yet;
  /// recorded ones are never replaced (unlike register_metrics). No
  /// transaction of its own (see insert_imported_run).
  void add_missing_metrics(const std::string& workload,
                           const std::vector<MetricDescriptor>& metrics);
  /// Every recorded metric descriptor, by workload then name.
  std::vector<WorkloadMetric> all_metrics() const;
  /// The runs of `run_ids` (ascending) that have at least one sample (valid,
  /// or with SampleSet::all any), with their labels and parameters.
  std::map<std::int64_t, ExportRun> export_runs(const std::vector<std::int64_t>& run_ids,
                                                SampleSet which = SampleSet::valid) const;
  /// Calls `visit` for every valid sample (SampleSet::all: every sample, an
  /// invalid one with its reason) of the runs `run_ids` (ascending), ordered
  /// by run id, iteration, metric (byte order), without holding them in
  /// memory. Exceptions of `visit` end the scan and propagate.
  void scan_samples(const std::vector<std::int64_t>& run_ids,
                    const std::function<void(const SampleView&)>& visit,
                    SampleSet which = SampleSet::valid) const;

  // -------------------------------------------------------------------------
  // Bisect sessions (bisect_log.cpp)
  // -------------------------------------------------------------------------

  /// Inserts `session` (its id, status, started_at and ended_at are ignored)
  /// as running, started now; returns its id.
  std::int64_t create_bisect_session(const BisectSession& session);
  /// Session `id`, or nullopt.
  std::optional<BisectSession> bisect_session(std::int64_t id) const;
  /// The newest session matching `filter`, or nullopt.
  std::optional<BisectSession> newest_bisect_session(const BisectSessionFilter& filter) const;
  /// Ends (or, with BisectStatus::running, reopens) a session: status,
  /// result, first bad commit; ended_at is now ("" for running).
  void finish_bisect_session(std::int64_t session, BisectStatus status,
                             const std::string& result, const std::string& first_bad);
  /// The steps of `session` with their runs, by step.
  std::vector<BisectStep> bisect_steps(std::int64_t session) const;
  /// Appends a pending step (next step number, in one transaction) and
  /// returns its number.
  int add_bisect_step(std::int64_t session, const std::string& commit, const std::string& subject,
                      BisectRole role);
  /// Records a step's build: status (ok, failed, none), seconds
  /// (nullopt: NULL) and output (the tail of a failed build).
  void set_bisect_build(std::int64_t session, int step, BisectBuild status,
                        std::optional<double> seconds, const std::string& output);
  /// Links the runs measured for a step (a run linked twice counts once).
  void link_bisect_runs(std::int64_t session, int step, const std::vector<std::int64_t>& runs);
  /// Records a step's decision and figures; ended_at is now.
  void set_bisect_decision(std::int64_t session, int step, const BisectVerdict& verdict);

  // -------------------------------------------------------------------------
  // LAVA submissions (lava_jobs.cpp): `nightjar lava submit` and `collect`
  // -------------------------------------------------------------------------

  /// Records a job submitted to a LAVA server (its id, server, submitted_at
  /// now) in table lava_job, created when first written; returns the row id.
  /// Throws (is_database_error) when the server already has that job id.
  std::int64_t add_lava_submission(const LavaSubmission& submission);
  /// The recorded submissions, by row id: all, or those not collected yet.
  std::vector<LavaSubmission> lava_submissions(bool uncollected_only) const;
  /// Marks submission `id` collected now with LAVA's `outcome`.
  void mark_lava_collected(std::int64_t id, const std::string& outcome);

  // -------------------------------------------------------------------------
  // Calibrations (calibration.cpp)
  // -------------------------------------------------------------------------

  /// Stores (replacing an older one) the between-run variance of ln x of one
  /// cell's metric on a testbox, measured by `nightjar calibrate` from `runs`
  /// runs: var = s_b², df = its degrees of freedom. Table calibration,
  /// created when first written (CREATE TABLE IF NOT EXISTS; no schema
  /// version: a database without it simply has no calibration).
  void store_calibration(const std::string& workload, const std::string& job,
                         const std::string& cell, const std::string& metric,
                         const std::string& testbox, double var, double df, int runs);
  /// The stored {var, df} of that cell, metric and testbox, or nullopt.
  std::optional<std::pair<double, double>> calibration(const std::string& workload,
                                                       const std::string& job,
                                                       const std::string& cell,
                                                       const std::string& metric,
                                                       const std::string& testbox) const;

 private:
  SQLite::Database& database() { return *db_; }
  const SQLite::Database& database() const { return *db_; }
  std::int64_t insert_run(const NewRun& run, RunStatus status, const std::string& reason);
  /// The statement of `sql`, prepared once per store and reset (bindings
  /// cleared) before it is returned; for statements run many times, such as
  /// an import's inserts (prepare costs more than a step). A read through it
  /// is reset by its caller once read, so that no snapshot stays pinned.
  SQLite::Statement& statement(const std::string& sql) const;

  std::string path_;
  std::unique_ptr<SQLite::Database> db_;
  /// statement()'s cache; declared after db_ so it is destroyed first.
  mutable std::map<std::string, std::unique_ptr<SQLite::Statement>, std::less<>> statements_;
  bool immutable_ = false;  ///< opened with "immutable=1" (store_detail::open_immutable)
  int stale_aborted_ = 0;
};

/// Current UTC time as ISO 8601 ("2026-11-30T05:10:34Z").
std::string utc_now_iso8601();

/// When `e` is SQLite's "database or disk is full" (SQLITE_FULL) from a
/// write, the message the CLI prints: it names the database this process
/// opened for writing and says what stays (the committed rows) and what to
/// do. nullopt for any other error. (A full disk while the store is first
/// set up is an EnvironmentError of the constructor, which also removes a
/// file it created.)
std::optional<std::string> disk_full_message(const std::exception& e);

/// True when `e` is an error of SQLite itself (a constraint violation, a
/// locked or corrupt file) that a store function let through; the CLI reports
/// it as a database error (exit 4).
bool is_database_error(const std::exception& e) noexcept;

}  // namespace nightjar

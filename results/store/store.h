// The results store: one SQLite database holding every run, sample and
// monitor delta nightjar has measured (docs/reference.md "Nothing measured is lost"),
// and every SQL statement of nightjar. Callers get typed records and call
// typed functions; nothing outside results/store/ names SQLiteCpp or sqlite3
// (docs/architecture.md). docs/results.md documents the schema.
//
// The folder, by concern (each concern's functions are a small interface,
// in the first header named beside it; its records in the second):
//   store.cpp           opening (read-only/read-write), WAL, stale runs, transactions
//   schema.cpp          the schema and its forward migrations (PRAGMA user_version)
//   run_writes.cpp      begin_run, add_iteration, ...  RunWriter     run_store.h, runs.h
//   run_reads.cpp       runs, samples, run_record, ... RunReader     run_store.h, runs.h
//   side_queries.cpp    a compare/check/plot side      SampleReader  sample_store.h, side_query.h
//   history_queries.cpp trend and plot besides sides   SampleReader  sample_store.h, runs.h
//   imports.cpp         imported runs, export scans    ImportStore   import_store.h, imports.h
//   bisect_log.cpp      bisect sessions and steps      BisectStore   bisect_store.h, bisect_log.h
//   calibration.cpp     between-run variances          CalibrationStore  calibration_store.h,
//   calibration.h lava_jobs.cpp       LAVA jobs sent to a server     LavaJobStore  lava_store.h,
//   lava_jobs.h detail.h/.cpp       helpers shared by those files (kernel/testbox rows, ...)
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
#include "results/store/bisect_store.h"
#include "results/store/calibration_store.h"
#include "results/store/import_store.h"
#include "results/store/lava_store.h"
#include "results/store/run_store.h"
#include "results/store/sample_store.h"

namespace SQLite {
class Database;
class Statement;
class Transaction;
}  // namespace SQLite

namespace nightjar {

/// The SQLite results database. Not thread-safe; one instance per process
/// (side_samples alone opens a connection of its own and may run on several
/// threads at once). Its functions are those of the small interfaces it
/// implements, one per concern, documented in their headers; a caller that
/// needs one concern takes that interface (RunReader&, BisectStore&, ...).
class ResultsStore final : public RunWriter,
                           public RunReader,
                           public SampleReader,
                           public ImportStore,
                           public BisectStore,
                           public LavaJobStore,
                           public CalibrationStore {
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
  static constexpr int kSchemaVersion = 9;
  /// The oldest schema version the read-only commands read as it is,
  /// without a migration: version 4, since 4 -> 5 and 6 -> 7 only add
  /// indexes (imports use the first; sides read without the second as they
  /// did before it), 7 -> 8 only adds table kernel_config (read only when it
  /// exists: kernel_config()), 8 -> 9 only adds the profile tables (read only
  /// when they exist: iteration_profiles()) and 5 -> 6 only lets bisect_step.role be `branch`
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

  // The functions of the interfaces, documented in their headers.

  // RunWriter (run_writes.cpp)
  void register_metrics(const std::string& workload,
                        const std::vector<MetricDescriptor>& metrics) override;
  std::int64_t begin_run(const NewRun& run) override;
  std::int64_t record_skipped(const NewRun& run, const std::string& reason) override;
  void add_iteration(std::int64_t run_id, int iteration, const IterationResult& result,
                     const std::map<std::string, double>& monitors, double duration_sec,
                     const IterationProfile* profile = nullptr) override;
  void add_context(std::int64_t run_id, const std::string& key, const std::string& value) override;
  void add_warning(std::int64_t run_id, const std::string& message) override;
  void finish_run(std::int64_t run_id, RunStatus status, const std::string& reason = "") override;

  // RunReader (run_reads.cpp)
  std::vector<RunRow> runs(const RunFilter& filter) const override;
  std::vector<SampleRow> samples(std::int64_t run_id,
                                 SampleSet which = SampleSet::valid) const override;
  std::vector<SampleRow> monitors(std::int64_t run_id) const override;
  std::vector<IterationRow> iterations(std::int64_t run_id) const override;
  std::vector<StoredProfile> iteration_profiles(
      const std::vector<std::int64_t>& run_ids) const override;
  std::map<std::string, std::string> run_params(std::int64_t run_id) const override;
  std::map<std::string, std::string> run_context(std::int64_t run_id) const override;
  std::map<std::int64_t, std::string> fact_values(const std::string& key) const override;
  std::vector<MetricDescriptor> metrics(const std::string& workload) const override;
  std::int64_t run_count() const override;
  std::optional<RunLabels> run_labels(std::int64_t run_id) const override;
  std::optional<RunRecord> run_record(std::int64_t run_id) const override;
  std::pair<std::optional<KernelIdentity>, std::optional<Testbox>> run_machine(
      std::int64_t run_id) const override;
  std::map<std::string, std::string> run_fingerprint(std::int64_t run_id) const override;
  std::optional<std::string> kernel_config(const std::string& hash) const override;

  // SampleReader (side_queries.cpp, history_queries.cpp)
  StoredSide side_samples(const SideFilter& filter) const override;
  StoredRunsSummary stored_runs_summary() const override;
  std::set<std::string> metrics_with_samples(const std::string& job) const override;
  std::vector<std::string> variants_by_first_run(const std::string& job,
                                                 const std::string& workload) const override;
  std::map<std::int64_t, RunLabels> run_labels(
      const std::set<std::int64_t>& run_ids) const override;
  std::map<std::int64_t, std::vector<double>> metric_samples(
      const std::set<std::int64_t>& run_ids, const std::string& metric,
      SampleSet which = SampleSet::valid) const override;
  std::map<std::int64_t, int> invalid_sample_counts(const std::set<std::int64_t>& run_ids,
                                                    const std::string& metric) const override;
  std::optional<double> param_number(std::int64_t run_id, const std::string& name) const override;

  // ImportStore (imports.cpp)
  std::int64_t insert_imported_run(const ImportedRun& run) override;
  std::optional<ImportedOrigin> imported_as(const std::string& identity) const override;
  std::optional<MetricDescriptor> stored_metric(const std::string& workload,
                                                const std::string& name) const override;
  void add_missing_metrics(const std::string& workload,
                           const std::vector<MetricDescriptor>& metrics) override;
  std::vector<WorkloadMetric> all_metrics() const override;
  std::map<std::int64_t, ExportRun> export_runs(const std::vector<std::int64_t>& run_ids,
                                                SampleSet which = SampleSet::valid) const override;
  void scan_samples(const std::vector<std::int64_t>& run_ids,
                    const std::function<void(const SampleView&)>& visit,
                    SampleSet which = SampleSet::valid) const override;

  // BisectStore (bisect_log.cpp)
  std::int64_t create_bisect_session(const BisectSession& session) override;
  std::optional<BisectSession> bisect_session(std::int64_t id) const override;
  std::optional<BisectSession> newest_bisect_session(
      const BisectSessionFilter& filter) const override;
  void finish_bisect_session(std::int64_t session, BisectStatus status, const std::string& result,
                             const std::string& first_bad) override;
  std::vector<BisectStep> bisect_steps(std::int64_t session) const override;
  int add_bisect_step(std::int64_t session, const std::string& commit, const std::string& subject,
                      BisectRole role) override;
  void set_bisect_build(std::int64_t session, int step, BisectBuild status,
                        std::optional<double> seconds, const std::string& output) override;
  void link_bisect_runs(std::int64_t session, int step,
                        const std::vector<std::int64_t>& runs) override;
  void set_bisect_decision(std::int64_t session, int step, const BisectVerdict& verdict) override;

  // LavaJobStore (lava_jobs.cpp)
  std::int64_t add_lava_submission(const LavaSubmission& submission) override;
  std::vector<LavaSubmission> lava_submissions(bool uncollected_only) const override;
  void mark_lava_collected(std::int64_t id, const std::string& outcome) override;

  // CalibrationStore (calibration.cpp)
  void store_calibration(const CalibrationKey& key, const StoredCalibration& value) override;
  std::optional<StoredCalibration> calibration(const CalibrationKey& key) const override;
  void store_audit(const std::vector<AuditRow>& rows) override;
  std::vector<AuditRow> audits(const CalibrationKey& key) const override;
  std::vector<HistoryRun> cell_history(const CalibrationKey& key) const override;

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

/// The message the CLI prints for an error of SQLite itself (`e` a
/// SQLite::Exception; any other exception gets its what()): it names the
/// database this process opened and says what to do for a damaged
/// (SQLITE_CORRUPT, SQLITE_NOTADB), locked (SQLITE_BUSY, SQLITE_LOCKED),
/// failing (SQLITE_IOERR) or read-only (SQLITE_READONLY) file.
std::string database_error_message(const std::exception& e);

/// True when `e` is an error of SQLite itself (a constraint violation, a
/// locked or corrupt file) that a store function let through; the CLI reports
/// it as a database error (exit 4).
bool is_database_error(const std::exception& e) noexcept;

}  // namespace nightjar

// Records of `nightjar calibrate`'s table: which cell's metric on which
// testbox a between-run variance belongs to, and the variance. Plain data:
// results/store/store.h declares the functions (store_calibration,
// calibration), results/store/calibration.cpp holds the SQL.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nightjar {

/// The calibration table, created when first written (CREATE TABLE IF NOT
/// EXISTS: no schema version; a database without it has no calibration).
inline constexpr const char* kCalibrationTableSql =
    "CREATE TABLE IF NOT EXISTS calibration("
    "workload TEXT NOT NULL, job TEXT NOT NULL, cell TEXT NOT NULL, metric TEXT NOT NULL, "
    "testbox TEXT NOT NULL, between_var REAL NOT NULL, df REAL NOT NULL, runs INTEGER NOT NULL, "
    "measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "PRIMARY KEY (workload, job, cell, metric, testbox))";

/// The key of one calibration: a stored cell's metric on a testbox (the
/// primary key of table calibration).
struct CalibrationKey {
  std::string workload, job;
  std::string cell;     ///< canonical cell id (run.cell)
  std::string metric;   ///< metric name
  std::string testbox;  ///< testbox hostname
};

/// A calibrated between-run variance of ln x (docs/statistics.md "Runs as
/// the unit"): var = s_b², with its degrees of freedom, from `runs` runs.
struct StoredCalibration {
  double between_var = 0;
  double df = 0;
  int runs = 0;
};

/// The audit table (`nightjar audit`, docs/statistics.md "Auditing a
/// testbox"), created when first written like table calibration: one row
/// per cell's metric, testbox, mode and injected shift.
inline constexpr const char* kAuditTableSql =
    "CREATE TABLE IF NOT EXISTS audit("
    "workload TEXT NOT NULL, job TEXT NOT NULL, cell TEXT NOT NULL, metric TEXT NOT NULL, "
    "testbox TEXT NOT NULL, mode TEXT NOT NULL, shift_pct REAL NOT NULL, "
    "pairs INTEGER NOT NULL, flagged INTEGER NOT NULL, unchanged INTEGER NOT NULL, "
    "runs_needed REAL, "
    "measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "PRIMARY KEY (workload, job, cell, metric, testbox, mode, shift_pct))";

/// One measured error rate of `compare` on a testbox: `pairs` comparisons of
/// a cell's two sides measured alike (A/A), with side NEW's samples made
/// `shift_pct` percent worse (0: the A/A itself).
struct AuditRow {
  CalibrationKey key;
  /// How many runs each side had: "one run per side" or "3 runs per side".
  std::string mode;
  double shift_pct = 0;  ///< the injected regression, percent; 0 = A/A
  int pairs = 0;         ///< comparisons made
  /// shift 0: pairs whose row was called a regression or an improvement
  /// (false alarms); shift > 0: pairs whose row was called a regression (hits).
  int flagged = 0;
  int unchanged = 0;  ///< pairs whose row was decided unchanged
  /// Median "needs about N runs per side" of the undecided pairs; NaN when
  /// none said.
  double runs_needed = 0;
  std::string measured_at;  ///< UTC, ISO 8601; set by the store when read
};

/// One complete run of a cell's history on a testbox (ResultsStore::
/// cell_history): what the between-run model needs to know whether runs are
/// alike (same build and kernel, or the same variant over time) and the run's
/// valid samples of one metric.
struct HistoryRun {
  std::int64_t run_id = 0;  ///< ascending = the order they were run
  std::string variant, build;
  std::int64_t kernel_id = 0;   ///< 0 when the run recorded no kernel
  std::vector<double> samples;  ///< valid samples, iteration order
};

}  // namespace nightjar

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

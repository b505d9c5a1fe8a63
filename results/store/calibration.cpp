// Calibrated between-run variances (`nightjar calibrate`, docs/statistics.md
// "Runs as the unit"): table calibration, one row per (workload, job, cell,
// metric, testbox). See results/store/store.h "Calibrations".
#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

namespace {

constexpr const char* kCreate =
    "CREATE TABLE IF NOT EXISTS calibration("
    "workload TEXT NOT NULL, job TEXT NOT NULL, cell TEXT NOT NULL, metric TEXT NOT NULL, "
    "testbox TEXT NOT NULL, between_var REAL NOT NULL, df REAL NOT NULL, runs INTEGER NOT NULL, "
    "measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "PRIMARY KEY (workload, job, cell, metric, testbox))";

}  // namespace

void ResultsStore::store_calibration(const CalibrationKey& key, const StoredCalibration& value) {
  SQLite::Database& db = database();
  db.exec(kCreate);
  SQLite::Statement q(db,
                      "INSERT OR REPLACE INTO calibration(workload, job, cell, metric, testbox, "
                      "between_var, df, runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::bind(q, key.workload, key.job, key.cell, key.metric, key.testbox, value.between_var,
               value.df, value.runs);
  q.exec();
}

std::optional<StoredCalibration> ResultsStore::calibration(const CalibrationKey& key) const {
  const SQLite::Database& db = database();
  SQLite::Statement exists(db,
                           "SELECT 1 FROM sqlite_master WHERE type='table' AND name='calibration'");
  if (!exists.executeStep()) return std::nullopt;
  SQLite::Statement q(db,
                      "SELECT between_var, df, runs FROM calibration WHERE workload=? AND job=? "
                      "AND cell=? AND metric=? AND testbox=?");
  SQLite::bind(q, key.workload, key.job, key.cell, key.metric, key.testbox);
  if (!q.executeStep()) return std::nullopt;
  return StoredCalibration{q.getColumn(0).getDouble(), q.getColumn(1).getDouble(),
                           q.getColumn(2).getInt()};
}

}  // namespace nightjar

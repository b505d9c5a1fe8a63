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

void ResultsStore::store_calibration(const std::string& workload, const std::string& job,
                                     const std::string& cell, const std::string& metric,
                                     const std::string& testbox, double var, double df, int runs) {
  SQLite::Database& db = database();
  db.exec(kCreate);
  SQLite::Statement q(db,
                      "INSERT OR REPLACE INTO calibration(workload, job, cell, metric, testbox, "
                      "between_var, df, runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::bind(q, workload, job, cell, metric, testbox, var, df, runs);
  q.exec();
}

std::optional<std::pair<double, double>> ResultsStore::calibration(
    const std::string& workload, const std::string& job, const std::string& cell,
    const std::string& metric, const std::string& testbox) const {
  const SQLite::Database& db = database();
  SQLite::Statement exists(db,
                           "SELECT 1 FROM sqlite_master WHERE type='table' AND name='calibration'");
  if (!exists.executeStep()) return std::nullopt;
  SQLite::Statement q(db,
                      "SELECT between_var, df FROM calibration WHERE workload=? AND job=? AND "
                      "cell=? AND metric=? AND testbox=?");
  SQLite::bind(q, workload, job, cell, metric, testbox);
  if (!q.executeStep()) return std::nullopt;
  return std::pair{q.getColumn(0).getDouble(), q.getColumn(1).getDouble()};
}

}  // namespace nightjar

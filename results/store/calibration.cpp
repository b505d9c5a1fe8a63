// Calibrated between-run variances (`nightjar calibrate`, docs/statistics.md
// "Runs as the unit"): table calibration, one row per (workload, job, cell,
// metric, testbox). See results/store/store.h "Calibrations".
#include <cmath>

#include "results/store/detail.h"
#include "results/store/store.h"

namespace nightjar {

using namespace store_detail;

void ResultsStore::store_calibration(const CalibrationKey& key, const StoredCalibration& value) {
  SQLite::Database& db = database();
  db.exec(kCalibrationTableSql);
  SQLite::Statement q(db,
                      "INSERT OR REPLACE INTO calibration(workload, job, cell, metric, testbox, "
                      "between_var, df, runs) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::bind(q, key.workload, key.job, key.cell, key.metric, key.testbox, value.between_var,
               value.df, value.runs);
  q.exec();
}

std::optional<StoredCalibration> ResultsStore::calibration(const CalibrationKey& key) const {
  const SQLite::Database& db = database();
  if (!db.tableExists("calibration")) return std::nullopt;
  SQLite::Statement q(db,
                      "SELECT between_var, df, runs FROM calibration WHERE workload=? AND job=? "
                      "AND cell=? AND metric=? AND testbox=?");
  SQLite::bind(q, key.workload, key.job, key.cell, key.metric, key.testbox);
  if (!q.executeStep()) return std::nullopt;
  return StoredCalibration{q.getColumn(0).getDouble(), q.getColumn(1).getDouble(),
                           q.getColumn(2).getInt()};
}

std::vector<HistoryRun> ResultsStore::cell_history(const CalibrationKey& key) const {
  const SQLite::Database& db = database();
  SQLite::Statement q(db,
                      "SELECT r.id, r.variant, r.build, IFNULL(r.kernel_id, 0), s.value FROM run r "
                      "JOIN testbox t ON t.id=r.testbox_id JOIN sample s ON s.run_id=r.id "
                      "WHERE r.workload=? AND r.job=? AND r.cell=? AND t.hostname=? AND "
                      "r.status='complete' AND s.metric=? AND s.invalid IS NULL "
                      "ORDER BY r.id, s.iteration");
  SQLite::bind(q, key.workload, key.job, key.cell, key.testbox, key.metric);
  std::vector<HistoryRun> out;
  while (q.executeStep()) {
    const std::int64_t id = q.getColumn(0).getInt64();
    if (out.empty() || out.back().run_id != id)
      out.push_back({id,
                     q.getColumn(1).getString(),
                     q.getColumn(2).getString(),
                     q.getColumn(3).getInt64(),
                     {}});
    out.back().samples.push_back(q.getColumn(4).getDouble());
  }
  return out;
}

void ResultsStore::store_audit(const std::vector<AuditRow>& rows) {
  SQLite::Database& db = database();
  SQLite::Transaction t(db);
  db.exec(kAuditTableSql);
  SQLite::Statement q(db,
                      "INSERT OR REPLACE INTO audit(workload, job, cell, metric, testbox, mode, "
                      "shift_pct, pairs, flagged, unchanged, runs_needed) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const auto& r : rows) {
    q.reset();
    SQLite::bind(q, r.key.workload, r.key.job, r.key.cell, r.key.metric, r.key.testbox, r.mode,
                 r.shift_pct, r.pairs, r.flagged, r.unchanged);
    if (std::isfinite(r.runs_needed))
      q.bind(11, r.runs_needed);
    else
      q.bind(11);
    q.exec();
  }
  t.commit();
}

std::vector<AuditRow> ResultsStore::audits(const CalibrationKey& key) const {
  const SQLite::Database& db = database();
  if (!db.tableExists("audit")) return {};
  SQLite::Statement q(db,
                      "SELECT mode, shift_pct, pairs, flagged, unchanged, runs_needed, measured_at "
                      "FROM audit WHERE workload=? AND job=? AND cell=? AND metric=? AND "
                      "testbox=? ORDER BY mode, shift_pct");
  SQLite::bind(q, key.workload, key.job, key.cell, key.metric, key.testbox);
  std::vector<AuditRow> out;
  while (q.executeStep()) {
    AuditRow r;
    r.key = key;
    r.mode = q.getColumn(0).getString();
    r.shift_pct = q.getColumn(1).getDouble();
    r.pairs = q.getColumn(2).getInt();
    r.flagged = q.getColumn(3).getInt();
    r.unchanged = q.getColumn(4).getInt();
    r.runs_needed = q.getColumn(5).isNull() ? std::nan("") : q.getColumn(5).getDouble();
    r.measured_at = q.getColumn(6).getString();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace nightjar

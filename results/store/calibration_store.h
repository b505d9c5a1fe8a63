// The calibration part of the results store (calibration.cpp): the
// between-run variances of `nightjar calibrate`, as one small interface that
// ResultsStore (results/store/store.h) implements.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/store/calibration.h"

namespace nightjar {

/// Calibrated between-run variances (table calibration).
class CalibrationStore {
 public:
  /// Stores (replacing an older one) the between-run variance of ln x of one
  /// cell's metric on a testbox (`key`), measured by `nightjar calibrate`.
  /// Table calibration, created when first written (CREATE TABLE IF NOT
  /// EXISTS; no schema version: a database without it simply has no
  /// calibration).
  virtual void store_calibration(const CalibrationKey& key, const StoredCalibration& value) = 0;
  /// The stored calibration of `key`, or nullopt.
  virtual std::optional<StoredCalibration> calibration(const CalibrationKey& key) const = 0;
  /// The complete runs of `key`'s cell (workload, job, run.cell) on its
  /// testbox (hostname) that hold valid samples of its metric, ascending by
  /// run id, each with its valid samples: one query. Empty when none.
  virtual std::vector<HistoryRun> cell_history(const CalibrationKey& key) const = 0;
  /// Stores the rows of one audit (`nightjar audit`), replacing the rows of
  /// the same key, mode and shift. Table audit, created when first written.
  virtual void store_audit(const std::vector<AuditRow>& rows) = 0;
  /// Every stored audit row of `key` (cell, metric, testbox), by mode then
  /// shift; empty when none (or no table audit).
  virtual std::vector<AuditRow> audits(const CalibrationKey& key) const = 0;

 protected:
  ~CalibrationStore() = default;
};

}  // namespace nightjar

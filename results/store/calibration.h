// Records of `nightjar calibrate`'s table: which cell's metric on which
// testbox a between-run variance belongs to, and the variance. Plain data:
// results/store/store.h declares the functions (store_calibration,
// calibration), results/store/calibration.cpp holds the SQL.
#pragma once

#include <string>

namespace nightjar {

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

}  // namespace nightjar

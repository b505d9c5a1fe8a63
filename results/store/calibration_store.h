// The calibration part of the results store (calibration.cpp): the
// between-run variances of `nightjar calibrate`, as one small interface that
// ResultsStore (results/store/store.h) implements.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace nightjar {

/// Calibrated between-run variances (table calibration).
class CalibrationStore {
 public:
  /// Stores (replacing an older one) the between-run variance of ln x of one
  /// cell's metric on a testbox, measured by `nightjar calibrate` from `runs`
  /// runs: var = s_b², df = its degrees of freedom. Table calibration,
  /// created when first written (CREATE TABLE IF NOT EXISTS; no schema
  /// version: a database without it simply has no calibration).
  virtual void store_calibration(const std::string& workload, const std::string& job,
                                 const std::string& cell, const std::string& metric,
                                 const std::string& testbox, double var, double df, int runs) = 0;
  /// The stored {var, df} of that cell, metric and testbox, or nullopt.
  virtual std::optional<std::pair<double, double>> calibration(
      const std::string& workload, const std::string& job, const std::string& cell,
      const std::string& metric, const std::string& testbox) const = 0;

 protected:
  ~CalibrationStore() = default;
};

}  // namespace nightjar

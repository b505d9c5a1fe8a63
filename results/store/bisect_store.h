// The bisect part of the results store (bisect_log.cpp): sessions and steps
// of `nightjar bisect`, as one small interface that ResultsStore
// (results/store/store.h) implements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/store/bisect_log.h"

namespace nightjar {

/// Bisect sessions and their steps.
class BisectStore {
 public:
  /// Inserts `session` (its id, status, started_at and ended_at are ignored)
  /// as running, started now; returns its id.
  virtual std::int64_t create_bisect_session(const BisectSession& session) = 0;
  /// Session `id`, or nullopt.
  virtual std::optional<BisectSession> bisect_session(std::int64_t id) const = 0;
  /// The newest session matching `filter`, or nullopt.
  virtual std::optional<BisectSession> newest_bisect_session(
      const BisectSessionFilter& filter) const = 0;
  /// Ends (or, with status "running", reopens) a session: status, result,
  /// first bad commit; ended_at is now ("" for running).
  virtual void finish_bisect_session(std::int64_t session, const std::string& status,
                                     const std::string& result, const std::string& first_bad) = 0;
  /// The steps of `session` with their runs, by step.
  virtual std::vector<BisectStep> bisect_steps(std::int64_t session) const = 0;
  /// Appends a pending step (next step number, in one transaction) and
  /// returns its number.
  virtual int add_bisect_step(std::int64_t session, const std::string& commit,
                              const std::string& subject, const std::string& role) = 0;
  /// Records a step's build: status ("ok", "failed", "none"), seconds
  /// (nullopt: NULL) and output (the tail of a failed build).
  virtual void set_bisect_build(std::int64_t session, int step, const std::string& status,
                                std::optional<double> seconds, const std::string& output) = 0;
  /// Links the runs measured for a step (a run linked twice counts once).
  virtual void link_bisect_runs(std::int64_t session, int step,
                                const std::vector<std::int64_t>& runs) = 0;
  /// Records a step's decision and figures; ended_at is now.
  virtual void set_bisect_decision(std::int64_t session, int step,
                                   const BisectVerdict& verdict) = 0;

 protected:
  ~BisectStore() = default;
};

}  // namespace nightjar

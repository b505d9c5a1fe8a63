// The LAVA part of the results store (lava_jobs.cpp): the jobs `nightjar lava
// submit` sent to a server until `collect` brought them home, as one small
// interface that ResultsStore (results/store/store.h) implements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/store/lava_jobs.h"

namespace nightjar {

/// LAVA submissions (table lava_job).
class LavaJobStore {
 public:
  /// Records a job submitted to a LAVA server (its id, server, submitted_at
  /// now) in table lava_job, created when first written; returns the row id.
  /// Throws (is_database_error) when the server already has that job id.
  virtual std::int64_t add_lava_submission(const LavaSubmission& submission) = 0;
  /// The recorded submissions, by row id: all, or those not collected yet.
  virtual std::vector<LavaSubmission> lava_submissions(bool uncollected_only) const = 0;
  /// Marks submission `id` collected now with LAVA's `outcome`.
  virtual void mark_lava_collected(std::int64_t id, const std::string& outcome) = 0;

 protected:
  ~LavaJobStore() = default;
};

}  // namespace nightjar

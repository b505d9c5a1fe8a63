// Records of LAVA jobs submitted to a server (`nightjar lava submit`,
// harness/lava/server.h) until `nightjar lava collect` brought them home.
// Plain data: results/store/store.h declares the functions
// (ResultsStore::add_lava_submission, lava_submissions, ...).
#pragma once

#include <cstdint>
#include <string>

namespace nightjar {

/// One submitted LAVA job (a row of table lava_job).
struct LavaSubmission {
  std::int64_t id = 0;       ///< row id (ignored by add_lava_submission)
  std::string server;        ///< the server's base URL ("http://lava.example:8000")
  std::string lava_id;       ///< LAVA's job id
  std::string url;           ///< the job's page (SERVER/scheduler/job/ID)
  std::string dir;           ///< DIR of `nightjar lava jobs` (absolute)
  std::string file;          ///< the definition's file name in DIR
  std::string submitted_at;  ///< ISO 8601 UTC (set by add_lava_submission)
  /// "" until collected; then LAVA's end ("Complete", "Incomplete: ERROR",
  /// "Canceled") as `nightjar lava collect` found it
  std::string outcome;
  std::string collected_at;  ///< ISO 8601 UTC, "" until collected
};

}  // namespace nightjar

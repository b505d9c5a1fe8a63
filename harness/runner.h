// The runner: job files -> matrix cells -> runs of warm-up and measured
// iterations, each iteration committed to the results store with its monitor
// deltas the moment it is measured.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/cgroup.h"
#include "harness/job.h"
#include "results/store.h"

namespace nightjar {

/// Options of `nightjar run` after validation.
struct RunOptions {
  std::vector<std::string> job_paths;
  std::string variant;                 ///< overrides the job's `variant`; "" = job's or "default"
  std::string build;                   ///< --build label
  std::optional<int> iterations;       ///< overrides the job's `iterations`
  std::optional<int> warmup;           ///< overrides the job's `warmup`
  std::vector<SetOverride> overrides;  ///< --set key=value[,value...]
  std::map<std::string, std::string> context;  ///< --context k=v
};

/// One job with its expanded cells, validated before anything is stored.
struct PlannedJob {
  JobFile job;
  const Workload* workload = nullptr;
  std::vector<Cell> cells;
  int iterations = 0;
  int warmup = 0;
  std::string variant;
  CgroupSpec cgroup;  ///< the job's `cgroup:` section (disabled when absent)
};

/// Loads every job file and expands its matrix. Throws UsageError (exit 2)
/// naming file, line and field on any bad input; touches no database.
std::vector<PlannedJob> plan_runs(const RunOptions& options, const MachineFacts& machine);

/// What a `nightjar run` did.
struct RunOutcome {
  std::vector<std::int64_t> run_ids;  ///< every run stored, in order
  int complete = 0, failed = 0, skipped = 0, aborted = 0;
  bool interrupted = false;  ///< SIGINT/SIGTERM ended it (exit 130)
};

/// Runs every planned cell on this kernel into `store`. Progress and
/// warnings go to stderr. On SIGINT/SIGTERM the current iteration is
/// discarded, the run is stored as aborted with its completed samples, and
/// the outcome says interrupted (no exception escapes for that).
RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store);

}  // namespace nightjar

// The session options room of `nightjar bisect` (docs/architecture.md
// "harness/bisect"), with harness/bisect/session.h: what is measured at each
// commit and how it is judged (BisectJobOptions), kept with a session as
// JSON so that `bisect resume|branch` go on with the same options, and
// everything checked before the results database is opened (prepare: the
// options, the job file, the metric, the repository), so bad input never
// writes to it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/kernel_build.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "results/model/metric.h"
#include "results/model/params.h"
#include "results/store/bisect_log.h"

namespace nightjar {

/// What is measured at each commit and how it is judged (shared by run and step).
struct BisectJobOptions {
  std::string job_path;  ///< job file (made absolute before the repository is entered)
  std::string metric;    ///< "" = the first metric the job's first cell declares
  std::vector<SetOverride> overrides;  ///< --set
  std::string variant;                 ///< --variant label ("" = the job's)
  std::optional<int> iterations;       ///< first batch per commit (default: the job's)
  std::optional<int> warmup;           ///< default: the job's
  int max_iterations = 30;             ///< cap of samples per cell per commit
  double alpha = 0.05;                 ///< FDR level of the comparison (decide_significance)
  /// Minimum |%change| that counts as "different". nullopt: `run` uses half
  /// the change measured between the endpoints (at least 1%); `step` uses half
  /// the change between --base and --bad-base when given, else 1%.
  std::optional<double> min_effect_pct;
  std::string build_command;  ///< shell command run at the repository top (""= none)
  double build_timeout = 0;   ///< seconds; 0 = none
  KernelBuildOptions kernel;  ///< `bisect run --kernel-build` (harness/bisect/kernel_build.h)
};

/// A session's options as stored (BisectSession::options): the job options
/// but the job path (a column of its own), and for a `bisect run` session
/// whether the merge's branch is tested after it.
struct SessionOptions {
  BisectJobOptions job;
  bool test_merge_branch = false;
};

/// The JSON text stored as BisectSession::options: {"alpha", "build_command",
/// "build_timeout", "iterations", "max_iterations", "metric",
/// "min_effect_pct", "sets": [{"key", "values"}], "variant", "warmup"}
/// (iterations, warmup, min_effect_pct null when unset), and
/// "test_merge_branch" when `test_merge_branch` is given (`bisect run`), and
/// "kernel" when kernel builds are on: {"config", "defconfig", "fragments",
/// "dir", "jobs", "vm_memory_mb", "vm_cpus", "vm_timeout_sec", "pair_good", "vm_hugepages"}.
std::string session_options_json(const BisectJobOptions& job,
                                 std::optional<bool> test_merge_branch);

/// The options of `session` read back from its JSON (the defaults for what it
/// lacks, or for text that is not a JSON object) and its job path.
SessionOptions session_options(const BisectSession& session);

/// What prepare() found.
struct Prepared {
  std::string top;       ///< repository top directory (the working directory from now on)
  std::string job_name;  ///< job file stem
  std::string workload;
  MetricDescriptor metric;
  int iterations = 0;     ///< first batch per commit
  std::size_t cells = 1;  ///< cells of the job: runs per batch
  MachineFacts machine;
};

/// The options of `nightjar run` that measure the job once with build label
/// `build` and `iterations` per cell (nullopt: the job options').
RunOptions run_options(const BisectJobOptions& job, const std::string& build,
                       std::optional<int> iterations);

/// Checks `job` (limits, the job file and its single variant, the metric,
/// which it fills in when empty, and makes the job path absolute) and the
/// git work tree `repo`, before any database is opened. Throws UsageError
/// naming the option and what to write.
Prepared prepare(const std::string& repo, BisectJobOptions& job);

/// Makes the repository top the working directory. Throws EnvironmentError.
void enter(const Prepared& prepared);

/// The database path `db` ("" = the default) made absolute (resolved before
/// the repository is entered).
std::string db_path(const std::string& db);

}  // namespace nightjar

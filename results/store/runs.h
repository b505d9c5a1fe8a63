// Records of runs as the results store writes and reads them: what a run is
// when it starts, the rows of `nightjar show`, samples and iterations, the
// labels of a run, and a whole run as one record (what a qemu guest sends to
// the host). Plain data: results/store/store.h declares the functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/identity.h"
#include "results/model/params.h"
#include "results/model/profile.h"

namespace nightjar {

/// Status of a run (docs/reference.md "Nothing measured is lost").
enum class RunStatus { running, complete, aborted, failed, skipped };
/// Every RunStatus, in declaration order (what `show --status` accepts).
inline constexpr RunStatus kRunStatuses[] = {RunStatus::running, RunStatus::complete,
                                             RunStatus::aborted, RunStatus::failed,
                                             RunStatus::skipped};
/// "running", "complete", ...: the spelling stored in the database.
const char* to_string(RunStatus s);
/// Inverse of to_string(RunStatus): the status spelled `text`, or
/// std::nullopt for any other text (what a caller reading a guest's report
/// or a command line decides about).
std::optional<RunStatus> parse_run_status(std::string_view text);

/// Everything known about a run when it starts.
struct NewRun {
  std::string job;       ///< job name (file stem)
  std::string job_path;  ///< job file path as given
  Cell cell;
  std::string variant;
  std::string build;   ///< user's --build label (commit or name), may be ""
  int iterations = 0;  ///< measured iterations planned
  int warmup = 0;      ///< warm-up iterations planned
  KernelIdentity kernel;
  Testbox testbox;
  std::map<std::string, std::string> context;  ///< system facts and --context pairs
};

/// One row of `nightjar show`.
struct RunRow {
  std::int64_t id = 0;
  std::string job, workload, cell, variant, build, kernel_release, hostname;
  RunStatus status = RunStatus::running;
  std::string reason, started_at, ended_at;
  int iterations = 0;  ///< planned
  int samples = 0;     ///< iterations stored ok whose values are all valid
  int failed = 0;      ///< iterations stored as failed
  /// Iterations stored invalid, or ok with at least one invalid value
  /// (docs/results.md "Invalid samples").
  int invalid = 0;
};

/// Filters of `nightjar show`, export and trend; empty fields match everything.
struct RunFilter {
  std::optional<std::int64_t> run_id;
  std::string job, workload, variant, build, kernel_release, hostname;
  std::optional<RunStatus> status;
  std::optional<int> limit;  ///< newest N runs
};

/// One stored sample value (or monitor delta: `metric` is then its name).
struct SampleRow {
  int iteration = 0;
  std::string metric;
  double value = 0;
  /// Why the value is not a measurement (sample.invalid); "" when it is
  /// valid (and always for a monitor delta).
  std::string invalid = {};
};

/// Which samples a read returns: the valid ones (what every statistic uses)
/// or all of them, the invalid ones with their reasons (`show --run`,
/// `--include-invalid`).
enum class SampleSet { valid, all };

/// Status of a stored iteration (docs/results.md "Invalid samples").
enum class IterationStatus { ok, failed, invalid };
/// "ok", "failed", "invalid": the spelling stored in the database.
const char* to_string(IterationStatus s);
/// Inverse of to_string(IterationStatus); std::nullopt for any other text.
std::optional<IterationStatus> parse_iteration_status(std::string_view text);

/// The folded stacks of one stored iteration (tables profile, profile_stack
/// and profile_sample; docs/results.md): the perf-profile monitor's record.
struct StoredProfile {
  std::int64_t run_id = 0;
  int iteration = 0;         ///< 1-based measured iteration
  IterationProfile profile;  ///< event, frequency, lost samples, stack -> samples
};

/// One row of the iteration table.
struct IterationRow {
  int iteration = 0;  ///< 1-based measured iteration
  IterationStatus status = IterationStatus::ok;
  std::string reason;       ///< why it failed or is invalid ("" when ok)
  std::string started_at;   ///< ISO 8601 UTC
  double duration_sec = 0;  ///< wall time, seconds
};

/// The labels of a run: what a figure's title, a history's builds and an
/// export row name.
struct RunLabels {
  std::int64_t id = 0;
  std::string job, workload, variant, build;
  std::string kernel_release;  ///< "" when the run has no kernel row
  std::string hostname;        ///< testbox hostname; "" when the run has no testbox row
  std::string started_at;      ///< ISO 8601 UTC
};

/// A whole run as one record: the run row, its parameters, context and
/// warnings, and every iteration with its samples, monitor deltas and flags.
/// A qemu guest sends it to the host, which stores it again
/// (harness/vm/qemu.h).
struct RunRecord {
  std::string job, job_path, workload;
  std::string cell;  ///< canonical cell id
  std::string variant, build;
  RunStatus status = RunStatus::running;
  std::string reason;
  int iterations = 0;  ///< planned
  int warmup = 0;      ///< planned
  /// Cell parameters: canonical text and number in base units (0 when NULL).
  std::map<std::string, ParamValue> params;
  std::map<std::string, std::string> context;
  std::vector<std::string> warnings;  ///< run-level flags, in the order recorded

  /// One stored iteration.
  struct Iteration {
    IterationRow row;
    std::map<std::string, double> metrics;  ///< samples (empty for a failed iteration)
    /// metric -> reason, for the samples of `metrics` stored invalid
    std::map<std::string, std::string> invalid;
    std::map<std::string, double> monitors;  ///< monitor deltas and workload counters
    std::vector<std::string> flags;          ///< in the order recorded
  };
  std::vector<Iteration> iteration_data;  ///< by iteration
};

}  // namespace nightjar

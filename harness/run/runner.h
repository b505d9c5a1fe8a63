// The runner: job files -> matrix cells -> runs of warm-up and measured
// iterations, each iteration committed to the results store with its monitor
// deltas the moment it is measured.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/job/job.h"
#include "harness/job/variants.h"
#include "harness/run/system_reads.h"
#include "results/store/store.h"
#include "workloads/sys/cgroup.h"

namespace nightjar {

struct PlannedJob;

/// Options of `nightjar run` after validation.
struct RunOptions {
  std::vector<std::string> job_paths;
  /// --variant: "" (the job's `variant:`, else all its `variants:`, else
  /// "default"), "all", or NAME[,NAME...]. For a job with `variants:` the
  /// names select among them; for a job without, each name is a label-only
  /// variant.
  std::string variant;
  bool interleave = false;  ///< --interleave: variants alternate per iteration (A B A B)
  /// --runs N: each cell is run N times as separate runs (own setup and
  /// teardown), in rounds: round r runs every cell of every variant once, so
  /// variants alternate by run (A B A B); with `interleave` also by iteration
  /// inside each round (docs/statistics.md "Runs as the unit").
  int runs = 1;
  std::string build;                           ///< --build label
  std::optional<int> iterations;               ///< overrides the job's `iterations`
  std::optional<int> warmup;                   ///< overrides the job's `warmup`
  std::vector<SetOverride> overrides;          ///< --set key=value[,value...]
  std::map<std::string, std::string> context;  ///< --context k=v
  /// --until-decided: called after every measured iteration i of a cell that
  /// each of its running runs completed (with --interleave: every variant's
  /// run measured i times), with those runs' ids (variants in job order) and
  /// i; returning true ends the cell's measuring there (the runs finish as
  /// complete with i iterations). Empty: every cell runs its iterations.
  std::function<bool(const PlannedJob& job, const Cell& cell,
                     const std::vector<std::int64_t>& run_ids, int iterations)>
      look;
  /// Called by plan_runs for each job once its matrix is counted (`matrix`,
  /// harness/job/job.h) and its iterations and variants are known, before any
  /// cell is built: `nightjar run` prints the plan and refuses a matrix above
  /// its limit here (by throwing). Empty: no check.
  std::function<void(const PlannedJob& job, const Matrix& matrix)> check_matrix;
};

/// One variant of a planned job: its label, knobs and cgroup setup.
struct PlannedVariant {
  std::string name;         ///< stored as run.variant
  std::vector<Knob> knobs;  ///< written before its cells run, restored after
  CgroupSpec cgroup;        ///< the job's `cgroup:` with the variant's `cgroup:` merged over it
};

/// One job with its expanded cells, validated before anything is stored.
struct PlannedJob {
  JobFile job;
  const Workload* workload = nullptr;
  std::vector<Cell> cells;
  int iterations = 0;
  int warmup = 0;
  std::string variant;  ///< the first selected variant's name
  CgroupSpec cgroup;    ///< the first selected variant's cgroup setup (disabled when absent)
  std::vector<PlannedVariant> variants;  ///< the selected variants, at least one, in job order
};

/// Loads every job file and expands its matrix (plan_matrix, then
/// options.check_matrix, then expand_cells). Throws UsageError (exit 2)
/// naming file, line and field on any bad input, Interrupted on SIGINT or
/// SIGTERM while cells are built; touches no database.
std::vector<PlannedJob> plan_runs(const RunOptions& options, const MachineFacts& machine);

/// Refuses (UsageError, exit 2, naming the job, variant and cell) a plan
/// whose cgroup tree plan_cgroup_tree() refuses on this machine's cgroup
/// version (`layout`): on v2 an ancestor given less protection than its
/// children ask for. Cells whose knobs this version lacks are not refused
/// here: they are stored as skipped when they run.
void check_cgroup_plans(const std::vector<PlannedJob>& plan, const CgroupLayout& layout);

/// What a `nightjar run` did.
struct RunOutcome {
  std::vector<std::int64_t> run_ids;  ///< every run stored, in order
  int complete = 0, failed = 0, skipped = 0, aborted = 0;
  bool interrupted = false;  ///< SIGINT/SIGTERM ended it (exit 130)
};

/// Runs every planned cell on this kernel into `store`, once per selected
/// variant. First it refuses what check_cgroup_plans() refuses, then sweeps
/// what ended nightjar processes left behind (workloads/sys/sweep.h),
/// saying on stderr what it removed. Then, per variant: a variant's knobs are written before its
/// cells run and the previous values restored after, on every path (RAII, also on SIGINT); the
/// values in force are stored in run_context as "knob.<path>". A knob that
/// cannot be written: the variant's cells are stored as skipped with the
/// reason. options.interleave: per cell, the variants' runs alternate per
/// iteration (A1 B1 A2 B2 ...), knobs switched around each. Progress and
/// warnings go to stderr. options.runs > 1: the whole plan is run that many
/// times in rounds (A B, A B, ...). On SIGINT/SIGTERM the current iteration is
/// discarded, the run is stored as aborted with its completed samples, and
/// the outcome says interrupted (no exception escapes for that). Reads the
/// live system (LiveSystemReads).
RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store);
/// The same, with every system read (identity, facts, cgroup layout, monitor
/// snapshots, cgroup events, the sweep, the interrupt flag) through `system`
/// (harness/run/system_reads.h): a test gives it scripted readings.
RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store, SystemReads& system);

}  // namespace nightjar

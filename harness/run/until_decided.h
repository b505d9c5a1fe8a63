// `nightjar run --until-decided`: sequential sampling (issue 14). The runner
// (runner.h, RunOptions::look) measures each cell in interleaved rounds of
// one iteration per variant; after each round from the first look on, the
// sampler compares the cell's runs so far with the comparison `compare` uses
// (results/compare/comparison.h: compare_selectors with the look's levels,
// results/compare/sequential.h) and ends the cell when every metric row (or
// the --decide-on ones) is decided, or its budget is spent. The design is
// docs/statistics.md "Sequential sampling"; the command docs/bisect.md
// "Until decided".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/runner.h"
#include "results/compare/selector.h"
#include "results/compare/sequential.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"

namespace nightjar {

/// Options of --until-decided after parsing.
struct UntilDecidedOptions {
  /// None: compare the run's variants (first = BASE); else a stored side's
  /// selector (as `compare` takes, e.g. build=v6.18; parsed by the command)
  /// as BASE and this run's one variant as NEW.
  std::optional<Selector> base;
  int max_iterations = 0;                   ///< per side and cell; 0: max(30, 4 × the first look)
  double max_seconds = 0;                   ///< the whole run's time budget; 0: none
  std::vector<std::string> decide_on;       ///< metrics that must be decided; empty: all
  std::vector<std::string> ignore_params;   ///< as compare's --ignore-param
  stats::SignificanceOptions significance;  ///< alpha, min effect, power
  stats::Spending spending = stats::Spending::pocock;
};

/// How one cell ended.
struct DecidedCell {
  std::string job, cell;
  int per_side = 0;  ///< iterations (or runs, RunsSampler) per side when it ended
  int looks = 0;
  LookResult last;                  ///< the verdicts of its last look
  std::string unit = "iterations";  ///< what per_side counts: "iterations" or "runs"
};

/// The summary printed after an --until-decided run: one line per cell of
/// `cells` with its verdicts and its iterations or runs per side, then the
/// open rows with what they would need, headed by `why_open` (why the
/// sampling stopped: "budget of 30 iterations per side spent").
std::string until_decided_report(const std::vector<DecidedCell>& cells,
                                 const std::string& why_open);

/// The exit code of an --until-decided run (as `check`): regression (1) when
/// any row of `cells` ended as a regression, else inconclusive (3) when any
/// considered row is open or `cells` is empty (no cell was compared), else ok.
ExitCode until_decided_exit_code(const std::vector<DecidedCell>& cells);

/// The sampler: its look() is RunOptions::look. Not thread-safe (the runner
/// calls it from its one thread).
class SequentialSampler {
 public:
  /// `store` must outlive the sampler. `first_look`: iterations per side of
  /// the first look (the plan's, else the job's), at least 3.
  SequentialSampler(const ResultsStore& store, UntilDecidedOptions options, int first_look);

  /// The planned maximum iterations per side (what the runner is given).
  int max_iterations() const { return max_; }
  /// Iterations per side of the first look.
  int first_look() const { return first_; }

  /// RunOptions::look: compares the cell's runs at the look points (the
  /// first look, then every first_look iterations, and the last one) and when
  /// the time budget is spent; true when the cell is decided, its budget
  /// is spent, or (stored BASE) every open row is base_limited. Prints the look's verdicts per row
  /// on stderr. Throws what compare_selectors throws (UsageError when the stored side has no such
  /// cell).
  bool look(const PlannedJob& job, const Cell& cell, const std::vector<std::int64_t>& run_ids,
            int iterations);

  /// The cells in the order they ended.
  const std::vector<DecidedCell>& cells() const { return cells_; }

  /// The summary printed after the run: one line per cell with its verdicts
  /// and iterations, then the open rows with what they would need and why
  /// the sampling stopped.
  std::string report() const;

  /// regression (1) when any row ended as a regression, else inconclusive
  /// (3) when any considered row is open (or no cell was compared), else ok.
  ExitCode exit_code() const;

 private:
  SequentialDesign design() const;  ///< of every cell: first_, max_ and the options

  const ResultsStore& store_;
  UntilDecidedOptions o_;
  int first_ = 3, max_ = 30;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::string current_;                   ///< job \0 cell of the cell being looked at
  std::optional<SequentialLooks> looks_;  ///< its looks (results/compare/sequential.h)
  std::vector<DecidedCell> cells_;
  bool out_of_time_ = false;
  bool stopped_by_base_ = false;  ///< a cell ended because its BASE cannot decide
};

/// The sampler of `--until-decided --runs N` (issue 35): runs are the unit.
/// The command (harness/cli/cmd_run.cpp) runs the plan in rounds of one run
/// per variant and cell (A B, A B, ...); after each round it hands the new
/// run ids to after_round, which compares each open cell with the runs it
/// has so far, one side per variant (Selector::run_ids), or this run's
/// variant against the stored BASE, with the run model (docs/statistics.md
/// "Until decided, runs as the unit"). The looks are SequentialLooks' with
/// runs in place of iterations: at 3 runs per side, every 3 runs after it,
/// and at the budget N. Not thread-safe.
class RunsSampler {
 public:
  /// The runs per side of the first look and of the spacing between looks.
  static constexpr int kLookEvery = 3;

  /// `store` must outlive the sampler. `max_runs`: the budget N per side and
  /// cell (`--runs N`); throws UsageError below kLookEvery (naming --runs).
  /// options.max_iterations and max_seconds are not used (the command
  /// refuses them with --runs).
  RunsSampler(const ResultsStore& store, UntilDecidedOptions options, int max_runs);

  /// Throws UsageError (exit 2; naming --runs, the minimum and the way
  /// out) when `max_runs` is below kLookEvery: what the command checks before
  /// the database is opened, and the constructor again.
  static void check_budget(int max_runs);

  /// The budget of runs per side.
  int max_runs() const { return max_; }

  /// After a round: `run_ids` are the runs the round stored (any order; ids
  /// of other runs are ignored). Each run of a complete or aborted status
  /// counts toward its (job, cell, variant); a cell's runs per side is the
  /// smallest count over its variants. A cell at a look point (3, 6, ... or
  /// the budget; SequentialLooks::after_round) is compared and ends when
  /// decided or at the budget; a cell whose runs of this round all gave no
  /// samples (skipped, failed) ends without a verdict. Prints each look's
  /// verdicts on stderr. Returns true when no cell of `plan` is open.
  /// Throws what compare_selectors throws.
  bool after_round(const std::vector<PlannedJob>& plan, const std::vector<std::int64_t>& run_ids);

  /// True while the cell is measured: neither decided nor ended.
  bool open(const std::string& job, const std::string& cell) const;

  /// The plan narrowed to its open cells (jobs without one left out): what
  /// the next round runs.
  std::vector<PlannedJob> open_plan(const std::vector<PlannedJob>& plan) const;

  /// The cells in the order they ended.
  const std::vector<DecidedCell>& cells() const { return cells_; }
  /// until_decided_report of the cells (open rows: the budget of runs).
  std::string report() const;
  /// until_decided_exit_code of the cells.
  ExitCode exit_code() const { return until_decided_exit_code(cells_); }

 private:
  /// One cell's runs and looks.
  struct CellRuns {
    std::map<std::string, std::vector<std::int64_t>> by_variant;  ///< usable runs
    std::optional<SequentialLooks> looks;
    bool ended = false;
  };
  Comparison compare(const PlannedJob& job, const CellRuns& runs,
                     const stats::SignificanceOptions& options) const;

  const ResultsStore& store_;
  UntilDecidedOptions o_;
  int max_ = 3;
  std::map<std::string, CellRuns> cells_by_key_;  ///< job \0 cell id
  std::vector<DecidedCell> cells_;
};

/// What runs_plan_line counts as beyond any realistic budget: the cap of
/// stats::runs_needed.
inline constexpr std::size_t kUnrealisticRuns = 10000;

/// The plan line of `--until-decided --runs N` for one job (issue 35):
/// per cell and metric of the stored history (the BASE side's runs, else
/// every run of `job`; metrics of `decide_on`, all when empty), the runs per
/// side to decide ±margin, stats::runs_needed(margin, s_b² + s_w²/n) at
/// significance.alpha and power, with s_w² the history's pooled within-run
/// variance (results/stats/run_model.h run_components), n `iterations` per
/// run, and s_b² from this testbox's calibration, else the cell's history
/// (stored_between_lookup, `testbox` the hostname); the largest over them
/// decides. The line names the metric, the source and the budget
/// (`budget_runs`); above the budget, or beyond any realistic count
/// (runs_needed's cap), it says so and points at the job's `min_effect:`.
/// Without such a history: that the looks measure the between-run variation
/// themselves, at 3 runs per side and every 3 after. Never throws for a
/// missing history.
std::string runs_plan_line(const ResultsStore& store, const std::optional<Selector>& base,
                           const std::string& job, const std::string& testbox,
                           const std::vector<std::string>& ignore_params,
                           const std::vector<std::string>& decide_on,
                           const stats::SignificanceOptions& significance, int iterations,
                           int budget_runs);

/// The plan of `nightjar run --until-decided` and `check` from the stored
/// history: the runs of `job` on this testbox matching `selector` (every
/// run of the job when none), and the line saying it; std::nullopt when the
/// store holds no such runs with two samples of a metric. Never throws for
/// a missing history.
std::optional<SamplingPlan> stored_plan(const ResultsStore& store,
                                        const std::optional<Selector>& selector,
                                        const std::string& job,
                                        const std::vector<std::string>& ignore_params,
                                        const std::vector<std::string>& decide_on,
                                        const stats::SignificanceOptions& significance);

}  // namespace nightjar

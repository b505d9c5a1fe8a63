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
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/runner.h"
#include "results/compare/sequential.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"

namespace nightjar {

/// Options of --until-decided after parsing.
struct UntilDecidedOptions {
  /// "" : compare the run's variants (first = BASE); else a stored side's
  /// selector (as `compare` takes, e.g. build=v6.18) as BASE and this run's
  /// one variant as NEW.
  std::string base;
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
  int iterations = 0;  ///< per side when it ended
  int looks = 0;
  LookResult last;  ///< the verdicts of its last look
};

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

/// The plan of `nightjar run --until-decided` and `check` from the stored
/// history: the runs of `job` on this testbox matching `selector` (every
/// run of the job when ""), and the line saying it; std::nullopt when the
/// store holds no such runs with two samples of a metric. Never throws for
/// a missing history.
std::optional<SamplingPlan> stored_plan(const ResultsStore& store, const std::string& selector,
                                        const std::string& job,
                                        const std::vector<std::string>& ignore_params,
                                        const std::vector<std::string>& decide_on,
                                        const stats::SignificanceOptions& significance);

}  // namespace nightjar

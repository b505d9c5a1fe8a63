// Sequential sampling of `nightjar run --until-decided` (issue 14): the
// levels of each look of a group-sequential design, what a look of the
// comparison decided, and the plan line (how many iterations the decision
// needs at the stored CoeffVar of a cell). The comparison of every look is
// build_comparison's (comparison.h) with SignificanceOptions::change_level
// and equivalence_level set to the look's nominal levels: there is no second
// statistics path. The design and its sources are in docs/statistics.md
// "Sequential sampling".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/stats/sequential.h"
#include "results/stats/significance.h"

namespace nightjar {

/// The nominal levels of one look (SignificanceOptions::change_level and
/// equivalence_level).
struct LookLevels {
  double change_level = 0;       ///< two-sided level of the change test at this look
  double equivalence_level = 0;  ///< level of each one-sided test of TOST at this look
};

/// The levels of the last look of a design whose looks so far were at
/// information fractions `t` (strictly increasing in (0, 1]; t_k = n_k/N,
/// n_k iterations per side at look k of a planned maximum N), from the
/// Lan–DeMets alpha-spending boundaries of stats::one_sided_boundaries:
/// change_level = 2·(1 − Φ(c_k)) with the boundaries of a symmetric
/// two-sided design spending alpha/2 per side; equivalence_level = 1 − Φ(e_k)
/// with the boundaries spending min(alpha, 0.25) (TOST's one-sided level,
/// as significance.cpp uses it). Boundaries depend only on the looks so far,
/// so a look earlier than planned (time budget) stays valid. A look that
/// spends nothing gets a level of 1e-300 (never decides). Throws
/// std::invalid_argument as one_sided_boundaries.
LookLevels look_levels(const std::vector<double>& t, double alpha, stats::Spending spending);

/// One metric row's state after a look.
struct RowState {
  std::string cell;       ///< the row's cell (canonical id)
  std::string operation;  ///< the row's label in its comparison
  std::string name;       ///< the metric
  stats::Verdict verdict = stats::Verdict::inconclusive;
  /// Open rows: what deciding would need ("about 14 iterations per side",
  /// "about 5 runs per side") or the row's reason; "" when decided.
  std::string needs;
  /// Open row that more samples of the NEW side cannot decide: the BASE
  /// side's own samples are too few for the margin (a stored side that does
  /// not grow; evaluate_look's base_grows false).
  bool base_limited = false;
};

/// What one look of the comparison decided.
struct LookResult {
  /// Every metric row of NEW side 1 (or of each NEW side) whose metric is
  /// in `decide_on` (all when empty), in comparison order.
  std::vector<RowState> rows;
  /// True when every such row is regression, improvement or unchanged (and
  /// at least one such row exists).
  bool decided = false;
  /// True when some row is open and every open row is base_limited: going on
  /// cannot decide anything.
  bool hopeless = false;
};

/// The state of the comparison's metric rows. `base_grows` false (a stored
/// BASE): an open row is base_limited when even unlimited NEW samples could
/// not detect its margin with the BASE's n and CoeffVar
/// (stats::smallest_detectable_change_unequal(n_base, 10⁶, cv_base) > margin);
/// its `needs` then says how many iterations the BASE would need. Throws
/// UsageError when `decide_on` names a metric no row has (listing the
/// metrics the rows have).
LookResult evaluate_look(const Comparison& c, const std::vector<std::string>& decide_on,
                         bool base_grows = true);

/// "throughput unchanged, latency inconclusive": the verdict of each row, for
/// the progress line after a look.
std::string look_summary(const LookResult& look);

/// True for regression, improvement and unchanged.
bool is_decided(stats::Verdict v);

/// The design of one cell's sequential comparison (iterations per side).
struct SequentialDesign {
  int first_look = 3;       ///< the first look; then a look every first_look iterations
  int max_iterations = 30;  ///< the planned maximum N (t_k = n_k / N)
  stats::Spending spending = stats::Spending::pocock;
  /// alpha, power, min effect; its change_level and equivalence_level are
  /// set by each look.
  stats::SignificanceOptions significance;
  std::vector<std::string> decide_on;  ///< metrics that must be decided; empty: all
  bool base_grows = true;              ///< false: a stored BASE (evaluate_look)
};

/// What one look decided, with its levels.
struct LookOutcome {
  int look = 0;        ///< 1-based index of the look
  int iterations = 0;  ///< per side at the look
  LookLevels levels;
  LookResult result;
  /// The cell ends: every row decided, every open row base_limited, or the
  /// last look (the budget is spent).
  bool stop = false;
};

/// The looks of one cell of `run --until-decided`: the one decision rule
/// that both the runner's sampler (harness/run/until_decided.h) and
/// bench/decide_bench.cpp call after every round.
class SequentialLooks {
 public:
  /// Throws UsageError unless 3 <= max_iterations (first_look is clamped to
  /// [3, max_iterations]).
  explicit SequentialLooks(SequentialDesign design);

  /// A comparison of the cell's samples so far, built with the given options
  /// (build_comparison or compare_selectors with the look's levels).
  using CompareAt = std::function<Comparison(const stats::SignificanceOptions&)>;

  /// After a round with `iterations` per side: std::nullopt when this is no
  /// look point (looks at first_look, every first_look after it, and the
  /// last one: iterations >= max_iterations, or `out_of_time` with at least 3
  /// iterations); else the look's information fraction iterations/N is
  /// recorded, its levels come from look_levels, `compare` builds the
  /// comparison at them and evaluate_look says what it decided. Throws what
  /// `compare` and evaluate_look throw.
  std::optional<LookOutcome> after_round(int iterations, bool out_of_time,
                                         const CompareAt& compare);

  const SequentialDesign& design() const { return d_; }
  int looks() const { return static_cast<int>(t_.size()); }

 private:
  SequentialDesign d_;
  std::vector<double> t_;
};

/// The side of one run of one cell built from samples in memory, as
/// load_side returns a run of `nightjar run` (selector "run=ID", one run,
/// `variant`): `samples` maps each metric to its values in iteration order.
/// For simulations of the sequential rule (bench/decide_bench.cpp, tests)
/// without a store.
LoadedSide one_run_side(const CellKey& cell, std::int64_t run_id, const std::string& variant,
                        const std::map<std::string, std::vector<double>>& samples);

/// The plan of a cell from its stored history: the largest CoeffVar among
/// the rows considered, and the iterations per side that deciding ±margin
/// needs at it.
struct SamplingPlan {
  std::string metric;          ///< the row with the largest CoeffVar
  double cv_pct = 0;           ///< its median per-run CoeffVar, percent
  double margin_pct = 0;       ///< the minimum effect to decide
  std::size_t iterations = 0;  ///< per side, >= 3
  int history_runs = 0;        ///< stored runs the CoeffVar came from
};

/// Iterations per side to decide a row at CoeffVar cv_pct and margin
/// margin_pct: TOST's stats::equivalence_iterations_needed with a true change
/// of 0 (the case a regression gate mostly meets, and the harder of the two
/// decisions at the margin), at TOST's level min(alpha, 0.25) and `power`; at
/// least 3 (nightjar's minimum). std::nullopt when an input is not finite.
std::optional<std::size_t> iterations_to_decide(double cv_pct, double margin_pct, double alpha,
                                                double power);

/// The plan of the history's cells (a loaded side: the stored runs of the
/// job on this testbox) for the metrics in `decide_on` (all when empty):
/// per (cell, metric) the median CoeffVar of its runs (runs with >= 2
/// samples), the largest over them decides. std::nullopt when no run has
/// two samples of such a metric.
std::optional<SamplingPlan> plan_from_history(const LoadedSide& history,
                                              const std::vector<std::string>& decide_on,
                                              double margin_pct, double alpha, double power);

/// "at CoeffVar 1.1% (throughput, 4 stored runs), deciding ±1% needs about 21
/// iterations per side".
std::string plan_line(const SamplingPlan& plan);

}  // namespace nightjar

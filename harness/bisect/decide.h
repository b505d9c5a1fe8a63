// The deciding room of `nightjar bisect` (docs/bisect.md "Deciding a
// commit"; docs/architecture.md "harness/bisect"): is a commit good, bad or
// not yet known, from samples. Pure where it can be: decide_sides() and the
// rules below read only the samples and figures they are given, so they are
// unit-tested on recorded samples without git or a database
// (tests/unit/test_bisect_decide.cpp); decide_commit() only loads the runs'
// samples from the store first. Nothing here runs git, builds or measures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/stats/significance.h"
#include "results/store/bisect_log.h"
#include "results/store/store.h"

namespace nightjar {

/// Pinpoint's three answers about one commit's samples (unknown: more
/// samples may decide; step_outcome turns it into BisectDecision::skip at
/// the samples' cap).
enum class CommitDecision { good, bad, unknown };

/// The decision on one commit and the figures behind it.
struct DecisionResult {
  CommitDecision decision = CommitDecision::unknown;
  /// The decisive row: the worst regression, else the first inconclusive or
  /// undefined row, else the first row.
  stats::Significance row;
  std::string cell;         ///< the decisive row's cell
  std::size_t n_base = 0;   ///< samples of the decisive row's base side
  std::size_t n_now = 0;    ///< and of its new side
  std::size_t min_now = 0;  ///< fewest samples of the new side over the cells
  bool more_helps = false;  ///< unknown because of too few/noisy samples (not undefined)
  std::string summary;      ///< "-9.8% regression (4 vs 5 samples, q=0.0002)"
};

/// Bisect's significance options (docs/bisect.md "Deciding a commit"): a
/// commit is bad only when its change is significant at FDR level `alpha`
/// AND at least `min_effect_pct` percent; good when the data could have seen
/// that effect and did not (UnchangedRule::detectable); samples pooled (no
/// run model: every run of a bisect is on one testbox back to back, and 2
/// runs a side would leave a t test with ~2 degrees of freedom). With
/// `runs_as_unit` (a kernel bisect paired with the good endpoint, where every
/// run is a boot of its own and boots differ far more than iterations) the
/// rows are tested on the runs' means instead (SignificanceOptions::run_model;
/// docs/statistics.md "Runs as the unit"), each side needing >= 2 runs.
stats::SignificanceOptions bisect_significance(double alpha, double min_effect_pct,
                                               bool runs_as_unit = false);

/// "-9.8% regression (4 vs 5 samples, q=0.0002)": a decision's summary of
/// the row `sig` with `n_now` samples on the commit's side and `n_base` on
/// the good side (q left out when the row has none).
std::string row_summary(const stats::Significance& sig, std::size_t n_now, std::size_t n_base);

/// The first row of `metric` in `c` whose NEW side (significance[1]) has
/// `verdict`, or nullptr.
const ComparisonRow* first_row_with(const Comparison& c, const std::string& metric,
                                    stats::Verdict verdict);

/// Decides sides[1] (the commit) against sides[0] (the good side), cell by
/// cell, with the comparison statistics (build_comparison ->
/// stats::decide_significance over the family of `metric`'s rows; each side
/// should hold only that metric's samples): any regression -> bad; else any
/// inconclusive or undefined row -> unknown; else good (unchanged or
/// improvement). `catalog` describes the metric per workload. When
/// `comparison` is given it receives the comparison record (for printing).
/// Throws UsageError when the two sides share no cell.
DecisionResult decide_sides(const std::vector<LoadedSide>& sides, const MetricCatalog& catalog,
                            const std::string& metric, const stats::SignificanceOptions& options,
                            Comparison* comparison = nullptr);

/// The side named `name` of the valid samples of `metric` in runs `runs`
/// (the invalid ones counted, not used; runs not in the store left out).
LoadedSide load_runs_side(const ResultsStore& store, const std::vector<std::int64_t>& runs,
                          const std::string& metric, const std::string& name);

/// decide_sides() on the samples of `metric` in the runs `now_runs` against
/// `base_runs`, loaded from `store` (sides named `base_name`, `now_name`),
/// with the metric's descriptor as the store has it.
DecisionResult decide_commit(const ResultsStore& store, const std::vector<std::int64_t>& base_runs,
                             const std::vector<std::int64_t>& now_runs, const std::string& metric,
                             const stats::SignificanceOptions& options,
                             const std::string& base_name, const std::string& now_name,
                             Comparison* comparison = nullptr);

/// How many iterations to add to a commit whose decision `d` is unknown:
/// 0 when it is decided, when more samples cannot help (an undefined row),
/// or when the commit has `max_iterations` samples already; else as many as
/// it has (at least `first_batch`), up to the cap.
int more_iterations(const DecisionResult& d, int max_iterations, int first_batch);

/// What a commit's measured decision becomes for git bisect and the store,
/// and the reason stored: no samples (min_now 0) -> skip; good -> good; bad
/// -> bad; still unknown (after the samples' cap) -> skip, "still unsure
/// after N samples: WHY".
struct StepOutcome {
  BisectDecision decision = BisectDecision::skip;
  std::string reason;
};
StepOutcome step_outcome(const DecisionResult& d);

/// The stored record of a step's decision: `decision`, `reason`, and when
/// `d` is given the decisive row's figures (verdict, %change, p, q, ratio
/// CI, sample counts).
BisectVerdict verdict_record(BisectDecision decision, const DecisionResult* d,
                             const std::string& reason);

/// The minimum effect commits between the endpoints are judged with,
/// percent: the job's (`set`), else half the endpoints' `change` (percent),
/// at least 1%.
double endpoints_min_effect(std::optional<double> set, double change);

/// The good endpoint's runs split into its first batch (`cells` runs, one
/// per cell: A) and the rest (its itself-run A'), which are compared to see
/// whether the good endpoint is stable.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> first_and_rest(
    const std::vector<std::int64_t>& runs, std::size_t cells);

}  // namespace nightjar

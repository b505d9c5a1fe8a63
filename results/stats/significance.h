// The significance rule nightjar applies to a family of metrics (all rows of
// one comparison) and what it needs: the power figures (smallest detectable
// change, iterations needed), the reference rules of mmtests and LKP
// (`--test mmtests|lkp`), and the verdict of each row. Part of the statistics
// module (results/stats/, conventions in docs/statistics.md "Conventions";
// the reasoning behind the default rule is in docs/statistics.md).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/metric.h"
#include "results/stats/descriptive.h"
#include "results/stats/run_model.h"

namespace nightjar::stats {

// ---------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------

/// Smallest change (percent) a two-sided test at `alpha` detects with
/// probability `power`, for noise CoeffVar `cv_pct` (percent) and n samples per
/// side (docs/reference.md "Power"):
///   δ_min = (t_{1−α/2,ν} + t_{power,ν})·c·√(2/n),  ν = 2n − 2.
/// This is the normal-theory formula δ_min ≈ (z_{1−α/2} + z_power)·c·√(2/n)
/// (≈ 2.8·c·√(2/n) at α 0.05, power 0.8) with t quantiles in place of z: the
/// usual small-sample correction (it makes n = 3 per side need 1.33× the normal
/// figure, and vanishes as n grows); it tracks the exact noncentral-t answer
/// of R's power.t.test to within one iteration. +inf when n < 2; 0 when
/// cv_pct == 0. Throws std::invalid_argument unless 0 < alpha < 1 and
/// 0 < power < 1.
double smallest_detectable_change(std::size_t n_per_side, double cv_pct, double alpha = 0.05,
                                  double power = 0.8);

/// As smallest_detectable_change for unequal sides:
/// δ_min = (t_{1−α/2,ν} + t_{power,ν})·c·√(1/n_base + 1/n_new), ν = n_base + n_new − 2.
double smallest_detectable_change_unequal(std::size_t n_base, std::size_t n_new, double cv_pct,
                                          double alpha = 0.05, double power = 0.8);

/// Iterations per side needed to detect a change of delta_pct at noise
/// cv_pct: the smallest n >= 2 with smallest_detectable_change(n, cv_pct) <=
/// delta_pct, i.e. n ≈ 2(z_{1−α/2} + z_power)²c²/δ² (≈ 15.7·c²/δ²) plus the
/// t-correction, which adds 1–2 iterations at small n (CV 2%/δ 2%: 15.7 -> 17;
/// CV 1%/δ 2%: 3.9 -> 6, matching power.t.test's 5.1 rounded up). The search
/// starts at the normal-theory figure; above 1e6 it returns the normal figure
/// + 1. std::nullopt when delta_pct <= 0, or an input is not finite.
/// cv_pct == 0 -> 2. Throws std::invalid_argument unless 0 < alpha < 1 and
/// 0 < power < 1.
std::optional<std::size_t> iterations_needed(double delta_pct, double cv_pct, double alpha = 0.05,
                                             double power = 0.8);

// ---------------------------------------------------------------------------
// Reference rules (for --test mmtests / lkp)
// ---------------------------------------------------------------------------

/// mmtests' interval rule (2024–, Summarise.pm with _RatioCompareOp "cidiff"):
/// significant when the intervals mean ± 1.96·SD of the two sides do not
/// overlap. The mean is mean_of(kind) and SD is mmtests' per-mean SD
/// (Stat.pm calc_stddev): sample SD for arithmetic; for harmonic
/// sqrt(H⁴·Σ(1/x − 1/H)²/n); for geometric G·s_ln (delta method). false when a
/// side has fewer than 2 samples or the mean is undefined.
bool mmtests_interval_significant(std::span<const double> base, std::span<const double> now,
                                  MeanKind kind);

/// LKP / 0-day's rule (lkp-tests lib/stats.rb, is_changed_stats and
/// __get_changed_stats, default options): >= 3 runs per side; ranges separated:
/// min(now) > median(base) and median(now) > max(base), or the mirror
/// max(now) < median(base) and median(now) < min(base); and the ratio of
/// medians beyond 1% (max(a,b)/min(a,b) > 1 + min_ratio_change). LKP calls the
/// middle order statistic "mean"; nightjar uses the median and does not trim
/// LKP's outlier margin. Direction-agnostic (a change either way).
bool lkp_significant(std::span<const double> base, std::span<const double> now,
                     double min_ratio_change = 0.01);

// ---------------------------------------------------------------------------
// The significance rule
// ---------------------------------------------------------------------------

/// Which rule decides significance (`--test`).
enum class TestKind {
  welch,    ///< default: Welch on log values + Benjamini–Hochberg + minimum effect
  utest,    ///< Mann–Whitney U + Benjamini–Hochberg + minimum effect
  mmtests,  ///< mmtests' mean ± 1.96·SD non-overlap (no p, no BH)
  lkp,      ///< LKP's separated ranges and 1% ratio (no p, no BH)
};

/// The verdict on one row of a comparison.
enum class Verdict {
  improvement,   ///< significant change for the better
  regression,    ///< significant change for the worse
  unchanged,     ///< no significant change, and the data could have seen one
  inconclusive,  ///< too few samples, or too noisy to see a change of the size asked for
  undefined,     ///< the statistic does not exist (Hmean with a sample <= 0, base mean 0, NaN)
};

/// "welch", "utest", "mmtests", "lkp".
std::string_view to_string(TestKind t);
/// Inverse of to_string(TestKind); throws std::invalid_argument on anything else.
TestKind test_kind_from_string(std::string_view s);
/// "improvement", "regression", "unchanged", "inconclusive", "undefined".
std::string_view to_string(Verdict v);

/// The figures of one side of a row that decide_significance and a
/// comparison's statistic lines both use, computed once (issue 19: a
/// 1M-sample compare took every sample's log five times and the run
/// components twice). prepare_side computes them.
struct PreparedSide {
  Summary summary;                          ///< summarize(samples)
  std::optional<std::vector<double>> logs;  ///< log_samples(samples)
  /// run_components(runs), or of the samples as one run when `runs` is
  /// empty (what the run model tests: docs/statistics.md "Runs as the unit").
  std::optional<RunComponents> components;
};

/// The PreparedSide of `samples` (any order) split by run as `runs` (as
/// RowInput::base_runs/now_runs: empty = the side is one run, its samples).
PreparedSide prepare_side(std::span<const double> samples,
                          std::span<const std::vector<double>> runs);

/// One row of a comparison family: the samples of one metric on both sides.
/// The spans must outlive the call.
struct RowInput {
  std::span<const double> base;  ///< baseline samples
  std::span<const double> now;   ///< samples of the run compared to the baseline
  Direction direction = Direction::higher_is_better;
  MeanKind mean = MeanKind::harmonic;  ///< the summary mean (%change is of these)
  /// The same samples split by run (docs/statistics.md "Runs as the unit");
  /// empty: the side is one run (its pooled samples above).
  std::span<const std::vector<double>> base_runs{}, now_runs{};
  /// The between-run variance of this row's cell and metric for a side with
  /// one run (`nightjar calibrate`, the cell's history or the prior:
  /// BetweenRunVariance::source), if any.
  std::optional<BetweenRunVariance> between{};
  /// This row's minimum effect (the job's `min_effect:` for the metric),
  /// percent; nullopt: options.min_effect_pct.
  std::optional<double> min_effect_pct{};
  /// Optional: prepare_side(base, base_runs) and prepare_side(now, now_runs),
  /// computed by the caller, who reports them too; decide_significance then
  /// reads them instead of computing them again. The decisions are the same
  /// with or without them. They must outlive the call.
  const PreparedSide* base_prepared = nullptr;
  const PreparedSide* now_prepared = nullptr;
};

/// How a row that shows no change is decided.
enum class UnchangedRule {
  /// Default (issue 14): unchanged when the (1 − 2a) CI of the ratio lies
  /// inside ±min effect (TOST, Schuirmann 1987); a significant change is a
  /// regression or improvement unless it is shown to be inside the margin.
  equivalence,
  /// The rule before issue 14: unchanged when the data could have detected
  /// the minimum effect and |%change| is below it; significant only when
  /// |%change| >= min effect (kept for `bench/` comparisons).
  detectable,
};

/// Options of the rule (`--test`, `--alpha`, `--min-effect`, `--power`).
struct SignificanceOptions {
  TestKind test = TestKind::welch;
  double alpha = 0.05;          ///< FDR level for BH (welch/utest), two-sided test level
  double min_effect_pct = 1.0;  ///< minimum |%change| that counts as a change, percent
  double power = 0.8;           ///< power for the smallest detectable change
  UnchangedRule unchanged = UnchangedRule::equivalence;
  /// Test welch rows on runs or a calibration when the row gives them
  /// (RowInput::base_runs/between); false: always on the pooled iterations
  /// (the rule before issue 13, for `bench/` comparisons).
  bool run_model = true;
  /// Nominal levels of one look of a sequential design
  /// (results/compare/sequential.h); 0 = alpha. change_level: the two-sided
  /// level of the change test (BH runs at it); equivalence_level: the level of
  /// each one-sided test of TOST (the CI is 1 − 2·equivalence_level).
  double change_level = 0;
  double equivalence_level = 0;
};

/// The decision on one row.
struct Significance {
  Verdict verdict = Verdict::undefined;
  /// Direction-aware %change of the summary means (positive = better), percent;
  /// NaN when undefined.
  double pct_change = 0;
  std::optional<double> p;         ///< the test's two-sided p (welch/utest rows that were tested)
  std::optional<double> q;         ///< BH-adjusted p over the family's tested rows
  std::optional<double> ratio_lo;  ///< (1−alpha) CI of gmean(now)/gmean(base) (Welch on logs)
  std::optional<double> ratio_hi;
  /// Smallest change detectable at (alpha, power) with these n and the pooled
  /// CoeffVar sqrt((cv_base² + cv_now²)/2), percent; NaN when the pooled
  /// CoeffVar is undefined (a side has < 2 samples, or a mean is 0) or the row
  /// is undefined.
  double smallest_detectable_change_pct = 0;
  /// Iterations per side needed to detect max(|pct_change|, min_effect) at
  /// (alpha, power); set for inconclusive rows when the noise is known (>= 2
  /// samples per side), never below 3 (and for utest never below the U-test's
  /// minimum).
  std::optional<std::size_t> iterations_needed;
  std::string reason;  ///< one short line saying why, for reports and logs
  /// Which variance the test used (welch rows; utest, mmtests and lkp rows
  /// are always tested on iterations). ratio_lo/ratio_hi and p come from it.
  RunBasis basis = RunBasis::iterations;
  /// Degrees of freedom of the test (NaN when untested or not a t test).
  double df = std::numeric_limits<double>::quiet_NaN();
  double min_effect_pct = 0;  ///< the minimum effect (margin) this row was decided with
  /// The (1 − 2·equivalence_level) CI of the ratio now/base that the
  /// equivalence rule compared with the margin (welch/utest rows tested).
  std::optional<double> equivalence_lo, equivalence_hi;
  /// The between-run CoeffVar (percent) the test used: the calibration's
  /// (calibrated) or the pooled estimate of both sides' runs (runs).
  std::optional<double> between_cv_pct;
  /// The between-run variance the test used with a side of one run (basis
  /// calibrated), with its source: the reason names it ("between-run
  /// variation from this cell's history (12 runs)").
  std::optional<BetweenRunVariance> between;
  /// Runs per side needed to decide an inconclusive row whose between-run
  /// variance more iterations cannot shrink (runs and calibrated bases).
  std::optional<std::size_t> runs_needed;
};

/// nightjar's significance rule over one family (all rows of one comparison),
/// pure. Per row, in order:
///  1. undefined: a sample is not finite, the row's mean is undefined (Hmean or
///     Gmean with a sample <= 0), or the base mean is 0;
///  2. inconclusive: a side has < 3 samples;
///  3. welch (default): the test of ln(now/base) on the row's basis
///     (run_model.h): >= 2 runs on both sides: Welch on the runs' mean ln x;
///     else with a calibrated between-run variance: both components; else
///     Welch on the pooled iterations' ln x (on raw x for an arithmetic row
///     with a sample <= 0); utest: Mann–Whitney U on the iterations. q =
///     Benjamini–Hochberg over the rows tested in step 3 (at change_level);
///     mmtests / lkp: significant when their rule says so (no p, q, BH or
///     minimum effect, so the stars match those tools);
///  4. welch/utest, UnchangedRule::equivalence (default), with m the row's
///     minimum effect: unchanged when the (1 − 2·equivalence_level) CI of the
///     ratio lies inside (1/(1+m), 1+m) (TOST, equivalence.h), even when the
///     change is significant (a real but negligible change); else regression
///     or improvement (by the sign of the direction-aware pct_change) when q <
///     change_level; else inconclusive, with iterations_needed (or
///     runs_needed when the between-run variance limits it) to decide it;
///  5. UnchangedRule::detectable (the rule before issue 14): significant when
///     q < alpha AND |pct_change| >= m; a row that is not is inconclusive when
///     the smallest detectable change (from n and the pooled CoeffVar; for
///     utest also infinite while the U-test cannot reach alpha at these n)
///     exceeds max(|pct_change|, m), with iterations_needed to detect that,
///     otherwise unchanged. mmtests / lkp: unchanged.
/// The result has one entry per input row, in order. Throws
/// std::invalid_argument unless 0 < alpha < 1, 0 < power < 1, min effects
/// are >= 0 and the look levels are 0 or in (0, 1).
std::vector<Significance> decide_significance(std::span<const RowInput> family,
                                              const SignificanceOptions& options = {});

}  // namespace nightjar::stats

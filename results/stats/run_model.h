// Runs as the unit: the two-level model of a side's samples and the tests
// that account for the variation between runs (issue 13). Part of the
// statistics module (results/stats/, conventions in docs/statistics.md
// "Conventions"; the model, its sources and the A/A figures behind it are in
// docs/statistics.md "Runs as the unit").
//
// The model, on y = ln x (run i of a side, iteration j):
//   y_ij = mu + b_i + e_ij,   b_i ~ N(0, s_b²) between runs, e_ij ~ N(0, s_w²) within a run,
// so a run's mean ln x has variance s_b² + s_w²/n_i (Kalibera & Jones, "Rigorous
// benchmarking in reasonable time", ISMM 2013, §3–4: the highest level of
// repetition is the unit; Searle, Casella & McCulloch, "Variance Components",
// Wiley 1992, §3.5–3.6: the balanced one-way random model and its ANOVA
// estimators). Iterations of one run cannot see s_b: a test over them
// compares two runs as if the runs were the same.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nightjar::stats {

/// Which variance a row's test used.
enum class RunBasis {
  /// The pooled iterations of each side (Welch on ln x): right when runs do
  /// not differ; used only with the run model off (SignificanceOptions::
  /// run_model false: bisect, bench/) or when no between-run variance is
  /// given (a comparison with one run on a side always gets one: the
  /// calibration, the cell's history or the prior).
  iterations,
  /// >= 2 runs on both sides: Welch on the runs' mean ln x.
  runs,
  /// A side with one run and a between-run variance (BetweenRunVariance,
  /// from any BetweenSource): both components, Satterthwaite degrees of
  /// freedom.
  calibrated,
};

/// "iterations", "runs", "calibrated".
std::string_view to_string(RunBasis b);

/// Where a between-run variance for a side with one run came from, in the
/// order compare looks for one (docs/statistics.md "Where the between-run
/// variation comes from").
enum class BetweenSource {
  /// `nightjar calibrate` on this testbox: A/A runs of the cell.
  calibration,
  /// Runs of the cell already stored on this testbox and known to be alike:
  /// repeated runs of one build, else runs inside one trend segment (no change
  /// point between them). Free for a user with a nightly history.
  history,
  /// No measurement: the documented conservative prior (kPriorCoeffVarPct),
  /// under which only changes far outside run-to-run noise are flagged.
  prior,
};

/// A between-run variance of one cell's metric on one testbox, on ln x.
struct BetweenRunVariance {
  double var = 0;  ///< s_b², the variance of a run's mean ln x beyond s_w²/n; >= 0
  double df = 0;   ///< degrees of freedom of the estimate (runs − groups); > 0
  BetweenSource source = BetweenSource::calibration;
  int runs = 0;  ///< runs behind the estimate (0 for the prior)
};

/// The conservative prior's between-run CoeffVar, percent: about twice the
/// largest between-run CoeffVar `nightjar calibrate` and the A/A pairs
/// measured on the 2-CPU development machine (5.6%, pft; docs/statistics.md
/// "Where the between-run variation comes from").
inline constexpr double kPriorCoeffVarPct = 10.0;

/// The prior as a variance: var = ln(1 + (kPriorCoeffVarPct/100)²) (the ln
/// variance of a lognormal with that CoeffVar), df = 1e6 (taken as known:
/// its conservatism, not its sampling error, is what protects a verdict).
BetweenRunVariance prior_between_variance();

/// A history estimate needs at least this many degrees of freedom (5 runs in
/// one group, or e.g. 3 groups of 3): below it the estimate is too loose to
/// beat the prior.
inline constexpr double kHistoryMinDf = 4.0;

/// The between-run variance pooled over groups of alike runs (each group: one
/// span of samples per run, as run_components): every group with >= 2 runs
/// gives its ANOVA s_b² (RunComponents::between_var) with runs − 1 degrees of
/// freedom; they are pooled weighted by their degrees of freedom (the pooled
/// variance of Searle et al. 1992 §3.5 over independent groups). source =
/// history, runs = the runs of the groups used. std::nullopt when the pooled
/// df < kHistoryMinDf or a sample is not > 0 and finite.
std::optional<BetweenRunVariance> history_between_variance(
    std::span<const std::vector<std::vector<double>>> groups);

/// The words every layout uses for a source: "this testbox's calibration",
/// "this cell's history (12 runs)", "the conservative prior (CoeffVar 10%)".
std::string between_source_text(const BetweenRunVariance& between);

/// "calibration", "history", "prior" (the JSON spelling).
std::string_view to_string(BetweenSource s);

/// The variance components of one side's runs of one metric, on ln x. Runs
/// with no samples are ignored.
struct RunComponents {
  std::size_t runs = 0;     ///< runs with at least one sample
  std::size_t samples = 0;  ///< samples over all runs
  /// The side's estimate of E[ln x]: the mean of the runs' mean ln x (each run
  /// weighs the same, as each run is one draw of b_i).
  double mean = 0;
  /// Pooled within-run variance Σ_i Σ_j (y_ij − ȳ_i)² / Σ_i (n_i − 1); NaN
  /// when no run has 2 samples.
  double within_var = 0;
  double within_df = 0;  ///< Σ_i (n_i − 1)
  /// Sample variance of the runs' mean ln x (runs − 1 degrees of freedom);
  /// NaN with one run.
  double run_mean_var = 0;
  /// Harmonic mean of the runs' sizes: ñ = runs / Σ 1/n_i.
  double harmonic_n = 0;
  /// ANOVA (method of moments) estimate of s_b²: max(0, run_mean_var −
  /// within_var/ñ) (Searle et al. 1992 §3.5, eq. 3.5.2; ñ in place of n for
  /// unbalanced runs, their §3.6 approximation). NaN with one run.
  double between_var = 0;
};

/// The components of `runs` (one span of samples per run, any order). The
/// samples must be > 0 and finite (the model is on ln x): std::nullopt
/// otherwise, or when there is no sample.
std::optional<RunComponents> run_components(std::span<const std::vector<double>> runs);

/// CoeffVar (percent) of a lognormal variable whose ln has variance `log_var`:
/// 100·sqrt(exp(log_var) − 1) (≈ 100·sqrt(log_var) for small values). NaN for
/// NaN or a negative variance.
double log_variance_coeff_var(double log_var);

/// A test of ln(now) − ln(base) with its standard error and degrees of freedom.
struct LogDiffTest {
  RunBasis basis = RunBasis::iterations;
  double diff = 0;  ///< estimate of E[ln now] − E[ln base] (ln of the ratio)
  double se = 0;    ///< its standard error
  double df = 0;    ///< degrees of freedom of the t reference distribution
  double t = 0;     ///< diff/se (±inf when se == 0 and diff != 0, 0 when both are 0)
  double p = 1;     ///< two-sided p from Student's t with df
};

/// Welch's test on the runs' mean ln x (Welch 1947, Satterthwaite 1946 with
/// the runs as the units): diff = mean_now − mean_base,
/// se² = v_b + v_n with v = run_mean_var/runs, df by Welch–Satterthwaite over
/// runs − 1 each. Needs >= 2 runs on both sides (std::nullopt otherwise).
/// Zero variance on both sides: df = runs_b + runs_n − 2, p = 1 for equal
/// means and 0 otherwise (as welch_test).
std::optional<LogDiffTest> runs_welch_test(const RunComponents& base, const RunComponents& now);

/// The test with a calibrated between-run variance s_b² (df_b):
///   Var(diff) = s_b²·(1/R_b + 1/R_n) + s_w,b²/(R_b ñ_b) + s_w,n²/(R_n ñ_n)
/// (one run per side: 2 s_b² + s_w,b²/n_b + s_w,n²/n_n), with the
/// Satterthwaite (1946) degrees of freedom of the sum of the three estimated
/// terms, each with its own df (s_b²: the calibration's; s_w²: Σ(n_i − 1) of
/// its side). std::nullopt when a side has no within-run variance (every run
/// has one sample) or the calibration is invalid (var < 0, df <= 0).
std::optional<LogDiffTest> calibrated_test(const RunComponents& base, const RunComponents& now,
                                           const BetweenRunVariance& between);

/// exp(diff ± t_{1−a/2, df}·se): the (1 − a) confidence interval of the ratio
/// now/base of a LogDiffTest (0 < a < 1; throws std::invalid_argument
/// otherwise). With se == 0 both ends are exp(diff).
std::pair<double, double> ratio_interval(const LogDiffTest& test, double a);

/// Runs per side needed so that a change of `delta_pct` is detected with
/// probability `power` by a two-sided test at `alpha` when each run's mean
/// has variance `run_var` (= s_b² + s_w²/n, on ln x): the smallest R >= 2 with
///   (t_{1−α/2,ν} + t_{power,ν})·sqrt(2·run_var/R) <= ln(1 + δ/100), ν = 2R − 2
/// (the power formula of smallest_detectable_change with runs as the units).
/// std::nullopt for delta_pct <= 0 or a value that is not finite; capped at
/// 10000. Throws std::invalid_argument unless 0 < alpha, power < 1.
std::optional<std::size_t> runs_needed(double delta_pct, double run_var, double alpha = 0.05,
                                       double power = 0.8);

}  // namespace nightjar::stats

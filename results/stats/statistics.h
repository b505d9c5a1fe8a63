// Statistics: summaries of one metric's samples, the comparison tests and the
// significance rule nightjar applies to a family of metrics (all rows of one
// comparison). A pure module: no I/O, no global state, deterministic (the
// bootstrap takes an explicit seed). The reasoning behind the default rule and
// the validation figures are in docs/statistics.md; the numbers it is judged
// against are in shared/reference/statistics.md.
//
// Conventions used throughout:
//  - "base" is the baseline run (the first run named), "now" the run compared
//    against it. Ratios are now/base.
//  - Percentages are plain numbers (5.0 means 5%), never fractions.
//  - Functions return std::nullopt (or NaN where documented) when the answer
//    is undefined for the data (too few samples, a sample <= 0 for Hmean, ...).
//    They throw std::invalid_argument only for invalid parameters (alpha
//    outside (0,1), a percentage outside its range): programming errors, not
//    data errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/metric.h"

namespace nightjar::stats {

// ---------------------------------------------------------------------------
// Summaries
// ---------------------------------------------------------------------------

/// Summary of one metric's samples, in the samples' own unit (CoeffVar in
/// percent). Definitions follow mmtests' bin/lib/MMTests/Stat.pm:
///  - min, max, amean = Σx/n, median (mean of the two middle values when n is
///    even; mmtests' calc_median mixes up the even/odd cases, not copied);
///  - stddev is the sample standard deviation, sqrt(Σ(x-amean)²/(n-1));
///  - coeff_var = 100·stddev/|amean| (percent), as mmtests' CoeffVar row;
///  - hmean = n/Σ(1/x), std::nullopt when any sample is <= 0 (Hmean is then
///    undefined: report that, never print a number);
///  - gmean = exp(Σ ln x / n), std::nullopt when any sample is <= 0.
/// n == 0: every double is NaN and both optionals are empty. n == 1: stddev and
/// coeff_var are NaN (a sample standard deviation needs two samples). amean == 0:
/// coeff_var is NaN. Non-finite samples propagate (the results are NaN/inf).
struct Summary {
  std::size_t n = 0;
  double min, max, amean, median, stddev /*sample, n-1*/, coeff_var /*percent = 100*stddev/amean*/;
  std::optional<double> hmean, gmean;
};

/// Summarises samples (any order, any length). See Summary for the formulas and
/// for what n = 0 and n = 1 give. O(n log n) (sorts a copy for the median).
Summary summarize(std::span<const double> samples);

/// The mean of the given kind: arithmetic Σx/n, harmonic n/Σ(1/x), geometric
/// exp(Σ ln x/n). std::nullopt when undefined: n == 0, or a harmonic/geometric
/// mean with a sample <= 0. Unit: the samples' unit.
std::optional<double> mean_of(std::span<const double> samples, MeanKind kind);

/// mmtests' BAmean-xx / BHmean-xx: the mean (of `kind`) of the best `percent`%
/// of the samples. "Best" is direction aware: the largest samples for
/// higher_is_better, the smallest for lower_is_better.
///
/// Count rounding follows mmtests (bin/lib/MMTests/Summarise.pm, runStatFunc):
/// the samples are sorted best first and the first int(n·percent/100) are
/// taken, truncated toward zero, but at least 1. E.g. n = 5: BHmean-50 uses
/// int(2.5) = 2 samples, BHmean-95 int(4.75) = 4, BHmean-99 int(4.95) = 4;
/// n = 10: BHmean-95 uses 9, BHmean-99 uses 9.
///
/// std::nullopt when n == 0 or the mean of the selected samples is undefined
/// (harmonic/geometric with a selected sample <= 0). Throws
/// std::invalid_argument unless 0 < percent <= 100.
std::optional<double> best_mean(std::span<const double> samples, double percent, MeanKind kind,
                                Direction dir);

/// %change as mmtests prints it (Stat.pm pdiff/pndiff): positive = better.
///  higher_is_better: now·100/base − 100;  lower_is_better: 100 − now·100/base.
/// Returns 0 when now == base (also 0 vs 0), NaN when base == 0 otherwise or an
/// input is not finite (mmtests prints an arbitrary 100/-99 there; nightjar
/// reports "undefined"). Percent.
double percent_change(double base, double now, Direction dir);

// ---------------------------------------------------------------------------
// Distributions
// ---------------------------------------------------------------------------

/// Standard normal CDF Φ(z) = erfc(−z/√2)/2 (exact up to libm's erfc).
/// Φ(±inf) = 1/0; NaN propagates.
double normal_cdf(double z);

/// Standard normal quantile Φ⁻¹(p), p in (0,1): P. J. Acklam's rational
/// approximation ("An algorithm for computing the inverse normal cumulative
/// distribution function", 2003; relative error 1.15e-9) refined by one
/// Halley step on erfc, as Acklam recommends, giving full double precision.
/// p <= 0 -> -inf, p >= 1 -> +inf, NaN -> NaN.
double normal_quantile(double p);

/// Regularized incomplete beta function I_x(a, b), a > 0, b > 0, x in [0,1]:
/// continued fraction DLMF 8.17.22 evaluated with the modified Lentz method
/// (Numerical Recipes 3rd ed., §5.2 and §6.4 "betai/betacf"), using the
/// symmetry I_x(a,b) = 1 − I_{1−x}(b,a) when x > (a+1)/(a+b+2) so that the
/// fraction converges quickly. x <= 0 -> 0, x >= 1 -> 1; NaN for a <= 0 or
/// b <= 0 or NaN inputs.
double incomplete_beta(double a, double b, double x);

/// Student t CDF with df > 0 degrees of freedom (df need not be an integer,
/// as Welch's df is not): P(T <= t). Upper tail via
/// P(T > |t|) = I_{df/(df+t²)}(df/2, 1/2) / 2 (Abramowitz & Stegun 26.7.1 /
/// 26.5.27), so small tail probabilities keep their relative precision.
/// df > 1e7 uses the normal CDF. NaN for df <= 0 or NaN inputs.
double student_t_cdf(double t, double df);

/// Student t quantile: the t with student_t_cdf(t, df) = p. Safeguarded Newton
/// iteration (bisection fallback) on the upper tail above, to ~1e-13 relative.
/// p <= 0 -> -inf, p >= 1 -> +inf, NaN for df <= 0 or NaN inputs.
/// Check values: t_{0.975,10} = 2.228139, t_{0.975,1} = 12.70620.
double student_t_quantile(double p, double df);

// ---------------------------------------------------------------------------
// Standard errors and tests
// ---------------------------------------------------------------------------

/// Uncertainty of a harmonic mean by the delta method. With r = 1/x, H = 1/r̄
/// and dH/dr̄ = −H², so SD_H ≈ H²·s_r and SE(H) ≈ H²·s_r/√n, where s_r is the
/// sample standard deviation (n−1) of the reciprocals (Casella & Berger,
/// Statistical Inference, 2nd ed., Thm 5.5.24; mmtests' calc_stddev for
/// "hmean" uses the same expression with an n denominator). Units: those of
/// the samples.
struct HmeanError {
  double hmean = 0;      ///< n/Σ(1/x)
  double stddev = 0;     ///< H²·s_r: spread of one sample on the Hmean scale
  double std_error = 0;  ///< H²·s_r/√n: standard error of the Hmean itself
};

/// Hmean and its delta-method SD/SE (see HmeanError). std::nullopt when n < 2
/// or any sample is <= 0 or not finite.
std::optional<HmeanError> hmean_error(std::span<const double> samples);

/// The (1 − alpha) confidence interval of a summary mean, in the samples' unit.
struct MeanInterval {
  double mean = 0;  ///< mean_of(samples, kind)
  double lo = 0;    ///< lower bound (== mean when n < 2)
  double hi = 0;    ///< upper bound (== mean when n < 2)
};

/// The (1 − alpha) CI of mean_of(samples, kind), as estimate ± t·SE with
/// t = student_t_quantile(1 − alpha/2, n − 1) and the standard error
/// from the statistics module:
///  - arithmetic: SE = s/√n (summarize's sample SD);
///  - harmonic: SE of the Hmean by the delta method (hmean_error);
///  - geometric: on the log scale, exp(ln G ± t·s_ln/√n), s_ln the sample SD of
///    ln x (summarize of the logs): asymmetric around G.
/// n < 2: lo = hi = mean (no spread is known). std::nullopt when the mean is
/// undefined (n == 0, or harmonic/geometric with a sample <= 0). Throws
/// std::invalid_argument unless 0 < alpha < 1.
std::optional<MeanInterval> mean_confidence_interval(std::span<const double> samples, MeanKind kind,
                                                     double alpha);

/// Welch's unequal-variance two-sample t-test (Welch 1947; Satterthwaite
/// 1946), two-sided, and the (1−alpha) confidence interval of the difference
/// of means now − base. Matches R's t.test(now, base) (var.equal = FALSE)
/// except for the sign convention: here positive means now > base.
///  se = sqrt(s_b²/n_b + s_n²/n_n),  t = (mean_n − mean_b)/se,
///  df = (s_b²/n_b + s_n²/n_n)² / ((s_b²/n_b)²/(n_b−1) + (s_n²/n_n)²/(n_n−1)),
///  p = 2·P(T_df > |t|),  CI = diff ± t_{1−alpha/2,df}·se.
/// Zero variance on both sides (se == 0): df = n_b + n_n − 2; equal means give
/// t = 0, p = 1; different means give t = ±inf, p = 0 (a noiseless difference
/// is a real one; the minimum effect still gates the verdict); the CI is
/// [diff, diff]. Never NaN for finite input.
struct WelchResult {
  double t = 0;          ///< dimensionless; positive when now > base
  double df = 0;         ///< Welch–Satterthwaite degrees of freedom (not rounded)
  double p = 1;          ///< two-sided p-value
  double diff = 0;       ///< mean(now) − mean(base), in the samples' unit
  double std_error = 0;  ///< standard error of diff, same unit
  double diff_lo = 0;    ///< lower bound of the (1−alpha) CI of diff
  double diff_hi = 0;    ///< upper bound
};

/// Welch's test on raw values (see WelchResult). std::nullopt when a side has
/// fewer than 2 samples or a sample is not finite. Throws
/// std::invalid_argument unless 0 < alpha < 1.
std::optional<WelchResult> welch_test(std::span<const double> base, std::span<const double> now,
                                      double alpha = 0.05);

/// Welch's test on ln(x): the test nightjar uses. "Hmean of throughput changed
/// by r" is the same statement as "mean time per unit of work changed by 1/r"
/// (shared/reference/statistics.md "Which mean"); on the log scale the test is
/// symmetric in rate vs time and the CI back-transforms to a CI of the ratio of
/// geometric means gmean(now)/gmean(base).
struct LogWelchResult {
  WelchResult log;      ///< the test on ln x (diff = ln of the gmean ratio)
  double ratio = 1;     ///< gmean(now)/gmean(base) = exp(log.diff), dimensionless
  double ratio_lo = 1;  ///< exp(log.diff_lo): lower bound of the (1−alpha) CI
  double ratio_hi = 1;  ///< exp(log.diff_hi): upper bound
};

/// Welch's test on log values (see LogWelchResult). std::nullopt when a side
/// has fewer than 2 samples or any sample is <= 0 or not finite. Throws
/// std::invalid_argument unless 0 < alpha < 1.
std::optional<LogWelchResult> welch_log_test(std::span<const double> base,
                                             std::span<const double> now, double alpha = 0.05);

/// Mann–Whitney U (Wilcoxon rank-sum) test, two-sided, reproducing R's
/// wilcox.test(now, base) defaults:
///  - u = #{(i,j): now_i > base_j} + ½·#{ties}, equal to R's statistic W;
///  - exact null distribution when both sides have < 50 samples and there are
///    no ties (R's rule), counted by the recurrence
///    N(u; m, n) = N(u − n; m − 1, n) + N(u; m, n − 1) (Mann & Whitney 1947);
///    p = min(1, 2·min(P(U <= u), P(U >= u)));
///  - otherwise the normal approximation with tie correction and continuity
///    correction: z = (u − mn/2 − ½·sign(u − mn/2)) / σ,
///    σ² = mn/12 · ((N+1) − Σ(t³ − t)/(N(N−1))), p = 2·min(Φ(z), 1 − Φ(z));
///    when every value is tied (σ = 0), p = 1.
/// The smallest p the exact test can give is 2/C(m+n, m): with 3 per side it
/// is 0.1, so alpha 0.05 needs at least 4 per side.
struct MannWhitneyResult {
  double u = 0;        ///< U of `now` (pairs where now > base, ties count ½)
  double z = 0;        ///< normal score (0 for the exact test)
  double p = 1;        ///< two-sided p-value
  bool exact = false;  ///< true when p comes from the exact distribution
};

/// Mann–Whitney U test (see MannWhitneyResult). std::nullopt when a side is
/// empty or a sample is NaN.
std::optional<MannWhitneyResult> mann_whitney(std::span<const double> base,
                                              std::span<const double> now);

/// Smallest two-sided p-value the exact Mann–Whitney test can reach with n_base
/// and n_new samples: 2/C(n_base+n_new, n_base) (clamped to 1).
double mann_whitney_min_p(std::size_t n_base, std::size_t n_new);

/// Benjamini–Hochberg adjusted p-values ("q-values") for a family of p-values
/// (Benjamini & Hochberg 1995, step-up): with the m non-NaN p sorted ascending,
/// q_(i) = min_{j >= i} min(1, p_(j)·m/j), so q is monotone in p. Returned in
/// the input order. NaN entries are not part of the family (they do not count
/// in m) and get NaN. Throws std::invalid_argument for a p outside [0,1].
std::vector<double> benjamini_hochberg(std::span<const double> p);

/// Which hypotheses BH rejects at FDR level q_level: the largest i with
/// p_(i) <= i·q_level/m and every smaller p (equivalently: adjusted q <= q_level).
/// NaN entries are never rejected. Throws std::invalid_argument unless
/// 0 < q_level <= 1 or for a p outside [0,1].
std::vector<bool> bh_rejected(std::span<const double> p, double q_level);

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

/// BCa (bias-corrected and accelerated) bootstrap CI of the ratio of means
/// mean(now)/mean(base) (Efron 1987; Efron & Tibshirani, An Introduction to
/// the Bootstrap, 1993, ch. 14; Davison & Hinkley, Bootstrap Methods and their
/// Application, 1997, §3.2 and §5.3). Each side is resampled independently
/// with replacement; indices come from std::mt19937_64(seed) mapped by
/// Lemire's multiply-shift of the top 32 bits, so the result is identical on every platform for
/// a seed.
///  z0 = Φ⁻¹((#{θ* < θ̂} + ½·#{θ* = θ̂})/B);
///  acceleration from the two-sample jackknife influence values
///  l_ij = (n_i − 1)(θ̄_(i·) − θ_(ij)):  a = Σ_i Σ_j l_ij³/n_i³ / (6·(Σ_i Σ_j l_ij²/n_i²)^{3/2});
///  bounds = the Φ(z0 + (z0 + z_q)/(1 − a(z0 + z_q))) quantiles of θ*, for
///  z_q = ±z_{1−alpha/2} (linear interpolation between order statistics).
/// Zero spread (every θ* equal θ̂): lo = hi = θ̂.
struct BootstrapCI {
  double ratio = 1;           ///< θ̂ = mean(now)/mean(base) on the data, dimensionless
  double lo = 1;              ///< lower bound of the (1−alpha) BCa interval
  double hi = 1;              ///< upper bound
  double bias_z0 = 0;         ///< bias correction z0
  double acceleration = 0;    ///< jackknife acceleration a
  std::size_t resamples = 0;  ///< B
};

/// BCa bootstrap CI of mean_of(now, kind)/mean_of(base, kind) (see
/// BootstrapCI); use harmonic for rates. std::nullopt when a side has fewer
/// than 2 samples, a mean is undefined or a mean of base is 0. Throws
/// std::invalid_argument unless 0 < alpha < 1 and resamples >= 2000.
std::optional<BootstrapCI> bca_ratio_ci(std::span<const double> base, std::span<const double> now,
                                        MeanKind kind, std::uint64_t seed, double alpha = 0.05,
                                        std::size_t resamples = 2000);

// ---------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------

/// Smallest change (percent) a two-sided test at `alpha` detects with
/// probability `power`, for noise CoeffVar `cv_pct` (percent) and n samples per
/// side (shared/reference/statistics.md "Power"):
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

/// One row of a comparison family: the samples of one metric on both sides.
/// The spans must outlive the call.
struct RowInput {
  std::span<const double> base;  ///< baseline samples
  std::span<const double> now;   ///< samples of the run compared to the baseline
  Direction direction = Direction::higher_is_better;
  MeanKind mean = MeanKind::harmonic;  ///< the summary mean (%change is of these)
};

/// Options of the rule (`--test`, `--alpha`, `--min-effect`, `--power`).
struct SignificanceOptions {
  TestKind test = TestKind::welch;
  double alpha = 0.05;          ///< FDR level for BH (welch/utest), two-sided test level
  double min_effect_pct = 1.0;  ///< minimum |%change| that counts as a change, percent
  double power = 0.8;           ///< power for the smallest detectable change
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
  /// CoeffVar sqrt((cv_base² + cv_now²)/2), percent; +inf when a side has < 2
  /// samples, NaN when the CoeffVar is undefined or the row is undefined.
  double smallest_detectable_change_pct = 0;
  /// Iterations per side needed to detect max(|pct_change|, min_effect) at
  /// (alpha, power); set for inconclusive rows when the noise is known (>= 2
  /// samples per side), never below 3 (and for utest never below the U-test's
  /// minimum).
  std::optional<std::size_t> iterations_needed;
  std::string reason;  ///< one short line saying why, for reports and logs
};

/// nightjar's significance rule over one family (all rows of one comparison),
/// pure. Per row, in order:
///  1. undefined: a sample is not finite, the row's mean is undefined (Hmean or
///     Gmean with a sample <= 0), or the base mean is 0;
///  2. inconclusive: a side has < 3 samples;
///  3. welch (default): p from Welch's test on ln x (on raw x for an arithmetic
///     row with a sample <= 0); utest: p from Mann–Whitney U. q =
///     Benjamini–Hochberg over the rows tested in step 3. The row is
///     significant when q < alpha AND |pct_change| >= min_effect_pct;
///     mmtests / lkp: significant when their rule says so (no p, q, BH or
///     minimum effect, so the stars match those tools);
///  4. significant rows are improvement or regression by the sign of the
///     direction-aware pct_change;
///  5. welch/utest, not significant: inconclusive when the smallest detectable
///     change (from n and the pooled CoeffVar; for utest also infinite while the
///     U-test cannot reach alpha at these n) exceeds max(|pct_change|,
///     min_effect_pct), with iterations_needed to detect that; otherwise
///     unchanged. mmtests / lkp: unchanged.
/// The result has one entry per input row, in order. Throws
/// std::invalid_argument unless 0 < alpha < 1, 0 < power < 1 and
/// min_effect_pct >= 0.
std::vector<Significance> decide_significance(std::span<const RowInput> family,
                                              const SignificanceOptions& options = {});

// ---------------------------------------------------------------------------
// Change points (`nightjar trend`)
// ---------------------------------------------------------------------------

/// The E-divisive means statistic Q̂ for every split of `series` (Matteson &
/// James, "A Nonparametric Approach for Multiple Change Point Analysis of
/// Multivariate Data", JASA 109(505), 2014, eqs. 3–5, with κ fixed at the end
/// of the series as in MongoDB's signal-processing-algorithms and Apache
/// Otava): for the split into X = series[0, τ) and Y = series[τ, n), m = τ,
/// k = n − τ,
///   Ê = 2/(mk)·Σ_{i,j}|X_i − Y_j|^a − C(m,2)⁻¹·Σ_{i<j}|X_i − X_j|^a − C(k,2)⁻¹·Σ_{i<j}|Y_i −
///   Y_j|^a, Q̂(τ) = mk/(m + k)·Ê.
/// Result[τ] for τ in [min_segment, n − min_segment]; every other entry is NaN
/// (as is everything when n < 2·min_segment). O(n²). `exponent` is a in (0, 2)
/// (the paper's α, default 1). Throws std::invalid_argument for an exponent
/// outside (0, 2) or min_segment < 2.
std::vector<double> edivisive_qhat(std::span<const double> series, double exponent = 1.0,
                                   std::size_t min_segment = 2);

/// Parameters of change-point detection (docs/bisect.md "Change points" lists
/// them with their sources).
struct ChangePointOptions {
  /// A change point is kept when the test's two-sided p <= max_p. Otava's
  /// default (`--max-pvalue`, hunter/analysis.py compute_change_points) 0.001.
  double max_p = 0.001;
  /// Points per E-divisive window; consecutive windows overlap by half.
  /// Otava's default window_len 50. 0 = the whole series as one window.
  std::size_t window = 50;
  /// A change point is kept when |%change| >= this (percent). Otava's
  /// min_magnitude defaults to 0; nightjar uses the compare rule's 1%.
  double min_effect_pct = 1.0;
  /// The energy-distance exponent a in (0, 2): Matteson & James's default 1.
  double exponent = 1.0;
  /// Fewest points on each side of a change point. Welch needs 2; nightjar
  /// uses 5 because with 2 a flat 60-point history at CoeffVar 3% shows a
  /// false change point in 11% of seeded trials (tiny edge segments whose
  /// variance happens to be small), with 5 in about 3% (tests/unit/
  /// test_statistics.cpp, StatsSimulation.ChangePoints*). So a step is
  /// reported once 5 points sit at the new level.
  std::size_t min_segment = 5;
  /// How the before/after means and %change are computed (the metric's).
  MeanKind mean = MeanKind::arithmetic;
  Direction direction = Direction::higher_is_better;
};

/// One change point: the series steps between points index−1 and index.
struct ChangePoint {
  std::size_t index = 0;          ///< first point after the change
  std::size_t segment_begin = 0;  ///< the points before: [segment_begin, index)
  std::size_t segment_end = 0;    ///< the points after: [index, segment_end)
  double mean_before = 0;         ///< mean_of(options.mean) of the points before (NaN: undefined)
  double mean_after = 0;          ///< of the points after
  double pct_change = 0;          ///< direction-aware %change, positive = better
  double p = 1;                   ///< two-sided Welch p (on ln x when every point is > 0)
  double qhat = 0;                ///< Q̂(index) within [segment_begin, segment_end)
};

/// Change points of a series in order (Apache Otava / Hunter's method,
/// hunter/analysis.py): (1) split: E-divisive means on windows of
/// `window` points overlapping by half (each next window starts at the last
/// change point found or half a window on); inside a window the split with the
/// largest Q̂ over all current segments is tested with Welch's t-test between
/// its two neighbouring segments and kept while p <= first-pass p (10·max_p
/// when max_p < 0.05, as Otava), then the segments are split again; (2) merge:
/// repeatedly drop the weakest point — the largest p above max_p, else the
/// smallest |%change| below min_effect_pct — re-testing its neighbours
/// against their new segments, until every point has p <= max_p and
/// |%change| >= min_effect_pct. Differences from Otava: Welch on ln x
/// (nightjar's comparison test; raw values if a point is <= 0) instead of
/// Student's t, and no windows past the end of the series. Deterministic.
/// Empty when the series has fewer than 2·min_segment points. Throws
/// std::invalid_argument unless 0 < max_p < 1, min_effect_pct >= 0,
/// 0 < exponent < 2 and min_segment >= 2.
std::vector<ChangePoint> detect_change_points(std::span<const double> series,
                                              const ChangePointOptions& options = {});

}  // namespace nightjar::stats

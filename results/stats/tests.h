// Standard errors, confidence intervals and two-sample tests: the delta-method
// SE of a harmonic mean, the CI of a summary mean, Welch's t-test on raw and
// on log values, and the Mann–Whitney U test. Part of the statistics module
// (results/stats/, conventions in docs/statistics.md "Conventions").
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "results/model/metric.h"

namespace nightjar::stats {

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
/// (docs/reference.md "Which mean"); on the log scale the test is
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

/// welch_log_test(base, now, alpha) from base_logs = *log_samples(base) and
/// now_logs = *log_samples(now) (descriptive.h): the same result, without
/// taking the logs again. std::nullopt when a side has fewer than 2 values.
/// Throws std::invalid_argument unless 0 < alpha < 1.
std::optional<LogWelchResult> welch_log_test_of_logs(std::span<const double> base_logs,
                                                     std::span<const double> now_logs,
                                                     double alpha = 0.05);

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

}  // namespace nightjar::stats

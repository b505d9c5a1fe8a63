// Descriptive statistics of one metric's samples: the summary (mmtests'
// Min/Amean/Stddev/CoeffVar/Max rows, Hmean, Gmean), the mean of a kind, the
// best-xx means and %change. Part of the statistics module (results/stats/):
// pure, deterministic; the module's conventions (base/now, percentages,
// nullopt vs NaN vs exceptions) are in docs/statistics.md "Conventions".
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "results/model/metric.h"

namespace nightjar::stats {

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
/// for what n = 0 and n = 1 give. O(n log n) (sorts a copy for the median;
/// already ascending input is neither copied nor sorted).
Summary summarize(std::span<const double> samples);

/// The natural logarithm of every sample, in their order, for the log-scale
/// figures that take them precomputed (summarize below, welch_log_test_of_logs
/// in tests.h, prepare_side in significance.h): one comparison row needs
/// them several times (issue 19). std::nullopt when a sample is <= 0 or not
/// finite (then no log-scale figure is defined; the functions taking samples
/// say what they give).
std::optional<std::vector<double>> log_samples(std::span<const double> samples);

/// summarize(samples) with `logs` = *log_samples(samples): the geometric
/// mean from the given logs instead of taking them again, the same Summary bit
/// for bit (the same sums in the same order). Throws std::invalid_argument
/// when the sizes differ.
Summary summarize(std::span<const double> samples, std::span<const double> logs);

/// The mean of `kind` of the samples `s` summarises: the same value as
/// mean_of(samples, kind) (arithmetic: s.amean, std::nullopt when n == 0;
/// harmonic: s.hmean; geometric: s.gmean).
std::optional<double> summary_mean(const Summary& s, MeanKind kind);

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
/// std::invalid_argument unless 0 < percent <= 100. Already ascending input
/// is read in place (best first), not copied and sorted.
std::optional<double> best_mean(std::span<const double> samples, double percent, MeanKind kind,
                                Direction dir);

/// %change as mmtests prints it (Stat.pm pdiff/pndiff): positive = better.
///  higher_is_better: now·100/base − 100;  lower_is_better: 100 − now·100/base.
/// Returns 0 when now == base (also 0 vs 0), NaN when base == 0 otherwise or an
/// input is not finite (mmtests prints an arbitrary 100/-99 there; nightjar
/// reports "undefined"). Percent.
double percent_change(double base, double now, Direction dir);

/// A proportion k/n with its two-sided confidence interval, all as fractions
/// in [0, 1].
struct Proportion {
  double value = 0, low = 0, high = 1;
};

/// Wilson's score interval of k successes in n trials at `confidence`
/// (E. B. Wilson, "Probable inference, the law of succession, and
/// statistical inference", JASA 22 (1927) 209-212): centre (k + z²/2)/(n + z²),
/// half-width z·sqrt(k(n−k)/n + z²/4)/(n + z²), z the normal quantile of
/// (1 + confidence)/2. Unlike the normal approximation it stays inside
/// [0, 1] and is not empty at k = 0 (an A/A audit's usual count). n = 0
/// gives value NaN and [0, 1]. Throws std::invalid_argument for k > n or a
/// confidence outside (0, 1).
Proportion wilson_interval(std::size_t k, std::size_t n, double confidence = 0.95);

}  // namespace nightjar::stats

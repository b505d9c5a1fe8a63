// Descriptive statistics: see descriptive.h for the contract and the source of
// every formula.
#include "results/stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::kNaN;

namespace {

double median_of_sorted(std::span<const double> s) {
  const std::size_t n = s.size();
  if (n == 0) return kNaN;
  if (n % 2 == 1) return s[n / 2];
  const double mid = (s[n / 2 - 1] + s[n / 2]) / 2.0;
  // Two values near DBL_MAX overflow their sum; halves do not.
  return std::isinf(mid) && std::isfinite(s[n / 2 - 1]) && std::isfinite(s[n / 2])
             ? s[n / 2 - 1] / 2.0 + s[n / 2] / 2.0
             : mid;
}

// mean_of over [first, last) (n values), summed in that order: mean_of reads
// a span forward, best_mean a sorted span from either end.
template <class It>
std::optional<double> mean_of_range(It first, It last, std::size_t count, MeanKind kind) {
  if (count == 0) return std::nullopt;
  const double n = static_cast<double>(count);
  switch (kind) {
    case MeanKind::arithmetic: {
      double s = 0.0;
      for (It it = first; it != last; ++it) s += *it;
      return s / n;  // detail::amean's sum
    }
    case MeanKind::harmonic: {
      double s = 0.0;
      for (It it = first; it != last; ++it) {
        if (*it <= 0.0) return std::nullopt;
        s += 1.0 / *it;
      }
      return n / s;
    }
    case MeanKind::geometric: {
      double s = 0.0;
      for (It it = first; it != last; ++it) {
        if (*it <= 0.0) return std::nullopt;
        s += std::log(*it);
      }
      return std::exp(s / n);
    }
  }
  return std::nullopt;
}

// summarize, with the geometric mean from `logs` when given (non-null).
Summary summarize_with(std::span<const double> samples, const std::span<const double>* logs) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) {
    s.min = s.max = s.amean = s.median = s.stddev = s.coeff_var = kNaN;
    return s;
  }
  // Callers summarising many statistics of large samples sort once (compare):
  // already ascending input is used in place.
  std::vector<double> copy;
  std::span<const double> sorted = samples;
  if (!std::is_sorted(samples.begin(), samples.end())) {
    copy.assign(samples.begin(), samples.end());
    std::sort(copy.begin(), copy.end());
    sorted = copy;
  }
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  s.amean = detail::amean(samples);
  s.stddev = s.n >= 2 ? std::sqrt(detail::sample_variance(samples, s.amean)) : kNaN;
  s.coeff_var = (s.n >= 2 && s.amean != 0.0) ? 100.0 * s.stddev / std::fabs(s.amean) : kNaN;
  s.hmean = mean_of(samples, MeanKind::harmonic);
  if (logs) {
    double sum = 0.0;  // mean_of's geometric sum, of the logs taken before
    for (double l : *logs) sum += l;
    s.gmean = std::exp(sum / static_cast<double>(s.n));
  } else {
    s.gmean = mean_of(samples, MeanKind::geometric);
  }
  return s;
}

}  // namespace

Summary summarize(std::span<const double> samples) {
  return summarize_with(samples, nullptr);
}

std::optional<std::vector<double>> log_samples(std::span<const double> samples) {
  std::vector<double> logs;
  logs.reserve(samples.size());
  for (double x : samples) {
    if (!(x > 0.0) || !std::isfinite(x)) return std::nullopt;
    logs.push_back(std::log(x));
  }
  return logs;
}

Summary summarize(std::span<const double> samples, std::span<const double> logs) {
  if (logs.size() != samples.size())
    throw std::invalid_argument("summarize: the logs must be log_samples() of the samples");
  return summarize_with(samples, &logs);
}

std::optional<double> summary_mean(const Summary& s, MeanKind kind) {
  switch (kind) {
    case MeanKind::arithmetic:
      return s.n == 0 ? std::nullopt : std::optional(s.amean);
    case MeanKind::harmonic:
      return s.hmean;
    case MeanKind::geometric:
      return s.gmean;
  }
  return std::nullopt;
}

std::optional<double> mean_of(std::span<const double> samples, MeanKind kind) {
  return mean_of_range(samples.begin(), samples.end(), samples.size(), kind);
}

std::optional<double> best_mean(std::span<const double> samples, double percent, MeanKind kind,
                                Direction dir) {
  if (!(percent > 0.0 && percent <= 100.0))
    throw std::invalid_argument("best_mean: percent must be in (0, 100]");
  if (samples.empty()) return std::nullopt;
  // mmtests Summarise.pm runStatFunc: $count = int($nr_elements * $arg / 100), at least 1.
  auto count = static_cast<std::size_t>(static_cast<double>(samples.size()) * percent / 100.0);
  count = std::clamp<std::size_t>(count, 1, samples.size());
  const auto n = static_cast<std::ptrdiff_t>(count);
  if (std::is_sorted(samples.begin(), samples.end())) {  // ascending already (see summarize)
    if (dir == Direction::higher_is_better)              // the largest first: from the end
      return mean_of_range(samples.rbegin(), samples.rbegin() + n, count, kind);
    return mean_of_range(samples.begin(), samples.begin() + n, count, kind);
  }
  std::vector<double> s(samples.begin(), samples.end());
  if (dir == Direction::higher_is_better)
    std::sort(s.begin(), s.end(), std::greater<>());
  else
    std::sort(s.begin(), s.end());
  return mean_of_range(s.begin(), s.begin() + n, count, kind);
}

double percent_change(double base, double now, Direction dir) {
  if (!std::isfinite(base) || !std::isfinite(now)) return kNaN;
  if (now == base) return 0.0;
  if (base == 0.0) return kNaN;
  // Same order of operations as mmtests' pdiff / pndiff.
  return dir == Direction::higher_is_better ? now * 100.0 / base - 100.0
                                            : 100.0 - now * 100.0 / base;
}

Proportion wilson_interval(std::size_t k, std::size_t n, double confidence) {
  if (k > n) throw std::invalid_argument("wilson_interval: more successes than trials");
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument("wilson_interval: confidence must be in (0, 1)");
  if (n == 0) return {kNaN, 0.0, 1.0};
  const double z = normal_quantile((1.0 + confidence) / 2.0);
  const double nn = static_cast<double>(n), kk = static_cast<double>(k), z2 = z * z;
  const double centre = (kk + z2 / 2.0) / (nn + z2);
  const double half = z * std::sqrt(kk * (nn - kk) / nn + z2 / 4.0) / (nn + z2);
  return {kk / nn, std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace nightjar::stats

// Descriptive statistics: see descriptive.h for the contract and the source of
// every formula.
#include "results/stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "results/stats/detail.h"

namespace nightjar::stats {

using detail::kNaN;

namespace {

double median_of_sorted(const std::vector<double>& s) {
  const std::size_t n = s.size();
  if (n == 0) return kNaN;
  if (n % 2 == 1) return s[n / 2];
  return (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

}  // namespace

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) {
    s.min = s.max = s.amean = s.median = s.stddev = s.coeff_var = kNaN;
    return s;
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  // Callers summarising many statistics of large samples sort once (compare):
  // already ascending input skips the O(n log n) sort.
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  s.amean = detail::amean(samples);
  s.stddev = s.n >= 2 ? std::sqrt(detail::sample_variance(samples, s.amean)) : kNaN;
  s.coeff_var = (s.n >= 2 && s.amean != 0.0) ? 100.0 * s.stddev / std::fabs(s.amean) : kNaN;
  s.hmean = mean_of(samples, MeanKind::harmonic);
  s.gmean = mean_of(samples, MeanKind::geometric);
  return s;
}

std::optional<double> mean_of(std::span<const double> samples, MeanKind kind) {
  if (samples.empty()) return std::nullopt;
  const double n = static_cast<double>(samples.size());
  switch (kind) {
    case MeanKind::arithmetic:
      return detail::amean(samples);
    case MeanKind::harmonic: {
      double s = 0.0;
      for (double x : samples) {
        if (x <= 0.0) return std::nullopt;
        s += 1.0 / x;
      }
      return n / s;
    }
    case MeanKind::geometric: {
      double s = 0.0;
      for (double x : samples) {
        if (x <= 0.0) return std::nullopt;
        s += std::log(x);
      }
      return std::exp(s / n);
    }
  }
  return std::nullopt;
}

std::optional<double> best_mean(std::span<const double> samples, double percent, MeanKind kind,
                                Direction dir) {
  if (!(percent > 0.0 && percent <= 100.0))
    throw std::invalid_argument("best_mean: percent must be in (0, 100]");
  if (samples.empty()) return std::nullopt;
  std::vector<double> s(samples.begin(), samples.end());
  if (std::is_sorted(s.begin(), s.end())) {  // ascending already (see summarize): no sort
    if (dir == Direction::higher_is_better) std::reverse(s.begin(), s.end());
  } else if (dir == Direction::higher_is_better) {
    std::sort(s.begin(), s.end(), std::greater<>());
  } else {
    std::sort(s.begin(), s.end());
  }
  // mmtests Summarise.pm runStatFunc: $count = int($nr_elements * $arg / 100), at least 1.
  auto count = static_cast<std::size_t>(static_cast<double>(s.size()) * percent / 100.0);
  count = std::clamp<std::size_t>(count, 1, s.size());
  return mean_of(std::span<const double>(s.data(), count), kind);
}

double percent_change(double base, double now, Direction dir) {
  if (!std::isfinite(base) || !std::isfinite(now)) return kNaN;
  if (now == base) return 0.0;
  if (base == 0.0) return kNaN;
  // Same order of operations as mmtests' pdiff / pndiff.
  return dir == Direction::higher_is_better ? now * 100.0 / base - 100.0
                                            : 100.0 - now * 100.0 / base;
}

}  // namespace nightjar::stats

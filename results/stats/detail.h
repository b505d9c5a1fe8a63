// Helpers shared by the sources of the statistics module (results/stats/):
// input checks and the two moments every test needs. Internal: code outside
// results/stats includes the concept headers (descriptive.h, tests.h, ...),
// never this one.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

namespace nightjar::stats::detail {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Throws std::invalid_argument("WHAT must be in (0, 1)") unless 0 < v < 1.
inline void require_unit_interval(double v, const char* what) {
  if (!(v > 0.0 && v < 1.0)) throw std::invalid_argument(std::string(what) + " must be in (0, 1)");
}

/// True when every value is finite (no NaN, no ±inf); true for an empty span.
inline bool all_finite(std::span<const double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return std::isfinite(x); });
}

/// True when every value is > 0 (NaN is not); true for an empty span.
inline bool all_positive(std::span<const double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return x > 0.0; });
}

/// Arithmetic mean Σx/n; NaN for an empty span.
inline double amean(std::span<const double> xs) {
  const double n = static_cast<double>(xs.size());
  double s = 0.0;
  for (double x : xs) s += x;
  if (!std::isinf(s) || std::any_of(xs.begin(), xs.end(), [](double x) { return std::isinf(x); }))
    return s / n;
  // The sum of finite samples overflowed (values near DBL_MAX): the mean of
  // the scaled samples is finite.
  double m = 0.0;
  for (double x : xs) m += x / n;
  return m;
}

/// Sample variance Σ(x − mean)²/(n − 1) by the corrected two-pass algorithm
/// (Chan, Golub & LeVeque, "Algorithms for computing the sample variance",
/// The American Statistician 37(3), 1983). NaN when n < 2. Exactly 0 when
/// every sample is equal, so a constant series never produces a spurious tiny
/// variance from rounding.
inline double sample_variance(std::span<const double> xs, double mean) {
  if (xs.size() < 2) return kNaN;
  auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (*lo == *hi) return 0.0;
  double ss = 0.0, comp = 0.0;
  for (double x : xs) {
    const double d = x - mean;
    ss += d * d;
    comp += d;
  }
  const double n = static_cast<double>(xs.size());
  return (ss - comp * comp / n) / (n - 1.0);
}

}  // namespace nightjar::stats::detail

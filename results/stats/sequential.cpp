// Group-sequential boundaries: see sequential.h for the contract and sources.
#include "results/stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::kInf;
using detail::require_unit_interval;

std::string_view to_string(Spending s) {
  return s == Spending::pocock ? "pocock" : "obrien-fleming";
}

Spending spending_from_string(std::string_view s) {
  if (s == "pocock") return Spending::pocock;
  if (s == "obrien-fleming") return Spending::obrien_fleming;
  throw std::invalid_argument("unknown spending function '" + std::string(s) +
                              "' (expected pocock or obrien-fleming)");
}

double spent_alpha(Spending s, double alpha, double t) {
  require_unit_interval(alpha, "alpha");
  t = std::clamp(t, 0.0, 1.0);
  if (t == 0.0) return 0.0;
  if (s == Spending::pocock) return alpha * std::log1p((std::exp(1.0) - 1.0) * t);
  return std::min(alpha, 2.0 - 2.0 * normal_cdf(normal_quantile(1.0 - alpha / 2.0) / std::sqrt(t)));
}

namespace {

constexpr double kRange = 8.0;  // grid half-width, standard deviations of B(t)

double phi(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
}

// The sub-density of B(t_k) on the continuation region, on a uniform grid
// x_i = lo + i·h (i < n), last point at the boundary (or at +range).
struct Density {
  double lo = 0, h = 0;
  std::vector<double> f;
  double x(std::size_t i) const { return lo + h * static_cast<double>(i); }
  // Trapezoid weight of point i.
  double w(std::size_t i) const { return (i == 0 || i + 1 == f.size()) ? 0.5 * h : h; }
};

void check_fractions(std::span<const double> t) {
  double prev = 0.0;
  for (double v : t) {
    if (!(v > prev) || v > 1.0)
      throw std::invalid_argument("information fractions must increase strictly within (0, 1]");
    prev = v;
  }
}

// Grid step for look k: fine against both the spread of B(t_k) and the
// kernel of the next step.
double step_for(std::span<const double> t, std::size_t k) {
  double d = k == 0 ? t[0] : t[k] - t[k - 1];
  if (k + 1 < t.size()) d = std::min(d, t[k + 1] - t[k]);
  return 0.02 * std::sqrt(std::min(d, t[k]));
}

// P(B(t_k) >= b, not stopped before) given the density at look k−1 (or the
// start, when `prev` is null) and the variance `delta` of the increment.
double crossing(const Density* prev, double delta, double b) {
  if (!std::isfinite(b)) return 0.0;
  const double sd = std::sqrt(delta);
  if (!prev) return 1.0 - normal_cdf(b / sd);
  double p = 0.0;
  for (std::size_t i = 0; i < prev->f.size(); ++i)
    p += prev->w(i) * prev->f[i] * (1.0 - normal_cdf((b - prev->x(i)) / sd));
  return p;
}

// The density at look k below boundary b (B scale), from look k−1's.
Density propagate(const Density* prev, double delta, double tk, double b, double h) {
  Density d;
  const double hi = std::isfinite(b) ? std::min(b, kRange * std::sqrt(tk)) : kRange * std::sqrt(tk);
  d.lo = -kRange * std::sqrt(tk);
  if (hi <= d.lo) return d;  // nothing continues
  const auto n = static_cast<std::size_t>(std::ceil((hi - d.lo) / h)) + 1;
  d.h = (hi - d.lo) / static_cast<double>(n - 1);
  d.f.assign(n, 0.0);
  const double sd = std::sqrt(delta);
  for (std::size_t j = 0; j < n; ++j) {
    const double y = d.x(j);
    if (!prev) {
      d.f[j] = phi(y / sd) / sd;
      continue;
    }
    // Only the points within kRange kernel widths contribute.
    const double from = (y - kRange * sd - prev->lo) / prev->h;
    const double to = (y + kRange * sd - prev->lo) / prev->h;
    const std::size_t i0 = from <= 0 ? 0 : static_cast<std::size_t>(from);
    const std::size_t i1 = std::min(prev->f.size(), to <= 0 ? 0 : static_cast<std::size_t>(to) + 2);
    double s = 0.0;
    for (std::size_t i = i0; i < i1; ++i) s += prev->w(i) * prev->f[i] * phi((y - prev->x(i)) / sd);
    d.f[j] = s / sd;
  }
  return d;
}

}  // namespace

std::vector<double> one_sided_boundaries(std::span<const double> t, double alpha, Spending s) {
  require_unit_interval(alpha, "alpha");
  check_fractions(t);
  std::vector<double> c(t.size(), kInf);
  Density density;
  bool have = false;
  double spent = 0.0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const double delta = k == 0 ? t[0] : t[k] - t[k - 1];
    const double target = spent_alpha(s, alpha, t[k]) - spent;
    const double root = std::sqrt(t[k]);
    const Density* prev = have ? &density : nullptr;
    if (target > 1e-12) {
      // crossing() falls as the boundary rises: bisect on the z scale.
      double lo = -8.0, hi = 40.0;
      for (int it = 0; it < 80; ++it) {
        const double mid = 0.5 * (lo + hi);
        (crossing(prev, delta, mid * root) > target ? lo : hi) = mid;
      }
      c[k] = 0.5 * (lo + hi);
      spent += crossing(prev, delta, c[k] * root);
    }
    density = propagate(prev, delta, t[k], c[k] * root, step_for(t, k));
    have = true;
  }
  return c;
}

double crossing_probability(std::span<const double> t, std::span<const double> boundaries) {
  check_fractions(t);
  if (boundaries.size() != t.size())
    throw std::invalid_argument("crossing_probability: one boundary per look");
  Density density;
  bool have = false;
  double p = 0.0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const double delta = k == 0 ? t[0] : t[k] - t[k - 1];
    const double b = boundaries[k] * std::sqrt(t[k]);
    const Density* prev = have ? &density : nullptr;
    p += crossing(prev, delta, b);
    density = propagate(prev, delta, t[k], b, step_for(t, k));
    have = true;
  }
  return p;
}

}  // namespace nightjar::stats

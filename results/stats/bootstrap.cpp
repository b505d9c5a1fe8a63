// BCa bootstrap: see bootstrap.h for the contract and the sources.
#include "results/stats/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "results/stats/descriptive.h"
#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::kNaN;

namespace {

// Lemire's multiply-shift: a uniform index in [0, n) from the top 32 random
// bits (n < 2^32; the bias, at most n/2^32, is far below Monte Carlo error).
// Unlike std::uniform_int_distribution it is the same in every standard library.
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t hi = rng() >> 32;
  return static_cast<std::size_t>((hi * static_cast<std::uint64_t>(n)) >> 32);
}

// Quantile of sorted values at probability p, linear interpolation between
// order statistics (R's type 7).
double sorted_quantile(const std::vector<double>& s, double p) {
  if (s.empty()) return kNaN;
  if (!(p > 0.0)) return s.front();
  if (p >= 1.0) return s.back();
  const double h = p * static_cast<double>(s.size() - 1);
  const std::size_t i = static_cast<std::size_t>(std::floor(h));
  if (i + 1 >= s.size()) return s.back();
  return s[i] + (h - static_cast<double>(i)) * (s[i + 1] - s[i]);
}

// The replicates θ* = mean(now*)/mean(base*) of `resamples` independent
// resamples of each side, sorted, the non-finite ones dropped.
std::vector<double> bootstrap_ratios(std::span<const double> base, std::span<const double> now,
                                     MeanKind kind, std::uint64_t seed, std::size_t resamples) {
  std::mt19937_64 rng(seed);
  std::vector<double> thetas;
  thetas.reserve(resamples);
  std::vector<double> rb(base.size()), rn(now.size());
  for (std::size_t b = 0; b < resamples; ++b) {
    for (auto& v : rb) v = base[uniform_index(rng, base.size())];
    for (auto& v : rn) v = now[uniform_index(rng, now.size())];
    // Resamples of valid data keep the mean defined (same support); a base
    // mean of exactly 0 can still occur for arithmetic means of mixed signs.
    const double num = *mean_of(rn, kind), den = *mean_of(rb, kind);
    thetas.push_back(den == 0.0 ? kNaN : num / den);
  }
  std::erase_if(thetas, [](double t) { return !std::isfinite(t); });
  std::sort(thetas.begin(), thetas.end());
  return thetas;
}

// z0 = Φ⁻¹((#{θ* < θ̂} + ½·#{θ* = θ̂})/B), the fraction clamped to
// [1/(2B), 1 − 1/(2B)] so that z0 stays finite.
double bias_correction(const std::vector<double>& thetas, double ratio) {
  const auto lower = std::lower_bound(thetas.begin(), thetas.end(), ratio);
  const auto below = static_cast<double>(lower - thetas.begin());
  const auto equal =
      static_cast<double>(std::upper_bound(thetas.begin(), thetas.end(), ratio) - lower);
  const double b = static_cast<double>(thetas.size());
  const double frac = (below + 0.5 * equal) / b;
  return normal_quantile(std::clamp(frac, 0.5 / b, 1.0 - 0.5 / b));
}

// Σ l³/n³ and Σ l²/n² over the jackknife influence values of both sides.
struct JackknifeSums {
  double cubes = 0.0, squares = 0.0;
};

// Adds one side's influence values l_j = (n − 1)(θ̄_(·) − θ_(j)), θ_(j) the
// ratio with sample j of this side left out (mb, mn: the full means).
void add_jackknife_side(JackknifeSums& sums, std::span<const double> side, bool is_base,
                        MeanKind kind, double mb, double mn) {
  const std::size_t n = side.size();
  std::vector<double> loo(n);
  std::vector<double> rest;
  rest.reserve(n - 1);
  for (std::size_t i = 0; i < n; ++i) {
    rest.clear();
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) rest.push_back(side[j]);
    const double m = *mean_of(rest, kind);
    loo[i] = is_base ? (m == 0.0 ? kNaN : mn / m) : m / mb;
  }
  const double bar = detail::amean(loo);
  const double dn = static_cast<double>(n);
  for (double v : loo) {
    const double l = (dn - 1.0) * (bar - v);
    sums.cubes += l * l * l / (dn * dn * dn);
    sums.squares += l * l / (dn * dn);
  }
}

// a = Σ l³/n³ / (6·(Σ l²/n²)^{3/2}) over both sides; 0 when undefined.
double jackknife_acceleration(std::span<const double> base, std::span<const double> now,
                              MeanKind kind, double mb, double mn) {
  JackknifeSums sums;
  add_jackknife_side(sums, base, true, kind, mb, mn);
  add_jackknife_side(sums, now, false, kind, mb, mn);
  return (sums.squares > 0.0 && std::isfinite(sums.cubes))
             ? sums.cubes / (6.0 * std::pow(sums.squares, 1.5))
             : 0.0;
}

// The BCa probability level Φ(z0 + (z0 + zq)/(1 − a(z0 + zq))) of the bound
// for the normal quantile zq.
double bca_level(double z0, double a, double zq) {
  const double w = z0 + zq;
  const double denom = 1.0 - a * w;
  if (!(denom > 0.0)) return zq < 0.0 ? 0.0 : 1.0;  // extreme acceleration: interval end
  return normal_cdf(z0 + w / denom);
}

}  // namespace

std::optional<BootstrapCI> bca_ratio_ci(std::span<const double> base, std::span<const double> now,
                                        MeanKind kind, std::uint64_t seed, double alpha,
                                        std::size_t resamples) {
  detail::require_unit_interval(alpha, "alpha");
  if (resamples < 2000) throw std::invalid_argument("bca_ratio_ci: need >= 2000 resamples");
  if (base.size() < 2 || now.size() < 2 || !detail::all_finite(base) || !detail::all_finite(now))
    return std::nullopt;
  const auto mb = mean_of(base, kind), mn = mean_of(now, kind);
  if (!mb || !mn || *mb == 0.0) return std::nullopt;

  BootstrapCI ci;
  ci.resamples = resamples;
  ci.ratio = *mn / *mb;
  const std::vector<double> thetas = bootstrap_ratios(base, now, kind, seed, resamples);
  if (thetas.empty()) return std::nullopt;
  if (thetas.front() == thetas.back()) {
    ci.lo = ci.hi = ci.ratio;
    return ci;
  }
  ci.bias_z0 = bias_correction(thetas, ci.ratio);
  ci.acceleration = jackknife_acceleration(base, now, kind, *mb, *mn);
  const double z = normal_quantile(1.0 - alpha / 2.0);
  ci.lo = sorted_quantile(thetas, bca_level(ci.bias_z0, ci.acceleration, -z));
  ci.hi = sorted_quantile(thetas, bca_level(ci.bias_z0, ci.acceleration, z));
  return ci;
}

}  // namespace nightjar::stats

// The BCa bootstrap confidence interval of a ratio of means. Part of the
// statistics module (results/stats/, conventions in docs/statistics.md
// "Conventions").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "results/model/metric.h"

namespace nightjar::stats {

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

}  // namespace nightjar::stats

// The equivalence test: see equivalence.h for the contract and sources.
#include "results/stats/equivalence.h"

#include <cmath>

#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::require_unit_interval;

EquivalenceBounds equivalence_bounds(double margin_pct) {
  const double hi = 1.0 + margin_pct / 100.0;
  return {1.0 / hi, hi};
}

bool inside_margin(double ratio_lo, double ratio_hi, double margin_pct) {
  if (ratio_lo == 1.0 && ratio_hi == 1.0) return true;
  if (!(margin_pct > 0.0) || std::isnan(ratio_lo) || std::isnan(ratio_hi)) return false;
  const EquivalenceBounds b = equivalence_bounds(margin_pct);
  return ratio_lo > b.lo && ratio_hi < b.hi;
}

std::optional<std::size_t> equivalence_iterations_needed(double margin_pct, double true_change_pct,
                                                         double cv_pct, double alpha,
                                                         double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (!std::isfinite(margin_pct) || !std::isfinite(true_change_pct) || !std::isfinite(cv_pct))
    return std::nullopt;
  const double room = margin_pct - std::fabs(true_change_pct);
  if (!(room > 0.0)) return std::nullopt;
  if (cv_pct == 0.0) return 2;
  const double q = true_change_pct == 0.0 ? (1.0 + power) / 2.0 : power;
  const double c = std::fabs(cv_pct);
  const double z = normal_quantile(1.0 - alpha) + normal_quantile(q);
  const double n_normal = 2.0 * z * z * c * c / (room * room);
  if (n_normal > 1e6) return static_cast<std::size_t>(1e6);
  auto n = std::max<std::size_t>(2, static_cast<std::size_t>(std::floor(n_normal)));
  auto fits = [&](std::size_t k) {
    const double nu = 2.0 * static_cast<double>(k) - 2.0;
    const double mult = student_t_quantile(1.0 - alpha, nu) + student_t_quantile(q, nu);
    return mult * c * std::sqrt(2.0 / static_cast<double>(k)) <= room;
  };
  while (!fits(n)) ++n;
  return n;
}

}  // namespace nightjar::stats

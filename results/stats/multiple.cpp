// Benjamini–Hochberg: see multiple.h for the contract and the source.
#include "results/stats/multiple.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "results/stats/detail.h"

namespace nightjar::stats {

using detail::kNaN;

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::isnan(p[i])) continue;
    if (p[i] < 0.0 || p[i] > 1.0)
      throw std::invalid_argument("benjamini_hochberg: p-value outside [0, 1]");
    idx.push_back(i);
  }
  std::vector<double> q(p.size(), kNaN);
  const double m = static_cast<double>(idx.size());
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  double running = 1.0;
  for (std::size_t k = idx.size(); k-- > 0;) {
    const double rank = static_cast<double>(k + 1);
    running = std::min(running, p[idx[k]] * m / rank);
    q[idx[k]] = std::min(1.0, running);
  }
  return q;
}

std::vector<bool> bh_rejected(std::span<const double> p, double q_level) {
  if (!(q_level > 0.0 && q_level <= 1.0))
    throw std::invalid_argument("bh_rejected: level must be in (0, 1]");
  const auto q = benjamini_hochberg(p);
  std::vector<bool> out(p.size(), false);
  for (std::size_t i = 0; i < q.size(); ++i) out[i] = !std::isnan(q[i]) && q[i] <= q_level;
  return out;
}

}  // namespace nightjar::stats

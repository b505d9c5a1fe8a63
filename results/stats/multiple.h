// Benjamini–Hochberg control of the false discovery rate over a family of
// p-values. Part of the statistics module (results/stats/, conventions in
// docs/statistics.md "Conventions").
#pragma once

#include <span>
#include <vector>

namespace nightjar::stats {

/// Benjamini–Hochberg adjusted p-values ("q-values") for a family of p-values
/// (Benjamini & Hochberg 1995, step-up): with the m non-NaN p sorted ascending,
/// q_(i) = min_{j >= i} min(1, p_(j)·m/j), so q is monotone in p. Returned in
/// the input order. NaN entries are not part of the family (they do not count
/// in m) and get NaN. Throws std::invalid_argument for a p outside [0,1].
std::vector<double> benjamini_hochberg(std::span<const double> p);

/// Which hypotheses BH rejects at FDR level q_level: the largest i with
/// p_(i) <= i·q_level/m and every smaller p (equivalently: adjusted q <= q_level).
/// NaN entries are never rejected. Throws std::invalid_argument unless
/// 0 < q_level <= 1 or for a p outside [0,1].
std::vector<bool> bh_rejected(std::span<const double> p, double q_level);

}  // namespace nightjar::stats

// Group-sequential boundaries with an alpha-spending function: what keeps the
// error rates of `nightjar run --until-decided` when it looks at the data
// after every round (issue 14). Part of the statistics module
// (results/stats/, conventions in docs/statistics.md "Conventions"; the
// choice of design and the simulations behind it are in docs/statistics.md
// "Sequential sampling").
//
// At look k the information gathered is a fraction t_k of the planned
// maximum (0 < t_1 < ... <= 1). A spending function α(t) says how much of the
// error rate α may have been used up by t (Lan & DeMets, "Discrete sequential
// boundaries for clinical trials", Biometrika 70(3), 1983). The boundary c_k
// of look k is the z value with
//   P(Z_1 < c_1, ..., Z_{k−1} < c_{k−1}, Z_k >= c_k) = α(t_k) − α(t_{k−1})
// for the canonical joint distribution of the standardised statistics,
// Cov(Z_j, Z_k) = sqrt(t_j/t_k) (Jennison & Turnbull, "Group Sequential
// Methods with Applications to Clinical Trials", Chapman & Hall 2000, §3.1,
// §7.2), computed by the recursive numerical integration of Armitage,
// McPherson & Rowe (JRSS A 132(2), 1969; Jennison & Turnbull ch. 19).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace nightjar::stats {

/// The alpha-spending functions of Lan & DeMets (1983).
enum class Spending {
  /// Pocock-type: α(t) = α·ln(1 + (e − 1)·t). Spends early: a large change
  /// stops the sampling at one of the first looks.
  pocock,
  /// O'Brien–Fleming-type: α(t) = 2 − 2Φ(z_{1−α/2}/√t). Spends almost nothing
  /// early, nearly the fixed-sample level at the end.
  obrien_fleming,
};

/// "pocock", "obrien-fleming".
std::string_view to_string(Spending s);
/// Inverse of to_string(Spending); throws std::invalid_argument on anything else.
Spending spending_from_string(std::string_view s);

/// The error rate spent by information fraction t (clamped to [0, 1]) of a
/// one-sided level alpha: 0 at t = 0, alpha at t = 1, increasing. Throws
/// std::invalid_argument unless 0 < alpha < 1.
double spent_alpha(Spending s, double alpha, double t);

/// One-sided upper boundaries c_1..c_K (z scale) of a design with looks at
/// information fractions `t` (strictly increasing, in (0, 1]) spending
/// one-sided `alpha` by `s`. A look with nothing left to spend gets +inf.
/// Accuracy of the crossing probabilities: about 1e-5 absolute (trapezoid
/// rule, grid step 0.02 standard deviations, ±8 s.d.). Throws
/// std::invalid_argument unless 0 < alpha < 1 and t is strictly increasing
/// in (0, 1].
std::vector<double> one_sided_boundaries(std::span<const double> t, double alpha, Spending s);

/// The probability that a canonical process with those boundaries crosses
/// one of them: P(∃k: Z_k >= c_k) when the drift is 0 (what the boundaries
/// spend, for the tests). Same integration as one_sided_boundaries.
double crossing_probability(std::span<const double> t, std::span<const double> boundaries);

}  // namespace nightjar::stats

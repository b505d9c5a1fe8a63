// "Unchanged" as a decision: the equivalence test of a ratio against a
// minimum effect, and how many iterations it needs (issue 14). Part of the
// statistics module (results/stats/, conventions in docs/statistics.md
// "Conventions"; the rule is docs/statistics.md "Unchanged is a decision").
//
// Two one-sided tests (Schuirmann, "A comparison of the two one-sided tests
// procedure and the power approach for assessing the equivalence of average
// bioavailability", J. Pharmacokinetics and Biopharmaceutics 15(6), 1987):
// the ratio now/base is equivalent to 1 within a margin m at level a when
// both H0: ratio <= 1/(1+m) and H0: ratio >= 1+m are rejected at a, which is
// the same as the (1 − 2a) confidence interval of the ratio lying inside
// (1/(1+m), 1+m). The margin is symmetric on the log scale, so a rate and its
// inverse time decide alike.
#pragma once

#include <cstddef>
#include <optional>

namespace nightjar::stats {

/// The equivalence bounds of a margin of `margin_pct` percent on a ratio:
/// {1/(1 + m/100), 1 + m/100}.
struct EquivalenceBounds {
  double lo = 1, hi = 1;
};
EquivalenceBounds equivalence_bounds(double margin_pct);

/// True when the interval [ratio_lo, ratio_hi] lies strictly inside the
/// bounds of `margin_pct` (TOST's decision when the interval is the
/// (1 − 2a) CI). False for NaN input or margin_pct <= 0 unless the interval
/// is exactly [1, 1] (equal constants are equivalent at any margin).
bool inside_margin(double ratio_lo, double ratio_hi, double margin_pct);

/// Iterations per side for TOST at level `alpha` (each one-sided test) to
/// decide equivalence within ±margin_pct with probability `power` when the
/// true change is `true_change_pct` and the noise CoeffVar is cv_pct (both
/// percent): the smallest n >= 2 with
///   (t_{1−α,ν} + t_{q,ν})·c·sqrt(2/n) <= m − |δ|,  ν = 2n − 2,
/// q = power when δ != 0, (1 + power)/2 when δ = 0 (Chow, Shao & Wang,
/// "Sample Size Calculations in Clinical Research", 2nd ed., 2008, §3.2.3).
/// std::nullopt when |δ| >= m or an input is not finite; capped at 1e6.
/// cv_pct == 0 -> 2. Throws std::invalid_argument unless 0 < alpha, power < 1.
std::optional<std::size_t> equivalence_iterations_needed(double margin_pct, double true_change_pct,
                                                         double cv_pct, double alpha = 0.05,
                                                         double power = 0.8);

}  // namespace nightjar::stats

// Change-point detection for `nightjar trend` and plots: the E-divisive means
// statistic and Apache Otava's split/merge procedure around it. Part of the
// statistics module (results/stats/, conventions in docs/statistics.md
// "Conventions").
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "results/model/metric.h"

namespace nightjar::stats {

/// The E-divisive means statistic Q̂ for every split of `series` (Matteson &
/// James, "A Nonparametric Approach for Multiple Change Point Analysis of
/// Multivariate Data", JASA 109(505), 2014, eqs. 3–5, with κ fixed at the end
/// of the series as in MongoDB's signal-processing-algorithms and Apache
/// Otava): for the split into X = series[0, τ) and Y = series[τ, n), m = τ,
/// k = n − τ,
///   Ê = 2/(mk)·Σ_{i,j}|X_i − Y_j|^a − C(m,2)⁻¹·Σ_{i<j}|X_i − X_j|^a − C(k,2)⁻¹·Σ_{i<j}|Y_i −
///   Y_j|^a, Q̂(τ) = mk/(m + k)·Ê.
/// Result[τ] for τ in [min_segment, n − min_segment]; every other entry is NaN
/// (as is everything when n < 2·min_segment). O(n²). `exponent` is a in (0, 2)
/// (the paper's α, default 1). Throws std::invalid_argument for an exponent
/// outside (0, 2) or min_segment < 2.
std::vector<double> edivisive_qhat(std::span<const double> series, double exponent = 1.0,
                                   std::size_t min_segment = 2);

/// Parameters of change-point detection (docs/bisect.md "Change points" lists
/// them with their sources).
struct ChangePointOptions {
  /// A change point is kept when the test's two-sided p <= max_p. Otava's
  /// default (`--max-pvalue`, hunter/analysis.py compute_change_points) 0.001.
  double max_p = 0.001;
  /// Points per E-divisive window; consecutive windows overlap by half.
  /// Otava's default window_len 50. 0 = the whole series as one window.
  std::size_t window = 50;
  /// A change point is kept when |%change| >= this (percent). Otava's
  /// min_magnitude defaults to 0; nightjar uses the compare rule's 1%.
  double min_effect_pct = 1.0;
  /// The energy-distance exponent a in (0, 2): Matteson & James's default 1.
  double exponent = 1.0;
  /// Fewest points on each side of a change point. Welch needs 2; nightjar
  /// uses 5 because with 2 a flat 60-point history at CoeffVar 3% shows a
  /// false change point in 11% of seeded trials (tiny edge segments whose
  /// variance happens to be small), with 5 in about 3% (tests/unit/
  /// test_statistics.cpp, StatsSimulation.ChangePoints*). So a step is
  /// reported once 5 points sit at the new level.
  std::size_t min_segment = 5;
  /// How the before/after means and %change are computed (the metric's).
  MeanKind mean = MeanKind::arithmetic;
  Direction direction = Direction::higher_is_better;
};

/// One change point: the series steps between points index−1 and index.
struct ChangePoint {
  std::size_t index = 0;          ///< first point after the change
  std::size_t segment_begin = 0;  ///< the points before: [segment_begin, index)
  std::size_t segment_end = 0;    ///< the points after: [index, segment_end)
  double mean_before = 0;         ///< mean_of(options.mean) of the points before (NaN: undefined)
  double mean_after = 0;          ///< of the points after
  double pct_change = 0;          ///< direction-aware %change, positive = better
  double p = 1;                   ///< two-sided Welch p (on ln x when every point is > 0)
  double qhat = 0;                ///< Q̂(index) within [segment_begin, segment_end)
};

/// The verdict word of a change point: "improvement" (pct_change > 0, for
/// the better), "regression" (< 0) or "change" (pct_change not finite).
/// The one spelling of `nightjar trend`'s outputs and the published site.
const char* verdict_word(const ChangePoint& cp);

/// Change points of a series in order (Apache Otava / Hunter's method,
/// hunter/analysis.py): (1) split: E-divisive means on windows of
/// `window` points overlapping by half (each next window starts at the last
/// change point found or half a window on); inside a window the split with the
/// largest Q̂ over all current segments is tested with Welch's t-test between
/// its two neighbouring segments and kept while p <= first-pass p (10·max_p
/// when max_p < 0.05, as Otava), then the segments are split again; (2) merge:
/// repeatedly drop the weakest point — the largest p above max_p, else the
/// smallest |%change| below min_effect_pct — re-testing its neighbours
/// against their new segments, until every point has p <= max_p and
/// |%change| >= min_effect_pct. Differences from Otava: Welch on ln x
/// (nightjar's comparison test; raw values if a point is <= 0) instead of
/// Student's t, and no windows past the end of the series. Deterministic.
/// Empty when the series has fewer than 2·min_segment points. Throws
/// std::invalid_argument unless 0 < max_p < 1, min_effect_pct >= 0,
/// 0 < exponent < 2 and min_segment >= 2.
std::vector<ChangePoint> detect_change_points(std::span<const double> series,
                                              const ChangePointOptions& options = {});

/// A possible change in the newest points of a series, too few to be a
/// change point (docs/statistics.md "Possible change in the newest nights"):
/// the last k < min_segment points against the segment before them, which
/// starts at the last change point of `confirmed` (or at 0) and must hold at
/// least min_segment points. For each such k the test is the change-point
/// code's: Welch's t-test on ln x between the segment and the k newest points
/// (raw values when a point is <= 0); for k = 1, where Welch is undefined, the
/// same t statistic with the segment's variance standing in for the newest
/// point's (Student's prediction test, t = (y − x̄)/(s·√(1 + 1/m)), m − 1 df).
/// The p of each k is Bonferroni-adjusted over the K values tried (p·K); the
/// smallest adjusted p is kept when it is <= the first-pass level of
/// detect_change_points (10·max_p when max_p < 0.05, else 2·max_p) and the
/// k points' |%change| >= min_effect_pct. The result's index is n − k (the
/// first of the k points), segment [segment_begin, n), p the adjusted p,
/// qhat NaN. std::nullopt when nothing passes or the series is too short
/// (fewer than min_segment + 1 points after the last change point).
/// Deterministic. Throws as detect_change_points for bad options.
std::optional<ChangePoint> detect_recent_change(std::span<const double> series,
                                                std::span<const ChangePoint> confirmed,
                                                const ChangePointOptions& options = {});

/// Changes between short segments (fewer than min_segment points on a side),
/// which detect_change_points cannot see: a double step 100, 100, 130, 130,
/// then 150 for the rest (docs/statistics.md "Short segments"). Apache Otava
/// reports such short segments as weak change points. Method: (1) candidate
/// boundaries are E-divisive splits down to segments of 2 points with no test
/// (Welch on 2 points gates nothing), plus every `confirmed` index; (2) each
/// unconfirmed boundary is tested against its two neighbouring segments with
/// the residual variance pooled over the whole segmentation (each point's
/// deviation from its segment's mean, on ln x when every point is > 0;
/// df = n − segments), t = (ȳ_after − ȳ_before)/(s·√(1/a + 1/b)), two-sided,
/// Bonferroni over the boundaries tested; (3) merge as Otava: drop the
/// weakest (largest p above max_p, else smallest |%change| below
/// min_effect_pct) and re-test until all pass; (4) report the survivors with
/// a side shorter than min_segment that lie before the newest min_segment
/// points (those are detect_recent_change's). Results in index order, segment
/// bounds and means of the final segmentation, p the adjusted p, qhat NaN.
/// Empty when min_segment <= 2, or the series is shorter than 4 points or not
/// finite. Deterministic; O(n³) in the worst case per window of
/// options.window points. Throws as detect_change_points for bad options.
std::vector<ChangePoint> detect_short_changes(std::span<const double> series,
                                              std::span<const ChangePoint> confirmed,
                                              const ChangePointOptions& options = {});

}  // namespace nightjar::stats

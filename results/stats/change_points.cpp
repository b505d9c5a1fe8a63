// Change points: see change_points.h for the contract and the sources.
#include "results/stats/change_points.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "results/stats/descriptive.h"
#include "results/stats/detail.h"
#include "results/stats/distributions.h"
#include "results/stats/tests.h"

namespace nightjar::stats {

const char* verdict_word(const ChangePoint& cp) {
  if (!std::isfinite(cp.pct_change)) return "change";
  return cp.pct_change < 0 ? "regression" : "improvement";
}

using detail::all_finite;
using detail::all_positive;
using detail::amean;
using detail::kInf;
using detail::kNaN;
using detail::require_unit_interval;

std::vector<double> edivisive_qhat(std::span<const double> series, double exponent,
                                   std::size_t min_segment) {
  if (!(exponent > 0.0 && exponent < 2.0))
    throw std::invalid_argument("edivisive exponent must be in (0, 2)");
  if (min_segment < 2) throw std::invalid_argument("min_segment must be at least 2");
  const std::size_t n = series.size();
  std::vector<double> q(n + 1, kNaN);
  if (n < 2 * min_segment) return q;
  auto dist = [&](std::size_t i, std::size_t j) {
    const double d = std::abs(series[i] - series[j]);
    return exponent == 1.0 ? d : std::pow(d, exponent);
  };
  // Sums over pairs for the split at τ = min_segment, then moved one point at
  // a time: when point τ joins X, its distances to X move from "between" to
  // "within X" and its distances to the rest of Y from "within Y" to "between".
  double within_x = 0, within_y = 0, between = 0;
  const std::size_t t0 = min_segment;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double d = dist(i, j);
      if (j < t0)
        within_x += d;
      else if (i >= t0)
        within_y += d;
      else
        between += d;
    }
  for (std::size_t tau = t0;; ++tau) {
    const double m = static_cast<double>(tau), k = static_cast<double>(n - tau);
    const double e =
        2.0 * between / (m * k) - within_x / (m * (m - 1) / 2) - within_y / (k * (k - 1) / 2);
    q[tau] = m * k / (m + k) * e;
    if (tau + 1 > n - min_segment) break;
    // Move point tau from Y to X.
    double to_x = 0, to_y = 0;
    for (std::size_t i = 0; i < tau; ++i) to_x += dist(i, tau);
    for (std::size_t j = tau + 1; j < n; ++j) to_y += dist(tau, j);
    between += to_y - to_x;
    within_x += to_x;
    within_y -= to_y;
  }
  return q;
}

namespace {

// The figures of a candidate split [begin, index) | [index, end): bounds,
// means and %change, untested (p 1, qhat NaN).
ChangePoint split_figures(std::span<const double> s, std::size_t begin, std::size_t index,
                          std::size_t end, const ChangePointOptions& opt) {
  ChangePoint cp;
  cp.index = index;
  cp.segment_begin = begin;
  cp.segment_end = end;
  auto before = s.subspan(begin, index - begin), after = s.subspan(index, end - index);
  auto mb = mean_of(before, opt.mean), ma = mean_of(after, opt.mean);
  cp.mean_before = mb.value_or(kNaN);
  cp.mean_after = ma.value_or(kNaN);
  cp.pct_change = percent_change(cp.mean_before, cp.mean_after, opt.direction);
  cp.p = 1.0;
  cp.qhat = kNaN;
  return cp;
}

// split_figures with Welch's p of the two sides (on logs when every value
// is > 0); qhat NaN.
ChangePoint welch_split(std::span<const double> s, std::size_t begin, std::size_t index,
                        std::size_t end, const ChangePointOptions& opt) {
  ChangePoint cp = split_figures(s, begin, index, end, opt);
  auto before = s.subspan(begin, index - begin), after = s.subspan(index, end - index);
  if (all_positive(before) && all_positive(after)) {
    if (auto w = welch_log_test(before, after)) cp.p = w->log.p;
  } else if (auto w = welch_test(before, after)) {
    cp.p = w->p;
  }
  if (std::isnan(cp.p)) cp.p = 1.0;
  return cp;
}

// The test and figures of a candidate split: welch_split with Q̂ at `index`
// of E-divisive over [begin, end) (O((end - begin)^2)).
ChangePoint test_split(std::span<const double> s, std::size_t begin, std::size_t index,
                       std::size_t end, const ChangePointOptions& opt) {
  ChangePoint cp = welch_split(s, begin, index, end, opt);
  auto q = edivisive_qhat(s.subspan(begin, end - begin), opt.exponent, opt.min_segment);
  cp.qhat = q[index - begin];
  return cp;
}

// |%change| used to gate a change point: of the metric's mean, or of the
// arithmetic means when that is undefined.
double effect_of(std::span<const double> s, const ChangePoint& cp, const ChangePointOptions& opt) {
  if (std::isfinite(cp.pct_change)) return std::abs(cp.pct_change);
  auto before = s.subspan(cp.segment_begin, cp.index - cp.segment_begin);
  auto after = s.subspan(cp.index, cp.segment_end - cp.index);
  double pc = percent_change(amean(before), amean(after), opt.direction);
  return std::isfinite(pc) ? std::abs(pc) : kInf;
}

// The merge step shared by detect_change_points and detect_short_changes
// (Otava's): the position in `cps` of the boundary to drop -- the largest p
// when it is above max_p, else the smallest effect when it is under
// min_effect_pct -- or nullopt when every boundary passes both.
std::optional<std::size_t> boundary_to_drop(std::span<const double> s,
                                            std::span<const ChangePoint> cps,
                                            const ChangePointOptions& opt) {
  if (cps.empty()) return std::nullopt;
  std::size_t weakest = 0;
  for (std::size_t k = 1; k < cps.size(); ++k)
    if (cps[k].p > cps[weakest].p) weakest = k;
  if (cps[weakest].p > opt.max_p) return weakest;
  weakest = 0;
  for (std::size_t k = 1; k < cps.size(); ++k)
    if (effect_of(s, cps[k], opt) < effect_of(s, cps[weakest], opt)) weakest = k;
  if (effect_of(s, cps[weakest], opt) < opt.min_effect_pct) return weakest;
  return std::nullopt;
}

// E-divisive on one window (indices relative to the window): keep splitting
// the segment holding the largest Q̂ while its test passes `max_p`.
std::vector<std::size_t> edivisive_window(std::span<const double> w, double max_p,
                                          const ChangePointOptions& opt) {
  std::vector<std::size_t> bounds = {0, w.size()};
  std::vector<std::size_t> found;
  while (true) {
    double best_q = -kInf;
    std::size_t best = 0, best_seg = 0;
    for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
      std::size_t lo = bounds[b], hi = bounds[b + 1];
      if (hi - lo < 2 * opt.min_segment) continue;
      auto q = edivisive_qhat(w.subspan(lo, hi - lo), opt.exponent, opt.min_segment);
      for (std::size_t t = opt.min_segment; t + opt.min_segment <= hi - lo; ++t) {
        if (q[t] > best_q) {
          best_q = q[t];
          best = lo + t;
          best_seg = b;
        }
      }
    }
    if (best_q == -kInf) break;
    ChangePoint cp = test_split(w, bounds[best_seg], best, bounds[best_seg + 1], opt);
    if (!(cp.p <= max_p)) break;
    found.push_back(best);
    bounds.insert(bounds.begin() + static_cast<std::ptrdiff_t>(best_seg) + 1, best);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Otava's split pass over the whole series: E-divisive on windows of
// opt.window points overlapping by half, each split kept while its Welch p is
// <= first_p (Otava's first pass: 10·max_p when max_p < 0.05, else 2·max_p;
// 1 splits down to segments of min_segment points). Sorted, unique indexes.
std::vector<std::size_t> split_pass(std::span<const double> series, const ChangePointOptions& opt,
                                    double first_p) {
  const std::size_t n = series.size();
  const std::size_t window = opt.window == 0 ? n : std::max(opt.window, 2 * opt.min_segment);
  const std::size_t step = std::max<std::size_t>(window / 2, 1);
  std::vector<std::size_t> indexes;
  for (std::size_t start = 0; start < n;) {
    const std::size_t end = std::min(start + window, n);
    auto found = edivisive_window(series.subspan(start, end - start), first_p, opt);
    for (auto i : found) indexes.push_back(start + i);
    if (end == n) break;
    const std::size_t last = found.empty() ? 0 : start + found.back();
    start = std::max(last, start + step);
  }
  std::sort(indexes.begin(), indexes.end());
  indexes.erase(std::unique(indexes.begin(), indexes.end()), indexes.end());
  return indexes;
}

}  // namespace

std::vector<ChangePoint> detect_change_points(std::span<const double> series,
                                              const ChangePointOptions& opt) {
  require_unit_interval(opt.max_p, "max_p");
  if (!(opt.min_effect_pct >= 0.0)) throw std::invalid_argument("min_effect_pct must be >= 0");
  if (!(opt.exponent > 0.0 && opt.exponent < 2.0))
    throw std::invalid_argument("edivisive exponent must be in (0, 2)");
  if (opt.min_segment < 2) throw std::invalid_argument("min_segment must be at least 2");
  const std::size_t n = series.size();
  if (n < 2 * opt.min_segment || !all_finite(series)) return {};

  // 1. Split, window by window (Otava's first pass is 10x more lenient).
  const double first_p = opt.max_p < 0.05 ? opt.max_p * 10 : std::min(opt.max_p * 2, 0.999);
  std::vector<std::size_t> indexes = split_pass(series, opt, first_p);
  // Points closer than min_segment to a neighbour or an end cannot be tested.
  std::vector<std::size_t> kept;
  for (auto i : indexes) {
    std::size_t prev = kept.empty() ? 0 : kept.back();
    if (i - prev >= opt.min_segment && n - i >= opt.min_segment) kept.push_back(i);
  }

  // 2. Merge: re-test each point against its neighbouring points' segments
  // and drop the weakest until all pass.
  auto retest = [&](std::vector<ChangePoint>& cps, std::size_t k) {
    std::size_t begin = k == 0 ? 0 : cps[k - 1].index;
    std::size_t end = k + 1 < cps.size() ? cps[k + 1].index : n;
    cps[k] = test_split(series, begin, cps[k].index, end, opt);
  };
  std::vector<ChangePoint> cps;
  for (auto i : kept) cps.push_back(ChangePoint{.index = i});
  for (std::size_t k = 0; k < cps.size(); ++k) retest(cps, k);
  while (auto drop = boundary_to_drop(series, cps, opt)) {
    const std::size_t weakest = *drop;
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(weakest));
    if (weakest < cps.size()) retest(cps, weakest);
    if (weakest > 0) retest(cps, weakest - 1);
  }
  return cps;
}

namespace {

// Student's prediction test of one new point y against the segment x: the
// two-sided p of t = (y − x̄)/(s·√(1 + 1/m)) with m − 1 df (on ln values when
// every value is > 0); 1 when s is 0 or undefined.
double prediction_p(std::span<const double> x, double y) {
  const bool logs = all_positive(x) && y > 0;
  std::vector<double> v(x.begin(), x.end());
  if (logs)
    for (double& e : v) e = std::log(e);
  const double m = static_cast<double>(v.size()), mean = amean(v);
  const double sd = std::sqrt(detail::sample_variance(v, mean));
  if (!(sd > 0) || v.size() < 2) return 1.0;
  const double t = ((logs ? std::log(y) : y) - mean) / (sd * std::sqrt(1.0 + 1.0 / m));
  return std::min(1.0, 2.0 * student_t_upper_tail(std::abs(t), m - 1));
}

}  // namespace

std::optional<ChangePoint> detect_recent_change(std::span<const double> series,
                                                std::span<const ChangePoint> confirmed,
                                                const ChangePointOptions& opt) {
  (void)detect_change_points(std::span<const double>{}, opt);  // checks the options
  const std::size_t n = series.size();
  const std::size_t begin = confirmed.empty() ? 0 : confirmed.back().index;
  if (!all_finite(series) || begin >= n) return std::nullopt;
  // k newest points, k < min_segment, with >= min_segment points before them.
  std::size_t tried = 0;
  for (std::size_t k = 1; k < opt.min_segment && n - begin >= opt.min_segment + k; ++k) ++tried;
  if (tried == 0) return std::nullopt;
  const double level = opt.max_p < 0.05 ? opt.max_p * 10 : std::min(opt.max_p * 2, 0.999);
  std::optional<ChangePoint> best;
  for (std::size_t k = 1; k <= tried; ++k) {
    ChangePoint cp = k == 1 ? split_figures(series, begin, n - k, n, opt)
                            : welch_split(series, begin, n - k, n, opt);
    if (k == 1) cp.p = prediction_p(series.subspan(begin, n - 1 - begin), series[n - 1]);
    cp.p = std::min(1.0, cp.p * static_cast<double>(tried));
    if (!(cp.p <= level) || effect_of(series, cp, opt) < opt.min_effect_pct) continue;
    if (!best || cp.p < best->p) best = cp;
  }
  return best;
}

std::vector<ChangePoint> detect_short_changes(std::span<const double> series,
                                              std::span<const ChangePoint> confirmed,
                                              const ChangePointOptions& opt) {
  (void)detect_change_points(std::span<const double>{}, opt);  // checks the options
  const std::size_t n = series.size();
  if (opt.min_segment <= 2 || n < 4 || !all_finite(series)) return {};
  ChangePointOptions two = opt;
  two.min_segment = 2;
  // Candidate boundaries: E-divisive splits down to segments of 2 points
  // (Welch on 2 points cannot gate them), plus the confirmed change points
  // (kept whatever happens below).
  std::vector<std::size_t> bounds = split_pass(series, two, 1.0);
  for (const auto& c : confirmed) bounds.push_back(c.index);
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  auto is_confirmed = [&](std::size_t i) {
    return std::any_of(confirmed.begin(), confirmed.end(),
                       [&](const ChangePoint& c) { return c.index == i; });
  };
  const bool logs = all_positive(series);
  std::vector<double> v(series.begin(), series.end());
  if (logs)
    for (double& e : v) e = std::log(e);

  // Backward elimination: test every unconfirmed boundary against its two
  // neighbouring segments with the residual variance pooled over the current
  // segmentation, Bonferroni over the boundaries tested; drop the weakest
  // (largest p, else smallest effect) until every one passes.
  while (true) {
    std::vector<std::size_t> edges{0};
    edges.insert(edges.end(), bounds.begin(), bounds.end());
    edges.push_back(n);
    double ss = 0;
    for (std::size_t k = 0; k + 1 < edges.size(); ++k) {
      const auto seg = std::span<const double>(v).subspan(edges[k], edges[k + 1] - edges[k]);
      const double mean = amean(seg);
      for (double e : seg) ss += (e - mean) * (e - mean);
    }
    const double df = static_cast<double>(n) - static_cast<double>(edges.size() - 1);
    std::vector<ChangePoint> tested;
    for (std::size_t k = 1; k + 1 < edges.size(); ++k) {
      if (is_confirmed(edges[k])) continue;
      ChangePoint c = split_figures(series, edges[k - 1], edges[k], edges[k + 1], opt);
      const double a = static_cast<double>(edges[k] - edges[k - 1]);
      const double b = static_cast<double>(edges[k + 1] - edges[k]);
      const auto before = std::span<const double>(v).subspan(edges[k - 1], edges[k] - edges[k - 1]);
      const auto after = std::span<const double>(v).subspan(edges[k], edges[k + 1] - edges[k]);
      c.p = 1.0;
      if (df >= 1 && ss > 0) {
        const double t =
            (amean(after) - amean(before)) / (std::sqrt(ss / df) * std::sqrt(1 / a + 1 / b));
        c.p = std::min(1.0, 2.0 * student_t_upper_tail(std::abs(t), df));
      }
      tested.push_back(c);
    }
    if (tested.empty()) return {};
    for (auto& c : tested) c.p = std::min(1.0, c.p * static_cast<double>(tested.size()));
    const auto drop = boundary_to_drop(series, tested, opt);
    if (!drop) {
      // Every boundary passes: report those with a short side, before the
      // newest min_segment points (detect_recent_change's).
      std::vector<ChangePoint> out;
      for (const auto& c : tested) {
        const bool short_side = c.index - c.segment_begin < opt.min_segment ||
                                c.segment_end - c.index < opt.min_segment;
        if (short_side && c.index + opt.min_segment <= n) out.push_back(c);
      }
      return out;
    }
    bounds.erase(std::find(bounds.begin(), bounds.end(), tested[*drop].index));
  }
}

}  // namespace nightjar::stats

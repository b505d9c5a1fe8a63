// Standard errors, confidence intervals and two-sample tests: see tests.h for
// the contract and the source of every formula.
#include "results/stats/tests.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "results/stats/descriptive.h"
#include "results/stats/detail.h"
#include "results/stats/distributions.h"

namespace nightjar::stats {

using detail::all_finite;
using detail::all_positive;
using detail::amean;
using detail::kInf;
using detail::kNaN;
using detail::require_unit_interval;
using detail::sample_variance;

std::optional<HmeanError> hmean_error(std::span<const double> samples) {
  if (samples.size() < 2 || !all_finite(samples) || !all_positive(samples)) return std::nullopt;
  std::vector<double> r;
  r.reserve(samples.size());
  for (double x : samples) r.push_back(1.0 / x);
  const double rbar = amean(r);
  const double sr = std::sqrt(sample_variance(r, rbar));
  HmeanError e;
  e.hmean = 1.0 / rbar;
  e.stddev = e.hmean * e.hmean * sr;
  e.std_error = e.stddev / std::sqrt(static_cast<double>(samples.size()));
  return e;
}

std::optional<MeanInterval> mean_confidence_interval(std::span<const double> samples, MeanKind kind,
                                                     double alpha) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument("alpha " + std::to_string(alpha) + " is not in (0, 1)");
  const auto mean = mean_of(samples, kind);
  if (!mean) return std::nullopt;
  MeanInterval mi{*mean, *mean, *mean};
  const std::size_t n = samples.size();
  if (n < 2) return mi;
  const double t = student_t_quantile(1 - alpha / 2, static_cast<double>(n - 1));
  const double root_n = std::sqrt(static_cast<double>(n));
  switch (kind) {
    case MeanKind::arithmetic: {
      const double se = summarize(samples).stddev / root_n;
      mi.lo = *mean - t * se;
      mi.hi = *mean + t * se;
      break;
    }
    case MeanKind::harmonic: {
      const auto e = hmean_error(samples);
      if (!e) return mi;  // a non-finite sample: no spread to show
      mi.lo = *mean - t * e->std_error;
      mi.hi = *mean + t * e->std_error;
      break;
    }
    case MeanKind::geometric: {
      std::vector<double> logs;
      logs.reserve(n);
      for (double x : samples) logs.push_back(std::log(x));
      const Summary s = summarize(logs);
      const double se = s.stddev / root_n;
      mi.lo = std::exp(s.amean - t * se);
      mi.hi = std::exp(s.amean + t * se);
      break;
    }
  }
  return mi;
}

std::optional<WelchResult> welch_test(std::span<const double> base, std::span<const double> now,
                                      double alpha) {
  require_unit_interval(alpha, "alpha");
  if (base.size() < 2 || now.size() < 2 || !all_finite(base) || !all_finite(now))
    return std::nullopt;
  const double nb = static_cast<double>(base.size());
  const double nn = static_cast<double>(now.size());
  const double mb = amean(base), mn = amean(now);
  const double sb = sample_variance(base, mb) / nb;
  const double sn = sample_variance(now, mn) / nn;
  WelchResult r;
  r.diff = mn - mb;
  const double s = sb + sn;
  if (s == 0.0) {
    r.df = nb + nn - 2.0;
    r.std_error = 0.0;
    r.t = r.diff == 0.0 ? 0.0 : std::copysign(kInf, r.diff);
    r.p = r.diff == 0.0 ? 1.0 : 0.0;
    r.diff_lo = r.diff_hi = r.diff;
    return r;
  }
  // Satterthwaite's df written with the fractions f = s_i/s so that nothing
  // underflows when one variance is tiny.
  const double fb = sb / s, fn = sn / s;
  r.df = 1.0 / (fb * fb / (nb - 1.0) + fn * fn / (nn - 1.0));
  r.std_error = std::sqrt(s);
  r.t = r.diff / r.std_error;
  r.p = std::min(1.0, 2.0 * student_t_upper_tail(std::fabs(r.t), r.df));
  const double tq = student_t_quantile(1.0 - alpha / 2.0, r.df);
  r.diff_lo = r.diff - tq * r.std_error;
  r.diff_hi = r.diff + tq * r.std_error;
  return r;
}

std::optional<LogWelchResult> welch_log_test(std::span<const double> base,
                                             std::span<const double> now, double alpha) {
  require_unit_interval(alpha, "alpha");
  const auto lb = log_samples(base), ln = log_samples(now);
  if (!lb || !ln) return std::nullopt;
  return welch_log_test_of_logs(*lb, *ln, alpha);
}

std::optional<LogWelchResult> welch_log_test_of_logs(std::span<const double> base_logs,
                                                     std::span<const double> now_logs,
                                                     double alpha) {
  auto w = welch_test(base_logs, now_logs, alpha);
  if (!w) return std::nullopt;
  LogWelchResult r;
  r.log = *w;
  r.ratio = std::exp(w->diff);
  r.ratio_lo = std::exp(w->diff_lo);
  r.ratio_hi = std::exp(w->diff_hi);
  return r;
}

namespace {

// Exact null distribution of U for sample sizes m and n: counts[u], u = 0..m·n,
// via N(u; i, j) = N(u - j; i - 1, j) + N(u; i, j - 1), updated in place.
std::vector<double> mann_whitney_counts(std::size_t m, std::size_t n) {
  const std::size_t width = m * n + 1;
  // table[i * width + u] = N(u; i, j) for the current j.
  std::vector<double> table((m + 1) * width, 0.0);
  for (std::size_t i = 0; i <= m; ++i) table[i * width] = 1.0;  // j = 0: U = 0 only
  for (std::size_t j = 1; j <= n; ++j) {
    for (std::size_t i = 1; i <= m; ++i) {
      double* row = &table[i * width];
      const double* prev = &table[(i - 1) * width];  // already holds N(.; i-1, j)
      const std::size_t umax = i * j;
      for (std::size_t u = umax + 1; u-- > j;) row[u] += prev[u - j];
    }
  }
  return std::vector<double>(table.begin() + static_cast<std::ptrdiff_t>(m * width), table.end());
}

// Ranks of the pooled sample: the sum of the midranks of `now` and the tie
// correction Σ(t³ − t) over the tie groups (t = group size).
struct PooledRanks {
  double rank_sum_now = 0.0;
  double tie_term = 0.0;
  bool ties = false;
};

PooledRanks pooled_ranks(std::span<const double> base, std::span<const double> now) {
  const std::size_t total = base.size() + now.size();
  std::vector<std::pair<double, bool>> pooled;  // (value, is_now)
  pooled.reserve(total);
  for (double x : base) pooled.emplace_back(x, false);
  for (double x : now) pooled.emplace_back(x, true);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& r) { return l.first < r.first; });
  PooledRanks r;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j + 1 < total && pooled[j + 1].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    const double t = static_cast<double>(j - i + 1);
    if (j > i) {
      r.ties = true;
      r.tie_term += t * t * t - t;
    }
    for (std::size_t k = i; k <= j; ++k)
      if (pooled[k].second) r.rank_sum_now += midrank;
    i = j + 1;
  }
  return r;
}

// Two-sided exact p of U = u for sample sizes nn (now) and nb (base):
// 2·min(P(U <= u), P(U >= u)), capped at 1.
double mann_whitney_exact_p(double u, std::size_t nn, std::size_t nb) {
  const auto counts = mann_whitney_counts(nn, nb);
  const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
  const auto ui = static_cast<std::size_t>(std::llround(u));
  const double mean_u = static_cast<double>(nb) * static_cast<double>(nn) / 2.0;
  double tail;
  if (u > mean_u) {  // P(U >= u)
    tail = std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(ui), counts.end(), 0.0);
  } else {  // P(U <= u)
    tail =
        std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(ui) + 1, 0.0);
  }
  return std::min(1.0, 2.0 * tail / all);
}

}  // namespace

std::optional<MannWhitneyResult> mann_whitney(std::span<const double> base,
                                              std::span<const double> now) {
  if (base.empty() || now.empty()) return std::nullopt;
  auto has_nan = [](std::span<const double> xs) {
    return std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); });
  };
  if (has_nan(base) || has_nan(now)) return std::nullopt;
  const std::size_t nb = base.size(), nn = now.size();
  const PooledRanks ranks = pooled_ranks(base, now);
  const double dn = static_cast<double>(nn), db = static_cast<double>(nb);
  MannWhitneyResult r;
  r.u = ranks.rank_sum_now - dn * (dn + 1.0) / 2.0;
  if (!ranks.ties && nb < 50 && nn < 50) {
    r.exact = true;
    r.z = 0.0;
    r.p = mann_whitney_exact_p(r.u, nn, nb);
    return r;
  }
  // Normal approximation with tie and continuity corrections.
  const double N = static_cast<double>(nb + nn);
  const double sigma = std::sqrt(db * dn / 12.0 * ((N + 1.0) - ranks.tie_term / (N * (N - 1.0))));
  if (!(sigma > 0.0)) {
    r.z = 0.0;
    r.p = 1.0;
    return r;
  }
  const double dev = r.u - db * dn / 2.0;
  const double correction = dev > 0.0 ? 0.5 : (dev < 0.0 ? -0.5 : 0.0);
  r.z = (dev - correction) / sigma;
  r.p = std::min(1.0, 2.0 * std::min(normal_cdf(r.z), normal_cdf(-r.z)));
  return r;
}

double mann_whitney_min_p(std::size_t n_base, std::size_t n_new) {
  // 2 / C(n_base + n_new, k): the product below is an integer at every step,
  // so it is exact while C < 2^53 (and overflows harmlessly to inf -> 0).
  if (n_base == 0 || n_new == 0) return 1.0;
  const std::size_t k = std::min(n_base, n_new), n = n_base + n_new;
  double c = 1.0;
  for (std::size_t i = 1; i <= k; ++i)
    c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

}  // namespace nightjar::stats

// Statistics: see statistics.h for the contract and the source of every
// formula, docs/statistics.md for the reasoning.
#include "results/stats/statistics.h"
#include "results/model/metric.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

namespace nightjar::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

void require_unit_interval(double v, const char* what) {
  if (!(v > 0.0 && v < 1.0)) throw std::invalid_argument(std::string(what) + " must be in (0, 1)");
}

bool all_finite(std::span<const double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return std::isfinite(x); });
}

bool all_positive(std::span<const double> xs) {
  return std::all_of(xs.begin(), xs.end(), [](double x) { return x > 0.0; });
}

double amean(std::span<const double> xs) {
  double s = 0.0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

// Sample variance (n-1), two-pass. Exactly 0 when every sample is equal, so a
// constant series never produces a spurious tiny variance from rounding.
double sample_variance(std::span<const double> xs, double mean) {
  if (xs.size() < 2) return kNaN;
  auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (*lo == *hi) return 0.0;
  double ss = 0.0, comp = 0.0;
  for (double x : xs) {
    const double d = x - mean;
    ss += d * d;
    comp += d;
  }
  // Corrected two-pass algorithm (Chan, Golub & LeVeque 1983).
  const double n = static_cast<double>(xs.size());
  return (ss - comp * comp / n) / (n - 1.0);
}

double median_of_sorted(const std::vector<double>& s) {
  const std::size_t n = s.size();
  if (n == 0) return kNaN;
  if (n % 2 == 1) return s[n / 2];
  return (s[n / 2 - 1] + s[n / 2]) / 2.0;
}

// log Γ-based log of the t density, used by the quantile's Newton step.
double student_t_pdf(double t, double df) {
  const double lp = std::lgamma((df + 1.0) / 2.0) - std::lgamma(df / 2.0) -
                    0.5 * std::log(df * kPi) - (df + 1.0) / 2.0 * std::log1p(t * t / df);
  return std::exp(lp);
}

// P(T > t) for t >= 0.
double student_t_upper(double t, double df) {
  if (df > 1e7) return normal_cdf(-t);
  if (std::isinf(t)) return 0.0;
  const double x = df / (df + t * t);
  return 0.5 * incomplete_beta(df / 2.0, 0.5, x);
}

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

// Sum of (t_{1-alpha/2,nu} + t_{power,nu}): the multiplier of c·√(1/n1+1/n2).
double power_multiplier(double nu, double alpha, double power) {
  return student_t_quantile(1.0 - alpha / 2.0, nu) + student_t_quantile(power, nu);
}

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Smallest n per side (>= 3) at which the exact U-test can reach p < alpha.
std::size_t utest_min_n(double alpha) {
  std::size_t k = 3;
  while (mann_whitney_min_p(k, k) >= alpha) ++k;  // terminates: min_p -> 0
  return k;
}

}  // namespace

// ---------------------------------------------------------------------------
// Summaries
// ---------------------------------------------------------------------------

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (s.n == 0) {
    s.min = s.max = s.amean = s.median = s.stddev = s.coeff_var = kNaN;
    return s;
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  // Callers summarising many statistics of large samples sort once (compare):
  // already ascending input skips the O(n log n) sort.
  if (!std::is_sorted(sorted.begin(), sorted.end())) std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  s.amean = amean(samples);
  s.stddev = s.n >= 2 ? std::sqrt(sample_variance(samples, s.amean)) : kNaN;
  s.coeff_var = (s.n >= 2 && s.amean != 0.0) ? 100.0 * s.stddev / std::fabs(s.amean) : kNaN;
  s.hmean = mean_of(samples, MeanKind::harmonic);
  s.gmean = mean_of(samples, MeanKind::geometric);
  return s;
}

std::optional<double> mean_of(std::span<const double> samples, MeanKind kind) {
  if (samples.empty()) return std::nullopt;
  const double n = static_cast<double>(samples.size());
  switch (kind) {
    case MeanKind::arithmetic:
      return amean(samples);
    case MeanKind::harmonic: {
      double s = 0.0;
      for (double x : samples) {
        if (x <= 0.0) return std::nullopt;
        s += 1.0 / x;
      }
      return n / s;
    }
    case MeanKind::geometric: {
      double s = 0.0;
      for (double x : samples) {
        if (x <= 0.0) return std::nullopt;
        s += std::log(x);
      }
      return std::exp(s / n);
    }
  }
  return std::nullopt;
}

std::optional<double> best_mean(std::span<const double> samples, double percent, MeanKind kind,
                                Direction dir) {
  if (!(percent > 0.0 && percent <= 100.0))
    throw std::invalid_argument("best_mean: percent must be in (0, 100]");
  if (samples.empty()) return std::nullopt;
  std::vector<double> s(samples.begin(), samples.end());
  if (std::is_sorted(s.begin(), s.end())) {  // ascending already (see summarize): no sort
    if (dir == Direction::higher_is_better) std::reverse(s.begin(), s.end());
  } else if (dir == Direction::higher_is_better) {
    std::sort(s.begin(), s.end(), std::greater<>());
  } else {
    std::sort(s.begin(), s.end());
  }
  // mmtests Summarise.pm runStatFunc: $count = int($nr_elements * $arg / 100), at least 1.
  auto count = static_cast<std::size_t>(static_cast<double>(s.size()) * percent / 100.0);
  count = std::clamp<std::size_t>(count, 1, s.size());
  return mean_of(std::span<const double>(s.data(), count), kind);
}

double percent_change(double base, double now, Direction dir) {
  if (!std::isfinite(base) || !std::isfinite(now)) return kNaN;
  if (now == base) return 0.0;
  if (base == 0.0) return kNaN;
  // Same order of operations as mmtests' pdiff / pndiff.
  return dir == Direction::higher_is_better ? now * 100.0 / base - 100.0
                                            : 100.0 - now * 100.0 / base;
}

// ---------------------------------------------------------------------------
// Distributions
// ---------------------------------------------------------------------------

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (std::isnan(p)) return kNaN;
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  // Acklam (2003) coefficients.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  double x;
  if (p < p_low) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - p_low) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const double q = std::sqrt(-2.0 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  // One Halley step (Acklam's refinement). Work on the smaller tail so that
  // e keeps its relative precision far out in either tail.
  double e, u;
  if (x < 0) {
    e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
    u = e * std::sqrt(2.0 * kPi) * std::exp(x * x / 2.0);
  } else {
    e = (1.0 - p) - 0.5 * std::erfc(x / std::sqrt(2.0));  // = Φ(x) - p
    u = e * std::sqrt(2.0 * kPi) * std::exp(x * x / 2.0);
  }
  if (std::isfinite(u)) x = x - u / (1.0 + x * u / 2.0);
  return x;
}

double incomplete_beta(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a <= 0.0 || b <= 0.0) return kNaN;
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  if (x > (a + 1.0) / (a + b + 2.0)) return 1.0 - incomplete_beta(b, a, 1.0 - x);

  // Prefactor x^a (1-x)^b / (a B(a,b)).
  const double ln_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  // Continued fraction 1/(1+ d1/(1+ d2/(1+ ...))) with
  //   d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)),
  //   d_{2m}   = m(b-m)x / ((a+2m-1)(a+2m))       (DLMF 8.17.22),
  // evaluated by the modified Lentz method.
  constexpr double tiny = 1e-300;
  constexpr double eps = 1e-15;
  constexpr int max_iter = 100000;
  double c = 1.0;
  double d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < tiny) d = tiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= max_iter; ++m) {
    const double dm = static_cast<double>(m);
    const double m2 = 2.0 * dm;
    double aa = dm * (b - dm) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + dm) * (a + b + dm) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < eps) break;
  }
  return std::exp(ln_front) * h / a;
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || df <= 0.0) return kNaN;
  const double upper = student_t_upper(std::fabs(t), df);
  return t >= 0.0 ? 1.0 - upper : upper;
}

double student_t_quantile(double p, double df) {
  if (std::isnan(p) || std::isnan(df) || df <= 0.0) return kNaN;
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  if (p == 0.5) return 0.0;
  if (df > 1e7) return normal_quantile(p);
  // Solve for t >= 0 with upper tail = target, then apply the sign.
  const double target = p > 0.5 ? 1.0 - p : p;
  const double sign = p > 0.5 ? 1.0 : -1.0;
  auto f = [&](double t) { return student_t_upper(t, df) - target; };  // decreasing in t
  double lo = 0.0, hi = 1.0;
  while (f(hi) > 0.0) {
    lo = hi;
    hi *= 2.0;
    if (hi > 1e300) return sign * kInf;
  }
  // Start from the normal quantile when inside the bracket.
  double t = std::fabs(normal_quantile(target));
  if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
  for (int i = 0; i < 200; ++i) {
    const double ft = f(t);
    if (ft == 0.0) break;
    if (ft > 0.0)
      lo = t;
    else
      hi = t;
    const double pdf = student_t_pdf(t, df);
    double next = pdf > 0.0 ? t + ft / pdf : kNaN;  // f' = -pdf
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const double step = std::fabs(next - t);
    t = next;
    if (step <= 1e-14 * std::max(1.0, t) || hi - lo <= 1e-15 * std::max(1.0, t)) break;
  }
  return sign * t;
}

// ---------------------------------------------------------------------------
// Standard errors and tests
// ---------------------------------------------------------------------------

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
  r.p = std::min(1.0, 2.0 * student_t_upper(std::fabs(r.t), r.df));
  const double tq = student_t_quantile(1.0 - alpha / 2.0, r.df);
  r.diff_lo = r.diff - tq * r.std_error;
  r.diff_hi = r.diff + tq * r.std_error;
  return r;
}

std::optional<LogWelchResult> welch_log_test(std::span<const double> base,
                                             std::span<const double> now, double alpha) {
  require_unit_interval(alpha, "alpha");
  if (!all_finite(base) || !all_finite(now) || !all_positive(base) || !all_positive(now))
    return std::nullopt;
  std::vector<double> lb, ln;
  lb.reserve(base.size());
  ln.reserve(now.size());
  for (double x : base) lb.push_back(std::log(x));
  for (double x : now) ln.push_back(std::log(x));
  auto w = welch_test(lb, ln, alpha);
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

}  // namespace

std::optional<MannWhitneyResult> mann_whitney(std::span<const double> base,
                                              std::span<const double> now) {
  if (base.empty() || now.empty()) return std::nullopt;
  auto has_nan = [](std::span<const double> xs) {
    return std::any_of(xs.begin(), xs.end(), [](double x) { return std::isnan(x); });
  };
  if (has_nan(base) || has_nan(now)) return std::nullopt;
  const std::size_t nb = base.size(), nn = now.size(), total = nb + nn;

  // Midranks of the pooled sample; tie group sizes.
  std::vector<std::pair<double, bool>> pooled;  // (value, is_now)
  pooled.reserve(total);
  for (double x : base) pooled.emplace_back(x, false);
  for (double x : now) pooled.emplace_back(x, true);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_now = 0.0, tie_term = 0.0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j + 1 < total && pooled[j + 1].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    const double t = static_cast<double>(j - i + 1);
    if (j > i) {
      ties = true;
      tie_term += t * t * t - t;
    }
    for (std::size_t k = i; k <= j; ++k)
      if (pooled[k].second) rank_sum_now += midrank;
    i = j + 1;
  }
  const double dn = static_cast<double>(nn), db = static_cast<double>(nb);
  MannWhitneyResult r;
  r.u = rank_sum_now - dn * (dn + 1.0) / 2.0;
  const double mean_u = db * dn / 2.0;

  if (!ties && nb < 50 && nn < 50) {
    r.exact = true;
    const auto counts = mann_whitney_counts(nn, nb);
    const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
    const auto u = static_cast<std::size_t>(std::llround(r.u));
    double tail;
    if (r.u > mean_u) {  // P(U >= u)
      tail = std::accumulate(counts.begin() + static_cast<std::ptrdiff_t>(u), counts.end(), 0.0);
    } else {  // P(U <= u)
      tail =
          std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(u) + 1, 0.0);
    }
    r.z = 0.0;
    r.p = std::min(1.0, 2.0 * tail / all);
    return r;
  }

  const double N = static_cast<double>(total);
  const double sigma = std::sqrt(db * dn / 12.0 * ((N + 1.0) - tie_term / (N * (N - 1.0))));
  if (!(sigma > 0.0)) {
    r.z = 0.0;
    r.p = 1.0;
    return r;
  }
  const double dev = r.u - mean_u;
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

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

std::optional<BootstrapCI> bca_ratio_ci(std::span<const double> base, std::span<const double> now,
                                        MeanKind kind, std::uint64_t seed, double alpha,
                                        std::size_t resamples) {
  require_unit_interval(alpha, "alpha");
  if (resamples < 2000) throw std::invalid_argument("bca_ratio_ci: need >= 2000 resamples");
  if (base.size() < 2 || now.size() < 2 || !all_finite(base) || !all_finite(now))
    return std::nullopt;
  const auto mb = mean_of(base, kind), mn = mean_of(now, kind);
  if (!mb || !mn || *mb == 0.0) return std::nullopt;

  BootstrapCI ci;
  ci.resamples = resamples;
  ci.ratio = *mn / *mb;

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
  if (thetas.empty()) return std::nullopt;
  std::sort(thetas.begin(), thetas.end());
  if (thetas.front() == thetas.back()) {
    ci.lo = ci.hi = ci.ratio;
    return ci;
  }

  // Bias correction.
  const auto below = static_cast<double>(std::lower_bound(thetas.begin(), thetas.end(), ci.ratio) -
                                         thetas.begin());
  const auto equal = static_cast<double>(std::upper_bound(thetas.begin(), thetas.end(), ci.ratio) -
                                         std::lower_bound(thetas.begin(), thetas.end(), ci.ratio));
  const double frac = (below + 0.5 * equal) / static_cast<double>(thetas.size());
  ci.bias_z0 = normal_quantile(std::clamp(frac, 0.5 / thetas.size(), 1.0 - 0.5 / thetas.size()));

  // Acceleration from the two-sample jackknife influence values.
  double num = 0.0, den = 0.0;
  auto jackknife = [&](std::span<const double> side, bool is_base) {
    const std::size_t n = side.size();
    std::vector<double> loo(n);
    std::vector<double> rest;
    rest.reserve(n - 1);
    for (std::size_t i = 0; i < n; ++i) {
      rest.clear();
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) rest.push_back(side[j]);
      const double m = *mean_of(rest, kind);
      loo[i] = is_base ? (m == 0.0 ? kNaN : *mn / m) : m / *mb;
    }
    const double bar = amean(loo);
    const double dn = static_cast<double>(n);
    for (double v : loo) {
      const double l = (dn - 1.0) * (bar - v);
      num += l * l * l / (dn * dn * dn);
      den += l * l / (dn * dn);
    }
  };
  jackknife(base, true);
  jackknife(now, false);
  ci.acceleration = (den > 0.0 && std::isfinite(num)) ? num / (6.0 * std::pow(den, 1.5)) : 0.0;

  const double z = normal_quantile(1.0 - alpha / 2.0);
  auto adjusted = [&](double zq) {
    const double w = ci.bias_z0 + zq;
    const double denom = 1.0 - ci.acceleration * w;
    if (!(denom > 0.0)) return zq < 0.0 ? 0.0 : 1.0;  // extreme acceleration: interval end
    return normal_cdf(ci.bias_z0 + w / denom);
  };
  ci.lo = sorted_quantile(thetas, adjusted(-z));
  ci.hi = sorted_quantile(thetas, adjusted(z));
  return ci;
}

// ---------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------

double smallest_detectable_change_unequal(std::size_t n_base, std::size_t n_new, double cv_pct,
                                          double alpha, double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (std::isnan(cv_pct)) return kNaN;
  if (n_base < 2 || n_new < 2) return kInf;
  if (cv_pct == 0.0) return 0.0;
  const double nu = static_cast<double>(n_base + n_new) - 2.0;
  return power_multiplier(nu, alpha, power) * std::fabs(cv_pct) *
         std::sqrt(1.0 / static_cast<double>(n_base) + 1.0 / static_cast<double>(n_new));
}

double smallest_detectable_change(std::size_t n_per_side, double cv_pct, double alpha,
                                  double power) {
  return smallest_detectable_change_unequal(n_per_side, n_per_side, cv_pct, alpha, power);
}

std::optional<std::size_t> iterations_needed(double delta_pct, double cv_pct, double alpha,
                                             double power) {
  require_unit_interval(alpha, "alpha");
  require_unit_interval(power, "power");
  if (!std::isfinite(delta_pct) || !std::isfinite(cv_pct) || delta_pct <= 0.0) return std::nullopt;
  if (cv_pct == 0.0) return 2;
  const double c = std::fabs(cv_pct);
  const double zsum = normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power);
  const double n_normal = 2.0 * zsum * zsum * c * c / (delta_pct * delta_pct);
  if (n_normal > 1e6) return static_cast<std::size_t>(std::ceil(n_normal)) + 1;
  // t quantiles exceed z quantiles, so the answer is at least the normal figure.
  auto n = std::max<std::size_t>(2, static_cast<std::size_t>(std::floor(n_normal)));
  while (smallest_detectable_change(n, c, alpha, power) > delta_pct) ++n;
  return n;
}

// ---------------------------------------------------------------------------
// Reference rules
// ---------------------------------------------------------------------------

namespace {

// mmtests' per-mean SD (Stat.pm calc_stddev with a mean name).
std::optional<std::pair<double, double>> mmtests_mean_sd(std::span<const double> xs,
                                                         MeanKind kind) {
  if (xs.size() < 2 || !all_finite(xs)) return std::nullopt;
  const auto mean = mean_of(xs, kind);
  if (!mean) return std::nullopt;
  const double n = static_cast<double>(xs.size());
  switch (kind) {
    case MeanKind::arithmetic:
      return std::pair{*mean, std::sqrt(sample_variance(xs, *mean))};
    case MeanKind::harmonic: {
      double ss = 0.0;
      for (double x : xs) ss += (1.0 / x - 1.0 / *mean) * (1.0 / x - 1.0 / *mean);
      return std::pair{*mean, std::sqrt(ss * std::pow(*mean, 4) / n)};
    }
    case MeanKind::geometric: {
      std::vector<double> l;
      for (double x : xs) l.push_back(std::log(x));
      return std::pair{*mean, *mean * std::sqrt(sample_variance(l, amean(l)))};
    }
  }
  return std::nullopt;
}

}  // namespace

bool mmtests_interval_significant(std::span<const double> base, std::span<const double> now,
                                  MeanKind kind) {
  const auto b = mmtests_mean_sd(base, kind), n = mmtests_mean_sd(now, kind);
  if (!b || !n) return false;
  // qnorm(1 - 0.05/2), as mmtests' _calc_meanci asks R for.
  const double z = normal_quantile(0.975);
  const double b_lo = b->first - z * b->second, b_hi = b->first + z * b->second;
  const double n_lo = n->first - z * n->second, n_hi = n->first + z * n->second;
  return n_lo > b_hi || n_hi < b_lo;
}

bool lkp_significant(std::span<const double> base, std::span<const double> now,
                     double min_ratio_change) {
  if (base.size() < 3 || now.size() < 3 || !all_finite(base) || !all_finite(now)) return false;
  const Summary b = summarize(base), n = summarize(now);
  const bool up = n.min > b.median && n.median > b.max;
  const bool down = n.max < b.median && n.median < b.min;
  if (!up && !down) return false;
  const double hi = std::max(b.median, n.median), lo = std::min(b.median, n.median);
  if (!(lo > 0.0)) return true;  // LKP's MAX_RATIO when the smaller side is 0
  return hi / lo > 1.0 + min_ratio_change;
}

// ---------------------------------------------------------------------------
// The significance rule
// ---------------------------------------------------------------------------

std::string_view to_string(TestKind t) {
  switch (t) {
    case TestKind::welch:
      return "welch";
    case TestKind::utest:
      return "utest";
    case TestKind::mmtests:
      return "mmtests";
    case TestKind::lkp:
      return "lkp";
  }
  return "welch";
}

TestKind test_kind_from_string(std::string_view s) {
  for (TestKind t : {TestKind::welch, TestKind::utest, TestKind::mmtests, TestKind::lkp})
    if (s == to_string(t)) return t;
  throw std::invalid_argument("unknown test '" + std::string(s) +
                              "' (expected welch, utest, mmtests or lkp)");
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::improvement:
      return "improvement";
    case Verdict::regression:
      return "regression";
    case Verdict::unchanged:
      return "unchanged";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::undefined:
      return "undefined";
  }
  return "undefined";
}

std::vector<Significance> decide_significance(std::span<const RowInput> family,
                                              const SignificanceOptions& opt) {
  require_unit_interval(opt.alpha, "alpha");
  require_unit_interval(opt.power, "power");
  if (!(opt.min_effect_pct >= 0.0) || !std::isfinite(opt.min_effect_pct))
    throw std::invalid_argument("min_effect_pct must be >= 0");

  const bool uses_p = opt.test == TestKind::welch || opt.test == TestKind::utest;
  std::vector<Significance> out(family.size());
  std::vector<bool> eligible(family.size(), false);
  std::vector<double> pooled_cv(family.size(), kNaN);

  // The t multiplier depends only on (n_base, n_new): cache it per call.
  std::map<std::pair<std::size_t, std::size_t>, double> sdc_cache;
  auto sdc = [&](std::size_t nb, std::size_t nn, double cv) {
    if (std::isnan(cv)) return kNaN;
    if (nb < 2 || nn < 2) return kInf;
    auto key = std::pair{nb, nn};
    auto it = sdc_cache.find(key);
    if (it == sdc_cache.end())
      it = sdc_cache
               .emplace(key, smallest_detectable_change_unequal(nb, nn, 1.0, opt.alpha, opt.power))
               .first;
    return it->second * cv;
  };

  // Steps 1-3: definedness, sample count, per-row test.
  std::vector<double> pvals(family.size(), kNaN);
  for (std::size_t i = 0; i < family.size(); ++i) {
    const RowInput& row = family[i];
    Significance& s = out[i];
    s.pct_change = kNaN;
    s.smallest_detectable_change_pct = kNaN;
    if (!all_finite(row.base) || !all_finite(row.now)) {
      s.verdict = Verdict::undefined;
      s.reason = "a sample is not a finite number";
      continue;
    }
    const auto mb = mean_of(row.base, row.mean), mn = mean_of(row.now, row.mean);
    const bool empty = row.base.empty() || row.now.empty();
    if (!empty && (!mb || !mn)) {
      s.verdict = Verdict::undefined;
      s.reason = format("%s undefined: a sample is <= 0", mean_label(row.mean));
      continue;
    }
    if (!empty) {
      s.pct_change = percent_change(*mb, *mn, row.direction);
      if (std::isnan(s.pct_change)) {
        s.verdict = Verdict::undefined;
        s.reason = format("%%change undefined: baseline %s is 0", mean_label(row.mean));
        continue;
      }
    }
    const Summary sb = summarize(row.base), sn = summarize(row.now);
    if (sb.n >= 2 && sn.n >= 2)
      pooled_cv[i] = std::sqrt((sb.coeff_var * sb.coeff_var + sn.coeff_var * sn.coeff_var) / 2.0);
    s.smallest_detectable_change_pct = sdc(sb.n, sn.n, pooled_cv[i]);
    if (auto lw = welch_log_test(row.base, row.now, opt.alpha)) {
      s.ratio_lo = lw->ratio_lo;
      s.ratio_hi = lw->ratio_hi;
    }
    if (sb.n < 3 || sn.n < 3) {
      s.verdict = Verdict::inconclusive;
      s.reason = format("fewer than 3 samples per side (base %zu, new %zu)", sb.n, sn.n);
      if (!std::isnan(pooled_cv[i])) {
        const double target = std::max(std::fabs(s.pct_change), opt.min_effect_pct);
        if (auto need = iterations_needed(target, pooled_cv[i], opt.alpha, opt.power))
          s.iterations_needed = std::max<std::size_t>(*need, 3);
        else
          s.iterations_needed = 3;
        if (opt.test == TestKind::utest)
          s.iterations_needed = std::max(*s.iterations_needed, utest_min_n(opt.alpha));
      }
      continue;
    }
    eligible[i] = true;
    if (opt.test == TestKind::welch) {
      std::optional<WelchResult> w;
      if (auto lw = welch_log_test(row.base, row.now, opt.alpha))
        w = lw->log;
      else  // arithmetic row with a sample <= 0: Welch on raw values
        w = welch_test(row.base, row.now, opt.alpha);
      if (w) pvals[i] = w->p;
    } else if (opt.test == TestKind::utest) {
      if (auto u = mann_whitney(row.base, row.now)) pvals[i] = u->p;
    }
    if (uses_p && !std::isnan(pvals[i])) s.p = pvals[i];
  }

  const std::vector<double> qvals = uses_p ? benjamini_hochberg(pvals) : std::vector<double>();

  // Steps 3-5: verdicts.
  for (std::size_t i = 0; i < family.size(); ++i) {
    if (!eligible[i]) continue;
    const RowInput& row = family[i];
    Significance& s = out[i];
    const double pct = s.pct_change;
    const double abs_pct = std::fabs(pct);
    bool significant = false;
    std::string why;
    if (uses_p) {
      if (!std::isnan(qvals[i])) s.q = qvals[i];
      const double q = qvals[i];
      significant = q < opt.alpha && abs_pct >= opt.min_effect_pct;
      if (significant)
        why = format("q=%.3g < %.3g and |%.2f%%| >= %.3g%%", q, opt.alpha, pct, opt.min_effect_pct);
      else if (q < opt.alpha)
        why = format("q=%.3g < %.3g but |%.2f%%| < min effect %.3g%%", q, opt.alpha, pct,
                     opt.min_effect_pct);
      else
        why = format("q=%.3g >= %.3g", q, opt.alpha);
    } else if (opt.test == TestKind::mmtests) {
      significant = mmtests_interval_significant(row.base, row.now, row.mean);
      why = significant ? "mean +- 1.96 SD intervals do not overlap"
                        : "mean +- 1.96 SD intervals overlap";
    } else {
      significant = lkp_significant(row.base, row.now);
      why = significant ? "ranges separated and medians differ by > 1%"
                        : "ranges not separated or medians within 1%";
    }

    if (significant && pct != 0.0) {
      s.verdict = pct > 0.0 ? Verdict::improvement : Verdict::regression;
      s.reason = why;
      continue;
    }
    if (!uses_p) {
      s.verdict = Verdict::unchanged;
      s.reason = why;
      continue;
    }
    const double target = std::max(abs_pct, opt.min_effect_pct);
    double detectable = s.smallest_detectable_change_pct;
    const std::size_t nb = row.base.size(), nn = row.now.size();
    std::size_t u_min_n = 0;
    if (opt.test == TestKind::utest && mann_whitney_min_p(nb, nn) >= opt.alpha) {
      detectable = kInf;
      u_min_n = utest_min_n(opt.alpha);
    }
    if (std::isnan(detectable)) {
      s.verdict = Verdict::inconclusive;
      s.reason = why + "; noise unknown (CoeffVar undefined: a mean is 0)";
    } else if (detectable > target) {
      s.verdict = Verdict::inconclusive;
      auto need = iterations_needed(target, pooled_cv[i], opt.alpha, opt.power);
      std::size_t n_need = std::max<std::size_t>(need.value_or(3), 3);
      n_need = std::max(n_need, u_min_n);
      s.iterations_needed = n_need;
      if (std::isinf(detectable))
        s.reason = format(
            "%s; the exact U-test cannot reach p < %.3g with %zu+%zu samples: needs %zu per side",
            why.c_str(), opt.alpha, nb, nn, n_need);
      else
        s.reason = format(
            "%s; could only detect >= %.2f%% at CV %.2f%%: needs %zu per side to detect %.2f%%",
            why.c_str(), detectable, pooled_cv[i], n_need, target);
    } else if (abs_pct >= opt.min_effect_pct) {
      // The data could see a change this large and shows one, but the test
      // did not confirm it (p near alpha, or q raised by Benjamini-Hochberg
      // over many rows): not "unchanged". Doubling n shrinks the standard
      // error by sqrt(2), which brings such a p well below alpha.
      s.verdict = Verdict::inconclusive;
      const std::size_t n_now = std::max(nb, nn);
      s.iterations_needed = std::max<std::size_t>(2 * n_now, 3);
      s.reason = format(
          "%s; the %.2f%% change seen is not confirmed although >= %.2f%% was detectable: "
          "rerun with about %zu per side",
          why.c_str(), pct, detectable, *s.iterations_needed);
    } else {
      s.verdict = Verdict::unchanged;
      s.reason = format("%s; could detect changes >= %.2f%% (target %.2f%%)", why.c_str(),
                        detectable, target);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Change points
// ---------------------------------------------------------------------------

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

// The test and figures of a candidate split [begin, index) | [index, end).
ChangePoint test_split(std::span<const double> s, std::size_t begin, std::size_t index,
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
  if (all_positive(before) && all_positive(after)) {
    if (auto w = welch_log_test(before, after)) cp.p = w->log.p;
  } else if (auto w = welch_test(before, after)) {
    cp.p = w->p;
  }
  if (std::isnan(cp.p)) cp.p = 1.0;
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
  while (!cps.empty()) {
    std::size_t weakest = 0;
    for (std::size_t k = 1; k < cps.size(); ++k)
      if (cps[k].p > cps[weakest].p) weakest = k;
    if (cps[weakest].p <= opt.max_p) {
      weakest = 0;
      for (std::size_t k = 1; k < cps.size(); ++k)
        if (effect_of(series, cps[k], opt) < effect_of(series, cps[weakest], opt)) weakest = k;
      if (effect_of(series, cps[weakest], opt) >= opt.min_effect_pct) break;
    }
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(weakest));
    if (weakest < cps.size()) retest(cps, weakest);
    if (weakest > 0) retest(cps, weakest - 1);
  }
  return cps;
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

}  // namespace nightjar::stats

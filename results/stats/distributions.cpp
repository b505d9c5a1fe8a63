// Distributions: see distributions.h for the contract and the source of
// every formula.
#include "results/stats/distributions.h"

#include <algorithm>
#include <cmath>

#include "results/stats/detail.h"

namespace nightjar::stats {

using detail::kInf;
using detail::kNaN;

namespace {

constexpr double kPi = 3.14159265358979323846;

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

}  // namespace

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

double student_t_upper_tail(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || df <= 0.0) return kNaN;
  return t >= 0.0 ? student_t_upper(t, df) : 1.0 - student_t_upper(-t, df);
}

}  // namespace nightjar::stats

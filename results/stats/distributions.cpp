// Distributions through Boost.Math: see distributions.h for the contract.
//
// Every call goes through one policy: Boost's default error policy throws on a
// domain error (p outside [0,1], df <= 0) and on overflow (the quantile at p =
// 0 or 1), where this module's contract returns NaN or ±inf. The edges are
// guarded explicitly below, and the policy makes any that slip through return
// NaN/inf instead of throwing. promote_double<false> evaluates in double
// rather than long double: 5-6x faster for the t quantile and upper tail on
// x86-64 (about 0.4 us per call instead of 2-2.5 us) and still within ~1e-13
// relative of mpmath at 50 digits on a grid of df 0.7..1e6 (the unit tests
// hold it to mpmath and R values).
#include "results/stats/distributions.h"

#include <cmath>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>

#include "results/stats/detail.h"

namespace nightjar::stats {

using detail::kInf;
using detail::kNaN;

namespace {

namespace bmp = boost::math::policies;
using Policy = bmp::policy<bmp::domain_error<bmp::ignore_error>, bmp::pole_error<bmp::ignore_error>,
                           bmp::overflow_error<bmp::ignore_error>,
                           bmp::evaluation_error<bmp::ignore_error>, bmp::promote_double<false>>;
using Normal = boost::math::normal_distribution<double, Policy>;
using StudentT = boost::math::students_t_distribution<double, Policy>;

// Above this many degrees of freedom Student's t is the normal distribution to
// within ~1e-8 (the leading correction is φ(t)(t³+t)/(4·df)).
constexpr double kNormalDf = 1e7;

}  // namespace

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_quantile(double p) {
  if (std::isnan(p)) return kNaN;
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  if (p == 0.5) return 0.0;  // Boost gives −0
  return boost::math::quantile(Normal(), p);
}

double incomplete_beta(double a, double b, double x) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a <= 0.0 || b <= 0.0) return kNaN;
  if (x <= 0.0) return 0.0;
  if (x >= 1.0) return 1.0;
  return boost::math::ibeta(a, b, x, Policy());
}

double student_t_upper_tail(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || df <= 0.0) return kNaN;
  if (std::isinf(t)) return t > 0.0 ? 0.0 : 1.0;
  if (df > kNormalDf) return normal_cdf(-t);
  return boost::math::cdf(boost::math::complement(StudentT(df), t));
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || df <= 0.0) return kNaN;
  return t >= 0.0 ? 1.0 - student_t_upper_tail(t, df) : student_t_upper_tail(-t, df);
}

double student_t_quantile(double p, double df) {
  if (std::isnan(p) || std::isnan(df) || df <= 0.0) return kNaN;
  if (p <= 0.0) return -kInf;
  if (p >= 1.0) return kInf;
  if (p == 0.5) return 0.0;
  if (df > kNormalDf) return normal_quantile(p);
  return boost::math::quantile(StudentT(df), p);
}

}  // namespace nightjar::stats

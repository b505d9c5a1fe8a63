// The normal and Student t distributions and the regularized incomplete beta
// function the tests need. Part of the statistics module (results/stats/,
// conventions in docs/statistics.md "Conventions").
#pragma once

namespace nightjar::stats {

/// Standard normal CDF Φ(z) = erfc(−z/√2)/2 (exact up to libm's erfc).
/// Φ(±inf) = 1/0; NaN propagates.
double normal_cdf(double z);

/// Standard normal quantile Φ⁻¹(p), p in (0,1): P. J. Acklam's rational
/// approximation ("An algorithm for computing the inverse normal cumulative
/// distribution function", 2003; relative error 1.15e-9) refined by one
/// Halley step on erfc, as Acklam recommends, giving full double precision.
/// p <= 0 -> -inf, p >= 1 -> +inf, NaN -> NaN.
double normal_quantile(double p);

/// Regularized incomplete beta function I_x(a, b), a > 0, b > 0, x in [0,1]:
/// continued fraction DLMF 8.17.22 evaluated with the modified Lentz method
/// (Numerical Recipes 3rd ed., §5.2 and §6.4 "betai/betacf"), using the
/// symmetry I_x(a,b) = 1 − I_{1−x}(b,a) when x > (a+1)/(a+b+2) so that the
/// fraction converges quickly. x <= 0 -> 0, x >= 1 -> 1; NaN for a <= 0 or
/// b <= 0 or NaN inputs.
double incomplete_beta(double a, double b, double x);

/// Student t CDF with df > 0 degrees of freedom (df need not be an integer,
/// as Welch's df is not): P(T <= t). Upper tail via
/// P(T > |t|) = I_{df/(df+t²)}(df/2, 1/2) / 2 (Abramowitz & Stegun 26.7.1 /
/// 26.5.27), so small tail probabilities keep their relative precision.
/// df > 1e7 uses the normal CDF. NaN for df <= 0 or NaN inputs.
double student_t_cdf(double t, double df);

/// Upper tail P(T > t) of Student's t with df > 0 degrees of freedom, from the
/// incomplete beta as in student_t_cdf (small tails keep their relative
/// precision). t = +inf -> 0, t = −inf -> 1; NaN for df <= 0 or NaN inputs.
double student_t_upper_tail(double t, double df);

/// Student t quantile: the t with student_t_cdf(t, df) = p. Safeguarded Newton
/// iteration (bisection fallback) on the upper tail above, to ~1e-13 relative.
/// p <= 0 -> -inf, p >= 1 -> +inf, NaN for df <= 0 or NaN inputs.
/// Check values: t_{0.975,10} = 2.228139, t_{0.975,1} = 12.70620.
double student_t_quantile(double p, double df);

}  // namespace nightjar::stats

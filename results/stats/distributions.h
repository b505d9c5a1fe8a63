// The normal and Student t distributions and the regularized incomplete beta
// function the tests need, evaluated by Boost.Math (boost/math/distributions/
// normal.hpp, students_t.hpp, special_functions/beta.hpp; Boost 1.74). The
// functions here fix the contract at the edges: none of them throws; NaN
// input or a parameter outside the domain gives NaN, a probability at or
// beyond 0/1 gives ∓inf, as documented per function. Part of the statistics
// module (results/stats/, conventions in docs/statistics.md "Conventions").
#pragma once

namespace nightjar::stats {

/// Standard normal CDF Φ(z) = erfc(−z/√2)/2 (exact up to libm's erfc).
/// Φ(±inf) = 1/0; NaN propagates.
double normal_cdf(double z);

/// Standard normal quantile Φ⁻¹(p) for p in (0,1): Boost.Math's
/// quantile(normal_distribution), i.e. −√2·erfc⁻¹(2p) (Boost's rational
/// approximations of erf_inv/erfc_inv; full double precision).
/// p <= 0 -> -inf, p >= 1 -> +inf, NaN -> NaN; Φ⁻¹(0.5) = +0.
double normal_quantile(double p);

/// Regularized incomplete beta function I_x(a, b) = B(x; a, b)/B(a, b) (DLMF
/// 8.17.2), a > 0, b > 0, x in [0,1]: Boost.Math's ibeta (DiDonato & Morris,
/// "Algorithm 708", ACM TOMS 18(3), 1992, as Boost implements it).
/// x <= 0 -> 0, x >= 1 -> 1; NaN for a <= 0 or b <= 0 (Boost would accept a
/// zero parameter; this contract does not) or NaN inputs.
double incomplete_beta(double a, double b, double x);

/// Upper tail P(T > t) of Student's t with df > 0 degrees of freedom (df need
/// not be an integer, as Welch's df is not): Boost.Math's
/// cdf(complement(students_t_distribution(df), t)), which is
/// I_{df/(df+t²)}(df/2, 1/2)/2 for t >= 0 (Abramowitz & Stegun 26.7.1 /
/// 26.5.27), so small tail probabilities keep their relative precision.
/// df > 1e7 uses the normal upper tail Φ(−t). t = +inf -> 0, t = −inf -> 1;
/// NaN for df <= 0 or NaN inputs.
double student_t_upper_tail(double t, double df);

/// Student t CDF P(T <= t) with df > 0 degrees of freedom: the upper tail
/// above, as P(T > −t) for t < 0 and 1 − P(T > t) for t >= 0. df > 1e7 uses
/// the normal CDF. NaN for df <= 0 or NaN inputs.
double student_t_cdf(double t, double df);

/// Student t quantile: the t with student_t_cdf(t, df) = p: Boost.Math's
/// quantile(students_t_distribution(df), p) (inverse incomplete beta,
/// full double precision). df > 1e7 uses the normal quantile.
/// p <= 0 -> -inf, p >= 1 -> +inf, p = 0.5 -> 0; NaN for df <= 0 or NaN inputs.
/// Check values: t_{0.975,10} = 2.228139, t_{0.975,1} = 12.70620.
double student_t_quantile(double p, double df);

}  // namespace nightjar::stats

// Unit under test: results/stats/ (nightjar::stats) -- summaries,
// distributions, Welch / Mann-Whitney / Benjamini-Hochberg / BCa bootstrap,
// power, the mmtests and LKP rules, and the significance rule, plus seeded
// simulations of the rule's false-positive rate and power.
//
// Every expected value says where it comes from. "mpmath" means the value was
// re-derived from the closed-form definition at 30 digits with Python's mpmath
// (betainc / ncdf / erfinv), not with this code.
#include "results/stats/bootstrap.h"
#include "results/stats/change_points.h"
#include "results/stats/descriptive.h"
#include "results/stats/distributions.h"
#include "results/stats/multiple.h"
#include "results/stats/significance.h"
#include "results/stats/tests.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace nightjar::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

using V = std::vector<double>;

// ---------------------------------------------------------------------------
// Summary, means, %change
// ---------------------------------------------------------------------------

TEST(StatsSummary, EmptyGivesNaNsAndNoMeans) {
  const Summary s = summarize({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_TRUE(std::isnan(s.min));
  EXPECT_TRUE(std::isnan(s.max));
  EXPECT_TRUE(std::isnan(s.amean));
  EXPECT_TRUE(std::isnan(s.median));
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_TRUE(std::isnan(s.coeff_var));
  EXPECT_FALSE(s.hmean.has_value());
  EXPECT_FALSE(s.gmean.has_value());
}

TEST(StatsSummary, OneSampleHasNoSpread) {
  const V x{42.0};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.min, 42.0);
  EXPECT_EQ(s.max, 42.0);
  EXPECT_EQ(s.amean, 42.0);
  EXPECT_EQ(s.median, 42.0);
  EXPECT_TRUE(std::isnan(s.stddev));  // n-1 = 0: undefined, as mmtests' calc_stddev
  EXPECT_TRUE(std::isnan(s.coeff_var));
  EXPECT_DOUBLE_EQ(*s.hmean, 42.0);
  EXPECT_DOUBLE_EQ(*s.gmean, 42.0);
}

TEST(StatsSummary, TwoSamples) {
  const V x{1.0, 3.0};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 2u);
  EXPECT_DOUBLE_EQ(s.amean, 2.0);
  EXPECT_DOUBLE_EQ(s.median, 2.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.0));                   // hand: ((1)²+(1)²)/(2-1) = 2
  EXPECT_DOUBLE_EQ(s.coeff_var, 100.0 * std::sqrt(2.0) / 2.0);  // 70.71%
  EXPECT_DOUBLE_EQ(*s.hmean, 1.5);                              // hand: 2/(1 + 1/3) = 1.5
  EXPECT_DOUBLE_EQ(*s.gmean, std::sqrt(3.0));                   // hand: sqrt(1*3)
}

TEST(StatsSummary, SamplesNearDblMaxHaveAFiniteMean) {
  // Their sum overflows; the mean of two values near DBL_MAX is not infinite.
  const V x{1e308, 1.5e308};
  const Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.amean, 1.25e308);
  EXPECT_DOUBLE_EQ(s.median, 1.25e308);
  const V inf{1.0, std::numeric_limits<double>::infinity()};
  EXPECT_TRUE(std::isinf(summarize(inf).amean));  // an infinite sample stays infinite
}

TEST(StatsSummary, EqualSamplesHaveExactlyZeroSpread) {
  const V x(7, 0.1);  // 0.1 is not representable: the mean may round, the stddev must not
  const Summary s = summarize(x);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.coeff_var, 0.0);
  EXPECT_EQ(s.min, s.max);
}

TEST(StatsSummary, TextbookVector) {
  // {2,4,4,4,5,5,7,9}: the classic "stddev = 2" example (population); the
  // sample stddev is sqrt(32/7). Hand: Σ(x-5)² = 9+1+1+1+0+0+4+16 = 32.
  const V x{9, 2, 5, 4, 4, 7, 4, 5};
  const Summary s = summarize(x);
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.min, 2.0);
  EXPECT_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.amean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);  // mean of the 4th and 5th of 2,4,4,4,5,5,7,9
  EXPECT_NEAR(s.stddev, 2.1380899352994, 1e-12);
  EXPECT_NEAR(s.coeff_var, 42.7617987059879, 1e-11);
  // hand: 8 / (1/2 + 3/4 + 2/5 + 1/7 + 1/9) = 8/1.903968... (mpmath 4.20175072947061)
  EXPECT_NEAR(*s.hmean, 4.20175072947061, 1e-12);
  // hand: (2·4³·5²·7·9)^(1/8) = 201600^(1/8) (mpmath 4.60321559604674)
  EXPECT_NEAR(*s.gmean, 4.60321559604674, 1e-12);
}

TEST(StatsSummary, HmeanAndGmeanUndefinedForZeroOrNegative) {
  const V zero{10.0, 0.0, 12.0};
  const V neg{10.0, -1.0, 12.0};
  for (const V& x : {zero, neg}) {
    const Summary s = summarize(x);
    EXPECT_FALSE(s.hmean.has_value());
    EXPECT_FALSE(s.gmean.has_value());
    EXPECT_FALSE(mean_of(x, MeanKind::harmonic).has_value());
    EXPECT_FALSE(mean_of(x, MeanKind::geometric).has_value());
    EXPECT_TRUE(mean_of(x, MeanKind::arithmetic).has_value());
  }
}

TEST(StatsSummary, MeanOf) {
  const V x{1.0, 2.0, 4.0};
  EXPECT_DOUBLE_EQ(*mean_of(x, MeanKind::arithmetic), 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(*mean_of(x, MeanKind::harmonic), 12.0 / 7.0);  // 3/(1+1/2+1/4)
  EXPECT_DOUBLE_EQ(*mean_of(x, MeanKind::geometric), 2.0);        // (1·2·4)^(1/3)
  EXPECT_FALSE(mean_of({}, MeanKind::arithmetic).has_value());
  EXPECT_FALSE(mean_of({}, MeanKind::harmonic).has_value());
  EXPECT_FALSE(mean_of({}, MeanKind::geometric).has_value());
}

TEST(StatsSummary, HarmonicNeverExceedsArithmetic) {
  // statistics.md: the Amean of rates overstates the Hmean by about CV².
  const V x{95, 100, 105, 98, 102};
  EXPECT_LT(*mean_of(x, MeanKind::harmonic), *mean_of(x, MeanKind::geometric));
  EXPECT_LT(*mean_of(x, MeanKind::geometric), *mean_of(x, MeanKind::arithmetic));
  const double cv = summarize(x).coeff_var / 100.0;
  const double overstatement = *mean_of(x, MeanKind::arithmetic) / *mean_of(x, MeanKind::harmonic);
  EXPECT_NEAR(overstatement - 1.0, cv * cv, 0.2 * cv * cv);
}

TEST(StatsBestMean, FollowsMmtestsCountRounding) {
  // mmtests Summarise.pm: sort best first, take int(n*pct/100), at least 1.
  const V x{3, 1, 5, 2, 4};
  // n=5, 50%: int(2.5)=2 -> best two.
  EXPECT_DOUBLE_EQ(*best_mean(x, 50, MeanKind::arithmetic, Direction::higher_is_better), 4.5);
  EXPECT_DOUBLE_EQ(*best_mean(x, 50, MeanKind::arithmetic, Direction::lower_is_better), 1.5);
  // n=5, 95%: int(4.75)=4 -> {5,4,3,2}; Hmean = 4/(1/5+1/4+1/3+1/2) = 240/77.
  EXPECT_DOUBLE_EQ(*best_mean(x, 95, MeanKind::harmonic, Direction::higher_is_better),
                   240.0 / 77.0);
  // n=5, 99%: int(4.95)=4 as well.
  EXPECT_DOUBLE_EQ(*best_mean(x, 99, MeanKind::harmonic, Direction::higher_is_better),
                   240.0 / 77.0);
  // n=5, 10%: int(0.5)=0 -> at least 1: the best sample.
  EXPECT_DOUBLE_EQ(*best_mean(x, 10, MeanKind::arithmetic, Direction::higher_is_better), 5.0);
  EXPECT_DOUBLE_EQ(*best_mean(x, 10, MeanKind::arithmetic, Direction::lower_is_better), 1.0);
  // 100%: all samples.
  EXPECT_DOUBLE_EQ(*best_mean(x, 100, MeanKind::arithmetic, Direction::lower_is_better), 3.0);
  // n=10, 99%: int(9.9) = 9 -> drops the worst one.
  const V y{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(*best_mean(y, 99, MeanKind::arithmetic, Direction::higher_is_better), 6.0);
  EXPECT_DOUBLE_EQ(*best_mean(y, 99, MeanKind::arithmetic, Direction::lower_is_better), 5.0);
}

TEST(StatsBestMean, UndefinedAndInvalid) {
  EXPECT_FALSE(best_mean({}, 50, MeanKind::arithmetic, Direction::higher_is_better).has_value());
  const V x{0.0, 5.0, 6.0};
  // The worst sample (0) is dropped for higher-is-better at 50% (int(1.5)=1: {6}).
  EXPECT_DOUBLE_EQ(*best_mean(x, 50, MeanKind::harmonic, Direction::higher_is_better), 6.0);
  // ... but selected for lower-is-better: Hmean undefined.
  EXPECT_FALSE(best_mean(x, 50, MeanKind::harmonic, Direction::lower_is_better).has_value());
  EXPECT_THROW(best_mean(x, 0, MeanKind::arithmetic, Direction::higher_is_better),
               std::invalid_argument);
  EXPECT_THROW(best_mean(x, 100.5, MeanKind::arithmetic, Direction::higher_is_better),
               std::invalid_argument);
}

TEST(StatsPercentChange, MatchesMmtestsTable) {
  // docs/reference.md "mmtests compare table", values printed by compare-kernels.sh.
  EXPECT_NEAR(percent_change(886331.5718, 885462.7479, Direction::higher_is_better), -0.098,
              0.0005);  // printed "(  -0.10%)"
  EXPECT_NEAR(percent_change(2337706.1583, 2332130.4909, Direction::higher_is_better), -0.2385,
              0.0005);  // printed "*  -0.24%*"
  // Stddev and CoeffVar rows use the lower-is-better formula.
  EXPECT_NEAR(percent_change(2302.9105, 2065.0845, Direction::lower_is_better), 10.33, 0.005);
  EXPECT_NEAR(percent_change(0.2598, 0.2332, Direction::lower_is_better), 10.24, 0.005);
}

TEST(StatsPercentChange, SignAndEdges) {
  EXPECT_DOUBLE_EQ(percent_change(100, 105, Direction::higher_is_better), 5.0);
  EXPECT_DOUBLE_EQ(percent_change(100, 105, Direction::lower_is_better), -5.0);
  EXPECT_DOUBLE_EQ(percent_change(100, 95, Direction::higher_is_better), -5.0);
  EXPECT_DOUBLE_EQ(percent_change(100, 95, Direction::lower_is_better), 5.0);
  EXPECT_EQ(percent_change(7, 7, Direction::higher_is_better), 0.0);
  EXPECT_EQ(percent_change(0, 0, Direction::lower_is_better), 0.0);
  EXPECT_TRUE(std::isnan(percent_change(0, 1, Direction::higher_is_better)));
  EXPECT_TRUE(std::isnan(percent_change(kNaN, 1, Direction::higher_is_better)));
  EXPECT_TRUE(std::isnan(percent_change(1, kInf, Direction::higher_is_better)));
}

// ---------------------------------------------------------------------------
// Distributions
// ---------------------------------------------------------------------------

TEST(StatsNormal, CdfAndQuantileKnownValues) {
  EXPECT_DOUBLE_EQ(normal_cdf(0.0), 0.5);
  EXPECT_NEAR(normal_cdf(1.96), 0.97500210485177956, 1e-15);  // mpmath ncdf(1.96)
  EXPECT_EQ(normal_cdf(-kInf), 0.0);
  EXPECT_EQ(normal_cdf(kInf), 1.0);
  // Published quantiles, to 16 digits (mpmath sqrt(2)·erfinv(2p-1)).
  EXPECT_NEAR(normal_quantile(0.975), 1.9599639845400542, 1e-14);
  EXPECT_NEAR(normal_quantile(0.8), 0.8416212335729142, 1e-14);
  EXPECT_NEAR(normal_quantile(0.995), 2.5758293035489008, 1e-14);
  EXPECT_NEAR(normal_quantile(0.001), -3.0902323061678135, 1e-13);
  EXPECT_NEAR(normal_quantile(1e-10), -6.3613409024040562, 1e-12);
  EXPECT_EQ(normal_quantile(0.5), 0.0);
  EXPECT_EQ(normal_quantile(0.0), -kInf);
  EXPECT_EQ(normal_quantile(1.0), kInf);
  EXPECT_TRUE(std::isnan(normal_quantile(kNaN)));
}

TEST(StatsNormal, QuantileInvertsCdf) {
  for (double p :
       {1e-300, 1e-15, 1e-6, 0.01, 0.02425, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97575, 0.99, 0.999999}) {
    const double z = normal_quantile(p);
    EXPECT_NEAR(normal_cdf(z), p, 1e-13 * std::max(p, 1e-300) + 1e-16) << "p=" << p;
    // Symmetry, where 1 - p is representable well enough to mean something.
    if (p >= 1e-6) {
      EXPECT_NEAR(normal_quantile(1.0 - p), -z, 1e-9 * std::max(1.0, std::fabs(z))) << "p=" << p;
    }
  }
}

TEST(StatsIncompleteBeta, ClosedForms) {
  for (double x : {0.01, 0.2, 0.5, 0.77, 0.99}) {
    EXPECT_NEAR(incomplete_beta(1, 1, x), x, 1e-14);                       // uniform
    EXPECT_NEAR(incomplete_beta(3, 1, x), x * x * x, 1e-14);               // I_x(a,1) = x^a
    EXPECT_NEAR(incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-14);  // I_x(1,b)
    EXPECT_NEAR(incomplete_beta(2.5, 3.5, x) + incomplete_beta(3.5, 2.5, 1 - x), 1.0, 1e-14);
  }
  EXPECT_NEAR(incomplete_beta(7.3, 7.3, 0.5), 0.5, 1e-14);  // symmetry
  // I_x(1/2,1/2) = (2/π)·asin(√x) (arcsine distribution)
  EXPECT_NEAR(incomplete_beta(0.5, 0.5, 0.3), 2 / kPi * std::asin(std::sqrt(0.3)), 1e-13);
  EXPECT_EQ(incomplete_beta(2, 3, 0), 0.0);
  EXPECT_EQ(incomplete_beta(2, 3, 1), 1.0);
  EXPECT_TRUE(std::isnan(incomplete_beta(0, 3, 0.5)));
  EXPECT_TRUE(std::isnan(incomplete_beta(2, -1, 0.5)));
}

TEST(StatsStudentT, CdfClosedForms) {
  for (double t : {-30.0, -3.0, -1.0, -0.2, 0.0, 0.5, 1.0, 2.5, 12.7}) {
    // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π.
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / kPi, 1e-14) << t;
    // df = 2: F(t) = 1/2 + t / (2·sqrt(2 + t²)).
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(2 + t * t)), 1e-14) << t;
  }
  EXPECT_DOUBLE_EQ(student_t_cdf(1.0, 1), 0.75);
  EXPECT_EQ(student_t_cdf(kInf, 3), 1.0);
  EXPECT_EQ(student_t_cdf(-kInf, 3), 0.0);
  EXPECT_TRUE(std::isnan(student_t_cdf(1.0, 0)));
  // Very large df approaches the normal distribution.
  EXPECT_NEAR(student_t_cdf(1.96, 1e9), normal_cdf(1.96), 1e-12);
  EXPECT_NEAR(student_t_cdf(1.96, 1e6), normal_cdf(1.96), 1e-6);
}

TEST(StatsStudentT, QuantilesMatchPublishedTables) {
  // Student t table (e.g. Abramowitz & Stegun table 26.10; R's qt), digits
  // confirmed with mpmath (betainc root).
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228139, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.22813885199, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047362, 1e-9);   // tan(0.475π)
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265272975, 1e-10);  // 0.95/sqrt(2·0.975·0.025)
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764451052, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.57058183564, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0422724563, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.81246112281, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.995, 4), 4.60409487135, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.8, 6), 0.905703285181, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.8, 4), 0.940964577235, 1e-10);
  EXPECT_NEAR(student_t_quantile(0.025, 10), -2.22813885199, 1e-10);  // symmetry
  EXPECT_EQ(student_t_quantile(0.5, 3), 0.0);
  EXPECT_EQ(student_t_quantile(0.0, 3), -kInf);
  EXPECT_EQ(student_t_quantile(1.0, 3), kInf);
  EXPECT_NEAR(student_t_quantile(0.975, 1e9), 1.9599639845400542, 1e-9);
}

TEST(StatsStudentT, QuantileInvertsCdfForFractionalDf) {
  for (double df : {0.7, 1.0, 2.3, 4.0, 7.776, 17.77647352, 150.0, 5000.0}) {
    for (double p : {1e-9, 0.001, 0.025, 0.2, 0.6, 0.9, 0.975, 0.9999}) {
      const double t = student_t_quantile(p, df);
      EXPECT_NEAR(student_t_cdf(t, df), p, 1e-12 + 1e-10 * p) << "df=" << df << " p=" << p;
    }
  }
}

TEST(StatsStudentT, UpperTailAndLargeDfMatchMpmath) {
  // mpmath at 50 digits: P(T > t) = betainc(df/2, 1/2, 0, df/(df+t²))/2, and
  // its root for the quantiles. Relative precision far out in the tail, and
  // at large df (below the 1e7 switch to the normal distribution).
  auto rel = [](double got, double want) { return std::fabs(got - want) / std::fabs(want); };
  EXPECT_LT(rel(student_t_upper_tail(30, 1e4), 1.0221635237127853332e-189), 1e-12);
  EXPECT_LT(rel(student_t_upper_tail(50, 3), 8.808576020635987078e-6), 1e-13);
  EXPECT_LT(rel(student_t_upper_tail(4.5, 17.776), 0.0001425063587238866373), 1e-13);
  EXPECT_LT(rel(student_t_upper_tail(1, 1e6), 0.15865537491678906464), 1e-14);
  EXPECT_LT(rel(student_t_upper_tail(1, 9e6), 0.15865526737427470684), 1e-14);
  EXPECT_LT(rel(student_t_quantile(0.45, 9e6), -0.12566135040078619195), 1e-14);
  EXPECT_LT(rel(student_t_quantile(0.2, 1e6), -0.84162159301398397242), 1e-14);
  EXPECT_LT(rel(student_t_quantile(0.8, 2.5), 1.0101638747222389413), 1e-13);
  EXPECT_EQ(student_t_upper_tail(-1.5, 4), 1.0 - student_t_upper_tail(1.5, 4));
}

TEST(StatsDistributions, EdgesGiveNaNOrInfinityAndNeverThrow) {
  // Boost.Math's default policy would throw for these (domain and overflow
  // errors); the module's contract is NaN or ±inf.
  EXPECT_EQ(normal_quantile(-0.5), -kInf);
  EXPECT_EQ(normal_quantile(1.5), kInf);
  EXPECT_EQ(normal_quantile(-kInf), -kInf);
  EXPECT_FALSE(std::signbit(normal_quantile(0.5)));
  EXPECT_EQ(student_t_quantile(-1.0, 3), -kInf);
  EXPECT_EQ(student_t_quantile(2.0, 3), kInf);
  EXPECT_EQ(student_t_quantile(1.0, 1e9), kInf);
  for (double df : {0.0, -1.0, kNaN, -kInf}) {
    EXPECT_TRUE(std::isnan(student_t_quantile(0.3, df))) << df;
    EXPECT_TRUE(std::isnan(student_t_cdf(1.0, df))) << df;
    EXPECT_TRUE(std::isnan(student_t_upper_tail(1.0, df))) << df;
  }
  EXPECT_TRUE(std::isnan(student_t_quantile(kNaN, 3)));
  EXPECT_TRUE(std::isnan(student_t_cdf(kNaN, 3)));
  EXPECT_TRUE(std::isnan(student_t_upper_tail(kNaN, 3)));
  EXPECT_EQ(student_t_upper_tail(kInf, 3), 0.0);
  EXPECT_EQ(student_t_upper_tail(-kInf, 3), 1.0);
  EXPECT_EQ(student_t_cdf(kInf, 1e9), 1.0);
  EXPECT_EQ(student_t_cdf(-kInf, 1e9), 0.0);
  EXPECT_EQ(student_t_cdf(kInf, kInf), 1.0);  // df = inf: the normal distribution
  EXPECT_EQ(incomplete_beta(2, 3, -0.5), 0.0);
  EXPECT_EQ(incomplete_beta(2, 3, 1.5), 1.0);
  EXPECT_TRUE(std::isnan(incomplete_beta(0, 0, 0.5)));
  EXPECT_TRUE(std::isnan(incomplete_beta(kNaN, 1, 0.5)));
  EXPECT_TRUE(std::isnan(incomplete_beta(1, 1, kNaN)));
  EXPECT_TRUE(std::isnan(incomplete_beta(-kInf, 1, 0.5)));
  EXPECT_TRUE(std::isnan(normal_quantile(kNaN)));
  EXPECT_TRUE(std::isnan(normal_cdf(kNaN)));
}

// ---------------------------------------------------------------------------
// Standard errors and tests
// ---------------------------------------------------------------------------

TEST(StatsHmeanError, DeltaMethodHandExample) {
  // x = {1,2,4}: r = {1, 1/2, 1/4}, r̄ = 7/12, H = 12/7; Σ(r-r̄)² = 42/144, s_r² = 7/48.
  // SD = H²·s_r = (144/49)·sqrt(7/48); SE = SD/√3 = 12√7/49.
  const V x{1, 2, 4};
  const auto e = hmean_error(x);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->hmean, 12.0 / 7.0);
  EXPECT_NEAR(e->stddev, 1.12226343549939, 1e-13);
  EXPECT_NEAR(e->std_error, 12.0 * std::sqrt(7.0) / 49.0, 1e-14);
  EXPECT_FALSE(hmean_error(V{5.0}).has_value());
  EXPECT_FALSE(hmean_error(V{5.0, 0.0, 3.0}).has_value());
  const V flat{3, 3, 3};
  EXPECT_EQ(hmean_error(flat)->std_error, 0.0);
}

TEST(StatsWelch, ReproducesRSleepExample) {
  // R: t.test(extra ~ group, data = sleep) prints
  //   t = -1.8608, df = 17.776, p-value = 0.07939
  //   95 percent confidence interval: -3.3654832  0.2054832
  // (group1 - group2). Here base = group 1, now = group 2, so the signs flip.
  const V g1{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
  const V g2{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};
  const auto w = welch_test(g1, g2);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->t, 1.860813467, 1e-8);
  EXPECT_NEAR(w->df, 17.77647352, 1e-7);
  EXPECT_NEAR(w->p, 0.07939414019, 1e-9);
  EXPECT_NEAR(w->diff, 1.58, 1e-12);
  EXPECT_NEAR(w->std_error, 0.8490910172, 1e-9);
  EXPECT_NEAR(w->diff_lo, -0.2054832307, 1e-8);
  EXPECT_NEAR(w->diff_hi, 3.365483231, 1e-8);
}

TEST(StatsWelch, LogScaleHandExample) {
  // ln base = {0, .1, .2}, ln now = {.3, .4, .5}: diff .3, s² = .01 each,
  // se = sqrt(2·.01/3) = .0816497, t = 3.674235, df = 4 exactly (equal n and
  // variances: (s1+s2)²/(s1²/2+s2²/2) = 4), p = 2·P(T4 > 3.674235) (mpmath
  // 0.02131164113), CI exp(.3 ± 2.776445·.0816497) = [1.076057831, 1.69332795].
  const V base{1.0, std::exp(0.1), std::exp(0.2)};
  const V now{std::exp(0.3), std::exp(0.4), std::exp(0.5)};
  const auto w = welch_log_test(base, now);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->log.t, 3.674234614, 1e-8);
  EXPECT_NEAR(w->log.df, 4.0, 1e-9);
  EXPECT_NEAR(w->log.p, 0.02131164113, 1e-9);
  EXPECT_NEAR(w->ratio, 1.349858808, 1e-9);  // e^0.3
  EXPECT_NEAR(w->ratio_lo, 1.076057831, 1e-8);
  EXPECT_NEAR(w->ratio_hi, 1.69332795, 1e-8);
  // Symmetric in rate vs time: testing 1/x gives the same p and the inverse ratio.
  V inv_base, inv_now;
  for (double x : base) inv_base.push_back(1 / x);
  for (double x : now) inv_now.push_back(1 / x);
  const auto wi = welch_log_test(inv_base, inv_now);
  EXPECT_NEAR(wi->log.p, w->log.p, 1e-12);
  EXPECT_NEAR(wi->ratio, 1 / w->ratio, 1e-12);
}

TEST(StatsWelch, ZeroVarianceNeverNaN) {
  const V a{100, 100, 100};
  const V b{105, 105, 105, 105};
  // Both sides constant and equal: no evidence of change.
  auto same = welch_test(a, a);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->t, 0.0);
  EXPECT_EQ(same->p, 1.0);
  EXPECT_EQ(same->df, 4.0);  // n1 + n2 - 2
  EXPECT_EQ(same->diff_lo, 0.0);
  EXPECT_EQ(same->diff_hi, 0.0);
  // Both constant, different: a noiseless difference is real.
  auto diff = welch_test(a, b);
  ASSERT_TRUE(diff.has_value());
  EXPECT_EQ(diff->t, kInf);
  EXPECT_EQ(diff->p, 0.0);
  EXPECT_EQ(diff->diff_lo, 5.0);
  EXPECT_EQ(diff->diff_hi, 5.0);
  auto down = welch_log_test(b, a);
  EXPECT_EQ(down->log.p, 0.0);
  EXPECT_NEAR(down->ratio, 100.0 / 105.0, 1e-14);  // exp(ln 100 - ln 105)
  EXPECT_EQ(down->ratio_lo, down->ratio);
  EXPECT_EQ(down->ratio_hi, down->ratio);
  // One side constant: df is the other side's n-1 (Satterthwaite with s1 = 0).
  const V c{99, 100, 101};
  auto one = welch_test(a, c);
  ASSERT_TRUE(one.has_value());
  EXPECT_DOUBLE_EQ(one->df, 2.0);
  EXPECT_EQ(one->t, 0.0);
  EXPECT_DOUBLE_EQ(one->p, 1.0);
}

TEST(StatsWelch, UndefinedInputs) {
  const V one{1.0};
  const V two{1.0, 2.0};
  EXPECT_FALSE(welch_test(one, two).has_value());
  EXPECT_FALSE(welch_test({}, two).has_value());
  EXPECT_FALSE(welch_test(two, V{1.0, kNaN}).has_value());
  EXPECT_FALSE(welch_log_test(two, V{1.0, 0.0}).has_value());
  EXPECT_FALSE(welch_log_test(two, V{1.0, -2.0}).has_value());
  EXPECT_TRUE(welch_test(two, V{1.0, -2.0}).has_value());
  EXPECT_THROW(welch_test(two, two, 0.0), std::invalid_argument);
  EXPECT_THROW(welch_log_test(two, two, 1.0), std::invalid_argument);
}

TEST(StatsMannWhitney, ExactSmallSamples) {
  // No ties, n < 50: exact distribution, as R's wilcox.test.
  // Complete separation 3 vs 3: P = 1/C(6,3) = 1/20 each tail -> p = 0.1.
  auto r = mann_whitney(V{1, 2, 3}, V{4, 5, 6});
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->exact);
  EXPECT_EQ(r->u, 9.0);
  EXPECT_DOUBLE_EQ(r->p, 0.1);
  // 4 vs 4: 2/C(8,4) = 2/70; 5 vs 5: 2/C(10,5) = 2/252.
  EXPECT_DOUBLE_EQ(mann_whitney(V{1, 2, 3, 4}, V{5, 6, 7, 8})->p, 2.0 / 70.0);
  EXPECT_DOUBLE_EQ(mann_whitney(V{6, 7, 8, 9, 10}, V{1, 2, 3, 4, 5})->p, 2.0 / 252.0);
  EXPECT_EQ(mann_whitney(V{6, 7, 8, 9, 10}, V{1, 2, 3, 4, 5})->u, 0.0);
  // R: wilcox.test(c(1,3,5), c(2,4,6)) -> W = 3, p-value = 0.7. The null counts
  // of U for 3 vs 3 are 1,1,2,3,3,3,3,2,1,1 (sum 20): P(U<=3) = 7/20.
  r = mann_whitney(V{2, 4, 6}, V{1, 3, 5});
  EXPECT_EQ(r->u, 3.0);
  EXPECT_DOUBLE_EQ(r->p, 0.7);
  // R: wilcox.test(c(.5,.6,.7,3.5), c(1,2,3,4)) -> W = 3, p-value = 0.2. Counts
  // for 4 vs 4 are the Gaussian binomial [8 4]: 1,1,2,3,5,5,7,7,8,... (sum 70):
  // P(U<=3) = 7/70.
  r = mann_whitney(V{1, 2, 3, 4}, V{0.5, 0.6, 0.7, 3.5});
  EXPECT_EQ(r->u, 3.0);
  EXPECT_DOUBLE_EQ(r->p, 0.2);
  // Unequal sizes 2 vs 3, separated: 2/C(5,2) = 0.2.
  r = mann_whitney(V{1, 2}, V{3, 4, 5});
  EXPECT_EQ(r->u, 6.0);
  EXPECT_DOUBLE_EQ(r->p, 0.2);
  // Identical samples in the middle of the distribution: p = 1.
  EXPECT_DOUBLE_EQ(mann_whitney(V{1, 4}, V{2, 3})->p, 1.0);
}

TEST(StatsMannWhitney, ExactDistributionSumsAndIsSymmetric) {
  // 49 vs 49 with complete separation: p = 2/C(98,49) (largest exact case).
  V a, b;
  for (int i = 0; i < 49; ++i) {
    a.push_back(i);
    b.push_back(100 + i);
  }
  auto r = mann_whitney(a, b);
  ASSERT_TRUE(r->exact);
  EXPECT_NEAR(r->p / mann_whitney_min_p(49, 49), 1.0, 1e-9);
  // Swapping the sides keeps p and mirrors U.
  auto s = mann_whitney(b, a);
  EXPECT_EQ(s->u, 0.0);
  EXPECT_EQ(r->p, s->p);
}

TEST(StatsMannWhitney, NormalApproximationWithTies) {
  // base {1,2,2,3}, now {2,3,3,4}: midranks 1 | 3,3,3 | 6,6,6 | 8, R_now = 23,
  // U = 23 - 10 = 13, mn/2 = 8, ties Σ(t³-t) = 24+24 = 48, N = 8:
  // σ² = 16/12·(9 - 48/56) = 10.857143, z = (5 - 0.5)/σ = 1.365698,
  // p = 2·(1-Φ(z)) = 0.172033708921823 (R's wilcox.test with correct = TRUE;
  // mpmath).
  auto r = mann_whitney(V{1, 2, 2, 3}, V{2, 3, 3, 4});
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->exact);
  EXPECT_EQ(r->u, 13.0);
  EXPECT_NEAR(r->z, 1.36569820200049, 1e-12);
  EXPECT_NEAR(r->p, 0.172033708921823, 1e-12);
  // All values tied: σ = 0 -> p = 1 (R returns NaN).
  r = mann_whitney(V{5, 5, 5}, V{5, 5});
  EXPECT_EQ(r->p, 1.0);
  EXPECT_EQ(r->u, 3.0);
}

TEST(StatsMannWhitney, NormalApproximationForLargeSamples) {
  // 50 vs 50 separated, no ties but n = 50: normal approximation (R's rule).
  // z = (2500 - 1250 - 0.5)/sqrt(2500·101/12) = 8.61382793438366,
  // p = 7.06607193038903e-18 (mpmath).
  V a, b;
  for (int i = 1; i <= 50; ++i) {
    a.push_back(i);
    b.push_back(50 + i);
  }
  auto r = mann_whitney(a, b);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->exact);
  EXPECT_NEAR(r->z, 8.61382793438366, 1e-11);
  EXPECT_NEAR(r->p / 7.06607193038903e-18, 1.0, 1e-8);
  EXPECT_FALSE(mann_whitney({}, b).has_value());
  EXPECT_FALSE(mann_whitney(V{kNaN}, b).has_value());
}

TEST(StatsMannWhitney, MinimumP) {
  EXPECT_DOUBLE_EQ(mann_whitney_min_p(3, 3), 0.1);           // 2/20: can never reach 0.05
  EXPECT_NEAR(mann_whitney_min_p(4, 4), 2.0 / 70.0, 1e-15);  // the "U-test minimum" of 4
  EXPECT_NEAR(mann_whitney_min_p(3, 4), 2.0 / 35.0, 1e-15);  // 0.057: still not < 0.05
  EXPECT_EQ(mann_whitney_min_p(1, 1), 1.0);
}

TEST(StatsBH, TextbookExample) {
  // Benjamini & Hochberg (1995), §4: the 15 p-values of the thrombolysis study;
  // at q = 0.05 the procedure rejects the four smallest.
  const V p{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
            0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};
  const auto rej = bh_rejected(p, 0.05);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(rej[i], i < 4) << i;
  // Adjusted values by hand: q_(i) = min_{j>=i} p_(j)·15/j.
  const V expect{0.0015,           0.003,           0.0095,           0.035625,        0.0603,
                 0.0298 * 15 / 7,  0.0298 * 15 / 7, 0.0645,           0.0765,          0.486,
                 0.4262 * 15 / 11, 0.714875,        0.6528 * 15 / 13, 0.759 * 15 / 14, 1.0};
  const auto q = benjamini_hochberg(p);
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(q[i], expect[i], 1e-12) << i;
}

TEST(StatsBH, OrderNaNAndBounds) {
  // Unsorted input keeps its order; NaN is outside the family (m = 3).
  const V p{0.04, kNaN, 0.01, 0.03};
  const auto q = benjamini_hochberg(p);
  EXPECT_NEAR(q[0], 0.04, 1e-15);  // 0.04·3/3
  EXPECT_TRUE(std::isnan(q[1]));
  EXPECT_NEAR(q[2], 0.03, 1e-15);  // 0.01·3/1
  EXPECT_NEAR(q[3], 0.04, 1e-15);  // min(0.03·3/2 = 0.045, 0.04)
  const auto rej = bh_rejected(p, 0.04);
  EXPECT_TRUE(rej[0]);
  EXPECT_FALSE(rej[1]);
  EXPECT_TRUE(rej[2]);
  EXPECT_TRUE(rej[3]);
  EXPECT_TRUE(benjamini_hochberg({}).empty());
  EXPECT_THROW(benjamini_hochberg(V{0.5, 1.5}), std::invalid_argument);
  EXPECT_THROW(bh_rejected(V{0.5}, 0.0), std::invalid_argument);
  // Capped at 1.
  EXPECT_EQ(benjamini_hochberg(V{0.9, 0.95})[0], 0.95);
}

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

TEST(StatsBootstrap, DeterministicForASeed) {
  const V base{100, 103, 98, 101, 99, 102};
  const V now{95, 97, 94, 96, 98, 93};
  const auto a = bca_ratio_ci(base, now, MeanKind::harmonic, 42);
  const auto b = bca_ratio_ci(base, now, MeanKind::harmonic, 42);
  const auto c = bca_ratio_ci(base, now, MeanKind::harmonic, 43);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->lo, b->lo);
  EXPECT_EQ(a->hi, b->hi);
  EXPECT_EQ(a->resamples, 2000u);
  EXPECT_NE(a->lo, c->lo);          // another seed, another Monte Carlo draw
  EXPECT_NEAR(a->lo, c->lo, 0.01);  // ... but the same interval to Monte Carlo error
  EXPECT_DOUBLE_EQ(a->ratio,
                   *mean_of(now, MeanKind::harmonic) / *mean_of(base, MeanKind::harmonic));
  EXPECT_LT(a->lo, a->ratio);
  EXPECT_GT(a->hi, a->ratio);
  EXPECT_LT(a->hi, 1.0);  // a clear 4% drop: the interval excludes 1
  // Roughly the Welch-on-logs interval (both ~ ratio ± 2.2·SE at these n).
  const auto w = welch_log_test(base, now);
  EXPECT_NEAR(a->lo, w->ratio_lo, 0.01);
  EXPECT_NEAR(a->hi, w->ratio_hi, 0.01);
}

TEST(StatsBootstrap, EdgeCases) {
  const V flat{10, 10, 10};
  const V flat2{12, 12, 12};
  const auto z = bca_ratio_ci(flat, flat2, MeanKind::arithmetic, 1);
  ASSERT_TRUE(z.has_value());
  EXPECT_DOUBLE_EQ(z->ratio, 1.2);
  EXPECT_DOUBLE_EQ(z->lo, 1.2);
  EXPECT_DOUBLE_EQ(z->hi, 1.2);
  EXPECT_FALSE(bca_ratio_ci(V{1.0}, flat, MeanKind::arithmetic, 1).has_value());
  EXPECT_FALSE(bca_ratio_ci(V{1.0, 0.0}, flat, MeanKind::harmonic, 1).has_value());
  EXPECT_FALSE(bca_ratio_ci(V{1.0, -1.0}, flat, MeanKind::arithmetic, 1).has_value());
  EXPECT_THROW(bca_ratio_ci(flat, flat2, MeanKind::arithmetic, 1, 0.05, 1999),
               std::invalid_argument);
  EXPECT_THROW(bca_ratio_ci(flat, flat2, MeanKind::arithmetic, 1, 1.5), std::invalid_argument);
}

// Deterministic generator shared by the simulations: mt19937_64 + Box-Muller,
// so the draws do not depend on the standard library's distributions.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53; }
  double normal() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform()));
    const double th = 2.0 * kPi * uniform();
    spare_ = r * std::sin(th);
    have_spare_ = true;
    return r * std::cos(th);
  }
  // n lognormal samples with median `level` and coefficient of variation cv (fraction).
  V lognormal(std::size_t n, double level, double cv) {
    const double sigma = std::sqrt(std::log1p(cv * cv));
    V v(n);
    for (auto& x : v) x = level * std::exp(sigma * normal());
    return v;
  }

 private:
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool have_spare_ = false;
};

TEST(StatsBootstrap, CoverageIsNearNominal) {
  // 200 seeded A/B pairs with a true Hmean ratio of 1 (same lognormal), n = 10,
  // CV 5%: a 95% BCa interval should cover 1 in roughly 95% of trials (BCa
  // undercovers a little at n = 10).
  Noise noise(2024);
  int covered = 0;
  const int trials = 200;
  for (int i = 0; i < trials; ++i) {
    const V a = noise.lognormal(10, 1000, 0.05), b = noise.lognormal(10, 1000, 0.05);
    const auto ci = bca_ratio_ci(a, b, MeanKind::harmonic, 1000 + i);
    ASSERT_TRUE(ci.has_value());
    if (ci->lo <= 1.0 && 1.0 <= ci->hi) ++covered;
  }
  EXPECT_GE(covered, 170);  // >= 85%
  EXPECT_LE(covered, 199);
}

// ---------------------------------------------------------------------------
// Power
// ---------------------------------------------------------------------------

TEST(StatsPower, IterationsNeededMatchesReferenceTable) {
  // docs/reference.md "Power": n per side at alpha .05, power .8.
  struct Row {
    double cv, delta;
    int table;
  };
  for (Row r : {Row{1, 2, 4}, Row{2, 2, 16}, Row{5, 5, 16}, Row{5, 2, 98}, Row{2, 5, 3}}) {
    const auto n = iterations_needed(r.delta, r.cv);
    ASSERT_TRUE(n.has_value());
    EXPECT_NEAR(static_cast<double>(*n), r.table, 2.0) << "CV " << r.cv << " delta " << r.delta;
  }
  // The exact figures of the t-corrected search (t quantiles from the table test):
  //  CV1/δ2: normal 3.92; n=5: (2.306+0.889)·√(2/5) = 2.02 > 2, n=6: 1.79 -> 6
  //  (R's power.t.test(delta=2, sd=1) gives n = 5.09 -> 6);
  //  CV2/δ2: normal 15.70; n=16: 2.0478 > 2, n=17: 1.9825 -> 17; CV5/δ2: 98.1 -> 100.
  EXPECT_EQ(*iterations_needed(2, 1), 6u);
  EXPECT_EQ(*iterations_needed(2, 2), 17u);
  EXPECT_EQ(*iterations_needed(5, 5), 17u);
  EXPECT_EQ(*iterations_needed(2, 5), 100u);
}

TEST(StatsPower, SmallestDetectableChange) {
  // Large n: the normal formula δ_min = (z.975 + z.8)·c·√(2/n) = 2.8016·c·√(2/n).
  const double zsum = 1.9599639845400542 + 0.8416212335729142;
  EXPECT_NEAR(smallest_detectable_change(100000, 3.0), zsum * 3.0 * std::sqrt(2.0 / 100000), 1e-5);
  // n = 3 per side, ν = 4: (2.776445 + 0.940965)·c·√(2/3) (t table values above).
  EXPECT_NEAR(smallest_detectable_change(3, 10.0),
              (2.7764451052 + 0.940964577235) * 10.0 * std::sqrt(2.0 / 3.0), 1e-8);
  // Unequal sides: √(1/n1 + 1/n2), ν = n1 + n2 - 2.
  EXPECT_NEAR(smallest_detectable_change_unequal(2, 4, 1.0),
              (2.7764451052 + 0.940964577235) * std::sqrt(0.75), 1e-8);
  EXPECT_EQ(smallest_detectable_change(1, 2.0), kInf);
  EXPECT_EQ(smallest_detectable_change(5, 0.0), 0.0);
  EXPECT_TRUE(std::isnan(smallest_detectable_change(5, kNaN)));
  EXPECT_THROW(smallest_detectable_change(5, 1.0, 0.05, 1.0), std::invalid_argument);
  EXPECT_THROW(smallest_detectable_change(5, 1.0, 0.0, 0.8), std::invalid_argument);
  // statistics.md: "a 2% gate needs CV <= ~1% at 5-10 iterations".
  EXPECT_LT(smallest_detectable_change(10, 1.0), 2.0);
  EXPECT_GT(smallest_detectable_change(5, 2.0), 2.0);
}

TEST(StatsPower, IterationsNeededIsTheInverse) {
  for (double cv : {0.5, 1.0, 2.0, 3.7, 5.0, 10.0}) {
    for (double d : {1.0, 2.0, 5.0, 10.0}) {
      const std::size_t n = *iterations_needed(d, cv);
      EXPECT_LE(smallest_detectable_change(n, cv), d) << cv << " " << d;
      if (n > 2) {
        EXPECT_GT(smallest_detectable_change(n - 1, cv), d) << cv << " " << d;
      }
    }
  }
  EXPECT_EQ(*iterations_needed(1.0, 0.0), 2u);
  EXPECT_FALSE(iterations_needed(0.0, 1.0).has_value());
  EXPECT_FALSE(iterations_needed(-1.0, 1.0).has_value());
  EXPECT_FALSE(iterations_needed(1.0, kNaN).has_value());
  // Huge figures stay finite: CV 50%, δ 0.01% -> 2·7.85·2500/1e-4 ≈ 3.9e8.
  EXPECT_NEAR(static_cast<double>(*iterations_needed(0.01, 50.0)), 3.925e8, 0.01e8);
}

// ---------------------------------------------------------------------------
// Reference rules
// ---------------------------------------------------------------------------

TEST(StatsMmtestsRule, IntervalNonOverlap) {
  // base mean 100, sample SD sqrt(2/4) = 0.7071: 100 ± 1.386 = [98.614, 101.386].
  const V base{100, 101, 99, 100, 100};
  // now mean 103: [101.614, 104.386] -> no overlap.
  EXPECT_TRUE(mmtests_interval_significant(base, V{103, 104, 102, 103, 103}, MeanKind::arithmetic));
  // now mean 101: [99.614, 102.386] -> overlap.
  EXPECT_FALSE(
      mmtests_interval_significant(base, V{101, 102, 100, 101, 101}, MeanKind::arithmetic));
  // Mirror (a drop).
  EXPECT_TRUE(mmtests_interval_significant(base, V{97, 98, 96, 97, 97}, MeanKind::arithmetic));
  // Harmonic: SD = sqrt(H⁴·Σ(1/x-1/H)²/n) (Stat.pm). {1,2,4}: H = 12/7,
  // Σ(r-r̄)² = 7/24, SD = (144/49)·sqrt(7/72) = 0.916321; interval
  // 1.714286 ± 1.795950 = [-0.0817, 3.5102]. {4,4,4}: [4,4] -> no overlap.
  EXPECT_TRUE(mmtests_interval_significant(V{1, 2, 4}, V{4, 4, 4}, MeanKind::harmonic));
  EXPECT_FALSE(mmtests_interval_significant(V{1, 2, 4}, V{3.5, 3.5, 3.5}, MeanKind::harmonic));
  // Undefined -> never significant.
  EXPECT_FALSE(mmtests_interval_significant(V{1}, V{4, 4, 4}, MeanKind::arithmetic));
  EXPECT_FALSE(mmtests_interval_significant(V{1, 0}, V{4, 4, 4}, MeanKind::harmonic));
}

TEST(StatsLkpRule, SeparatedRangesAndRatio) {
  const V base{100, 101, 102};
  // now min 104 > base median 101, now median 105 > base max 102, 105/101 > 1.01.
  EXPECT_TRUE(lkp_significant(base, V{104, 105, 106}));
  EXPECT_TRUE(lkp_significant(base, V{96, 97, 98}));  // mirror
  // Not separated: now min 100.5 is below the base median 101.
  EXPECT_FALSE(lkp_significant(base, V{100.5, 101.5, 104}));
  // Separated by LKP's definition although the ranges touch: now min 101.5 >
  // base median 101 and now median 103 > base max 102.
  EXPECT_TRUE(lkp_significant(base, V{101.5, 103, 104}));
  // Separated but medians within 1%: 100.6/100.1 = 1.005.
  EXPECT_FALSE(lkp_significant(V{100, 100.1, 100.2}, V{100.5, 100.6, 100.7}));
  // Fewer than 3 runs on a side.
  EXPECT_FALSE(lkp_significant(V{100, 101}, V{104, 105, 106}));
}

// ---------------------------------------------------------------------------
// The significance rule
// ---------------------------------------------------------------------------

Significance decide_one(const V& base, const V& now, Direction dir, MeanKind mean,
                        SignificanceOptions opt = {}) {
  const RowInput row{base, now, dir, mean};
  return decide_significance(std::span<const RowInput>(&row, 1), opt).at(0);
}

TEST(StatsSignificance, Names) {
  EXPECT_EQ(to_string(TestKind::welch), "welch");
  EXPECT_EQ(to_string(TestKind::lkp), "lkp");
  EXPECT_EQ(test_kind_from_string("utest"), TestKind::utest);
  EXPECT_EQ(test_kind_from_string("mmtests"), TestKind::mmtests);
  EXPECT_THROW(test_kind_from_string("ttest"), std::invalid_argument);
  EXPECT_EQ(to_string(Verdict::inconclusive), "inconclusive");
  EXPECT_EQ(to_string(Verdict::regression), "regression");
}

TEST(StatsSignificance, HmeanUndefinedIsUndefined) {
  const auto s =
      decide_one(V{100, 0, 101}, V{100, 101, 102}, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::undefined);
  EXPECT_TRUE(std::isnan(s.pct_change));
  EXPECT_FALSE(s.p.has_value());
  EXPECT_TRUE(std::isnan(s.smallest_detectable_change_pct));
  EXPECT_NE(s.reason.find("Hmean undefined"), std::string::npos) << s.reason;
  // Non-finite samples.
  EXPECT_EQ(decide_one(V{1, 2, kNaN}, V{1, 2, 3}, Direction::lower_is_better, MeanKind::arithmetic)
                .verdict,
            Verdict::undefined);
  // Baseline arithmetic mean 0 -> %change undefined.
  EXPECT_EQ(
      decide_one(V{-1, 0, 1}, V{1, 2, 3}, Direction::lower_is_better, MeanKind::arithmetic).verdict,
      Verdict::undefined);
}

TEST(StatsSignificance, FewerThanThreeSamplesIsInconclusive) {
  for (const V& small : {V{}, V{100}, V{100, 101}}) {
    const auto s =
        decide_one(small, V{90, 91, 89, 90}, Direction::higher_is_better, MeanKind::harmonic);
    EXPECT_EQ(s.verdict, Verdict::inconclusive) << small.size();
    EXPECT_FALSE(s.q.has_value());
    EXPECT_NE(s.reason.find("fewer than 3"), std::string::npos) << s.reason;
  }
  // With 2 per side the noise is known, so iterations_needed is reported (>= 3).
  const auto s =
      decide_one(V{100, 101}, V{90, 91}, Direction::higher_is_better, MeanKind::harmonic);
  ASSERT_TRUE(s.iterations_needed.has_value());
  EXPECT_GE(*s.iterations_needed, 3u);
  EXPECT_NEAR(s.pct_change,
              percent_change(*mean_of(V{100, 101}, MeanKind::harmonic),
                             *mean_of(V{90, 91}, MeanKind::harmonic), Direction::higher_is_better),
              1e-12);
  EXPECT_TRUE(std::isfinite(s.smallest_detectable_change_pct));
}

TEST(StatsSignificance, EqualSamplesBothSidesAreUnchangedNotNaN) {
  const V a{250, 250, 250, 250};
  const auto s = decide_one(a, a, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::unchanged);
  EXPECT_EQ(s.pct_change, 0.0);
  EXPECT_EQ(*s.p, 1.0);
  EXPECT_EQ(*s.q, 1.0);
  EXPECT_EQ(s.smallest_detectable_change_pct, 0.0);
  EXPECT_DOUBLE_EQ(*s.ratio_lo, 1.0);
  EXPECT_DOUBLE_EQ(*s.ratio_hi, 1.0);
  EXPECT_FALSE(s.iterations_needed.has_value());
}

TEST(StatsSignificance, NoiselessDifferencesAreDecidedByTheMinimumEffect) {
  // Constant counters: 5% fewer faults/sec is a regression (p = 0, |5%| >= 1%).
  auto s =
      decide_one(V{100, 100, 100}, V{95, 95, 95}, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::regression);
  EXPECT_EQ(*s.p, 0.0);
  EXPECT_NEAR(s.pct_change, -5.0, 1e-12);
  // Lower-is-better and lower: improvement.
  s = decide_one(V{100, 100, 100}, V{95, 95, 95}, Direction::lower_is_better, MeanKind::arithmetic);
  EXPECT_EQ(s.verdict, Verdict::improvement);
  // 0.5% < min effect 1%: unchanged, shown by the equivalence test (issue 14).
  s = decide_one(V{100, 100, 100}, V{99.5, 99.5, 99.5}, Direction::higher_is_better,
                 MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::unchanged);
  EXPECT_NE(s.reason.find("inside"), std::string::npos) << s.reason;
  // ... unless the minimum effect is lowered.
  s = decide_one(V{100, 100, 100}, V{99.5, 99.5, 99.5}, Direction::higher_is_better,
                 MeanKind::harmonic, {.min_effect_pct = 0.1});
  EXPECT_EQ(s.verdict, Verdict::regression);
}

TEST(StatsSignificance, ClearRegressionAndImprovement) {
  // Hand: Hmean 100.0 -> ~90.0 with CV ~1%: Welch on logs p ~ 1e-6.
  const V base{99, 100, 101, 100, 100.5};
  const V now{89, 90, 91, 90, 90.5};
  auto s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::regression) << s.reason;
  EXPECT_LT(*s.p, 1e-5);
  EXPECT_EQ(*s.p, *s.q);  // a family of one
  EXPECT_LT(*s.ratio_hi, 0.92);
  EXPECT_GT(*s.ratio_lo, 0.88);
  EXPECT_FALSE(s.iterations_needed.has_value());
  // The same numbers as times: 10% faster is an improvement.
  s = decide_one(base, now, Direction::lower_is_better, MeanKind::arithmetic);
  EXPECT_EQ(s.verdict, Verdict::improvement);
  EXPECT_NEAR(s.pct_change, 100.0 - 90.1 * 100.0 / 100.1, 1e-9);
}

TEST(StatsSignificance, NoisyRowIsInconclusiveWithIterationsNeeded) {
  // CV ~10%, n = 3, a 5% drop: could only detect ~30%.
  const V base{100, 110, 90};
  const V now{95, 104.5, 85.5};
  const auto s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::inconclusive) << s.reason;
  EXPECT_GT(s.smallest_detectable_change_pct, 25.0);
  ASSERT_TRUE(s.iterations_needed.has_value());
  // Detecting ~5% at CV ~10%: 15.7·100/25 ≈ 63 per side, +1–2.
  EXPECT_GT(*s.iterations_needed, 50u);
  EXPECT_LT(*s.iterations_needed, 80u);
  EXPECT_NE(s.reason.find("needs"), std::string::npos) << s.reason;
}

TEST(StatsSignificance, QuietRowIsUnchanged) {
  // CV ~0.3%, n = 5, no change: could have seen 1%, so "unchanged".
  const V base{1000, 1003, 997, 1001, 999};
  const V now{1001, 998, 1002, 1000, 999};
  const auto s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic);
  EXPECT_EQ(s.verdict, Verdict::unchanged) << s.reason;
  EXPECT_LT(s.smallest_detectable_change_pct, 1.0);
}

TEST(StatsSignificance, ArithmeticRowWithZerosFallsBackToRawWelch) {
  // Lower-is-better counts with zeros: ln undefined, the raw Welch test is used.
  const V base{0, 1, 0, 1, 0, 1};
  const V now{5, 6, 5, 6, 5, 6};
  const auto s = decide_one(base, now, Direction::lower_is_better, MeanKind::arithmetic);
  EXPECT_EQ(s.verdict, Verdict::regression) << s.reason;
  EXPECT_TRUE(s.p.has_value());
  EXPECT_FALSE(s.ratio_lo.has_value());  // no ratio CI without logs
}

TEST(StatsSignificance, BenjaminiHochbergAcrossTheFamily) {
  // Two rows: one with a moderate effect, one null. The family's q values are
  // BH of the row p values.
  const V b1{100, 102, 98, 101, 99}, n1{97, 99, 95, 98, 96};
  const V b2{100, 102, 98, 101, 99}, n2{101, 99, 100, 102, 98};
  const RowInput rows[] = {{b1, n1, Direction::higher_is_better, MeanKind::harmonic},
                           {b2, n2, Direction::higher_is_better, MeanKind::harmonic},
                           {V{}, V{}, Direction::higher_is_better, MeanKind::harmonic}};
  const auto out = decide_significance(rows);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_TRUE(out[0].p && out[1].p);
  EXPECT_FALSE(out[2].p.has_value());  // not tested: not in the family
  const auto q = benjamini_hochberg(V{*out[0].p, *out[1].p});
  EXPECT_DOUBLE_EQ(*out[0].q, q[0]);
  EXPECT_DOUBLE_EQ(*out[1].q, q[1]);
  EXPECT_GE(*out[0].q, *out[0].p);
  // p for row 0 by the log-Welch test directly.
  EXPECT_DOUBLE_EQ(*out[0].p, welch_log_test(b1, n1)->log.p);
}

TEST(StatsSignificance, UtestNeedsFourPerSide) {
  // Complete separation at n = 3 gives p = 0.1 at best: inconclusive, needs 4.
  SignificanceOptions opt;
  opt.test = TestKind::utest;
  auto s = decide_one(V{100, 101, 102}, V{80, 81, 82}, Direction::higher_is_better,
                      MeanKind::harmonic, opt);
  EXPECT_EQ(s.verdict, Verdict::inconclusive) << s.reason;
  EXPECT_DOUBLE_EQ(*s.p, 0.1);
  ASSERT_TRUE(s.iterations_needed.has_value());
  EXPECT_GE(*s.iterations_needed, 4u);
  // n = 4: 2/70 < 0.05 -> regression.
  s = decide_one(V{100, 101, 102, 103}, V{80, 81, 82, 83}, Direction::higher_is_better,
                 MeanKind::harmonic, opt);
  EXPECT_EQ(s.verdict, Verdict::regression) << s.reason;
  EXPECT_NEAR(*s.p, 2.0 / 70.0, 1e-15);
}

TEST(StatsSignificance, MmtestsAndLkpRules) {
  SignificanceOptions mm{.test = TestKind::mmtests};
  SignificanceOptions lkp{.test = TestKind::lkp};
  const V base{100, 101, 99, 100, 100};
  const V now{103, 104, 102, 103, 103};
  auto s = decide_one(base, now, Direction::lower_is_better, MeanKind::arithmetic, mm);
  EXPECT_EQ(s.verdict, Verdict::regression);  // times went up 3%
  EXPECT_FALSE(s.p.has_value());
  EXPECT_FALSE(s.q.has_value());
  s = decide_one(base, V{101, 102, 100, 101, 101}, Direction::lower_is_better, MeanKind::arithmetic,
                 mm);
  EXPECT_EQ(s.verdict, Verdict::unchanged);
  s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic, lkp);
  EXPECT_EQ(s.verdict, Verdict::improvement);
  EXPECT_FALSE(s.p.has_value());
  // Still inconclusive below 3 samples.
  s = decide_one(V{100, 101}, now, Direction::higher_is_better, MeanKind::harmonic, lkp);
  EXPECT_EQ(s.verdict, Verdict::inconclusive);
  s = decide_one(V{100, 101}, now, Direction::higher_is_better, MeanKind::harmonic, mm);
  EXPECT_EQ(s.verdict, Verdict::inconclusive);
}

TEST(StatsSignificance, InvalidOptionsThrow) {
  const RowInput row{};
  const std::span<const RowInput> fam(&row, 1);
  EXPECT_THROW(decide_significance(fam, {.alpha = 0.0}), std::invalid_argument);
  EXPECT_THROW(decide_significance(fam, {.min_effect_pct = -1.0}), std::invalid_argument);
  EXPECT_THROW(decide_significance(fam, {.power = 1.0}), std::invalid_argument);
  EXPECT_TRUE(decide_significance({}).empty());
}

// ---------------------------------------------------------------------------
// Simulations (seeded, deterministic). The observed figures are quoted in
// docs/statistics.md "Validation"; they are printed so a change shows up.
// ---------------------------------------------------------------------------

TEST(StatsSimulation, AAFamiliesFalsePositiveRate) {
  // 1000 A/A comparisons, 10-metric families, CoeffVar 2%, n = 5 per side,
  // lognormal noise: the fraction of comparisons with ANY significant row must
  // stay <= alpha = 5% (BH controls the family-wise rate under the global null).
  Noise noise(0xA11CE);
  const int trials = 1000, metrics = 10;
  int any_significant = 0, rows_significant = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<V> base(metrics), now(metrics);
    std::vector<RowInput> fam;
    for (int m = 0; m < metrics; ++m) {
      base[m] = noise.lognormal(5, 1000.0 * (m + 1), 0.02);
      now[m] = noise.lognormal(5, 1000.0 * (m + 1), 0.02);
      fam.push_back({base[m], now[m], Direction::higher_is_better, MeanKind::harmonic});
    }
    bool any = false;
    for (const auto& s : decide_significance(fam)) {
      const bool sig = s.verdict == Verdict::improvement || s.verdict == Verdict::regression;
      rows_significant += sig;
      any = any || sig;
    }
    any_significant += any;
  }
  RecordProperty("aa_any_significant", any_significant);
  std::printf("[ figures  ] A/A: %d/%d families with a significant row, %d/%d rows\n",
              any_significant, trials, rows_significant, trials * metrics);
  EXPECT_LE(any_significant, 50);  // <= 5%
}

TEST(StatsSimulation, PlantedFivePercentRegressionIsFound) {
  // Throughput (higher is better) drops 5% at CoeffVar 2%, n = 5 per side,
  // single-row families: flagged as a significant regression in >= 80%.
  Noise noise(0xBEEF);
  const int trials = 1000;
  int found = 0, wrong_way = 0;
  for (int t = 0; t < trials; ++t) {
    const V base = noise.lognormal(5, 5000.0, 0.02);
    const V now = noise.lognormal(5, 5000.0 * 0.95, 0.02);
    const auto s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic);
    found += s.verdict == Verdict::regression;
    wrong_way += s.verdict == Verdict::improvement;
  }
  std::printf("[ figures  ] planted -5%% at CV 2%%, n=5: %d/%d flagged regression\n", found,
              trials);
  EXPECT_GE(found, 800);
  EXPECT_EQ(wrong_way, 0);
}

TEST(StatsSimulation, NoisyPlantedChangeIsInconclusiveNotStarred) {
  // CoeffVar 10%, n = 3, planted 5% drop: the rule must say "inconclusive,
  // needs N" rather than star it, in the large majority of trials.
  Noise noise(0xC0FFEE);
  const int trials = 1000;
  int inconclusive = 0, starred = 0, with_iterations = 0;
  std::size_t min_need = SIZE_MAX, max_need = 0;
  for (int t = 0; t < trials; ++t) {
    const V base = noise.lognormal(3, 5000.0, 0.10);
    const V now = noise.lognormal(3, 5000.0 * 0.95, 0.10);
    const auto s = decide_one(base, now, Direction::higher_is_better, MeanKind::harmonic);
    if (s.verdict == Verdict::inconclusive) {
      ++inconclusive;
      if (s.iterations_needed && *s.iterations_needed > 3) {
        ++with_iterations;
        min_need = std::min(min_need, *s.iterations_needed);
        max_need = std::max(max_need, *s.iterations_needed);
      }
    }
    starred += s.verdict == Verdict::improvement || s.verdict == Verdict::regression;
  }
  std::printf(
      "[ figures  ] CV 10%%, n=3, planted -5%%: %d/%d inconclusive (iterations_needed %zu..%zu), "
      "%d starred\n",
      inconclusive, trials, min_need, max_need, starred);
  EXPECT_GE(inconclusive, 900);
  EXPECT_EQ(with_iterations, inconclusive);
}

// ---------------------------------------------------------------------------
// Change points: E-divisive means + Welch (nightjar trend)
// ---------------------------------------------------------------------------

TEST(StatsChangePoints, QhatByHand) {
  // [1, 2, 3, 10, 11], a = 1, min_segment 2 (Matteson & James eq. 3-5, κ = n):
  // τ=2: between Σ = 2+9+10+1+8+9 = 39 -> 2·39/6 = 13; within X = 1/1;
  //      within Y = (7+8+1)/3 = 16/3; Ê = 13 − 1 − 16/3 = 20/3; Q̂ = 6/5·20/3 = 8.
  // τ=3: between Σ = 9+10+8+9+7+8 = 51 -> 17; within X = (1+2+1)/3 = 4/3;
  //      within Y = 1; Ê = 44/3; Q̂ = 6/5·44/3 = 17.6.
  const V s = {1, 2, 3, 10, 11};
  auto q = edivisive_qhat(s);
  ASSERT_EQ(q.size(), 6u);
  EXPECT_TRUE(std::isnan(q[0]));
  EXPECT_TRUE(std::isnan(q[1]));
  EXPECT_NEAR(q[2], 8.0, 1e-12);
  EXPECT_NEAR(q[3], 17.6, 1e-12);
  EXPECT_TRUE(std::isnan(q[4]));
  EXPECT_TRUE(std::isnan(q[5]));
  // [0, 0, 1, 1]: only τ = 2; between mean 1 -> Ê = 2, Q̂ = 4/4·2 = 2.
  auto q2 = edivisive_qhat(V{0, 0, 1, 1});
  EXPECT_NEAR(q2[2], 2.0, 1e-12);
  // a = 0.5 on the same data: |1−0|^0.5 = 1, so the same value.
  EXPECT_NEAR(edivisive_qhat(V{0, 0, 1, 1}, 0.5)[2], 2.0, 1e-12);
  // Too short: all NaN.
  for (double v : edivisive_qhat(V{1, 2, 3})) EXPECT_TRUE(std::isnan(v));
  EXPECT_THROW(edivisive_qhat(s, 2.0), std::invalid_argument);
  EXPECT_THROW(edivisive_qhat(s, 1.0, 1), std::invalid_argument);
}

TEST(StatsChangePoints, QhatIncrementalMatchesDirectSums) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0, 1);
  V s(37);
  for (auto& x : s) x = 100 + 3 * z(rng);
  for (double a : {1.0, 0.7, 1.5}) {
    auto q = edivisive_qhat(s, a, 3);
    for (std::size_t tau = 3; tau + 3 <= s.size(); ++tau) {
      double between = 0, wx = 0, wy = 0;
      for (std::size_t i = 0; i < s.size(); ++i)
        for (std::size_t j = i + 1; j < s.size(); ++j) {
          double d = std::pow(std::abs(s[i] - s[j]), a);
          (j < tau ? wx : i >= tau ? wy : between) += d;
        }
      double m = static_cast<double>(tau), k = static_cast<double>(s.size() - tau);
      double e = 2 * between / (m * k) - wx / (m * (m - 1) / 2) - wy / (k * (k - 1) / 2);
      EXPECT_NEAR(q[tau], m * k / (m + k) * e, 1e-9 * std::max(1.0, std::abs(q[tau]))) << tau;
    }
  }
}

TEST(StatsChangePoints, CleanStepIsFoundExactlyWithItsFigures) {
  V s;
  for (int i = 0; i < 20; ++i) s.push_back(100 + (i % 3) * 0.5);  // 100, 100.5, 101, ...
  for (int i = 0; i < 20; ++i) s.push_back(90 + (i % 3) * 0.5);
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  o.direction = Direction::higher_is_better;
  auto cps = detect_change_points(s, o);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 20u);
  EXPECT_EQ(cps[0].segment_begin, 0u);
  EXPECT_EQ(cps[0].segment_end, 40u);
  EXPECT_NEAR(cps[0].mean_before, *mean_of(std::span(s).subspan(0, 20), MeanKind::harmonic), 1e-9);
  EXPECT_NEAR(cps[0].pct_change,
              percent_change(cps[0].mean_before, cps[0].mean_after, Direction::higher_is_better),
              1e-12);
  EXPECT_LT(cps[0].pct_change, -9.0);  // a 10% drop of a rate is a regression
  EXPECT_LT(cps[0].p, 1e-10);
  EXPECT_GT(cps[0].qhat, 0.0);
  // Lower is better: the same step is an improvement.
  o.direction = Direction::lower_is_better;
  o.mean = MeanKind::arithmetic;
  cps = detect_change_points(s, o);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_GT(cps[0].pct_change, 9.0);
}

TEST(StatsChangePoints, TwoStepsAndConstantSeries) {
  V s;
  for (int i = 0; i < 15; ++i) s.push_back(100 + (i % 2));
  for (int i = 0; i < 15; ++i) s.push_back(120 + (i % 2));
  for (int i = 0; i < 15; ++i) s.push_back(110 + (i % 2));
  auto cps = detect_change_points(s);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_EQ(cps[0].index, 15u);
  EXPECT_EQ(cps[1].index, 30u);
  EXPECT_EQ(cps[0].segment_end, 30u);
  EXPECT_EQ(cps[1].segment_begin, 15u);
  EXPECT_TRUE(detect_change_points(V(40, 5.0)).empty());           // constant: p = 1
  EXPECT_TRUE(detect_change_points(V{1, 2, 3}).empty());           // too short
  EXPECT_TRUE(detect_change_points(V{1, 2, kNaN, 4, 5}).empty());  // not finite
  // A noiseless step between two constants: p = 0, found.
  V c(10, 5.0);
  c.insert(c.end(), 10, 6.0);
  cps = detect_change_points(c);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 10u);
  EXPECT_EQ(cps[0].p, 0.0);
}

TEST(StatsChangePoints, MinimumEffectAndSpikes) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z(0, 1);
  // A 0.5% step at CV 0.05%: significant, but below the 1% minimum effect.
  V s;
  for (int i = 0; i < 60; ++i) s.push_back((i < 30 ? 100.0 : 100.5) * (1 + 0.0005 * z(rng)));
  EXPECT_TRUE(detect_change_points(s).empty());
  ChangePointOptions o;
  o.min_effect_pct = 0;
  auto cps = detect_change_points(s, o);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 30u);
  // One outlier in a flat series is not a change point (a segment needs 2 points).
  V spike;
  for (int i = 0; i < 40; ++i) spike.push_back(100 * (1 + 0.01 * z(rng)));
  spike[20] = 150;
  EXPECT_TRUE(detect_change_points(spike).empty());
}

TEST(StatsChangePoints, LongSeriesUsesWindows) {
  // 300 points, steps at 100 and 220: windows of 50 must still find both.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> z(0, 1);
  V s;
  for (int i = 0; i < 300; ++i)
    s.push_back((i < 100 ? 100 : i < 220 ? 92 : 97) * (1 + 0.01 * z(rng)));
  auto cps = detect_change_points(s);
  ASSERT_EQ(cps.size(), 2u);
  EXPECT_NEAR(static_cast<double>(cps[0].index), 100, 1);
  EXPECT_NEAR(static_cast<double>(cps[1].index), 220, 1);
  ChangePointOptions whole;
  whole.window = 0;
  auto cps2 = detect_change_points(s, whole);
  ASSERT_EQ(cps2.size(), 2u);
}

TEST(StatsChangePoints, InvalidOptionsThrow) {
  const V s(20, 1.0);
  ChangePointOptions o;
  o.max_p = 0;
  EXPECT_THROW(detect_change_points(s, o), std::invalid_argument);
  o = {};
  o.min_effect_pct = -1;
  EXPECT_THROW(detect_change_points(s, o), std::invalid_argument);
  o = {};
  o.exponent = 0;
  EXPECT_THROW(detect_change_points(s, o), std::invalid_argument);
  o = {};
  o.min_segment = 1;
  EXPECT_THROW(detect_change_points(s, o), std::invalid_argument);
}

// Check 2 of the trend issue: a flat history at CoeffVar 3% (60 points) has no
// change point in >= 95% of seeded trials; a 5% step in the middle is found
// within ±1 point in >= 90%.
//
// A trend point is a build: the Hmean of its run's iterations. With runs of 5
// iterations at CoeffVar 3% both figures hold. With a single 3% sample per
// point, no estimator can place a 5% step within ±1 in 90% of trials: the
// least-squares split (optimal for Gaussian noise) manages 79.2% on these
// seeds, E-divisive 78%; that case is printed and held to the flat-history
// bound and to >= 75%.
struct ChangePointTrialCounts {
  int flat_with_cp = 0, step_found = 0, least_squares_found = 0;
};

ChangePointTrialCounts change_point_trials(int trials, int iterations) {
  ChangePointTrialCounts c;
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(t));
    std::normal_distribution<double> z(0, 1);
    V flat(60), step(60), a(static_cast<std::size_t>(iterations)), b(a.size());
    for (std::size_t i = 0; i < 60; ++i) {
      for (std::size_t k = 0; k < a.size(); ++k) {
        a[k] = 100 * (1 + 0.03 * z(rng));
        b[k] = (i < 30 ? 100 : 95) * (1 + 0.03 * z(rng));
      }
      flat[i] = *mean_of(a, MeanKind::harmonic);
      step[i] = *mean_of(b, MeanKind::harmonic);
    }
    if (!detect_change_points(flat, o).empty()) ++c.flat_with_cp;
    for (const auto& cp : detect_change_points(step, o))
      if (cp.index >= 29 && cp.index <= 31) {
        ++c.step_found;
        break;
      }
    // Reference: the least-squares split over the whole series.
    double best = kInf;
    std::size_t best_tau = 0;
    for (std::size_t tau = 2; tau + 2 <= step.size(); ++tau) {
      double sse = 0;
      for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{0, tau}, {tau, step.size()}}) {
        double m = 0;
        for (std::size_t i = lo; i < hi; ++i) m += step[i];
        m /= static_cast<double>(hi - lo);
        for (std::size_t i = lo; i < hi; ++i) sse += (step[i] - m) * (step[i] - m);
      }
      if (sse < best) {
        best = sse;
        best_tau = tau;
      }
    }
    if (best_tau >= 29 && best_tau <= 31) ++c.least_squares_found;
  }
  return c;
}

TEST(StatsSimulation, ChangePointsFlatHistoryAndFivePercentStep) {
  const int trials = 1000;
  for (int iterations : {5, 1}) {
    ChangePointTrialCounts c = change_point_trials(trials, iterations);
    std::printf(
        "change points, 60 points, each the Hmean of %d sample(s) at CoeffVar 3%%: flat history: "
        "%d/%d trials with a change point (%.1f%%); 5%% step at point 30 found within ±1: %d/%d "
        "(%.1f%%; least-squares split: %.1f%%)\n",
        iterations, c.flat_with_cp, trials, 100.0 * c.flat_with_cp / trials, c.step_found, trials,
        100.0 * c.step_found / trials, 100.0 * c.least_squares_found / trials);
    EXPECT_LE(c.flat_with_cp, trials * 5 / 100) << iterations;
    EXPECT_GE(c.step_found, trials * (iterations == 1 ? 75 : 90) / 100) << iterations;
  }
}

// ---------------------------------------------------------------------------
// Possible change in the newest points (stats::detect_recent_change): the
// three histories of issue 14 and the false-alarm rate of flat histories
// (docs/statistics.md "Possible change in the newest nights").
// ---------------------------------------------------------------------------

// `nights` points at 100 with CoeffVar-1% lognormal noise, seeded; `level`
// replaces the level of the points it names.
V nightly_series(std::size_t nights, std::uint64_t seed, const std::vector<std::size_t>& at = {},
                 double level = 100) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  const double sigma = std::sqrt(std::log1p(0.01 * 0.01));
  V s(nights);
  for (std::size_t i = 0; i < nights; ++i) {
    const bool moved = std::find(at.begin(), at.end(), i) != at.end();
    s[i] = (moved ? level : 100) * std::exp(sigma * z(rng) - sigma * sigma / 2);
  }
  return s;
}

TEST(StatsRecentChange, LastNightLastFourNightsAndASpike) {
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const V last = nightly_series(12, seed, {11}, 90);
    EXPECT_TRUE(detect_change_points(last, o).empty());
    auto one = detect_recent_change(last, {}, o);
    ASSERT_TRUE(one) << seed;
    EXPECT_EQ(one->index, 11u);
    EXPECT_EQ(one->segment_end - one->index, 1u);
    EXPECT_NEAR(one->pct_change, -10, 2.5);
    EXPECT_LE(one->p, 0.01);

    const V four = nightly_series(12, seed, {8, 9, 10, 11}, 90);
    EXPECT_TRUE(detect_change_points(four, o).empty());
    auto since = detect_recent_change(four, {}, o);
    ASSERT_TRUE(since) << seed;
    EXPECT_EQ(since->index, 8u);
    EXPECT_EQ(since->segment_begin, 0u);
    EXPECT_LT(since->pct_change, -7);

    const V spike = nightly_series(12, seed, {5}, 90);
    EXPECT_TRUE(detect_change_points(spike, o).empty());
    EXPECT_FALSE(detect_recent_change(spike, {}, o)) << seed;
  }
  // After a confirmed change point the segment before the newest nights
  // starts there; too short a segment (< min_segment) tests nothing.
  V stepped = nightly_series(20, 7, {10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 95);
  auto cps = detect_change_points(stepped, o);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_FALSE(detect_recent_change(stepped, cps, o));
  const V five{100, 101, 99, 100, 90};
  EXPECT_FALSE(detect_recent_change(five, {}, o));  // 4 before the last
  o.max_p = 0;
  EXPECT_THROW(detect_recent_change(stepped, cps, o), std::invalid_argument);
}

TEST(StatsSimulation, RecentChangeFalseAlarmsOfFlatHistories) {
  // Flat histories of 6, 12 and 30 nights: how often the newest nights are
  // reported as a possible change (the figure in docs/statistics.md).
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  const int trials = 2000;
  for (std::size_t nights : {6u, 12u, 30u}) {
    int alarms = 0;
    for (int t = 0; t < trials; ++t)
      if (V s = nightly_series(nights, 5000 + static_cast<std::uint64_t>(t));
          detect_recent_change(s, detect_change_points(s, o), o))
        ++alarms;
    std::printf("possible change, flat %zu nights at CoeffVar 1%%: %d/%d trials (%.2f%%)\n", nights,
                alarms, trials, 100.0 * alarms / trials);
    // Measured 0.7%, 3.0% and 4.5%: Welch with 2-3 newest nights is liberal
    // (docs/statistics.md); the bound keeps it from getting worse.
    EXPECT_LE(alarms, trials * 5 / 100) << nights;
  }
}

// ---------------------------------------------------------------------------
// Short segments (stats::detect_short_changes): the double step a new user
// planted (100, 100, 130, 130, then 150) shows at both steps; a single spike
// and flat histories show nothing (docs/statistics.md "Short segments").
// ---------------------------------------------------------------------------

// `nights` points with CoeffVar-1% lognormal noise, seeded, at `levels[i]`
// (the last level repeated).
V levelled_series(std::size_t nights, std::uint64_t seed, const std::vector<double>& levels) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  const double sigma = std::sqrt(std::log1p(0.01 * 0.01));
  V s(nights);
  for (std::size_t i = 0; i < nights; ++i)
    s[i] = levels[std::min(i, levels.size() - 1)] * std::exp(sigma * z(rng) - sigma * sigma / 2);
  return s;
}

TEST(StatsShortChange, ADoubleStepShowsAtEachStepAndASpikeShowsNothing) {
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const V twice = levelled_series(16, seed, {100, 100, 130, 130, 150});
    const auto cps = detect_change_points(twice, o);
    const auto shorts = detect_short_changes(twice, cps, o);
    std::set<std::size_t> at;
    for (const auto& c : cps) at.insert(c.index);
    for (const auto& c : shorts) {
      at.insert(c.index);
      EXPECT_LT(c.p, o.max_p);
      EXPECT_GT(c.pct_change, 10);
    }
    EXPECT_EQ(at, (std::set<std::size_t>{2, 4})) << seed;

    V spike = levelled_series(16, seed, {100});
    spike[7] *= 1.5;
    const auto none = detect_change_points(spike, o);
    EXPECT_TRUE(none.empty()) << seed;
    EXPECT_TRUE(detect_short_changes(spike, none, o).empty()) << seed;
  }
  // A minimum segment of 2 leaves nothing to add.
  o.min_segment = 2;
  const V twice = levelled_series(16, 1, {100, 100, 130, 130, 150});
  EXPECT_TRUE(detect_short_changes(twice, detect_change_points(twice, o), o).empty());
}

TEST(StatsSimulation, ShortChangeFalseAlarmsOfFlatHistories) {
  ChangePointOptions o;
  o.mean = MeanKind::harmonic;
  const int trials = 1000;
  for (std::size_t nights : {16u, 60u}) {
    int alarms = 0;
    for (int t = 0; t < trials; ++t) {
      const V s = levelled_series(nights, 9000 + static_cast<std::uint64_t>(t), {100});
      if (!detect_short_changes(s, detect_change_points(s, o), o).empty()) ++alarms;
    }
    std::printf("short-segment change, flat %zu nights at CoeffVar 1%%: %d/%d trials (%.2f%%)\n",
                nights, alarms, trials, 100.0 * alarms / trials);
    EXPECT_LE(alarms, trials * 5 / 100) << nights;
  }
}

// ---------------------------------------------------------------------------
// Sorted input (compare sorts each side's samples once; summarize and
// best_mean then skip their own sorts): the answers must not change.
// ---------------------------------------------------------------------------

TEST(StatsSortedInput, SummaryAndBestMeansAreTheSameSortedOrNot) {
  const V raw{103.0, 97.5, 101.25, 99.0, 100.5, 98.75, 102.0};
  V sorted = raw;
  std::sort(sorted.begin(), sorted.end());
  const Summary a = summarize(raw), b = summarize(sorted);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_EQ(a.median, b.median);  // 100.5: the 4th of 7
  EXPECT_EQ(b.median, 100.5);
  EXPECT_DOUBLE_EQ(a.amean, b.amean);
  EXPECT_DOUBLE_EQ(a.stddev, b.stddev);
  EXPECT_DOUBLE_EQ(*a.hmean, *b.hmean);
  for (double pct : {50.0, 95.0, 99.0, 100.0}) {
    for (auto dir : {Direction::higher_is_better, Direction::lower_is_better}) {
      EXPECT_DOUBLE_EQ(*best_mean(raw, pct, MeanKind::harmonic, dir),
                       *best_mean(sorted, pct, MeanKind::harmonic, dir))
          << pct;
    }
  }
  // BHmean-50 of 7 (higher is better): int(3.5) = 3 best = 103, 102, 101.25.
  EXPECT_DOUBLE_EQ(*best_mean(sorted, 50, MeanKind::arithmetic, Direction::higher_is_better),
                   (103.0 + 102.0 + 101.25) / 3);
  // BAmean-50 (lower is better): 97.5, 98.75, 99.
  EXPECT_DOUBLE_EQ(*best_mean(sorted, 50, MeanKind::arithmetic, Direction::lower_is_better),
                   (97.5 + 98.75 + 99.0) / 3);
  // Ties and a descending input take the general path.
  V desc(sorted.rbegin(), sorted.rend());
  EXPECT_DOUBLE_EQ(*best_mean(desc, 50, MeanKind::arithmetic, Direction::higher_is_better),
                   (103.0 + 102.0 + 101.25) / 3);
  const V ties{5, 5, 5, 5};
  EXPECT_EQ(summarize(ties).median, 5.0);
  EXPECT_EQ(*best_mean(ties, 50, MeanKind::harmonic, Direction::higher_is_better), 5.0);
}

// ---------------------------------------------------------------------------
// Figures computed once (issue 19): the logs, summary and run components a
// row's statistic lines and its significance share give exactly the answers
// computed from the samples.
// ---------------------------------------------------------------------------

// Bitwise equality of two doubles (NaN equals NaN).
bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool same_bits(const std::optional<double>& a, const std::optional<double>& b) {
  return a.has_value() == b.has_value() && (!a || same_bits(*a, *b));
}

void expect_same_summary(const Summary& a, const Summary& b) {
  EXPECT_EQ(a.n, b.n);
  for (auto field : {&Summary::min, &Summary::max, &Summary::amean, &Summary::median,
                     &Summary::stddev, &Summary::coeff_var})
    EXPECT_TRUE(same_bits(a.*field, b.*field)) << a.*field << " vs " << b.*field;
  EXPECT_TRUE(same_bits(a.hmean, b.hmean));
  EXPECT_TRUE(same_bits(a.gmean, b.gmean));
}

TEST(StatsPrepared, LogSamplesAndTheSummaryFromThem) {
  const V raw{103.0, 97.5, 101.25, 99.0, 100.5, 98.75, 102.0};
  const auto logs = log_samples(raw);
  ASSERT_TRUE(logs.has_value());
  ASSERT_EQ(logs->size(), raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) EXPECT_EQ((*logs)[i], std::log(raw[i]));
  expect_same_summary(summarize(raw, *logs), summarize(raw));
  EXPECT_TRUE(log_samples(V{}).has_value());
  EXPECT_FALSE(log_samples(V{1.0, 0.0}).has_value());
  EXPECT_FALSE(log_samples(V{1.0, -2.0}).has_value());
  EXPECT_FALSE(log_samples(V{1.0, std::numeric_limits<double>::infinity()}).has_value());
  EXPECT_FALSE(log_samples(V{1.0, std::numeric_limits<double>::quiet_NaN()}).has_value());
  EXPECT_THROW(summarize(raw, V{1.0}), std::invalid_argument);

  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> x(std::log(100.0), 0.02);
  V big(5000);
  for (double& v : big) v = x(rng);
  expect_same_summary(summarize(big, *log_samples(big)), summarize(big));
  V sorted = big;
  std::sort(sorted.begin(), sorted.end());
  expect_same_summary(summarize(sorted, *log_samples(sorted)), summarize(sorted));
}

TEST(StatsPrepared, SummaryMeanIsMeanOf) {
  for (const V& xs : {V{}, V{4.0}, V{1.0, 2.0, 4.0}, V{0.0, 3.0}, V{-1.0, 2.0}}) {
    const Summary s = summarize(xs);
    for (auto kind : {MeanKind::arithmetic, MeanKind::harmonic, MeanKind::geometric})
      EXPECT_TRUE(same_bits(summary_mean(s, kind), mean_of(xs, kind))) << xs.size();
  }
}

TEST(StatsPrepared, BestMeansOfSortedInputAreTheSameBits) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> x(std::log(100.0), 0.05);
  V raw(997);
  for (double& v : raw) v = x(rng);
  V sorted = raw;
  std::sort(sorted.begin(), sorted.end());
  for (double pct : {1.0, 50.0, 95.0, 99.0, 100.0})
    for (auto dir : {Direction::higher_is_better, Direction::lower_is_better})
      for (auto kind : {MeanKind::arithmetic, MeanKind::harmonic, MeanKind::geometric})
        EXPECT_TRUE(same_bits(best_mean(sorted, pct, kind, dir), best_mean(raw, pct, kind, dir)))
            << pct;
}

TEST(StatsPrepared, WelchOnGivenLogsIsWelchLogTest) {
  const V base{100, 102, 98, 101, 99.5}, now{97, 96.5, 98, 95, 97.25};
  const auto a = welch_log_test(base, now, 0.05);
  const auto b = welch_log_test_of_logs(*log_samples(base), *log_samples(now), 0.05);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(same_bits(a->log.p, b->log.p));
  EXPECT_TRUE(same_bits(a->ratio, b->ratio));
  EXPECT_TRUE(same_bits(a->ratio_lo, b->ratio_lo));
  EXPECT_TRUE(same_bits(a->ratio_hi, b->ratio_hi));
  EXPECT_FALSE(welch_log_test_of_logs(V{1.0}, *log_samples(now), 0.05));
  EXPECT_THROW(welch_log_test_of_logs(*log_samples(base), *log_samples(now), 1.5),
               std::invalid_argument);
}

// A family decided with prepare_side's figures gives the same decisions,
// field by field and bit by bit, as one decided from the samples: rows on
// runs, on one run, with a calibration, with an undefined Hmean, too few
// samples, and an arithmetic row with zeros.
TEST(StatsPrepared, DecisionsWithPreparedSidesAreTheSame) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> z(0.0, 1.0);
  auto runs_of = [&](double mean, int runs, int per_run) {
    std::vector<V> out(static_cast<std::size_t>(runs));
    for (auto& r : out) {
      const double run_mean = mean * (1 + 0.01 * z(rng));
      for (int i = 0; i < per_run; ++i) r.push_back(run_mean * (1 + 0.02 * z(rng)));
    }
    return out;
  };
  auto pooled = [](const std::vector<V>& runs) {
    V all;
    for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
    std::sort(all.begin(), all.end());
    return all;
  };
  struct Row {
    std::vector<V> base_runs, now_runs;
    V base, now;
    MeanKind mean = MeanKind::harmonic;
    std::optional<BetweenRunVariance> between;
  };
  std::vector<Row> rows;
  for (double change : {1.0, 0.97, 1.005}) {
    Row r;
    r.base_runs = runs_of(100, 5, 10);
    r.now_runs = runs_of(100 * change, 6, 10);
    rows.push_back(r);
  }
  {
    Row one;  // one run a side, calibrated
    one.base_runs = runs_of(100, 1, 8);
    one.now_runs = runs_of(95, 1, 8);
    one.between = BetweenRunVariance{1e-4, 9};
    rows.push_back(one);
  }
  {
    Row few;  // fewer than 3 samples
    few.base_runs = {{100, 101}};
    few.now_runs = {{99}};
    rows.push_back(few);
  }
  {
    Row zero;  // Hmean undefined
    zero.base_runs = {{100, 0.0, 99}, {101, 98}};
    zero.now_runs = {{100, 101, 99}, {98, 97}};
    rows.push_back(zero);
  }
  {
    Row arith;  // amean with zeros: Welch on raw values
    arith.mean = MeanKind::arithmetic;
    arith.base_runs = {{0.0, 1, 2, 1, 0.0}};
    arith.now_runs = {{3, 4, 3, 5, 4}};
    rows.push_back(arith);
  }
  std::vector<RowInput> plain, prepared;
  std::vector<PreparedSide> sides;
  sides.reserve(2 * rows.size());
  for (Row& r : rows) {
    r.base = pooled(r.base_runs);
    r.now = pooled(r.now_runs);
    RowInput in{r.base, r.now, Direction::higher_is_better, r.mean};
    if (r.base_runs.size() >= 2) in.base_runs = r.base_runs;
    if (r.now_runs.size() >= 2) in.now_runs = r.now_runs;
    in.between = r.between;
    plain.push_back(in);
    sides.push_back(prepare_side(in.base, in.base_runs));
    in.base_prepared = &sides.back();
    sides.push_back(prepare_side(in.now, in.now_runs));
    in.now_prepared = &sides.back();
    prepared.push_back(in);
  }
  for (auto test : {TestKind::welch, TestKind::utest, TestKind::mmtests, TestKind::lkp}) {
    SignificanceOptions o;
    o.test = test;
    const auto a = decide_significance(plain, o), b = decide_significance(prepared, o);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "row " << i << " test " << to_string(test));
      EXPECT_EQ(a[i].verdict, b[i].verdict);
      EXPECT_EQ(a[i].reason, b[i].reason);
      EXPECT_EQ(a[i].basis, b[i].basis);
      EXPECT_EQ(a[i].iterations_needed, b[i].iterations_needed);
      EXPECT_EQ(a[i].runs_needed, b[i].runs_needed);
      for (auto f : {&Significance::pct_change, &Significance::smallest_detectable_change_pct,
                     &Significance::df, &Significance::min_effect_pct})
        EXPECT_TRUE(same_bits(a[i].*f, b[i].*f));
      for (auto f : {&Significance::p, &Significance::q, &Significance::ratio_lo,
                     &Significance::ratio_hi, &Significance::equivalence_lo,
                     &Significance::equivalence_hi, &Significance::between_cv_pct})
        EXPECT_TRUE(same_bits(a[i].*f, b[i].*f));
    }
  }
  // The verdicts are not all alike: the rows test what they say.
  const auto d = decide_significance(plain);
  EXPECT_EQ(d[4].verdict, Verdict::inconclusive);
  EXPECT_EQ(d[5].verdict, Verdict::undefined);
  EXPECT_EQ(d[1].basis, RunBasis::runs);
  EXPECT_EQ(d[3].basis, RunBasis::calibrated);
}

}  // namespace
}  // namespace nightjar::stats

// Runs as the unit (results/stats/run_model.h), the equivalence test
// (equivalence.h), the group-sequential boundaries (sequential.h) and how
// decide_significance uses them: seeded, small.
#include "results/stats/equivalence.h"
#include "results/stats/run_model.h"
#include "results/stats/sequential.h"
#include "results/stats/significance.h"

#include <gtest/gtest.h>
#include "run_simulation.h"

#include <cmath>
#include <random>
#include <vector>

namespace nightjar::stats {
namespace {

using Runs = std::vector<std::vector<double>>;

Runs simulate(std::mt19937_64& rng, int runs, int n, double mu, double sb, double sw) {
  return test::simulate_runs(rng, runs, n, mu, sb, sw);
}

std::vector<double> pooled(const Runs& runs) {
  std::vector<double> v;
  for (const auto& r : runs) v.insert(v.end(), r.begin(), r.end());
  return v;
}

TEST(RunModel, ComponentsByHand) {
  // ln values: run 1 {0, 0.2} mean 0.1, run 2 {0.4, 0.6} mean 0.5.
  const Runs runs{{1.0, std::exp(0.2)}, {std::exp(0.4), std::exp(0.6)}};
  const auto c = run_components(runs);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->runs, 2u);
  EXPECT_EQ(c->samples, 4u);
  EXPECT_NEAR(c->mean, 0.3, 1e-12);
  EXPECT_NEAR(c->within_var, 0.02, 1e-12);    // (0.02 + 0.02) / 2
  EXPECT_NEAR(c->run_mean_var, 0.08, 1e-12);  // (0.2² + 0.2²) / 1
  EXPECT_NEAR(c->between_var, 0.08 - 0.02 / 2.0, 1e-12);
  EXPECT_FALSE(run_components(Runs{{1.0, -1.0}}));
  EXPECT_TRUE(std::isnan(run_components(Runs{{1.0, 2.0}})->between_var));
}

TEST(RunModel, RunsWelchSeesBetweenRunVariationThatIterationsMiss) {
  // A/A with a between-run CoeffVar of 5% and a within-run one of 1%: Welch on
  // the pooled iterations flags far more than 5%; on run means about 5%.
  std::mt19937_64 rng(13);
  int iter_flags = 0, run_flags = 0;
  const int trials = 400;
  for (int t = 0; t < trials; ++t) {
    const Runs a = simulate(rng, 3, 5, 4.6, 0.05, 0.01), b = simulate(rng, 3, 5, 4.6, 0.05, 0.01);
    const auto ca = run_components(a), cb = run_components(b);
    const auto rt = runs_welch_test(*ca, *cb);
    ASSERT_TRUE(rt);
    run_flags += rt->p < 0.05;
    const auto it = calibrated_test(*ca, *cb, {0.0, 1e9});  // s_b = 0: the iterations' view
    iter_flags += it->p < 0.05;
  }
  EXPECT_GT(iter_flags, trials / 4);
  EXPECT_LT(run_flags, trials * 9 / 100);
}

TEST(RunModel, CalibratedTestWithOneRunPerSide) {
  const Runs a{{100, 101, 99, 100.5, 99.5}}, b{{100.2, 101.1, 99.3, 100.4, 99.9}};
  const auto ca = run_components(a), cb = run_components(b);
  const auto t = calibrated_test(*ca, *cb, {std::pow(0.05, 2), 10});
  ASSERT_TRUE(t);
  EXPECT_EQ(t->basis, RunBasis::calibrated);
  // 2 s_b² dominates: se ≈ 0.05·√2, df near the calibration's 10.
  EXPECT_NEAR(t->se, 0.05 * std::sqrt(2.0), 0.002);
  EXPECT_GT(t->df, 9.0);
  EXPECT_LT(t->df, 12.0);
  EXPECT_FALSE(calibrated_test(*ca, *cb, {0.01, 0}));
}

TEST(Equivalence, BoundsAndDecision) {
  const auto b = equivalence_bounds(2.0);
  EXPECT_NEAR(b.hi, 1.02, 1e-12);
  EXPECT_NEAR(b.lo, 1 / 1.02, 1e-12);
  EXPECT_TRUE(inside_margin(0.99, 1.01, 2.0));
  EXPECT_FALSE(inside_margin(0.97, 1.01, 2.0));
  EXPECT_TRUE(inside_margin(1.0, 1.0, 0.0));
  EXPECT_FALSE(inside_margin(NAN, 1.0, 2.0));
  // CV 1%, margin 2%, no true change: about 2(1.645+1.645)²/4 ≈ 5.4 -> 7 with t.
  const auto n = equivalence_iterations_needed(2.0, 0.0, 1.0);
  ASSERT_TRUE(n);
  EXPECT_GE(*n, 6u);
  EXPECT_LE(*n, 9u);
  EXPECT_FALSE(equivalence_iterations_needed(2.0, 2.5, 1.0));
}

TEST(Equivalence, AaAtLowNoiseIsDecidedUnchanged) {
  std::mt19937_64 rng(14);
  int unchanged = 0;
  for (int t = 0; t < 200; ++t) {
    const auto a = pooled(simulate(rng, 1, 10, 4.6, 0.0, 0.01));
    const auto b = pooled(simulate(rng, 1, 10, 4.6, 0.0, 0.01));
    RowInput row{a, b};
    SignificanceOptions o;
    o.min_effect_pct = 2.0;
    unchanged += decide_significance(std::span(&row, 1), o)[0].verdict == Verdict::unchanged;
  }
  EXPECT_GT(unchanged, 180);
}

TEST(Significance, RowsWithRunsUseRunsAndCarryTheBasis) {
  std::mt19937_64 rng(15);
  const Runs a = simulate(rng, 3, 5, 4.6, 0.03, 0.01), b = simulate(rng, 3, 5, 4.6, 0.03, 0.01);
  const auto pa = pooled(a), pb = pooled(b);
  RowInput row{pa, pb};
  row.base_runs = a;
  row.now_runs = b;
  const auto s = decide_significance(std::span(&row, 1))[0];
  EXPECT_EQ(s.basis, RunBasis::runs);
  EXPECT_TRUE(s.between_cv_pct.has_value());
  // One run per side with a calibration.
  RowInput one{pa, pb};
  one.between = BetweenRunVariance{0.0009, 20};
  EXPECT_EQ(decide_significance(std::span(&one, 1))[0].basis, RunBasis::calibrated);
  // A per-row minimum effect.
  RowInput wide{pa, pb};
  wide.min_effect_pct = 50.0;
  const auto w = decide_significance(std::span(&wide, 1))[0];
  EXPECT_EQ(w.min_effect_pct, 50.0);
  EXPECT_EQ(w.verdict, Verdict::unchanged);
}

TEST(Sequential, BoundariesSpendTheirAlpha) {
  const std::vector<double> t{0.25, 0.5, 0.75, 1.0};
  for (Spending s : {Spending::pocock, Spending::obrien_fleming}) {
    const auto c = one_sided_boundaries(t, 0.025, s);
    ASSERT_EQ(c.size(), 4u);
    EXPECT_NEAR(crossing_probability(t, c), 0.025, 2e-4) << to_string(s);
  }
  // O'Brien–Fleming: high early, near 1.96 at the end.
  const auto of = one_sided_boundaries(t, 0.025, Spending::obrien_fleming);
  EXPECT_GT(of[0], 3.5);
  EXPECT_NEAR(of[3], 2.02, 0.05);
  // One look is the fixed-sample test.
  const std::vector<double> one{1.0};
  EXPECT_NEAR(one_sided_boundaries(one, 0.025, Spending::pocock)[0], 1.96, 1e-3);
  EXPECT_THROW(spending_from_string("x"), std::invalid_argument);
}

}  // namespace
}  // namespace nightjar::stats

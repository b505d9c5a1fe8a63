// Unit under test: results/compare/sequential.h — the levels of each look of
// the group-sequential design of `run --until-decided`, the plan from a
// stored history, and the state of a comparison's rows after a look.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "results/compare/sequential.h"
#include "results/model/exit_codes.h"
#include "results/stats/equivalence.h"

namespace nightjar {
namespace {

TEST(SequentialLevels, OneLookIsTheFixedTest) {
  const LookLevels l = look_levels({1.0}, 0.05, stats::Spending::pocock);
  EXPECT_NEAR(l.change_level, 0.05, 2e-4);
  EXPECT_NEAR(l.equivalence_level, 0.05, 2e-4);
  const LookLevels big = look_levels({1.0}, 0.6, stats::Spending::pocock);
  EXPECT_NEAR(big.equivalence_level, 0.25, 2e-4);  // TOST's level is min(alpha, 0.25)
}

TEST(SequentialLevels, RepeatedLooksAreStricterAndPocockNearlyConstant) {
  // Five equal looks, Pocock-type spending: each nominal level is well below
  // alpha (the classic Pocock two-sided 0.05 design has about 0.016 per look).
  std::vector<double> t;
  std::vector<double> levels;
  for (int k = 1; k <= 5; ++k) {
    t.push_back(k / 5.0);
    levels.push_back(look_levels(t, 0.05, stats::Spending::pocock).change_level);
  }
  for (double l : levels) {
    EXPECT_LT(l, 0.03);
    EXPECT_GT(l, 0.01);
  }
  // O'Brien–Fleming spends almost nothing at the first look.
  EXPECT_LT(look_levels({0.2}, 0.05, stats::Spending::obrien_fleming).change_level, 1e-4);
  EXPECT_THROW(look_levels({0.5, 0.4}, 0.05, stats::Spending::pocock), std::invalid_argument);
}

TEST(SequentialLevels, SimulatedAaLooksKeepTheErrorRate) {
  // z statistics of a random walk (no drift) at 6 looks: crossing the
  // nominal two-sided level at any look happens in about alpha of the
  // trials; the fixed level at every look would cross far more often.
  std::mt19937_64 gen(14);
  std::normal_distribution<double> z(0, 1);
  const int looks = 6, trials = 20000;
  std::vector<double> t;
  std::vector<double> level;
  for (int k = 1; k <= looks; ++k) {
    t.push_back(static_cast<double>(k) / looks);
    level.push_back(look_levels(t, 0.05, stats::Spending::pocock).change_level);
  }
  int sequential = 0, naive = 0;
  for (int i = 0; i < trials; ++i) {
    double sum = 0;
    bool s = false, n = false;
    for (int k = 1; k <= looks; ++k) {
      sum += z(gen);
      const double zk = std::abs(sum) / std::sqrt(k);
      const double p = std::erfc(zk / std::sqrt(2.0));
      s = s || p < level[k - 1];
      n = n || p < 0.05;
    }
    sequential += s;
    naive += n;
  }
  EXPECT_NEAR(sequential / static_cast<double>(trials), 0.05, 0.008);
  EXPECT_GT(naive / static_cast<double>(trials), 0.12);
}

TEST(SequentialPlan, IterationsToDecideIsTostsFigure) {
  auto n = iterations_to_decide(1.1, 1.0, 0.05, 0.8);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, *stats::equivalence_iterations_needed(1.0, 0.0, 1.1, 0.05, 0.8));
  EXPECT_EQ(*iterations_to_decide(0.0, 1.0, 0.05, 0.8), 3u);  // never below 3
  EXPECT_FALSE(iterations_to_decide(NAN, 1.0, 0.05, 0.8));
}

TEST(SequentialPlan, LargestMedianCoeffVarOfTheHistoryDecides) {
  LoadedSide h;
  CellSamples quiet, noisy;
  quiet.metric_runs["throughput"] = {{100, 101, 99}, {100, 100.5, 99.5}};
  noisy.metric_runs["throughput"] = {{100, 104, 96}, {100, 103, 97}, {1, 2}};
  noisy.metric_runs["latency"] = {{10, 10.01}};
  h.cells[{"fake", "j", "a"}] = quiet;
  h.cells[{"fake", "j", "b"}] = noisy;
  auto p = plan_from_history(h, {}, 1.0, 0.05, 0.8);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->metric, "throughput");
  EXPECT_EQ(p->history_runs, 3);
  EXPECT_NEAR(p->cv_pct, 4.0, 1e-9);  // median of 4%, 3%, 47%
  EXPECT_EQ(p->iterations, *iterations_to_decide(p->cv_pct, 1.0, 0.05, 0.8));
  EXPECT_EQ(plan_line(*p).rfind("at CoeffVar 4% (throughput, 3 stored runs), deciding ±1% needs "
                                "about ",
                                0),
            0u)
      << plan_line(*p);
  auto only = plan_from_history(h, {"latency"}, 1.0, 0.05, 0.8);
  ASSERT_TRUE(only);
  EXPECT_EQ(only->metric, "latency");
  EXPECT_FALSE(plan_from_history(LoadedSide{}, {}, 1.0, 0.05, 0.8));
}

TEST(SequentialLook, RowsDecidedOpenAndDecideOn) {
  Comparison c;
  auto row = [](std::string name, stats::Verdict v, std::optional<std::size_t> need) {
    ComparisonRow r;
    r.name = r.operation = name;
    r.cell = "c";
    stats::Significance s;
    s.verdict = v;
    s.iterations_needed = need;
    r.significance = {std::nullopt, s};
    return r;
  };
  c.rows = {row("throughput", stats::Verdict::unchanged, std::nullopt),
            row("latency", stats::Verdict::inconclusive, 17)};
  ComparisonRow monitor;
  monitor.kind = ComparisonRow::Kind::monitor;
  monitor.name = "cpu";
  c.rows.push_back(monitor);
  LookResult all = evaluate_look(c, {});
  ASSERT_EQ(all.rows.size(), 2u);
  EXPECT_FALSE(all.decided);
  EXPECT_EQ(all.rows[1].needs, "about 17 iterations per side");
  EXPECT_EQ(look_summary(all), "throughput unchanged, latency inconclusive");
  LookResult one = evaluate_look(c, {"throughput"});
  EXPECT_TRUE(one.decided);
  EXPECT_EQ(one.rows.size(), 1u);
  EXPECT_THROW(evaluate_look(c, {"cpu"}), UsageError);
}

}  // namespace
}  // namespace nightjar

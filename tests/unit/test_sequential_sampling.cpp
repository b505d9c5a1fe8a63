// Unit under test: results/compare/sequential.h — the levels of each look of
// the group-sequential design of `run --until-decided`, the plan from a
// stored history, and the state of a comparison's rows after a look.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/job/job.h"
#include "quiet_testbox.h"
#include "results/compare/sequential.h"
#include "results/model/exit_codes.h"
#include "results/stats/equivalence.h"
#include "workloads/workload.h"

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

// The samples `nightjar run` takes of a fake job with these --set values: the
// cell as expand_matrix makes it, `n` iterations of the workload's session.
std::map<std::string, std::vector<double>> fake_run(
    const std::vector<std::pair<std::string, std::string>>& set, int n) {
  JobFile job;
  job.path = "test";
  job.workload = "fake";
  std::vector<SetOverride> overrides;
  for (const auto& [k, v] : set) overrides.push_back({k, {v}});
  const Workload& w = *find_workload("fake");
  const Cell cell = expand_matrix(job, w, overrides, MachineFacts{}).front();
  RunContext ctx;
  auto session = w.start(cell, ctx);
  std::map<std::string, std::vector<double>> samples;
  while (n-- > 0)
    for (const auto& [metric, v] : session->measure().metrics) samples[metric].push_back(v);
  return samples;
}

// Drives SequentialLooks round by round as the runner does and returns every
// look (what `run --until-decided` prints as "look K at N/MAX"), on a
// calibrated testbox whose runs do not differ (the CLI tests calibrate first:
// with one run per side and no calibration or history the prior's between-run
// variance, which iterations cannot shrink, would keep every A/A row open).
std::vector<LookOutcome> drive(const SequentialDesign& d,
                               const std::map<std::string, std::vector<double>>& base,
                               const std::map<std::string, std::vector<double>>& now) {
  static const MetricCatalog catalog{{"fake", find_workload("fake")->metrics()}};
  const CellKey key{"fake", "j", "cv=1"};
  SequentialLooks looks(d);
  std::vector<LookOutcome> out;
  for (int n = 1; n <= d.max_iterations; ++n) {
    auto first = [&](const std::map<std::string, std::vector<double>>& s, int k) {
      std::map<std::string, std::vector<double>> p;
      for (const auto& [m, v] : s) p[m].assign(v.begin(), v.begin() + std::min<int>(k, v.size()));
      return p;
    };
    auto look = looks.after_round(n, false, [&](const stats::SignificanceOptions& o) {
      return build_comparison({one_run_side(key, 1, "a", first(base, d.base_grows ? n : 1 << 30)),
                               one_run_side(key, 2, "b", first(now, n))},
                              catalog, o, false, test::quiet_testbox());
    });
    if (!look) continue;
    out.push_back(*look);
    if (look->stop) break;
  }
  return out;
}

// tests/cli/test_until_decided_cli.cpp, IdenticalVariantsAreDecidedUnchangedBeforeTheBudget:
// variants a and b of `value: 100, cv: 1` (the same seeded samples), first
// look at the job's 5 iterations, budget 30: look 1 leaves both rows
// inconclusive, look 2 at 10 decides both unchanged.
TEST(SequentialLook, PerLookRuleGivesTheVerdictsOfRunUntilDecided) {
  const auto aa = fake_run({{"cv", "1"}}, 30);
  SequentialDesign d{5, 30, stats::Spending::pocock, {}, {}, true};
  auto looks = drive(d, aa, aa);
  ASSERT_EQ(looks.size(), 2u);
  EXPECT_EQ(looks[0].iterations, 5);
  EXPECT_FALSE(looks[0].stop);
  EXPECT_EQ(look_summary(looks[0].result), "throughput inconclusive, latency inconclusive");
  EXPECT_EQ(looks[1].iterations, 10);
  EXPECT_TRUE(looks[1].stop);
  EXPECT_EQ(look_summary(looks[1].result), "throughput unchanged, latency unchanged");
  EXPECT_LT(looks[1].levels.change_level, 0.05);  // repeated looks are stricter

  // StoredSideAsBaseRegressionAndBudget: a stored BASE of 8 iterations, NEW
  // 3% slower with seed 2, first look at the plan's 14 of max(30, 4 x 14):
  // a regression of both rows at the first look.
  const auto base = fake_run({{"cv", "1"}}, 8);
  d = {14, 56, stats::Spending::pocock, {}, {}, false};
  looks = drive(d, base, fake_run({{"cv", "1"}, {"value", "97"}, {"seed", "2"}}, 56));
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_EQ(look_summary(looks[0].result), "throughput regression, latency regression");
  // The same level with seed 3 and a budget of 6, deciding on throughput:
  // one look at 6 (the first look clamps to the budget), still open.
  d = {14, 6, stats::Spending::pocock, {}, {"throughput"}, false};
  looks = drive(d, base, fake_run({{"cv", "1"}, {"seed", "3"}}, 6));
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_EQ(looks[0].iterations, 6);
  EXPECT_TRUE(looks[0].stop);
  EXPECT_FALSE(looks[0].result.decided);
  EXPECT_FALSE(looks[0].result.hopeless);
  EXPECT_EQ(look_summary(looks[0].result), "throughput inconclusive");
  EXPECT_THROW((SequentialLooks(SequentialDesign{3, 2, stats::Spending::pocock, {}, {}, true})),
               UsageError);
}

}  // namespace
}  // namespace nightjar

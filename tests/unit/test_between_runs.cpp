// Where a row with one run on a side takes its between-run variation
// (results/compare/between_runs.h, stats::prior_between_variance and
// history_between_variance in results/stats/run_model.h): the prior's value,
// the pooled history and its minimum df, the runs being compared left out,
// nightly histories cut at change points, and build_comparison never deciding
// such a row on its iterations alone.
#include <gtest/gtest.h>
#include "run_simulation.h"

#include <cmath>
#include <random>
#include <vector>

#include "results/compare/between_runs.h"
#include "results/compare/comparison.h"
#include "results/stats/run_model.h"

namespace nightjar {
namespace {

using Runs = std::vector<std::vector<double>>;

Runs simulate(std::mt19937_64& rng, int runs, int n, double mu, double sb, double sw) {
  return test::simulate_runs(rng, runs, n, mu, sb, sw);
}

TEST(BetweenRuns, ThePriorIsACoeffVarOfTenPercentTakenAsKnown) {
  const auto p = stats::prior_between_variance();
  EXPECT_EQ(p.source, stats::BetweenSource::prior);
  EXPECT_NEAR(stats::log_variance_coeff_var(p.var), stats::kPriorCoeffVarPct, 1e-9);
  EXPECT_GE(p.df, 1e5);
  EXPECT_EQ(stats::between_source_text(p), "the conservative prior (CoeffVar 10%)");
}

TEST(BetweenRuns, HistoryPoolsGroupsByTheirDegreesOfFreedom) {
  const Runs g1{{10, 11, 10.5}, {12, 12.5, 11.5}, {9, 9.5, 10}};          // 3 runs: df 2
  const Runs g2{{20, 20.5}, {22, 21}, {19, 19.5}, {20, 21}, {23, 22.5}};  // 5 runs: df 4
  const std::vector<Runs> groups{g1, g2};
  const auto h = stats::history_between_variance(groups);
  ASSERT_TRUE(h);
  const double b1 = stats::run_components(g1)->between_var;
  const double b2 = stats::run_components(g2)->between_var;
  EXPECT_NEAR(h->var, (2 * b1 + 4 * b2) / 6, 1e-15);
  EXPECT_EQ(h->df, 6);
  EXPECT_EQ(h->runs, 8);
  EXPECT_EQ(h->source, stats::BetweenSource::history);
  EXPECT_EQ(stats::between_source_text(*h), "this cell's history (8 runs)");
}

TEST(BetweenRuns, HistoryNeedsFourDegreesOfFreedom) {
  const Runs four{{10, 11}, {12, 12.5}, {9, 9.5}, {10, 10.2}};  // df 3
  EXPECT_FALSE(stats::history_between_variance(std::vector<Runs>{four}));
  Runs five = four;
  five.push_back({11, 11.5});
  EXPECT_TRUE(stats::history_between_variance(std::vector<Runs>{five}));
  // Single-run groups add nothing.
  EXPECT_FALSE(stats::history_between_variance(
      std::vector<Runs>{{{10, 11}}, {{12, 13}}, {{9, 9}}, {{10, 10}}, {{11, 11}}}));
}

// History runs `runs`, one build `build` each unless given.
std::vector<HistoryRun> history(const Runs& runs, const std::vector<std::string>& builds,
                                std::int64_t first_id = 1) {
  std::vector<HistoryRun> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    out.push_back({first_id + static_cast<std::int64_t>(i), "v",
                   builds.size() == 1 ? builds[0] : builds[i], 1, runs[i]});
  return out;
}

TEST(BetweenRuns, RepeatedRunsOfOneBuildLeavingOutTheComparedRuns) {
  std::mt19937_64 rng(7);
  const Runs runs = simulate(rng, 12, 5, std::log(1000.0), 0.05, 0.02);
  const auto h = history(runs, {"v1"});
  const auto all = cell_history_between_variance(h, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->runs, 12);
  EXPECT_NEAR(all->var, stats::run_components(runs)->between_var, 1e-15);
  // The two compared runs are left out: 10 runs, and the estimate is theirs.
  const auto rest = cell_history_between_variance(h, {1, 2});
  ASSERT_TRUE(rest);
  EXPECT_EQ(rest->runs, 10);
  const Runs ten(runs.begin() + 2, runs.end());
  EXPECT_NEAR(rest->var, stats::run_components(ten)->between_var, 1e-15);
  // Too few alike runs left: no history.
  EXPECT_FALSE(
      cell_history_between_variance(history(Runs(runs.begin(), runs.begin() + 4), {"v1"}), {}));
}

TEST(BetweenRuns, ANightlyHistoryIsCutAtItsChangePoint) {
  // 30 nights, one build each, between-run CoeffVar 3%, and a 25% step at
  // night 15: inside each segment the runs are alike; across the step they
  // are not, and pooling them would read the step as run-to-run noise.
  std::mt19937_64 rng(11);
  Runs runs = simulate(rng, 15, 5, std::log(1000.0), 0.03, 0.01);
  const Runs after = simulate(rng, 15, 5, std::log(750.0), 0.03, 0.01);
  runs.insert(runs.end(), after.begin(), after.end());
  std::vector<std::string> builds;
  for (int i = 0; i < 30; ++i) builds.push_back("night" + std::to_string(i));
  const auto h = cell_history_between_variance(history(runs, builds), {});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->runs, 30);
  EXPECT_EQ(h->df, 28);  // two segments of 15
  const double cv = stats::log_variance_coeff_var(h->var);
  EXPECT_GT(cv, 1.5);
  EXPECT_LT(cv, 5.0);
  // Without the cut the whole series reads as about 13% between runs.
  EXPECT_GT(stats::log_variance_coeff_var(stats::run_components(runs)->between_var), 10.0);
}

// build_comparison with one run per side and no lookup: the prior, the
// warning and the note; never the iterations alone.
const MetricCatalog kCatalog = {
    {"fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""}}},
};

LoadedSide one_run(const std::string& name, const std::vector<double>& xs, std::int64_t id) {
  LoadedSide s;
  s.selector = parse_selector(name);
  CellSamples cs;
  cs.first_run = id;
  cs.run_ids = {id};
  cs.metrics["throughput"] = xs;
  s.run_ids = {id};
  s.cells[{"fake", "j", "seed=1"}] = cs;
  s.variants = {name};
  return s;
}

TEST(BetweenRuns, OneRunPerSideWithoutAMeasurementUsesThePrior) {
  const std::vector<double> base{1000, 1001, 999, 1000.5, 999.5};
  const std::vector<double> minus10{900, 900.9, 899.1, 900.45, 899.55};
  const std::vector<double> minus60{400, 400.4, 399.6, 400.2, 399.8};
  // Iterations alone call a 10% drop a regression (q ~ 1e-9); the prior does not.
  Comparison c = build_comparison({one_run("a", base, 1), one_run("b", minus10, 2)}, kCatalog, {});
  const auto& sig = *c.rows.at(0).significance[1];
  EXPECT_EQ(sig.verdict, stats::Verdict::inconclusive) << sig.reason;
  EXPECT_EQ(sig.basis, stats::RunBasis::calibrated);
  ASSERT_TRUE(sig.between);
  EXPECT_EQ(sig.between->source, stats::BetweenSource::prior);
  EXPECT_NE(sig.reason.find("between-run variation from the conservative prior"), std::string::npos)
      << sig.reason;
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], kOneRunWarning);
  EXPECT_EQ(c.between_rows.at(stats::BetweenSource::prior), 1);
  bool noted = false;
  for (const auto& n : c.notes)
    noted = noted || n == "1 row(s) with one run on a side tested with the between-run variation "
                          "from the conservative prior (CoeffVar 10%)";
  EXPECT_TRUE(noted);
  // A change far outside run-to-run noise is still called.
  Comparison far =
      build_comparison({one_run("a", base, 1), one_run("b", minus60, 2)}, kCatalog, {});
  EXPECT_EQ(far.rows.at(0).significance[1]->verdict, stats::Verdict::regression);
  // A lookup's value wins over the prior, and names its source.
  CalibrationLookup lookup =
      [](const CalibrationKey& k) -> std::optional<stats::BetweenRunVariance> {
    EXPECT_EQ(k.cell, "seed=1");
    EXPECT_EQ(k.metric, "throughput");
    return stats::BetweenRunVariance{0.0001, 9, stats::BetweenSource::history, 10};
  };
  LoadedSide a = one_run("a", base, 1), b = one_run("b", minus10, 2);
  a.testboxes = b.testboxes = {"box"};
  Comparison h = build_comparison({a, b}, kCatalog, {}, false, lookup);
  const auto& hs = *h.rows.at(0).significance[1];
  EXPECT_EQ(hs.verdict, stats::Verdict::regression) << hs.reason;
  EXPECT_NE(hs.reason.find("(between-run variation from this cell's history (10 runs))"),
            std::string::npos)
      << hs.reason;
  EXPECT_TRUE(h.warnings.empty());
  // With the run model off (bisect's rule) the iterations decide, as before.
  stats::SignificanceOptions off;
  off.run_model = false;
  Comparison it =
      build_comparison({one_run("a", base, 1), one_run("b", minus10, 2)}, kCatalog, off);
  EXPECT_EQ(it.rows.at(0).significance[1]->basis, stats::RunBasis::iterations);
  EXPECT_EQ(it.rows.at(0).significance[1]->verdict, stats::Verdict::regression);
}

// Under the prior (CoeffVar 10%) a 1% margin needs hundreds of runs per
// side: the reason says it is out of reach here and what 20 runs per side
// decide, and points at min_effect:, instead of asking for the hundreds.
TEST(BetweenRuns, AMarginOutOfReachIsSaidPlainlyWithWhatIsWithinReach) {
  const std::vector<double> base{1000, 1001, 999, 1000.5, 999.5};
  const std::vector<double> minus2{980, 980.9, 979.1, 980.45, 979.55};
  Comparison c = build_comparison({one_run("a", base, 1), one_run("b", minus2, 2)}, kCatalog, {});
  const auto& sig = *c.rows.at(0).significance[1];
  EXPECT_EQ(sig.verdict, stats::Verdict::inconclusive) << sig.reason;
  ASSERT_TRUE(sig.runs_needed);
  EXPECT_GT(*sig.runs_needed, 20u);
  EXPECT_NE(sig.reason.find("at run-to-run CoeffVar 10.0% that needs about " +
                            std::to_string(*sig.runs_needed) +
                            " runs per side, out of reach here; 20 runs per side decide changes "
                            "of "),
            std::string::npos)
      << sig.reason;
  EXPECT_NE(sig.reason.find("set the job's `min_effect:`"), std::string::npos) << sig.reason;
  // The reachable change is the inverse of runs_needed: 20 runs detect it.
  const auto at = sig.reason.find("decide changes of ");
  ASSERT_NE(at, std::string::npos);
  const double reach = std::stod(sig.reason.substr(at + 18));
  const double var = stats::prior_between_variance().var;
  EXPECT_LE(*stats::runs_needed(reach, var), 20u);
  EXPECT_GT(*stats::runs_needed(reach - 1, var), 20u);
}

}  // namespace
}  // namespace nightjar

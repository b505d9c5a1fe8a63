// Unit under test: the deciding room of bisect (harness/bisect/decide.h) on
// recorded samples, without git or a database: decide_sides (good, bad,
// unknown; the decisive row over cells), the rules around it
// (more_iterations, step_outcome, verdict_record, endpoints_min_effect,
// first_and_rest), the branch test's answer (harness/bisect/branch.h
// branch_answer), git bisect's output read (harness/bisect/git.h
// parse_bisect_output) and the words of the bisect records
// (results/store/bisect_log.h to_string/parse).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/bisect/branch.h"
#include "harness/bisect/decide.h"
#include "harness/bisect/git.h"
#include "results/store/bisect_log.h"

namespace nightjar {
namespace {

const MetricDescriptor kThroughput{"throughput", "ops/s", Direction::higher_is_better,
                                   MeanKind::harmonic, ""};

// A side named `name` with one run (`run`) per cell and the samples of
// throughput in each cell ("seed=1", "seed=2", ...).
LoadedSide side(const std::string& name, std::int64_t run,
                const std::vector<std::vector<double>>& cells) {
  LoadedSide s;
  s.selector.text = name;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::int64_t id = run + static_cast<std::int64_t>(i);
    s.run_ids.push_back(id);
    CellSamples& cs = s.cells[CellKey{"fake", "fx", "seed=" + std::to_string(i + 1)}];
    cs.first_run = id;
    cs.run_ids = {id};
    cs.params = {{"seed", std::to_string(i + 1)}};
    std::vector<double> v = cells[i];
    std::sort(v.begin(), v.end());
    cs.metrics["throughput"] = v;
  }
  s.builds = {name};
  s.testboxes = {"box"};
  return s;
}

DecisionResult decide(const std::vector<std::vector<double>>& base,
                      const std::vector<std::vector<double>>& now) {
  const MetricCatalog catalog = {{"fake", {kThroughput}}};
  return decide_sides({side("good", 1, base), side("now", 100, now)}, catalog, "throughput",
                      bisect_significance(0.05, 1.0));
}

const std::vector<double> kSteady = {1000, 1001, 999, 1000, 1002};

TEST(BisectDecide, SameSamplesAreGood) {
  const DecisionResult d = decide({kSteady}, {kSteady});
  EXPECT_EQ(d.decision, CommitDecision::good) << d.summary;
  EXPECT_EQ(d.min_now, 5u);
  EXPECT_EQ(d.n_base, 5u);
  EXPECT_FALSE(d.more_helps);
}

TEST(BisectDecide, ARegressionInOneCellIsBadAndDecisive) {
  const DecisionResult d = decide({kSteady, kSteady}, {kSteady, {900, 901, 899, 900, 902}});
  EXPECT_EQ(d.decision, CommitDecision::bad) << d.summary;
  EXPECT_EQ(d.row.verdict, stats::Verdict::regression);
  EXPECT_NEAR(d.row.pct_change, -10, 0.1);
  EXPECT_EQ(d.cell, "seed=2");
  EXPECT_EQ(d.summary.rfind("-10.", 0), 0u) << d.summary;
  EXPECT_NE(d.summary.find("regression (5 vs 5 samples"), std::string::npos) << d.summary;
}

TEST(BisectDecide, AnImprovementIsGood) {
  const DecisionResult d = decide({kSteady}, {{1100, 1101, 1099, 1100, 1102}});
  EXPECT_EQ(d.decision, CommitDecision::good) << d.summary;
  EXPECT_EQ(d.row.verdict, stats::Verdict::improvement);
}

TEST(BisectDecide, NoisyFewSamplesAreUnknownAndMoreHelps) {
  const DecisionResult d = decide({kSteady}, {{800, 1200, 1000}});
  EXPECT_EQ(d.decision, CommitDecision::unknown) << d.summary;
  EXPECT_TRUE(d.more_helps);
  EXPECT_EQ(d.min_now, 3u);
  EXPECT_EQ(more_iterations(d, 30, 5), 5);  // as many as it has, at least the first batch
  EXPECT_EQ(more_iterations(d, 6, 5), 3);   // up to the cap
  EXPECT_EQ(more_iterations(d, 3, 5), 0);   // at the cap
  const StepOutcome o = step_outcome(d);
  EXPECT_EQ(o.decision, BisectDecision::skip);
  EXPECT_EQ(o.reason.rfind("still unsure after 3 samples: ", 0), 0u) << o.reason;
}

TEST(BisectDecide, SidesWithoutACommonCellAreAUsageError) {
  const MetricCatalog catalog = {{"fake", {kThroughput}}};
  LoadedSide other = side("now", 100, {kSteady});
  other.cells = {{CellKey{"fake", "fx", "seed=9"}, other.cells.begin()->second}};
  EXPECT_THROW(decide_sides({side("good", 1, {kSteady}), other}, catalog, "throughput",
                            bisect_significance(0.05, 1.0)),
               UsageError);
}

TEST(BisectDecide, DecidedOrUndefinedDecisionsAddNoIterations) {
  DecisionResult d;
  d.decision = CommitDecision::bad;
  d.min_now = 5;
  EXPECT_EQ(more_iterations(d, 30, 5), 0);
  d.decision = CommitDecision::unknown;
  d.more_helps = false;  // an undefined row: more samples do not help
  EXPECT_EQ(more_iterations(d, 30, 5), 0);
}

TEST(BisectDecide, StepOutcomes) {
  DecisionResult d;
  d.summary = "no samples: run 3 failed";
  EXPECT_EQ(step_outcome(d).decision, BisectDecision::skip);
  EXPECT_EQ(step_outcome(d).reason, d.summary);
  d.min_now = 5;
  d.summary = "-9.80% regression (5 vs 5 samples)";
  d.decision = CommitDecision::bad;
  EXPECT_EQ(step_outcome(d).decision, BisectDecision::bad);
  EXPECT_EQ(step_outcome(d).reason, d.summary);
  d.decision = CommitDecision::good;
  EXPECT_EQ(step_outcome(d).decision, BisectDecision::good);
}

TEST(BisectDecide, VerdictRecordCarriesTheDecisiveRow) {
  DecisionResult d = decide({kSteady}, {{900, 901, 899, 900, 902}});
  const BisectVerdict v = verdict_record(BisectDecision::bad, &d, "why");
  EXPECT_EQ(v.decision, BisectDecision::bad);
  EXPECT_EQ(v.reason, "why");
  EXPECT_EQ(v.verdict, "regression");
  EXPECT_EQ(v.pct_change, d.row.pct_change);
  EXPECT_EQ(v.n_base, 5);
  EXPECT_EQ(v.n_now, 5);
  const BisectVerdict none = verdict_record(BisectDecision::skip, nullptr, "build failed");
  EXPECT_EQ(none.verdict, "");
  EXPECT_FALSE(none.pct_change.has_value());
}

TEST(BisectDecide, MinimumEffectAndTheGoodEndpointsBatches) {
  EXPECT_EQ(endpoints_min_effect(3.0, -20), 3.0);
  EXPECT_EQ(endpoints_min_effect(std::nullopt, -10), 5.0);
  EXPECT_EQ(endpoints_min_effect(std::nullopt, -1), 1.0);
  const auto [a, rest] = first_and_rest({1, 2, 3, 4}, 2);
  EXPECT_EQ(a, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(rest, (std::vector<std::int64_t>{3, 4}));
}

BranchPick pick(const std::string& commit, bool applied, BisectDecision d) {
  BranchPick p;
  p.commit = commit;
  p.subject = "subject " + commit;
  p.applied = applied;
  p.decision = d;
  return p;
}

TEST(BisectBranchAnswer, TheFirstBadPickIsTheAnswer) {
  const BranchAnswer a = branch_answer(
      {pick("c1", true, BisectDecision::good), pick("c2", false, BisectDecision::skip),
       pick("c3", true, BisectDecision::bad)},
      "p1", 2, "`git show --cc m`", [] { return std::vector<std::string>{}; });
  EXPECT_EQ(a.code, ExitCode::ok);
  ASSERT_EQ(a.lines.size(), 3u);
  EXPECT_EQ(a.lines[0], "interaction: p1 + c3 is bad");
  EXPECT_NE(a.lines[1].find("with the 1 branch commit(s) before it applied"), std::string::npos);
  EXPECT_EQ(a.lines[2], "left out, as it does not apply on top of p1: c2 subject c2");
}

TEST(BisectBranchAnswer, AnUnmeasuredPickBeforeTheBadOneLeavesItOpen) {
  const BranchAnswer a =
      branch_answer({pick("c1", true, BisectDecision::skip), pick("c2", true, BisectDecision::bad)},
                    "p1", 2, "show", [] { return std::vector<std::string>{}; });
  EXPECT_EQ(a.code, ExitCode::inconclusive);
  EXPECT_EQ(a.lines[1], "the first bad branch commit is one of c1 subject c1, c2 subject c2");
}

TEST(BisectBranchAnswer, EveryPickGoodBlamesTheMergesOwnChanges) {
  const std::vector<BranchPick> good = {pick("c1", true, BisectDecision::good)};
  BranchAnswer a =
      branch_answer(good, "p1", 1, "show", [] { return std::vector<std::string>{"a.c"}; });
  EXPECT_EQ(a.code, ExitCode::ok);
  EXPECT_EQ(a.lines[0], "no branch commit turns p1 bad: the merge's own changes do");
  a = branch_answer(good, "p1", 1, "show", [] { return std::vector<std::string>{}; });
  EXPECT_EQ(a.code, ExitCode::inconclusive);  // same tree as the merge: noise
}

TEST(BisectGitOutput, FirstBadCommitAndOnlySkippedCandidates) {
  EXPECT_EQ(parse_bisect_output("abc123 is the first bad commit\ncommit abc123\n").first_bad,
            "abc123");
  const BisectState s = parse_bisect_output(
      "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of:\n"
      "aaa subject a\nbbb\nWe cannot bisect more!\n");
  EXPECT_TRUE(s.only_skipped);
  EXPECT_EQ(s.candidates, (std::vector<std::string>{"aaa", "bbb"}));
  EXPECT_TRUE(s.first_bad.empty());
}

TEST(BisectRecords, WordsRoundTrip) {
  for (auto d :
       {BisectDecision::pending, BisectDecision::good, BisectDecision::bad, BisectDecision::skip})
    EXPECT_EQ(parse_bisect_decision(to_string(d)), d);
  for (auto r : {BisectRole::good, BisectRole::bad, BisectRole::test, BisectRole::branch})
    EXPECT_EQ(parse_bisect_role(to_string(r)), r);
  for (auto b : {BisectBuild::pending, BisectBuild::ok, BisectBuild::failed, BisectBuild::none})
    EXPECT_EQ(parse_bisect_build(to_string(b)), b);
  for (auto s : {BisectStatus::running, BisectStatus::found, BisectStatus::inconclusive,
                 BisectStatus::failed, BisectStatus::interrupted})
    EXPECT_EQ(parse_bisect_status(to_string(s)), s);
  EXPECT_EQ(std::string(to_string(BisectDecision::skip)), "skip");
  EXPECT_FALSE(parse_bisect_decision("unknown").has_value());
  EXPECT_FALSE(parse_bisect_role("Good").has_value());
}

}  // namespace
}  // namespace nightjar

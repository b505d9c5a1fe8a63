// Unit under test: harness/bisect/measure.h decide_with_more() paired with
// the good endpoint (KernelBuildOptions::pair_good; docs/bisect.md "Paired
// with the good endpoint") and split_by_build(). The measurer is scripted:
// a host whose speed drops by a third after its first runs (the slow
// periods of TCG guests seen in the kernel demo), a good commit and a commit
// that changed nothing. Decided against the endpoint's first runs the
// harmless commit reads as a regression; decided against the good
// endpoint measured again beside it (boots alternating, runs as the unit),
// it is good, and a real 10% slowdown measured in the slow period is still
// bad. A single slow boot (slow boots come and go in TCG guests) makes a
// harmless commit unsure, never bad.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/bisect/measure.h"
#include "harness/bisect/session.h"
#include "results/store/store.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

// Stores one run per call of run_job: `iterations` samples of throughput,
// the commit's speed (`speed`, 1 = the good commit's) times the host's (1 for
// the first `fast_runs` calls, then 2/3; also 2/3 for the calls numbered in
// `slow_calls`, from 0), with a small alternating wobble.
class DriftingHost : public CommitMeasurer {
 public:
  DriftingHost(ResultsStore& store, std::map<std::string, double> speed, int fast_runs,
               std::set<int> slow_calls = {})
      : store_(store),
        speed_(std::move(speed)),
        fast_runs_(fast_runs),
        slow_calls_(std::move(slow_calls)) {}
  BuildResult build(const std::string&, const std::string&) override { return {}; }
  MeasuredRuns run_job(const std::string& sha, int iterations,
                       const std::map<std::string, std::string>& context) override {
    const int call = calls_++;
    const double host = call < fast_runs_ && !slow_calls_.count(call) ? 1.0 : 2.0 / 3.0;
    NewRun r;
    r.job = "fx";
    r.cell.workload = "fake";
    r.cell.params["seed"] = {"1", 1};
    r.variant = "v";
    r.build = sha;
    r.iterations = iterations;
    r.kernel.release = "6.1.0-test";
    r.testbox = {"box", "cpu", 2, 1 << 30};
    r.context = context;
    const std::int64_t id = store_.begin_run(r);
    for (int i = 1; i <= iterations; ++i) {
      IterationResult it;
      it.metrics["throughput"] = 1000 * speed_.at(sha) * host * (1 + 0.004 * ((i % 3) - 1));
      store_.add_iteration(id, i, it, {}, 0.1);
    }
    store_.finish_run(id, RunStatus::complete);
    order.push_back(sha);
    return {{id}, false};
  }
  std::vector<std::string> order;  ///< the commit of each run, in order

 private:
  ResultsStore& store_;
  std::map<std::string, double> speed_;
  int fast_runs_;
  std::set<int> slow_calls_;
  int calls_ = 0;
};

class BisectPaired : public ::testing::Test {
 protected:
  BisectPaired() : store(dir.path() + "/r.db") {
    store.register_metrics(
        "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""}});
    job.metric = "throughput";
    job.max_iterations = 15;
    prep.iterations = 5;
    prep.cells = 1;
  }

  // A session whose measurer is a DriftingHost: by default the good
  // endpoint's two runs are its fast ones and everything later runs in the
  // slow period.
  std::unique_ptr<Session> session(DriftingHost*& host, int fast_runs = 2,
                                   std::set<int> slow_calls = {}) {
    auto s = std::make_unique<Session>(store, out, job, prep);
    auto h = std::make_unique<DriftingHost>(
        store, std::map<std::string, double>{{"good", 1.0}, {"same", 1.0}, {"slower", 0.9}},
        fast_runs, std::move(slow_calls));
    host = h.get();
    s->measurer = std::move(h);
    BisectSession row;
    row.kind = "run";
    row.repo = dir.path();
    row.good = "good";
    row.bad = "bad";
    row.job_path = "fx.yaml";
    s->id = store.create_bisect_session(row);
    good_step = store.add_bisect_step(s->id, "good", "good", BisectRole::good);
    base = measure_step(*s, good_step, "good", 5);
    auto more = measure_step(*s, good_step, "good", 5);
    base.insert(base.end(), more.begin(), more.end());
    return s;
  }

  DecisionResult decide(Session& s, const std::string& sha, bool paired,
                        std::vector<std::int64_t>& runs) {
    const int step = store.add_bisect_step(s.id, sha, sha, BisectRole::test);
    runs = measure_step(s, step, sha, 5);
    return decide_with_more(s, step, sha, runs, base, 2.0, "good", paired ? "good" : "");
  }

  TempDir dir;
  ResultsStore store;
  std::ostringstream out;
  BisectJobOptions job;
  Prepared prep;
  int good_step = 0;
  std::vector<std::int64_t> base;
};

TEST_F(BisectPaired, AgainstTheFirstRunsASlowPeriodReadsAsARegression) {
  DriftingHost* host = nullptr;
  auto s = session(host);
  std::vector<std::int64_t> runs;
  const DecisionResult d = decide(*s, "same", false, runs);
  EXPECT_EQ(d.decision, CommitDecision::bad) << d.summary;  // the flaw pairing removes
  EXPECT_EQ(host->order, (std::vector<std::string>{"good", "good", "same"}));
}

TEST_F(BisectPaired, BesideTheGoodEndpointAHarmlessCommitIsGood) {
  DriftingHost* host = nullptr;
  auto s = session(host);
  std::vector<std::int64_t> runs;
  const DecisionResult d = decide(*s, "same", true, runs);
  EXPECT_EQ(d.decision, CommitDecision::good) << d.summary << "\n" << out.str();
  // Boots alternate, commit first, three of each, all linked to the
  // commit's step; split_by_build tells them apart by build label.
  EXPECT_EQ(host->order, (std::vector<std::string>{"good", "good", "same", "good", "same", "good",
                                                   "same", "good"}));
  ASSERT_EQ(runs.size(), 6u);
  const auto [own, other] = split_by_build(store, runs, "same");
  EXPECT_EQ(own, (std::vector<std::int64_t>{runs[0], runs[2], runs[4]}));
  EXPECT_EQ(other, (std::vector<std::int64_t>{runs[1], runs[3], runs[5]}));
  EXPECT_EQ(d.n_base, 15u);  // the samples measured beside it, not the endpoint's ten
  EXPECT_EQ(d.row.basis, stats::RunBasis::runs) << d.summary;
  EXPECT_NE(out.str().find("measured beside the good endpoint good, 3 boots each"),
            std::string::npos)
      << out.str();
}

TEST_F(BisectPaired, BesideTheGoodEndpointARealSlowdownIsStillBad) {
  DriftingHost* host = nullptr;
  auto s = session(host);
  std::vector<std::int64_t> runs;
  const DecisionResult d = decide(*s, "slower", true, runs);
  EXPECT_EQ(d.decision, CommitDecision::bad) << d.summary;
  EXPECT_NEAR(d.row.pct_change, -10.0, 0.5) << d.summary;
}

TEST_F(BisectPaired, ResumedStepKeepsItsGoodRunsAndMeasuresNoMoreOfThem) {
  DriftingHost* host = nullptr;
  auto s = session(host);
  std::vector<std::int64_t> runs;
  decide(*s, "same", true, runs);
  // As after an interruption: the step's runs (commit and good) given again.
  const int step = store.add_bisect_step(s->id, "same", "same", BisectRole::test);
  const DecisionResult d = decide_with_more(*s, step, "same", runs, base, 2.0, "good", "good");
  EXPECT_EQ(d.decision, CommitDecision::good) << d.summary;
  EXPECT_EQ(host->order.size(), 8u);  // nothing measured again
}

TEST_F(BisectPaired, OneSlowBootMakesAHarmlessCommitUnsureNeverBad) {
  DriftingHost* host = nullptr;
  // Every boot fast but the commit's first (call 2): its iterations alone
  // would read -33%.
  auto s = session(host, 1000, {2});
  std::vector<std::int64_t> runs;
  const DecisionResult d = decide(*s, "same", true, runs);
  EXPECT_NE(d.decision, CommitDecision::bad) << d.summary << "\n" << out.str();
  EXPECT_EQ(d.row.basis, stats::RunBasis::runs) << d.summary;
}

}  // namespace
}  // namespace nightjar

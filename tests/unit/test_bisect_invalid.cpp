// Unit under test: harness/bisect/decide.h decide_commit() with invalid
// samples (docs/compare.md "Invalid samples"): bisect decides on the valid
// samples only, an invalid sample can neither make nor hide a regression,
// and a commit whose samples are too few once the invalid ones are left out
// is unknown (more samples help), never bad.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/bisect/decide.h"
#include "results/store/store.h"
#include "test_support.h"

namespace nightjar {
namespace {

using test::TempDir;

class BisectInvalid : public ::testing::Test {
 protected:
  BisectInvalid() : store(dir.path() + "/r.db") {
    store.register_metrics(
        "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""}});
  }

  // A complete run of build `build`: one iteration per value; the
  // iterations listed in `invalid` (1-based) are stored invalid.
  std::int64_t run(const std::string& build, const std::vector<double>& values,
                   const std::vector<int>& invalid = {}) {
    NewRun r;
    r.job = "fx";
    r.cell.workload = "fake";
    r.cell.params["seed"] = {"1", 1};
    r.variant = "v";
    r.build = build;
    r.iterations = static_cast<int>(values.size());
    r.kernel.release = "6.1.0-test";
    r.testbox = {"box", "cpu", 2, 1 << 30};
    const std::int64_t id = store.begin_run(r);
    for (std::size_t i = 0; i < values.size(); ++i) {
      IterationResult it;
      it.metrics["throughput"] = values[i];
      const int n = static_cast<int>(i) + 1;
      if (std::find(invalid.begin(), invalid.end(), n) != invalid.end())
        it.invalid = "scripted invalid sample at iteration " + std::to_string(n);
      store.add_iteration(id, n, it, {}, 0.1);
    }
    store.finish_run(id, RunStatus::complete);
    return id;
  }

  DecisionResult decide(std::int64_t base, std::int64_t now) {
    return decide_commit(store, {base}, {now}, "throughput", bisect_significance(0.05, 1.0), "good",
                         "now");
  }

  TempDir dir;
  ResultsStore store;
};

TEST_F(BisectInvalid, InvalidSamplesNeitherMakeNorHideARegression) {
  const std::int64_t base = run("good", {1000, 1001, 999, 1000, 1002});
  // Valid samples unchanged; two invalid samples that would be a -50% drop.
  const std::int64_t same = run("same", {1000, 500, 1001, 500, 999, 1000}, {2, 4});
  DecisionResult d = decide(base, same);
  EXPECT_EQ(d.decision, CommitDecision::good) << d.summary;
  EXPECT_EQ(d.n_now, 4u);

  // A real -50% drop hidden behind invalid samples at the old level.
  const std::int64_t worse = run("worse", {500, 1000, 501, 1000, 499, 500}, {2, 4});
  d = decide(base, worse);
  EXPECT_EQ(d.decision, CommitDecision::bad) << d.summary;
  EXPECT_EQ(d.n_now, 4u);
}

TEST_F(BisectInvalid, TooFewValidSamplesIsUnknownNeverBad) {
  const std::int64_t base = run("good", {1000, 1001, 999, 1000, 1002});
  const std::int64_t now = run("now", {500, 500, 500, 500, 500}, {1, 2, 3});
  DecisionResult d = decide(base, now);
  EXPECT_EQ(d.decision, CommitDecision::unknown) << d.summary;
  EXPECT_EQ(d.min_now, 2u);
  EXPECT_TRUE(d.more_helps);
  EXPECT_NE(d.row.reason.find("invalid samples left out: base 0, new 3"), std::string::npos)
      << d.row.reason;
}

}  // namespace
}  // namespace nightjar

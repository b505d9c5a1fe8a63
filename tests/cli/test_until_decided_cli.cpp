// Unit under test: `nightjar run --until-decided` end to end (issue 14) on
// the fake workload's seeded samples: variants compared until decided, a
// stored side as BASE, the budget message, the plan line and bad input.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"
#include "workloads/sys/process.h"

using namespace nightjar::test;

namespace {

int count(const std::string& db, const std::string& sql) {
  std::string v = query_one(db, sql);
  return v.empty() ? -1 : std::stoi(v);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

const char* kVariantsJob = R"(workload: fake
params:
  value: 100
  cv: 1
iterations: 5
variants:
  a: {}
  b: {}
)";

const char* kOneJob = R"(workload: fake
params:
  value: 100
  cv: 1
iterations: 8
)";

// `run JOB --variant a,b --until-decided --runs RUNS` (runs as the unit) and `extra`.
CommandResult run_by_runs(const std::string& job, const std::string& db, const std::string& runs,
                          const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"run",    job, "--db", db, "--variant", "a,b", "--until-decided",
                                   "--runs", runs};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_nightjar(args);
}

}  // namespace

// On a calibrated testbox (issue 35: with one run per side and neither a
// calibration nor a history of the cell, the conservative prior's between-run
// variance, which more iterations cannot shrink, keeps an A/A open; the fake
// workload's runs do not differ, and `nightjar calibrate` measures that).
TEST(UntilDecidedCli, IdenticalVariantsAreDecidedUnchangedBeforeTheBudget) {
  TempDir dir;
  std::string job = dir.write("aa.yaml", kVariantsJob);
  std::string db = dir.path() + "/r.db";
  ASSERT_EQ(
      run_nightjar({"calibrate", job, "--db", db, "--variant", "a", "--pairs", "2"}).exit_code, 0);
  auto r = run_nightjar({"run", job, "--db", db, "--variant", "a,b", "--until-decided"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The calibration's runs are the cell's stored history: they give the plan
  // and the first look (the looks themselves: SequentialLook.* in the unit
  // tests).
  EXPECT_TRUE(has(r.err,
                  "plan: aa: at CoeffVar 0.76% (latency, 4 stored runs), deciding ±1% needs "
                  "about 11 iterations per side"))
      << r.err;
  EXPECT_TRUE(has(r.out, "throughput unchanged, latency unchanged after 11 iterations per side"))
      << r.out;
  // Progress: every look's verdict per row, at the levels of its look.
  EXPECT_TRUE(has(r.err, "look 1 at 11/44 iterations per side")) << r.err;
  // Interleaved, stopped at the look that decided: 11 of the 44 planned.
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM run WHERE status='complete' AND build NOT LIKE "
                  "'calibrate-%'"),
            2);
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sample s JOIN run r ON r.id=s.run_id WHERE "
                  "s.metric='throughput' AND r.build NOT LIKE 'calibrate-%'"),
            22);
}

TEST(UntilDecidedCli, StoredSideAsBaseRegressionAndBudget) {
  TempDir dir;
  std::string job = dir.write("one.yaml", kOneJob);
  std::string db = dir.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"run", job, "--db", db, "--build", "base"}).exit_code, 0);
  ASSERT_EQ(run_nightjar({"calibrate", job, "--db", db, "--pairs", "2"}).exit_code, 0);

  // 3% slower with other noise: a regression at the first look.
  auto bad = run_nightjar({"run", job, "--db", db, "--build", "new", "--set", "value=97", "--set",
                           "seed=2", "--until-decided", "build=base", "--ignore-param", "value",
                           "--ignore-param", "seed"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_TRUE(has(bad.out, "throughput regression, latency regression after 14 iterations"))
      << bad.out;
  EXPECT_TRUE(has(bad.err, "plan: one: at CoeffVar 0.86% (latency, 1 stored run)")) << bad.err;

  // check prints the same plan from the BASE side's stored runs.
  auto check = run_nightjar({"check", "build=base", "build=new", "--db", db, "--ignore-param",
                             "value", "--ignore-param", "seed"});
  EXPECT_EQ(check.exit_code, 1) << check.err;
  EXPECT_TRUE(has(check.err,
                  "plan: at CoeffVar 0.86% (latency, 1 stored run), deciding ±1% "
                  "needs about 14 iterations per side"))
      << check.err;

  // The same level, other noise, and a budget too small to decide: exit 3
  // with the open rows and what they would need.
  auto open = run_nightjar({"run", job, "--db", db, "--build", "new2", "--set", "seed=3",
                            "--until-decided", "build=base", "--ignore-param", "seed",
                            "--max-iterations", "6", "--decide-on", "throughput"});
  EXPECT_EQ(open.exit_code, 3) << open.err;
  EXPECT_TRUE(has(open.out, "1 row(s) still open (budget of 6 iterations per side spent)"))
      << open.out;
  EXPECT_TRUE(has(open.out, "throughput: inconclusive: needs about")) << open.out;
  EXPECT_FALSE(has(open.out, "latency: inconclusive")) << open.out;  // --decide-on: only throughput
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sample s JOIN run r ON r.id=s.run_id WHERE "
                  "r.build='new2' AND s.metric='throughput'"),
            6);

  // A time budget: stops at the first iteration past it (at least 3).
  auto timed = run_nightjar({"run",
                             job,
                             "--db",
                             db,
                             "--build",
                             "new3",
                             "--set",
                             "seed=4",
                             "--set",
                             "sleep=0.2s",
                             "--until-decided",
                             "build=base",
                             "--ignore-param",
                             "seed",
                             "--ignore-param",
                             "sleep",
                             "--max-time",
                             "1s",
                             "--max-iterations",
                             "1000"});
  EXPECT_TRUE(timed.exit_code == 0 || timed.exit_code == 3) << timed.err;
  EXPECT_LT(count(db,
                  "SELECT count(*) FROM sample s JOIN run r ON r.id=s.run_id WHERE "
                  "r.build='new3' AND s.metric='throughput'"),
            14);
}

TEST(UntilDecidedCli, BadInputIsAUsageErrorBeforeAnythingRuns) {
  TempDir dir;
  std::string variants = dir.write("aa.yaml", kVariantsJob);
  std::string one = dir.write("one.yaml", kOneJob);
  std::string db = dir.path() + "/r.db";
  auto single = run_nightjar({"run", one, "--db", db, "--until-decided"});
  EXPECT_EQ(single.exit_code, 2);
  EXPECT_TRUE(has(single.err, "--until-decided build=BASE")) << single.err;
  auto two =
      run_nightjar({"run", variants, "--db", db, "--variant", "a,b", "--until-decided", "build=x"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_TRUE(has(two.err, "against a stored side run one")) << two.err;
  auto metric = run_nightjar({"run", variants, "--db", db, "--variant", "a,b", "--until-decided",
                              "--decide-on", "nosuch"});
  EXPECT_EQ(metric.exit_code, 2);
  EXPECT_TRUE(has(metric.err, "--decide-on nosuch: no such metric")) << metric.err;
  auto time = run_nightjar(
      {"run", variants, "--db", db, "--variant", "a,b", "--until-decided", "--max-time", "soon"});
  EXPECT_EQ(time.exit_code, 2);
  EXPECT_TRUE(has(time.err, "--max-time")) << time.err;
  auto alone = run_nightjar({"run", variants, "--db", db, "--max-time", "1m"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_TRUE(has(alone.err, "the budget of --until-decided")) << alone.err;
  EXPECT_FALSE(std::filesystem::exists(db));  // refused before the database is opened
}

TEST(UntilDecidedCli, NightlyClean0AndUndecided3WithTheReason) {
  TempDir dir;
  std::string job = dir.write("night.yaml",
                              "workload: fake\nparams:\n  value: 100\n  cv: 1\n"
                              "iterations: 3\n");
  std::string db = dir.path() + "/r.db", state = dir.path() + "/state";
  auto night = [&](const std::string& label, std::vector<std::string> extra) {
    nightjar::CommandSpec s;
    s.argv = {"bash",       source_path("ci/nightly.sh"),
              "--nightjar", NIGHTJAR_BINARY,
              "--db",       db,
              "--state",    state,
              "--job",      job,
              "--build",    label};
    s.argv.insert(s.argv.end(), extra.begin(), extra.end());
    s.timeout_sec = 120;
    return nightjar::run_command(s);
  };
  // A calibrated testbox (the fake workload's runs do not differ): a nightly
  // with only a few nights stored has no history of alike runs yet, and the
  // conservative prior would keep every night open (issue 35).
  ASSERT_EQ(run_nightjar({"calibrate", job, "--db", db, "--pairs", "2"}).exit_code, 0);
  // A first night of 3 iterations is too short a BASE for ±1% at CoeffVar 1%:
  // the next night says so and exits 3 without measuring to its budget.
  ASSERT_EQ(night("short", {}).exit_code, 0);
  auto limited = night("after-short", {});
  EXPECT_EQ(limited.exit_code, 3) << limited.err;
  EXPECT_TRUE(has(limited.err, "no length of this run can decide ±1%; measure the BASE longer"))
      << limited.err;
  EXPECT_EQ(read_file(state + "/last-good"), "short\n");

  std::filesystem::remove(state + "/last-good");
  auto first = night("n1", {"--iterations", "30"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(read_file(state + "/last-good"), "n1\n");
  // 3 iterations cannot decide ±1% at CoeffVar 1%: exit 3, last-good stays.
  auto tight = night("n2", {"--max-iterations", "3"});
  EXPECT_EQ(tight.exit_code, 3) << tight.err;
  EXPECT_EQ(read_file(state + "/last-good"), "n1\n");
  EXPECT_TRUE(has(tight.err, "undecided within the budget")) << tight.err;
  std::string report = read_file(state + "/reports/nightly-n2.md");
  EXPECT_TRUE(has(report, "still open (budget of 3 iterations per side spent)")) << report;
  EXPECT_TRUE(has(report, "needs about")) << report;
  EXPECT_TRUE(has(report, "undecided within the budget")) << report;
  // The same night with room to measure: decided unchanged, exit 0, moves last-good.
  auto roomy = night("n3", {});
  EXPECT_EQ(roomy.exit_code, 0) << roomy.err;
  EXPECT_EQ(read_file(state + "/last-good"), "n3\n");
}

// Issue 35: runs as the unit. With `--runs N` each round is one run per
// variant (a b, a b, ...) and the looks compare the runs' means (the run
// model), so an A/A is decided without a calibration: the fake workload's
// runs of one seed are identical, and 3 runs per side show it.
TEST(UntilDecidedCli, RunsAsTheUnitDecideAnAAUnchangedAfterThreeRunsPerSide) {
  TempDir dir;
  std::string job = dir.write("aa.yaml", kVariantsJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_by_runs(job, db, "6");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "plan: aa: no stored history of its cells")) << r.err;
  EXPECT_TRUE(has(r.err, "a look at 3 runs per side, then every 3 (budget 6 runs per side)"))
      << r.err;
  EXPECT_TRUE(has(r.err, "look 1 at 3/6 runs per side")) << r.err;
  EXPECT_TRUE(has(r.out, "throughput unchanged, latency unchanged after 3 runs per side (1 look)"))
      << r.out;
  // Stopped at the first look: 3 runs per side of the budget's 6, alternating.
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(variant, ' ') FROM (SELECT variant FROM run "
                      "WHERE status='complete' ORDER BY id)"),
            "a b a b a b");

  // With a calibration the plan line says how many runs a decision needs.
  ASSERT_EQ(
      run_nightjar({"calibrate", job, "--db", db, "--variant", "a", "--pairs", "2"}).exit_code, 0);
  auto planned = run_by_runs(job, db, "6");
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_TRUE(has(planned.err, "(this testbox's calibration)")) << planned.err;
  EXPECT_TRUE(has(planned.err, "runs per side (budget 6 runs per side)")) << planned.err;
}

TEST(UntilDecidedCli, RunsAsTheUnitAgainstAStoredBaseFindTheRegression) {
  TempDir dir;
  std::string job = dir.write("one.yaml", kOneJob);
  std::string db = dir.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"run", job, "--db", db, "--build", "base", "--runs", "3"}).exit_code, 0);
  // 10% slower: a regression at the first look, after 3 runs.
  auto bad =
      run_nightjar({"run", job, "--db", db, "--build", "new", "--set", "value=90",
                    "--until-decided", "build=base", "--ignore-param", "value", "--runs", "9"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_TRUE(has(bad.out, "throughput regression, latency regression after 3 runs per side"))
      << bad.out;
  EXPECT_EQ(count(db, "SELECT count(*) FROM run WHERE build='new'"), 3);
}

TEST(UntilDecidedCli, RunsAsTheUnitRefuseTooFewRunsAndAnIterationBudget) {
  TempDir dir;
  std::string job = dir.write("aa.yaml", kVariantsJob);
  std::string db = dir.path() + "/r.db";
  auto two = run_by_runs(job, db, "2");
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_TRUE(has(two.err, "--runs 2 with --until-decided")) << two.err;
  EXPECT_TRUE(has(two.err, "write --runs 3 or more")) << two.err;
  auto budget = run_by_runs(job, db, "6", {"--max-iterations", "10"});
  EXPECT_EQ(budget.exit_code, 2);
  EXPECT_TRUE(has(budget.err, "--max-iterations and --max-time")) << budget.err;
  EXPECT_FALSE(std::filesystem::exists(db));  // refused before the database is opened
}

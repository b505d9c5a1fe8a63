// Unit under test: the `nightjar` binary end to end — `run`, `show`, `list`,
// `env`, bad job files, SIGINT/SIGKILL handling and concurrent writers.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "results/model/exit_codes.h"
#include "test_support.h"

using namespace nightjar::test;

namespace {

int count(const std::string& db, const std::string& sql) {
  std::string v = query_one(db, sql);
  return v.empty() ? -1 : std::stoi(v);
}

const char* kFakeJob = R"(workload: fake
description: scripted samples
params:
  value: 100
  seed: [1, 2]
iterations: 3
warmup: 0
)";

}  // namespace

TEST(RunCli, FakeJobStoresEverySampleAndShowListsRuns) {
  TempDir dir;
  std::string job = dir.write("fake.yaml", kFakeJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--variant", "a", "--build", "v1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM run WHERE status='complete' AND variant='a' AND build='v1'"),
      2);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), 6);
  EXPECT_NE(r.out.find("cv=0 fail_at=0 seed=1 sleep=0s value=100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Hmean"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("database " + db), std::string::npos) << r.err;

  auto show = run_nightjar({"show", "--db", db});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("complete"), std::string::npos);
  EXPECT_NE(show.out.find("3/3"), std::string::npos) << show.out;
}

TEST(RunCli, ScriptedSamplesGiveExactHmean) {
  TempDir dir;
  std::string job = dir.write(
      "s.yaml", "workload: fake\nparams:\n  script: \"100,200,400\"\niterations: 3\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Hmean(100, 200, 400) = 3 / (1/100 + 1/200 + 1/400) = 171.428571...
  EXPECT_NE(r.out.find("171.43"), std::string::npos) << r.out;
}

TEST(RunCli, SkippedCellIsStoredWithReason) {
  TempDir dir;
  std::string job =
      dir.write("skip.yaml", "workload: fake\nparams:\n  skip: needs a unicorn\niterations: 2\n");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db, "SELECT status || ':' || reason FROM run"), "skipped:needs a unicorn");
  EXPECT_NE(r.err.find("needs a unicorn"), std::string::npos);
  // A CI gate asks for a failure instead of passing on nothing; the
  // skipped run is stored all the same.
  auto gate = run_nightjar({"run", job, "--db", db, "--fail-if-skipped"});
  EXPECT_EQ(gate.exit_code, 4) << gate.err;
  EXPECT_NE(gate.err.find("--fail-if-skipped: 1 of 1 cell run(s) skipped"), std::string::npos)
      << gate.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run WHERE status='skipped'"), "2");
  // Cells that ran: the flag changes nothing.
  std::string ok = dir.write("ok.yaml", "workload: fake\nparams:\n  value: 5\niterations: 2\n");
  EXPECT_EQ(run_nightjar({"run", ok, "--db", db, "--fail-if-skipped"}).exit_code, 0);
}

TEST(RunCli, FailedIterationsAreStoredAsFailedSamples) {
  TempDir dir;
  std::string job =
      dir.write("f.yaml", "workload: fake\nparams:\n  fail_at: 2\niterations: 3\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(db, "SELECT count(*) FROM iteration WHERE status='failed'"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), 2);
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "complete");
}

TEST(RunCli, SetOverridesAxesAndContextIsRecorded) {
  TempDir dir;
  std::string job = dir.write("fake.yaml", kFakeJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--set", "seed=5,6,7", "--iterations", "2",
                         "--context", "purpose=test"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(db, "SELECT count(*) FROM run"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), 6);
  EXPECT_EQ(count(db, "SELECT count(*) FROM run_context WHERE key='purpose' AND value='test'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM run_context WHERE key='thp.enabled'"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM kernel WHERE release != ''"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM monitor WHERE name='vmstat.pgfault'"), 6);
}

TEST(RunCli, DatabasePathFromEnvironment) {
  TempDir dir;
  std::string job = dir.write("fake.yaml", kFakeJob);
  auto r =
      run_nightjar({"run", job, "--iterations", "1"}, {{"NIGHTJAR_DB", dir.path() + "/env.db"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(dir.path() + "/env.db", "SELECT count(*) FROM run"), 2);
  auto x = run_nightjar({"run", job, "--iterations", "1"},
                        {{"NIGHTJAR_DB", ""}, {"XDG_DATA_HOME", dir.path() + "/xdg"}});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_EQ(count(dir.path() + "/xdg/nightjar/results.db", "SELECT count(*) FROM run"), 2);
  EXPECT_NE(x.err.find(dir.path() + "/xdg/nightjar/results.db"), std::string::npos);
}

TEST(RunCli, NotANightjarDatabaseIsAnEnvironmentError) {
  TempDir dir;
  std::string job = dir.write("fake.yaml", kFakeJob);
  std::string junk =
      dir.write("junk.db", "this is not sqlite at all, just text that is long enough to matter");
  auto r = run_nightjar({"run", job, "--db", junk});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find(junk), std::string::npos) << r.err;
  EXPECT_EQ(read_file(junk), "this is not sqlite at all, just text that is long enough to matter");
}

// ---- bad job files: exit 2, file:line: field, nothing written -------------
struct BadJob {
  const char* name;
  const char* yaml;
  const char* expect_location;  // "file:line" suffix expected in the message, after the path
  const char* expect_field;
};

void PrintTo(const BadJob& c, std::ostream* os) {
  *os << c.name;
}

class BadJobFile : public ::testing::TestWithParam<BadJob> {};

TEST_P(BadJobFile, ExitsTwoNamingFileLineFieldAndWritesNothing) {
  const BadJob& c = GetParam();
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  // A database that already holds one run: it must be unchanged.
  std::string good = dir.write("good.yaml", kFakeJob);
  ASSERT_EQ(run_nightjar({"run", good, "--db", db, "--iterations", "1"}).exit_code, 0);
  int runs_before = count(db, "SELECT count(*) FROM run");
  std::string job = dir.write(std::string(c.name) + ".yaml", c.yaml);
  auto r = run_nightjar({"run", job, "--db", db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(job + c.expect_location), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(c.expect_field), std::string::npos) << r.err;
  EXPECT_EQ(count(db, "SELECT count(*) FROM run"), runs_before);
  EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadJobFile,
    ::testing::Values(
        BadJob{"syntax", "workload: pft\nparams:\n  clients: [1, 2\n", ":", "syntax error"},
        BadJob{"unknown_workload", "workload: pftx\n", ":1:", "workload"},
        BadJob{"unknown_param", "workload: pft\nparams:\n  clientz: 1\n", ":3:", "clientz"},
        BadJob{"clients_zero", "workload: pft\nparams:\n  clients: 0\n", ":3:", "clients"},
        BadJob{"clients_negative", "workload: pft\nparams:\n  clients: [1, -2]\n",
               ":3:", "clients"},
        BadJob{"size_zero", "workload: pft\nparams:\n  size: 0\n", ":3:", "size"},
        BadJob{"size_above_memory", "workload: pft\nparams:\n  size: 64T\n", ":3:", "size"},
        BadJob{"bad_suffix", "workload: pft\nparams:\n  size: 10Q\n", ":3:", "size"},
        BadJob{"unknown_key", "workload: pft\nitterations: 3\n", ":2:", "itterations"},
        BadJob{"bad_iterations", "workload: pft\niterations: many\n", ":2:", "iterations"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RunCli, BadSetAndMissingFileAreUsageErrors) {
  TempDir dir;
  std::string job = dir.write("fake.yaml", kFakeJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--set", "seed"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--set"), std::string::npos) << r.err;
  auto m = run_nightjar({"run", dir.path() + "/missing.yaml", "--db", db});
  EXPECT_EQ(m.exit_code, 2) << m.err;
  EXPECT_NE(m.err.find("missing.yaml"), std::string::npos) << m.err;
  auto f = run_nightjar({"run", job, "--db", db, "--bogus"});
  EXPECT_EQ(f.exit_code, 2);
  // None of them created the database.
  EXPECT_FALSE(std::ifstream(db).good());
}

// ---- signals ----------------------------------------------------------------
TEST(RunCli, SigintDuringIterationTwoKeepsCompletedSamples) {
  // Orphans of the nightjar process would be re-parented to us: any child of
  // ours left after nightjar exits is a leaked worker.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  std::string job =
      dir.write("slow.yaml", "workload: fake\nparams:\n  sleep: 1s\niterations: 5\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db}, dir.path(), "run");
  // Wait until iteration 1 is stored (not a fixed delay: under a sanitizer on
  // a busy machine start-up alone can take over half a second), then
  // interrupt 300 ms into iteration 2's 1 s sleep.
  for (int i = 0; i < 600 && count(db, "SELECT count(*) FROM iteration") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "aborted");
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), 1);
  EXPECT_TRUE(children_of(getpid()).empty());
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(RunCli, SigintDuringPftProcessesLeavesNoWorkers) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar(
      {"run", source_path("jobs/pft-quick.yaml"), "--db", db, "--set", "mode=processes", "--set",
       "clients=2", "--set", "size=1G", "--iterations", "20", "--warmup", "0"},
      dir.path(), "run");
  // Wait until at least one sample is stored, then interrupt. A 1 GiB
  // iteration of two processes took over 10 s on a loaded 2-CPU machine, so
  // the wait is bounded by two minutes, not by a guess at the speed.
  for (int i = 0; i < 2400 && count(db, "SELECT count(*) FROM iteration") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "aborted");
  EXPECT_GE(count(db, "SELECT count(*) FROM sample WHERE metric='faults_per_sec'"), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(children_of(getpid()).empty());
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(RunCli, SigkillLeavesRunThatNextInvocationMarksAborted) {
  TempDir dir;
  std::string job = dir.write(
      "slow.yaml", "workload: fake\nparams:\n  sleep: 300ms\niterations: 50\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db}, dir.path(), "run");
  for (int i = 0; i < 200 && count(db, "SELECT count(*) FROM iteration") < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit_code(pid), 128 + SIGKILL);
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "running");
  int samples = count(db, "SELECT count(*) FROM sample WHERE metric='throughput'");
  EXPECT_GE(samples, 2);
  // `show` reads only (issue 15: read commands open the database read-only);
  // the next command that writes marks the run aborted.
  auto show = run_nightjar({"show", "--db", db});
  ASSERT_EQ(show.exit_code, 0);
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "running");
  auto next = run_nightjar(
      {"run", dir.write("quick.yaml", "workload: null\niterations: 1\nwarmup: 0\n"), "--db", db});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_NE(next.err.find("marked 1 run"), std::string::npos) << next.err;
  EXPECT_EQ(query_one(db, "SELECT status FROM run WHERE id=1"), "aborted");
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), samples);
  EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
}

TEST(RunCli, RunningRunOfLiveProcessIsNotAborted) {
  TempDir dir;
  std::string job = dir.write(
      "slow.yaml", "workload: fake\nparams:\n  sleep: 200ms\niterations: 10\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", job, "--db", db}, dir.path(), "run");
  for (int i = 0; i < 200 && count(db, "SELECT count(*) FROM iteration") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto show = run_nightjar({"show", "--db", db});
  EXPECT_EQ(show.err.find("marked"), std::string::npos) << show.err;
  EXPECT_EQ(wait_exit_code(pid), 0);
  EXPECT_EQ(query_one(db, "SELECT status FROM run"), "complete");
}

TEST(RunCli, TwoConcurrentWritersLoseNothing) {
  TempDir dir;
  std::string job = dir.write(
      "many.yaml", "workload: fake\nparams:\n  seed: [1, 2, 3, 4, 5]\niterations: 40\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  pid_t a = spawn_nightjar({"run", job, "--db", db, "--variant", "a"}, dir.path(), "a");
  pid_t b = spawn_nightjar({"run", job, "--db", db, "--variant", "b"}, dir.path(), "b");
  EXPECT_EQ(wait_exit_code(a), 0) << read_file(dir.path() + "/a.err");
  EXPECT_EQ(wait_exit_code(b), 0) << read_file(dir.path() + "/b.err");
  // On failure, every run's state and both writers' stderr (it failed twice
  // under load in 2026-12 and never alone: the diagnosis needs them).
  const std::string runs = query_one(
      db,
      "SELECT group_concat(id || ' ' || variant || ' ' || status || ' ' || reason || ' ' || "
      "(SELECT count(*) FROM iteration i WHERE i.run_id=run.id), '; ') FROM run");
  const std::string why = "runs: " + runs + "\na.err: " + read_file(dir.path() + "/a.err") +
                          "\nb.err: " + read_file(dir.path() + "/b.err");
  EXPECT_EQ(count(db, "SELECT count(*) FROM run WHERE status='complete'"), 10) << why;
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='throughput'"), 400) << why;
  EXPECT_EQ(count(db, "SELECT count(*) FROM iteration"), 400) << why;
  EXPECT_EQ(query_one(db, "PRAGMA integrity_check"), "ok");
}

// ---- the issue's check 2: a real pft matrix ------------------------------------
TEST(RunCli, PftMatrixFourCellsThreeSamples) {
  TempDir dir;
  std::string db = dir.path() + "/t.db";
  auto r = run_nightjar({"run", source_path("jobs/pft.yaml"), "--set", "clients=1,2", "--set",
                         "mode=threads,processes", "--set", "size=256M", "--iterations", "3",
                         "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(db, "SELECT count(*) FROM run WHERE status='complete'"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sample WHERE metric='faults_per_sec' AND value > 0"),
            12);
  EXPECT_EQ(count(db, "SELECT count(DISTINCT cell) FROM run"), 4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM monitor WHERE name='vmstat.pgfault'"), 12);
  auto show = run_nightjar({"show", "--db", db});
  ASSERT_EQ(show.exit_code, 0);
  EXPECT_NE(show.out.find("clients=2 mode=processes size=256M"), std::string::npos) << show.out;
}

// ---- help, list, env ------------------------------------------------------------
TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : {"run", "list", "show", "env"}) {
    auto r = run_nightjar({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << r.out;
  }
  auto none = run_nightjar({});
  EXPECT_EQ(none.exit_code, 2);
}

// The --help footer names every exit code of the one exit-code table
// (results/model/exit_codes.h; README "Exit codes"); a new user found 5
// missing there.
TEST(Cli, HelpFooterNamesEveryExitCode) {
  using nightjar::ExitCode;
  using nightjar::to_int;
  auto r = run_nightjar({"--help"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("Exit codes:");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string footer = r.out.substr(at);
  for (ExitCode c : {ExitCode::ok, ExitCode::regression, ExitCode::usage, ExitCode::inconclusive,
                     ExitCode::environment, ExitCode::confounded, ExitCode::bisect_skip,
                     ExitCode::bisect_abort, ExitCode::interrupted}) {
    const std::string code = std::to_string(to_int(c));
    EXPECT_TRUE(footer.find(" " + code + " ") != std::string::npos ||
                footer.find("\n" + code + " ") != std::string::npos)
        << "exit code " << code << " missing from the --help footer:\n"
        << footer;
  }
}

TEST(Cli, ListShowsWorkloadsParamsAndMetrics) {
  auto r = run_nightjar({"list"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s :
       {"pft", "fake", "null", "faults_per_sec", "higher is better", "clients", "size"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  // An optional text parameter (fake's `skip`) is unset by default, not required.
  EXPECT_NE(r.out.find("(unset)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(required)"), std::string::npos) << r.out;
}

TEST(Cli, EnvShowsKernelTestboxAndContext) {
  auto r = run_nightjar({"env"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s : {"release", "hostname", "cpus", "thp.enabled", "cgroup.version", "warnings"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << r.out;
}

TEST(RunCli, RunsAlternateVariantsAndCompareUsesRunsOrCalibration) {
  TempDir dir;
  std::string job = dir.write(
      "r.yaml", "workload: fake\nparams:\n  value: 100\n  cv: 1\niterations: 3\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db, "--variant", "a,b", "--runs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(variant, ' ') FROM (SELECT variant FROM run "
                      "ORDER BY id)"),
            "a b a b");
  auto c = run_nightjar({"compare", "a", "b", "--db", db});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("CVwithin  throughput"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("CVbetween throughput"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("one run on a side"), std::string::npos) << c.out;

  // One run per side: the prior and its warning (2 runs of each variant are
  // too few alike runs for a history), until the testbox is calibrated.
  run_nightjar({"run", job, "--db", db, "--variant", "x"});
  run_nightjar({"run", job, "--db", db, "--variant", "y"});
  auto one = run_nightjar({"compare", "x", "y", "--db", db});
  EXPECT_NE(one.out.find("warning: one run on a side"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("from the conservative prior"), std::string::npos) << one.out;
  auto cal = run_nightjar({"calibrate", job, "--db", db, "--pairs", "2"});
  ASSERT_EQ(cal.exit_code, 0) << cal.out << cal.err;
  EXPECT_NE(cal.out.find("between-run CoeffVar"), std::string::npos) << cal.out;
  EXPECT_GT(count(db, "SELECT count(*) FROM calibration WHERE metric='throughput'"), 0);
  auto calibrated = run_nightjar({"compare", "x", "y", "--db", db});
  EXPECT_EQ(calibrated.out.find("one run on a side and"), std::string::npos) << calibrated.out;
  EXPECT_NE(calibrated.out.find("between-run variation from this testbox's calibration"),
            std::string::npos)
      << calibrated.out;
}

TEST(RunCli, JobMinEffectIsTheMarginOfItsRows) {
  TempDir dir;
  const std::string body = "workload: fake\nparams:\n  cv: 1\niterations: 5\nwarmup: 0\n";
  std::string db = dir.path() + "/r.db";
  std::string a = dir.write("a/m.yaml", body + "min_effect:\n  default: 50%\n  latency: 0.5\n");
  ASSERT_EQ(run_nightjar({"run", a, "--db", db, "--variant", "a"}).exit_code, 0);
  ASSERT_EQ(run_nightjar({"run", a, "--db", db, "--variant", "b"}).exit_code, 0);
  auto c = run_nightjar({"compare", "a", "b", "--db", db, "--format", "json"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("\"min_effect_pct\": 50.0"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("\"min_effect_pct\": 0.5"), std::string::npos) << c.out;
  std::string bad = dir.write("b/m.yaml", body + "min_effect: lots\n");
  auto r = run_nightjar({"run", bad, "--db", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("min_effect"), std::string::npos) << r.err;
}

// ---- issue 15 check 4: large matrices -------------------------------------------

namespace {

// A job with axes seed (a values) and value (b values): a x b cells.
std::string matrix_job(const TempDir& dir, int a, int b, int iterations) {
  std::string seeds, values;
  for (int i = 1; i <= a; ++i) seeds += (i > 1 ? ", " : "") + std::to_string(i);
  for (int i = 1; i <= b; ++i) values += (i > 1 ? ", " : "") + std::to_string(100 + i);
  return dir.write("big.yaml", "workload: fake\nparams:\n  seed: [" + seeds + "]\n  value: [" +
                                   values + "]\niterations: " + std::to_string(iterations) +
                                   "\nwarmup: 1\n");
}

// Waits up to 60 s for `text` in the file at `path`.
bool wait_for_text(const std::string& path, const std::string& text) {
  for (int i = 0; i < 1200; ++i) {
    if (read_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST(RunCli, MatrixAboveTheLimitIsRefusedWithCountEstimateAndYes) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", matrix_job(dir, 64, 32, 1000), "--db", db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("big.yaml: 2048 cell(s) x (1 warm-up + 1000 iterations) = 2050048 "
                       "iterations; no estimate"),
            std::string::npos)
      << r.err;
  EXPECT_NE(
      r.err.find("above the limit of 1000 runs (cells x variants x --runs x kernels) or 24 h"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(db).good());  // refused before the database
  // The limit counts runs: one cell in 1001 label-only variants is refused as
  // 1001 cells are (a new user ran 10 000 variants without being asked).
  std::string variants = "workload: fake\niterations: 1\nwarmup: 0\nvariants:\n";
  for (int v = 0; v < 1001; ++v) variants += "  v" + std::to_string(v) + ": {}\n";
  auto many = run_nightjar({"run", dir.write("variants.yaml", variants), "--db", db});
  EXPECT_EQ(many.exit_code, 2) << many.err;
  EXPECT_NE(many.err.find("1 cell(s) x 1001 variants"), std::string::npos) << many.err;
  EXPECT_NE(many.err.find("above the limit of 1000 runs"), std::string::npos) << many.err;
  EXPECT_FALSE(std::ifstream(db).good());
  // Declared durations give the estimate: 10 cells x 3 x 1 h is over 24 h.
  auto longer = run_nightjar({"run",
                              dir.write("long.yaml",
                                        "workload: fake\nparams:\n  seed: [1, 2, 3, 4, 5, 6, 7, "
                                        "8, 9, 10]\n  sleep: 1h\niterations: 3\nwarmup: 0\n"),
                              "--db", db});
  EXPECT_EQ(longer.exit_code, 2) << longer.err;
  EXPECT_NE(longer.err.find("estimate 30 h (declared: 60 min per iteration from sleep)"),
            std::string::npos)
      << longer.err;
}

TEST(RunCli, MillionCellMatrixIsRefusedInUnderASecond) {
  TempDir dir;
  const std::string job = matrix_job(dir, 1000, 1000, 1);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_nightjar_under({"timeout", "-s", "KILL", "20"},
                              {"run", job, "--db", dir.path() + "/r.db"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1000000 cell(s)"), std::string::npos) << r.err;
  // Counting is the sum of the lists (2000 values), not their product; the
  // margin is for a sanitizer build's start-up on a busy machine.
  EXPECT_LT(s, 2.0);
}

TEST(RunCli, SigintWhileAMillionCellsAreBuiltExits130WithNothingStored) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", matrix_job(dir, 1000, 1000, 1), "--db", db, "--yes"},
                             dir.path(), "run");
  // The plan line is printed before the cells are built (seconds for a million).
  ASSERT_TRUE(wait_for_text(dir.path() + "/run.err", "nightjar: matrix: big: 1000000 cell(s)"))
      << read_file(dir.path() + "/run.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  EXPECT_FALSE(std::ifstream(db).good());  // planning opens no database to write
}

TEST(RunCli, MatrixAboveTheLimitStartsWithYes) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  pid_t pid = spawn_nightjar({"run", matrix_job(dir, 64, 32, 1000), "--db", db, "--yes"},
                             dir.path(), "run");
  for (int i = 0; i < 1200 && count(db, "SELECT count(*) FROM iteration") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit_code(pid), 130) << read_file(dir.path() + "/run.err");
  const std::string err = read_file(dir.path() + "/run.err");
  EXPECT_NE(err.find("2048 cell(s) x (1 warm-up + 1000 iterations) = 2050048 iterations; no "
                     "estimate (no stored iterations of this job, no duration parameter) (--yes: "
                     "above the limits)"),
            std::string::npos)
      << err;
  EXPECT_GE(count(db, "SELECT count(*) FROM iteration"), 1);
  EXPECT_EQ(query_one(db, "SELECT status FROM run ORDER BY id DESC LIMIT 1"), "aborted");
}

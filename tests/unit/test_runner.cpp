// Unit under test: execute_runs (harness/run/runner.cpp) with scripted system
// reads (FakeSystem, a SystemReads of harness/run/system_reads.h) and the
// `fake` workload, into a real results store in a temporary directory: the
// monitor deltas of the fake's snapshots stored with each iteration, the
// identity, facts and warnings stored with each run, skipped, failed and
// aborted runs, invalid values, the --until-decided hook, and the order of
// the variants' iterations with and without --interleave.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/run/runner.h"
#include "harness/run/system_reads.h"
#include "harness/run/until_decided.h"
#include "results/store/store.h"
#include "test_support.h"
#include "workloads/sys/monitor_set.h"

namespace nightjar {
namespace {

using test::TempDir;

// Scripted readings. Snapshot n (0-based, counting every call) reads
// vmstat pgfault = n*n, so the iteration measured between snapshots 2m and
// 2m+1 (the m-th measured iteration of the whole plan, 0-based) stores
// vmstat.pgfault = 4m+1: the stored deltas tell the order in which the
// iterations ran. pgmajfault stays 7 (delta 0); each snapshot adds 30 busy
// and 10 idle CPU ticks (cpu.util_pct 75) and no own ticks (cpu.own_sec 0).
class FakeSystem : public SystemReads {
 public:
  /// interrupted() becomes true once this many snapshots were taken (-1: never).
  int interrupt_after_snapshots = -1;
  CgroupLayout layout;  ///< Version::none: no cgroup filesystem
  std::map<std::string, std::string> facts{
      {"thp.enabled", "always"}, {"aslr", "2"}, {"cpufreq.governor", "powersave"}};
  std::map<std::string, int> calls;  ///< function name -> times called

  void watch_interrupts() override { ++calls["watch_interrupts"]; }
  std::vector<std::string> sweep_leftovers() override {
    ++calls["sweep_leftovers"];
    return {};
  }
  KernelIdentity kernel() override {
    ++calls["kernel"];
    return {.release = "6.6.0-fake",
            .version = "#1 fake",
            .cmdline = "quiet",
            .config_hash = "",
            .config_source = "",
            .config_text = ""};
  }
  Testbox testbox() override {
    ++calls["testbox"];
    return {.hostname = "fakebox", .cpu_model = "Fake CPU", .cpus = 4, .memory_bytes = 1 << 30};
  }
  SystemContext context() override {
    ++calls["context"];
    return SystemContext{facts};
  }
  CgroupLayout cgroup_layout() override {
    ++calls["cgroup_layout"];
    return layout;
  }
  std::string memcg_unavailable(const CgroupLayout&) override {
    ++calls["memcg_unavailable"];
    return "the fake has no memory controller";
  }
  MachineFacts machine() override {
    ++calls["machine"];
    return {.mem_total_bytes = 1 << 30, .cpus = 4};
  }
  MonitorSnapshot snapshot() override {
    const auto n = static_cast<std::uint64_t>(snapshots_++);
    MonitorSnapshot s;
    s.vmstat = {{"pgfault", n * n}, {"pgmajfault", 7}};
    s.cpu_ticks = {1000 + 30 * n, 0, 0, 5000 + 10 * n, 0, 0, 0, 0};
    s.own_cpu_ticks = 50;
    s.wall_seconds = static_cast<double>(n);
    return s;
  }
  /// With a proc root (a directory of fake /proc files), the extra monitors
  /// of the job's selection read it (perf-stat left out: it counts the real
  /// process); without, none. `selected` keeps the last selection.
  std::string proc_root;
  std::vector<std::string> selected;
  std::unique_ptr<MonitorSet> open_monitors(const std::vector<std::string>& names,
                                            const CgroupTree* tree) override {
    ++calls["open_monitors"];
    selected = names;
    if (proc_root.empty()) return nullptr;
    std::vector<std::string> files = names;
    std::erase(files, "perf-stat");
    return std::make_unique<MonitorSet>(files, proc_root, tree);
  }
  std::map<std::string, std::uint64_t> cgroup_events(const CgroupTree&) override {
    ADD_FAILURE() << "no run of these tests has a cgroup tree";
    return {};
  }
  bool interrupted() override {
    return interrupt_after_snapshots >= 0 && snapshots_ >= interrupt_after_snapshots;
  }
  int interrupt_signal() override { return interrupted() ? SIGINT : 0; }

  int snapshots() const { return snapshots_; }

 private:
  int snapshots_ = 0;
};

// A job file, a store and the fake system: plans the job with `options` and
// runs it with execute_runs.
class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest() : store_(dir_.path() + "/results.db") {}

  RunOutcome run(const std::string& job_yaml, RunOptions options = {}) {
    options.job_paths = {dir_.write("job.yaml", job_yaml)};
    const std::vector<PlannedJob> plan = plan_runs(options, MachineFacts{1 << 30, 4});
    return execute_runs(plan, options, store_, system_);
  }

  RunRecord record(std::int64_t id) const {
    std::optional<RunRecord> r = store_.run_record(id);
    EXPECT_TRUE(r.has_value()) << "run " << id;
    return r.value_or(RunRecord{});
  }

  // The stored status of run `id`, as the database spells it.
  std::string status(std::int64_t id) const { return to_string(record(id).status); }

  // The stored vmstat.pgfault delta of each iteration of run `id`, by iteration.
  std::vector<double> pgfault(std::int64_t id) const {
    std::vector<double> out;
    for (const auto& it : record(id).iteration_data)
      out.push_back(it.monitors.at("vmstat.pgfault"));
    return out;
  }

  TempDir dir_;
  ResultsStore store_;
  FakeSystem system_;
};

TEST_F(RunnerTest, StoresTheMonitorDeltasOfTheFakeReadingsWithEachIteration) {
  const RunOutcome out =
      run("workload: fake\nparams:\n  script: \"100,200,400\"\niterations: 3\nwarmup: 1\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.complete, 1);
  EXPECT_FALSE(out.interrupted);
  // Two snapshots per measured iteration; the warm-up takes none.
  EXPECT_EQ(system_.snapshots(), 6);

  const RunRecord r = record(out.run_ids[0]);
  EXPECT_EQ(status(out.run_ids[0]), "complete");
  ASSERT_EQ(r.iteration_data.size(), 3u);
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double throughput[] = {100, 200, 400};
  for (std::size_t m = 0; m < 3; ++m) {
    const auto& it = r.iteration_data[m];
    EXPECT_EQ(it.row.iteration, static_cast<int>(m) + 1);
    EXPECT_EQ(it.metrics.at("throughput"), throughput[m]);
    EXPECT_EQ(it.monitors.at("vmstat.pgfault"), static_cast<double>(4 * m + 1));
    EXPECT_EQ(it.monitors.at("vmstat.pgmajfault"), 0.0);
    EXPECT_DOUBLE_EQ(it.monitors.at("cpu.util_pct"), 75.0);
    EXPECT_EQ(it.monitors.at("cpu.own_sec"), 0.0);
    EXPECT_DOUBLE_EQ(it.monitors.at("cpu.foreign_sec"), 30 / hz);
    // Counters the fake does not have are not stored as 0.
    EXPECT_EQ(it.monitors.count("vmstat.pswpin"), 0u);
  }
}

TEST_F(RunnerTest, AJobWithoutMonitorsRecordsTheDefaultSelection) {
  const RunOutcome out = run("workload: fake\nparams:\n  script: \"1,2,3\"\niterations: 3\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(system_.calls["open_monitors"], 1);
  EXPECT_EQ(system_.selected, default_monitors());
  EXPECT_EQ(record(out.run_ids[0]).iteration_data[0].monitors.count("cpu.util_pct"), 1u);
}

TEST_F(RunnerTest, MonitorsSelectsTheRowsAndStoresWhatIsUnavailable) {
  // softirqs is read from the fake proc root; meminfo is selected but absent.
  system_.proc_root = dir_.path() + "/proc";
  std::filesystem::create_directories(system_.proc_root);
  dir_.write("proc/softirqs", "       CPU0  CPU1\n     HI:  1  2\n  TIMER:  10  20\n");
  const RunOutcome out =
      run("workload: fake\nparams:\n  script: \"1,2,3\"\niterations: 3\n"
          "monitors: [vmstat, softirqs, meminfo]\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  const RunRecord r = record(out.run_ids[0]);
  ASSERT_EQ(r.iteration_data.size(), 3u);
  for (const auto& it : r.iteration_data) {
    EXPECT_EQ(it.monitors.count("vmstat.pgfault"), 1u);
    EXPECT_EQ(it.monitors.count("cpu.util_pct"), 0u) << "cpu is not selected";
    EXPECT_EQ(it.monitors.at("softirqs.TIMER"), 0.0) << "the fake file does not change";
    EXPECT_EQ(it.monitors.count("meminfo.MemFree"), 0u);
  }
  ASSERT_EQ(r.context.count("monitor.unavailable"), 1u);
  EXPECT_NE(r.context.at("monitor.unavailable").find("meminfo: cannot read"), std::string::npos);
}

TEST_F(RunnerTest, StoresTheFakeIdentityFactsAndWarningsWithTheRun) {
  RunOptions options;
  options.context = {{"purpose", "unit test"}, {"aslr", "0"}};
  options.build = "v1";
  const RunOutcome out = run("workload: fake\niterations: 1\nwarmup: 0\n", options);
  ASSERT_EQ(out.run_ids.size(), 1u);
  const std::int64_t id = out.run_ids[0];
  const auto [kernel, testbox] = store_.run_machine(id);
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(kernel->release, "6.6.0-fake");
  ASSERT_TRUE(testbox.has_value());
  EXPECT_EQ(testbox->hostname, "fakebox");
  EXPECT_EQ(testbox->cpus, 4u);

  const RunRecord r = record(id);
  EXPECT_EQ(r.build, "v1");
  EXPECT_EQ(r.variant, "default");
  EXPECT_EQ(r.context.at("thp.enabled"), "always");
  EXPECT_EQ(r.context.at("purpose"), "unit test");
  EXPECT_EQ(r.context.at("aslr"), "0");  // --context wins over the probed fact
  // The governor is warned about and stored with every run; THP "always"
  // only with the runs of workloads that declare thp.enabled among their
  // sensitive facts (pft), which the fake does not.
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("CPU governor is 'powersave'", 0), 0u) << r.warnings[0];

  // Once per plan: the watch, the sweep, the identity and facts; per run: the machine.
  EXPECT_EQ(system_.calls["watch_interrupts"], 1);
  EXPECT_EQ(system_.calls["sweep_leftovers"], 1);
  EXPECT_EQ(system_.calls["kernel"], 1);
  EXPECT_EQ(system_.calls["testbox"], 1);
  EXPECT_EQ(system_.calls["context"], 1);
  EXPECT_EQ(system_.calls["cgroup_layout"], 1);
  EXPECT_EQ(system_.calls["machine"], 1);
}

TEST_F(RunnerTest, RecordsTheSetOverridesAndAnAbsoluteJobPath) {
  RunOptions options;
  options.overrides = {{"script", {"100,200"}}, {"value", {"7"}}};
  const RunOutcome out = run("workload: fake\niterations: 1\nwarmup: 0\n", options);
  ASSERT_EQ(out.run_ids.size(), 1u);
  const RunRecord r = record(out.run_ids[0]);
  EXPECT_EQ(r.context.at("job.set"), "script=100,200 value=7");
  EXPECT_TRUE(std::filesystem::path(r.job_path).is_absolute()) << r.job_path;
  EXPECT_EQ(r.job_path, dir_.path() + "/job.yaml");
}

TEST_F(RunnerTest, AnUnmetRequirementStoresTheCellAsSkippedWithoutMeasuring) {
  const RunOutcome out =
      run("workload: fake\nparams:\n  skip: needs a unicorn\niterations: 2\nwarmup: 1\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.skipped, 1);
  EXPECT_EQ(out.complete, 0);
  const RunRecord r = record(out.run_ids[0]);
  EXPECT_EQ(status(out.run_ids[0]), "skipped");
  EXPECT_EQ(r.reason, "needs a unicorn");
  EXPECT_TRUE(r.iteration_data.empty());
  EXPECT_EQ(system_.snapshots(), 0);
  EXPECT_EQ(system_.calls["machine"], 0);
}

TEST_F(RunnerTest, ACgroupJobIsSkippedWhenTheSystemHasNoMemoryController) {
  const RunOutcome out = run("workload: fake\ncgroup:\n  depth: 2\niterations: 2\nwarmup: 0\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.skipped, 1);
  EXPECT_EQ(status(out.run_ids[0]), "skipped");
  EXPECT_EQ(record(out.run_ids[0]).reason,
            "the job asks for cgroup placement but the fake has no memory controller");
  EXPECT_EQ(system_.snapshots(), 0);
}

TEST_F(RunnerTest, AFailedIterationIsStoredAndTheRunCompletesWithTheCount) {
  const RunOutcome out = run("workload: fake\nparams:\n  fail_at: 2\niterations: 3\nwarmup: 0\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.complete, 1);
  const RunRecord r = record(out.run_ids[0]);
  EXPECT_EQ(status(out.run_ids[0]), "complete");
  EXPECT_EQ(r.reason, "1 of 3 iterations failed");
  ASSERT_EQ(r.iteration_data.size(), 3u);
  EXPECT_EQ(r.iteration_data[1].row.status, IterationStatus::failed);
  EXPECT_EQ(r.iteration_data[1].row.reason, "scripted failure at iteration 2");
  EXPECT_TRUE(r.iteration_data[1].metrics.empty());
  // The failed iteration's monitor deltas are stored like the others'.
  EXPECT_EQ(pgfault(out.run_ids[0]), (std::vector<double>{1, 5, 9}));
}

TEST_F(RunnerTest, ARunWhoseIterationsAllFailIsStoredAsFailed) {
  const RunOutcome out = run("workload: fake\nparams:\n  fail_at: 1\niterations: 1\nwarmup: 0\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.failed, 1);
  EXPECT_EQ(out.complete, 0);
  EXPECT_EQ(status(out.run_ids[0]), "failed");
  EXPECT_EQ(record(out.run_ids[0]).reason, "all 1 iterations failed");
}

TEST_F(RunnerTest, AnImpossibleValueIsStoredInvalidWithItsReason) {
  const RunOutcome out =
      run("workload: fake\nparams:\n  script: \"100,0\"\niterations: 2\nwarmup: 0\n");
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.complete, 1);
  const RunRecord r = record(out.run_ids[0]);
  ASSERT_EQ(r.iteration_data.size(), 2u);
  EXPECT_TRUE(r.iteration_data[0].invalid.empty());
  ASSERT_EQ(r.iteration_data[1].invalid.count("throughput"), 1u);
  EXPECT_FALSE(r.iteration_data[1].invalid.at("throughput").empty());
}

TEST_F(RunnerTest, AnInterruptAbortsTheRunKeepingItsCompletedIterations) {
  // The fifth snapshot is the "before" of iteration 3: the workload sees the
  // interrupt and iteration 3 is discarded.
  system_.interrupt_after_snapshots = 5;
  const RunOutcome out = run("workload: fake\niterations: 5\nwarmup: 0\n");
  EXPECT_TRUE(out.interrupted);
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(out.aborted, 1);
  const RunRecord r = record(out.run_ids[0]);
  EXPECT_EQ(status(out.run_ids[0]), "aborted");
  EXPECT_EQ(r.reason, "interrupted by signal 2 after 2 iteration(s)");
  EXPECT_EQ(pgfault(out.run_ids[0]), (std::vector<double>{1, 5}));
}

TEST_F(RunnerTest, TheLookHookEndsTheCellWhenItReturnsTrue) {
  RunOptions options;
  std::vector<int> looks;
  options.look = [&](const PlannedJob&, const Cell&, const std::vector<std::int64_t>& ids, int i) {
    EXPECT_EQ(ids.size(), 1u);
    looks.push_back(i);
    return i == 2;
  };
  const RunOutcome out = run("workload: fake\niterations: 5\nwarmup: 0\n", options);
  EXPECT_EQ(looks, (std::vector<int>{1, 2}));
  ASSERT_EQ(out.run_ids.size(), 1u);
  EXPECT_EQ(status(out.run_ids[0]), "complete");
  EXPECT_EQ(record(out.run_ids[0]).iteration_data.size(), 2u);
}

TEST_F(RunnerTest, VariantsRunOneAfterTheOtherWithoutInterleave) {
  RunOptions options;
  options.variant = "a,b";
  const RunOutcome out = run("workload: fake\niterations: 3\nwarmup: 0\n", options);
  ASSERT_EQ(out.run_ids.size(), 2u);
  EXPECT_EQ(record(out.run_ids[0]).variant, "a");
  EXPECT_EQ(record(out.run_ids[1]).variant, "b");
  EXPECT_EQ(pgfault(out.run_ids[0]), (std::vector<double>{1, 5, 9}));     // m = 0, 1, 2
  EXPECT_EQ(pgfault(out.run_ids[1]), (std::vector<double>{13, 17, 21}));  // m = 3, 4, 5
}

TEST_F(RunnerTest, InterleavedVariantsAlternatePerIteration) {
  RunOptions options;
  options.variant = "a,b";
  options.interleave = true;
  const RunOutcome out = run("workload: fake\niterations: 3\nwarmup: 1\n", options);
  ASSERT_EQ(out.run_ids.size(), 2u);
  EXPECT_EQ(out.complete, 2);
  EXPECT_EQ(record(out.run_ids[0]).variant, "a");
  EXPECT_EQ(record(out.run_ids[1]).variant, "b");
  // A1 B1 A2 B2 A3 B3: a's iterations are m = 0, 2, 4 and b's m = 1, 3, 5.
  EXPECT_EQ(pgfault(out.run_ids[0]), (std::vector<double>{1, 9, 17}));
  EXPECT_EQ(pgfault(out.run_ids[1]), (std::vector<double>{5, 13, 21}));
}

TEST_F(RunnerTest, RunsComeInRoundsOfTheWholePlan) {
  RunOptions options;
  options.variant = "a,b";
  options.runs = 2;
  const RunOutcome out = run("workload: fake\niterations: 1\nwarmup: 0\n", options);
  ASSERT_EQ(out.run_ids.size(), 4u);
  EXPECT_EQ(out.complete, 4);
  std::vector<std::string> variants;
  for (auto id : out.run_ids) variants.push_back(record(id).variant);
  EXPECT_EQ(variants, (std::vector<std::string>{"a", "b", "a", "b"}));
  EXPECT_EQ(pgfault(out.run_ids[3]), (std::vector<double>{13}));
}

// RunsSampler (`--until-decided --runs N`, issue 35), driven as the command
// drives it: rounds of one run per variant over its open plan. Each cell is
// looked at when it has 3 runs per side and leaves the open plan once
// decided; the fake's runs of one seed are identical, so each A/A cell is
// decided unchanged at that first look. A skipped cell ends after its first
// round without a verdict.
TEST_F(RunnerTest, RunsSamplerLooksAtThreeRunsPerSideAndDropsDecidedCells) {
  RunOptions options;
  options.variant = "a,b";
  options.job_paths = {
      dir_.write("job.yaml", "workload: fake\nparams:\n  cv: 1\n  seed: [1, 2]\niterations: 4\n")};
  const std::vector<PlannedJob> plan = plan_runs(options, MachineFacts{1 << 30, 4});
  RunsSampler sampler(store_, UntilDecidedOptions{}, 6);
  for (int round = 1; round <= 3; ++round) {
    const std::vector<PlannedJob> open = sampler.open_plan(plan);
    ASSERT_EQ(open.size(), 1u);
    ASSERT_EQ(open[0].cells.size(), 2u) << "round " << round;
    const RunOutcome out = execute_runs(open, options, store_, system_);
    ASSERT_EQ(out.complete, 4);  // 2 cells x 2 variants
    EXPECT_EQ(sampler.after_round(open, out.run_ids), round == 3) << "round " << round;
  }
  EXPECT_TRUE(sampler.open_plan(plan).empty());
  ASSERT_EQ(sampler.cells().size(), 2u);
  for (const DecidedCell& c : sampler.cells()) {
    EXPECT_EQ(c.per_side, 3);
    EXPECT_EQ(c.unit, "runs");
    EXPECT_EQ(c.looks, 1);
    EXPECT_TRUE(c.last.decided);
  }
  EXPECT_EQ(sampler.exit_code(), ExitCode::ok);
  EXPECT_NE(sampler.report().find("after 3 runs per side (1 look)"), std::string::npos)
      << sampler.report();

  RunOptions skip;
  skip.variant = "a,b";
  skip.job_paths = {dir_.write("skip.yaml", "workload: fake\nparams:\n  skip: no feature\n")};
  const std::vector<PlannedJob> skipped = plan_runs(skip, MachineFacts{1 << 30, 4});
  RunsSampler none(store_, UntilDecidedOptions{}, 6);
  EXPECT_TRUE(none.after_round(skipped, execute_runs(skipped, skip, store_, system_).run_ids));
  EXPECT_TRUE(none.cells().empty());
  EXPECT_EQ(none.exit_code(), ExitCode::inconclusive);
  EXPECT_THROW(RunsSampler(store_, UntilDecidedOptions{}, 2), UsageError);
}

}  // namespace
}  // namespace nightjar

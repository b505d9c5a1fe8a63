// The results store's typed API (results/store/store.h): a whole run read
// back as one record, the side query's grouping and exclusions, write
// transactions and read snapshots, bisect sessions, and database errors.
#include "results/store/store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "test_support.h"

namespace nightjar {
namespace {

using test::exec_sql;
using test::query_one;
using test::TempDir;

NewRun new_run(const std::string& variant, const std::string& seed, const std::string& build = "") {
  NewRun run;
  run.job = "fx";
  run.job_path = "jobs/fx.yaml";
  run.cell.workload = "fake";
  run.cell.params["seed"] = {seed, std::stod(seed)};
  run.cell.params["mode"] = {"", 0};  // unset text parameter
  run.variant = variant;
  run.build = build;
  run.iterations = 2;
  run.warmup = 1;
  run.kernel.release = "6.1.0-test";
  run.testbox = {"box", "cpu", 2, 1 << 30};
  return run;
}

// A complete run of `variant` with samples `values` (one iteration each).
std::int64_t complete_run(ResultsStore& store, const std::string& variant, const std::string& seed,
                          const std::vector<double>& values) {
  const std::int64_t id = store.begin_run(new_run(variant, seed));
  int i = 0;
  for (double v : values) {
    IterationResult it;
    it.metrics["throughput"] = v;
    ++i;
    store.add_iteration(id, i, it, {{"vmstat.pgfault", 10.0 * i}}, 0.5);
  }
  store.finish_run(id, RunStatus::complete);
  return id;
}

TEST(StoreRecord, RunRecordHoldsEverythingStoredForTheRun) {
  TempDir dir;
  ResultsStore store(dir.path() + "/r.db");
  const std::int64_t id = store.begin_run(new_run("a", "3", "v1"));
  store.add_warning(id, "run-level warning");
  IterationResult ok;
  ok.metrics = {{"throughput", 12.5}, {"latency", 0.25}};
  ok.counters = {{"fake.ops", 7}};
  ok.flags = {"first flag", "second flag"};
  store.add_iteration(id, 1, ok, {{"vmstat.pgfault", 100}}, 1.5);
  IterationResult failed;
  failed.failure = "it broke";
  store.add_iteration(id, 2, failed, {}, 0.25);
  store.finish_run(id, RunStatus::complete, "done");

  EXPECT_FALSE(store.run_record(id + 1).has_value());
  const std::optional<RunRecord> r = store.run_record(id);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->job, "fx");
  EXPECT_EQ(r->job_path, "jobs/fx.yaml");
  EXPECT_EQ(r->cell, "seed=3");
  EXPECT_EQ(r->variant, "a");
  EXPECT_EQ(r->build, "v1");
  EXPECT_EQ(r->status, "complete");
  EXPECT_EQ(r->reason, "done");
  EXPECT_EQ(r->iterations, 2);
  EXPECT_EQ(r->warmup, 1);
  ASSERT_EQ(r->params.size(), 2u);
  EXPECT_EQ(r->params.at("seed").text, "3");
  EXPECT_EQ(r->params.at("seed").number, 3.0);
  EXPECT_EQ(r->context.at("testbox.memory_bytes"), std::to_string(1 << 30));
  EXPECT_EQ(r->warnings, std::vector<std::string>{"run-level warning"});
  ASSERT_EQ(r->iteration_data.size(), 2u);
  const auto& first = r->iteration_data[0];
  EXPECT_EQ(first.row.iteration, 1);
  EXPECT_EQ(first.row.status, "ok");
  EXPECT_EQ(first.row.duration_sec, 1.5);
  EXPECT_EQ(first.metrics,
            (std::map<std::string, double>{{"latency", 0.25}, {"throughput", 12.5}}));
  EXPECT_EQ(first.monitors,
            (std::map<std::string, double>{{"fake.ops", 7}, {"vmstat.pgfault", 100}}));
  EXPECT_EQ(first.flags, (std::vector<std::string>{"first flag", "second flag"}));
  const auto& second = r->iteration_data[1];
  EXPECT_EQ(second.row.status, "failed");
  EXPECT_EQ(second.row.reason, "it broke");
  EXPECT_TRUE(second.metrics.empty());

  const std::vector<IterationRow> rows = store.iterations(id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].duration_sec, 0.25);
  const std::optional<RunLabels> labels = store.run_labels(id);
  ASSERT_TRUE(labels.has_value());
  EXPECT_EQ(labels->kernel_release, "6.1.0-test");
  EXPECT_EQ(labels->hostname, "box");
  EXPECT_EQ(store.param_number(id, "seed"), 3.0);
  EXPECT_FALSE(store.param_number(id, "nothing").has_value());
}

TEST(StoreSide, SamplesAreGroupedByCellAndUnusableRunsExcluded) {
  TempDir dir;
  ResultsStore store(dir.path() + "/s.db");
  const std::int64_t a1 = complete_run(store, "a", "1", {3, 1});
  const std::int64_t a2 = complete_run(store, "a", "2", {5});
  const std::int64_t a3 = complete_run(store, "a", "1", {2});
  const std::int64_t running = store.begin_run(new_run("a", "1"));
  const std::int64_t b1 = complete_run(store, "b", "1", {9});
  exec_sql(store.path(), "UPDATE run SET status='aborted' WHERE id=" + std::to_string(a3));

  SideFilter f;
  f.variant = "a";
  f.jobs = {"fx", "fx"};
  const StoredSide side = store.side_samples(f);
  EXPECT_EQ(side.matched, 4u);
  EXPECT_EQ(side.run_ids, (std::vector<std::int64_t>{a1, a2, a3}));
  ASSERT_EQ(side.excluded.size(), 1u);
  EXPECT_EQ(side.excluded[0].id, running);
  EXPECT_EQ(side.excluded[0].status, "running");
  EXPECT_EQ(side.variants, std::set<std::string>{"a"});
  EXPECT_EQ(side.kernels, std::set<std::string>{"6.1.0-test"});
  EXPECT_EQ(side.testboxes, std::set<std::string>{"box"});
  ASSERT_EQ(side.cells.size(), 2u);  // first-run order
  const StoredCell& one = side.cells[0];
  EXPECT_EQ(one.cell, "seed=1");
  EXPECT_EQ(one.first_run, a1);
  EXPECT_EQ(one.run_ids, (std::vector<std::int64_t>{a1, a3}));
  EXPECT_EQ(one.aborted_runs, 1);
  EXPECT_EQ(one.params, (std::vector<std::pair<std::string, std::string>>{{"seed", "1"}}));
  EXPECT_EQ(one.metrics.at("throughput"), (std::vector<double>{3, 1, 2}));  // run order
  EXPECT_EQ(one.monitors.at("vmstat.pgfault"), (std::vector<double>{10, 20, 10}));
  EXPECT_EQ(side.cells[1].cell, "seed=2");

  SideFilter none;
  none.jobs = {"fx", "other"};  // both must hold
  EXPECT_EQ(store.side_samples(none).matched, 0u);
  SideFilter by_run;
  by_run.run_id = b1;
  by_run.kernel_release = "6.1.0-test";
  by_run.hostname = "box";
  EXPECT_EQ(store.side_samples(by_run).run_ids, std::vector<std::int64_t>{b1});

  const StoredRunsSummary s = store.stored_runs_summary();
  EXPECT_EQ(s.runs, 5);
  EXPECT_EQ(s.first_id, a1);
  EXPECT_EQ(s.last_id, b1);
  EXPECT_EQ(s.variants, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.variants_by_first_run("fx", ""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.metrics_with_samples("fx"), std::set<std::string>{"throughput"});
}

ImportedRun imported(std::optional<std::int64_t> id) {
  ImportedRun run;
  run.id = id;
  run.job = "imp";
  run.workload = "fake";
  run.variant = "v";
  run.kernel.release = "6.1.0-test";
  run.testbox.hostname = "box";
  run.match_by_name = true;
  run.iterations = 1;
  run.samples = {{1, "throughput", 4.0}};
  return run;
}

TEST(StoreTransaction, UncommittedWritesAreRolledBackAndCommittedOnesKept) {
  TempDir dir;
  ResultsStore store(dir.path() + "/t.db");
  {
    ResultsStore::Transaction tx(store);
    store.add_missing_metrics(
        "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""}});
    store.insert_imported_run(imported(7));
  }  // destroyed without commit()
  EXPECT_EQ(store.run_count(), 0);
  EXPECT_FALSE(store.stored_metric("fake", "throughput").has_value());
  {
    ResultsStore::Transaction tx(store);
    store.insert_imported_run(imported(7));
    tx.commit();
  }
  EXPECT_EQ(store.run_count(), 1);
  EXPECT_EQ(store.samples(7).size(), 1u);
  // A run id used twice is an error of SQLite itself.
  ResultsStore::Transaction tx(store);
  try {
    store.insert_imported_run(imported(7));
    ADD_FAILURE() << "a second run 7 was stored";
  } catch (const std::exception& e) {
    EXPECT_TRUE(is_database_error(e)) << e.what();
  }
  EXPECT_FALSE(is_database_error(std::runtime_error("not SQLite")));
}

TEST(StoreSnapshot, ReadsInsideASnapshotDoNotSeeLaterWrites) {
  TempDir dir;
  ResultsStore store(dir.path() + "/n.db");
  ResultsStore writer(store.path());
  complete_run(writer, "a", "1", {1});
  {
    const ResultsStore::ReadSnapshot snapshot(store);
    EXPECT_EQ(store.run_count(), 1);  // the first read pins the snapshot
    complete_run(writer, "a", "2", {2});
    EXPECT_EQ(store.run_count(), 1);
    EXPECT_EQ(store.export_runs({1, 2}).size(), 1u);
  }
  EXPECT_EQ(store.run_count(), 2);
  std::vector<std::string> seen;
  store.scan_samples({1, 2}, [&](const SampleView& v) {
    seen.push_back(std::to_string(v.run_id) + ":" + std::string(v.metric));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"1:throughput", "2:throughput"}));
}

TEST(StoreBisect, SessionsStepsAndDecisionsRoundTrip) {
  TempDir dir;
  ResultsStore store(dir.path() + "/b.db");
  BisectSession s;
  s.kind = "step";
  s.repo = "/src/linux";
  s.good_rev = "v6.1";
  s.job_path = "jobs/fx.yaml";
  s.job = "fx";
  s.metric = "throughput";
  s.options = R"({"alpha":0.05})";
  const std::int64_t id = store.create_bisect_session(s);
  BisectSessionFilter f;
  f.kind = "step";
  f.repo = "/src/linux";
  f.statuses = {"running"};
  ASSERT_TRUE(store.newest_bisect_session(f).has_value());
  EXPECT_EQ(store.newest_bisect_session(f)->options, s.options);
  f.statuses = {"found", "failed"};
  EXPECT_FALSE(store.newest_bisect_session(f).has_value());

  EXPECT_EQ(store.add_bisect_step(id, "abc", "subject", "good"), 1);
  EXPECT_EQ(store.add_bisect_step(id, "def", "", "test"), 2);
  store.set_bisect_build(id, 2, "ok", 12.5, "");
  const std::int64_t run = complete_run(store, "a", "1", {1});
  store.link_bisect_runs(id, 2, {run, run});
  BisectVerdict v;
  v.decision = "bad";
  v.verdict = "regression";
  v.pct_change = -9.5;
  v.p = std::numeric_limits<double>::quiet_NaN();  // stored as NULL
  v.n_base = 5;
  store.set_bisect_decision(id, 2, v);
  store.finish_bisect_session(id, "found", "def is the first bad commit", "def");

  const std::vector<BisectStep> steps = store.bisect_steps(id);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].decision, "pending");
  EXPECT_FALSE(steps[0].build_seconds.has_value());
  const BisectStep& st = steps[1];
  EXPECT_EQ(st.commit, "def");
  EXPECT_EQ(st.build_status, "ok");
  EXPECT_EQ(st.build_seconds, 12.5);
  EXPECT_EQ(st.decision, "bad");
  EXPECT_EQ(st.verdict, "regression");
  EXPECT_EQ(st.pct_change, -9.5);
  EXPECT_FALSE(st.p.has_value());
  EXPECT_EQ(st.n_base, 5);
  EXPECT_FALSE(st.n_now.has_value());
  EXPECT_FALSE(st.ended_at.empty());
  EXPECT_EQ(st.runs, std::vector<std::int64_t>{run});
  const std::optional<BisectSession> done = store.bisect_session(id);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->status, "found");
  EXPECT_EQ(done->first_bad, "def");
  EXPECT_FALSE(done->ended_at.empty());
  EXPECT_EQ(query_one(store.path(), "SELECT count(*) FROM bisect_run"), "1");
}

}  // namespace
}  // namespace nightjar

// The results store's typed API (results/store/store.h): a whole run read
// back as one record, the side query's grouping and exclusions, write
// transactions and read snapshots, bisect sessions, and database errors.
#include "results/store/store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
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
  EXPECT_EQ(r->status, RunStatus::complete);
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
  EXPECT_EQ(first.row.status, IterationStatus::ok);
  EXPECT_EQ(first.row.duration_sec, 1.5);
  EXPECT_EQ(first.metrics,
            (std::map<std::string, double>{{"latency", 0.25}, {"throughput", 12.5}}));
  EXPECT_EQ(first.monitors,
            (std::map<std::string, double>{{"fake.ops", 7}, {"vmstat.pgfault", 100}}));
  EXPECT_EQ(first.flags, (std::vector<std::string>{"first flag", "second flag"}));
  const auto& second = r->iteration_data[1];
  EXPECT_EQ(second.row.status, IterationStatus::failed);
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
  EXPECT_EQ(side.excluded[0].status, RunStatus::running);
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
  // A set of runs (what run --until-decided --runs N compares; issue 35).
  SideFilter by_runs;
  by_runs.run_ids = {a1, a3, b1};
  by_runs.variant = "a";
  EXPECT_EQ(store.side_samples(by_runs).run_ids, (std::vector<std::int64_t>{a1, a3}));

  const StoredRunsSummary s = store.stored_runs_summary();
  EXPECT_EQ(s.runs, 5);
  EXPECT_EQ(s.first_id, a1);
  EXPECT_EQ(s.last_id, b1);
  EXPECT_EQ(s.variants, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.variants_by_first_run("fx", ""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.metrics_with_samples("fx"), std::set<std::string>{"throughput"});
}

// The vm.* facts compare warns about are read with the side (issue 19: one
// query per run was over half of a 1M-sample compare): each distinct set of
// the asked keys over the used runs, an empty one for a run without them.
TEST(StoreSide, FactSetsAreTheDistinctFactsOfTheUsedRuns) {
  TempDir dir;
  ResultsStore store(dir.path() + "/f.db");
  SideFilter f;
  f.variant = "a";
  f.fact_keys = {"vm.accelerator", "vm.cpus"};
  const std::int64_t a1 = complete_run(store, "a", "1", {1});
  EXPECT_EQ(store.side_samples(f).fact_sets, (std::set<std::map<std::string, std::string>>{{}}));

  const std::int64_t a2 = complete_run(store, "a", "2", {1});
  const std::int64_t b1 = complete_run(store, "b", "1", {1});  // another side: not read
  const std::int64_t a3 = complete_run(store, "a", "1", {1});
  const std::int64_t a4 = complete_run(store, "a", "2", {1});
  const std::int64_t running = store.begin_run(new_run("a", "1"));  // not used: not read
  store.add_context(a2, "vm.accelerator", "tcg");
  store.add_context(a2, "vm.cpus", "2");
  store.add_context(a2, "vm.memory_mb", "1024");  // not asked for
  store.add_context(b1, "vm.accelerator", "kvm");
  store.add_context(a3, "vm.accelerator", "tcg");
  store.add_context(a4, "vm.accelerator", "tcg");
  store.add_context(a4, "vm.cpus", "2");
  store.add_context(running, "vm.accelerator", "none");
  const StoredSide side = store.side_samples(f);
  EXPECT_EQ(side.run_ids, (std::vector<std::int64_t>{a1, a2, a3, a4}));
  EXPECT_EQ(side.fact_sets,
            (std::set<std::map<std::string, std::string>>{
                {}, {{"vm.accelerator", "tcg"}}, {{"vm.accelerator", "tcg"}, {"vm.cpus", "2"}}}));
  f.fact_keys.clear();
  EXPECT_TRUE(store.side_samples(f).fact_sets.empty());
  f.variant = "b";
  f.fact_keys = {"vm.accelerator"};
  EXPECT_EQ(store.side_samples(f).fact_sets,
            (std::set<std::map<std::string, std::string>>{{{"vm.accelerator", "kvm"}}}));
}

// ---------------------------------------------------------------------------
// Invalid samples (schema version 4; docs/results.md "Invalid samples")
// ---------------------------------------------------------------------------

TEST(StoreInvalid, AnInvalidIterationMarksEveryValueAndAnImpossibleValueItsOwn) {
  TempDir dir;
  ResultsStore store(dir.path() + "/i.db");
  const std::int64_t id = store.begin_run(new_run("a", "1"));
  IterationResult ok;
  ok.metrics = {{"throughput", 10}, {"latency", 100}};
  store.add_iteration(id, 1, ok, {{"vmstat.pgfault", 1}}, 0.1);
  IterationResult invalid = ok;
  invalid.invalid = "client 0 moved 0 bytes";
  invalid.invalid_metrics = {{"throughput", "own reason"}};  // the iteration's wins
  store.add_iteration(id, 2, invalid, {{"vmstat.pgfault", 2}}, 0.1);
  IterationResult one_bad = ok;
  one_bad.metrics["throughput"] = 0;
  one_bad.invalid_metrics = {
      {"throughput", "throughput = 0 ops/s: a rate (Hmean) must be positive"},
      {"nothing", "not a metric of this iteration: ignored"}};
  store.add_iteration(id, 3, one_bad, {{"vmstat.pgfault", 3}}, 0.1);
  store.finish_run(id, RunStatus::complete);

  EXPECT_EQ(
      query_one(store.path(), "SELECT status || ':' || reason FROM iteration WHERE iteration=2"),
      "invalid:client 0 moved 0 bytes");
  EXPECT_EQ(query_one(store.path(), "SELECT status FROM iteration WHERE iteration=3"), "ok");
  EXPECT_EQ(query_one(store.path(), "SELECT count(*) FROM sample WHERE invalid IS NULL"), "3");
  EXPECT_EQ(
      query_one(store.path(), "SELECT count(*) FROM sample WHERE invalid='client 0 moved 0 bytes'"),
      "2");

  // samples(): the valid ones by default, every one with SampleSet::all.
  const auto valid = store.samples(id);
  ASSERT_EQ(valid.size(), 3u);
  for (const auto& s : valid) EXPECT_EQ(s.invalid, "") << s.iteration << " " << s.metric;
  const auto all = store.samples(id, SampleSet::all);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[2].invalid, "client 0 moved 0 bytes");  // iteration 2 latency
  EXPECT_EQ(all[5].metric, "throughput");
  EXPECT_EQ(all[5].invalid, "throughput = 0 ops/s: a rate (Hmean) must be positive");

  // show's row: 1 clean sample, 2 iterations with invalid values.
  const auto rows = store.runs(RunFilter{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].samples, 1);
  EXPECT_EQ(rows[0].invalid, 2);
  EXPECT_EQ(rows[0].failed, 0);

  // The qemu guest's record carries the marks.
  const auto record = store.run_record(id);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->iteration_data[1].row.status, IterationStatus::invalid);
  EXPECT_EQ(record->iteration_data[1].invalid.at("latency"), "client 0 moved 0 bytes");
  EXPECT_TRUE(record->iteration_data[0].invalid.empty());
  EXPECT_EQ(record->iteration_data[2].invalid.size(), 1u);

  // History reads: valid samples, and the invalid ones counted.
  EXPECT_EQ(store.metric_samples({id}, "throughput").at(id), (std::vector<double>{10}));
  EXPECT_EQ(store.metric_samples({id}, "throughput", SampleSet::all).at(id).size(), 3u);
  EXPECT_EQ(store.invalid_sample_counts({id}, "throughput").at(id), 2);
  EXPECT_EQ(store.invalid_sample_counts({id}, "latency").at(id), 1);

  // Export scans: valid ones, or all with the reason.
  int scanned = 0;
  store.scan_samples({id}, [&](const SampleView& v) {
    ++scanned;
    EXPECT_TRUE(v.invalid.empty());
  });
  EXPECT_EQ(scanned, 3);
  std::vector<std::string> reasons;
  store.scan_samples(
      {id}, [&](const SampleView& v) { reasons.emplace_back(v.invalid); }, SampleSet::all);
  EXPECT_EQ(reasons.size(), 6u);
}

TEST(StoreInvalid, SidesCountInvalidSamplesPerCellAndMetricAndDropTheirMonitors) {
  TempDir dir;
  ResultsStore store(dir.path() + "/s.db");
  const std::int64_t a = store.begin_run(new_run("a", "1"));
  for (int i = 1; i <= 4; ++i) {
    IterationResult it;
    it.metrics["throughput"] = 100.0 + i;
    if (i == 2) it.invalid = "scripted invalid sample at iteration 2";
    if (i == 4) {
      it.metrics["throughput"] = 0;
      it.invalid_metrics["throughput"] = "throughput = 0: a rate (Hmean) must be positive";
    }
    store.add_iteration(a, i, it, {{"vmstat.pgfault", 10.0 * i}}, 0.1);
  }
  store.finish_run(a, RunStatus::complete);
  // A second run of the cell whose one sample is invalid.
  const std::int64_t b = store.begin_run(new_run("a", "1"));
  IterationResult only;
  only.metrics["throughput"] = 5;
  only.invalid = "later reason";
  store.add_iteration(b, 1, only, {{"vmstat.pgfault", 99}}, 0.1);
  store.finish_run(b, RunStatus::complete);

  SideFilter f;
  f.variant = "a";
  const StoredSide side = store.side_samples(f);
  ASSERT_EQ(side.cells.size(), 1u);
  const StoredCell& cell = side.cells[0];
  EXPECT_EQ(cell.metrics.at("throughput"), (std::vector<double>{101, 103}));
  const InvalidSamples& inv = cell.invalid.at("throughput");
  EXPECT_EQ(inv.count, 3);
  EXPECT_EQ(inv.run_id, a);  // the first: lowest run, iteration
  EXPECT_EQ(inv.iteration, 2);
  EXPECT_EQ(inv.reason, "scripted invalid sample at iteration 2");
  // The deltas of invalid iterations (2 of run a, 1 of run b) are left out;
  // iteration 4 is ok with one invalid value: its deltas count.
  EXPECT_EQ(cell.monitors.at("vmstat.pgfault"), (std::vector<double>{10, 30, 40}));

  f.include_invalid = true;
  const StoredSide all = store.side_samples(f);
  EXPECT_EQ(all.cells[0].metrics.at("throughput"), (std::vector<double>{101, 102, 103, 0, 5}));
  EXPECT_EQ(all.cells[0].invalid.at("throughput").count, 3);
  EXPECT_EQ(all.cells[0].monitors.at("vmstat.pgfault"), (std::vector<double>{10, 20, 30, 40, 99}));
}

// Only the runs holding invalid samples are read with the invalid column
// (the partial index sample_invalid of schema version 7 finds them); a side
// read without the index (a version 6 file opened read-only) is the same:
// runs of clean and invalid-holding samples interleaved, a cell whose
// invalid sample is the only one of its run, and --include-invalid.
TEST(StoreInvalid, SidesAreTheSameWithAndWithoutTheInvalidIndex) {
  TempDir dir;
  const std::string path = dir.path() + "/x.db";
  {
    ResultsStore store(path);
    int k = 0;
    for (int r = 0; r < 12; ++r) {
      const std::int64_t id = store.begin_run(new_run(r % 3 == 2 ? "b" : "a", r % 2 ? "1" : "2"));
      for (int i = 1; i <= 3; ++i) {
        IterationResult it;
        it.metrics = {{"throughput", 100.0 + ++k}, {"latency", 1.0 + k}};
        if (r % 4 == 1 && i == 2) it.invalid = "run " + std::to_string(r) + " iteration 2";
        if (r == 6 && i == 3) it.invalid_metrics["latency"] = "own reason";
        store.add_iteration(id, i, it, {{"vmstat.pgfault", 1.0 * k}}, 0.1);
      }
      store.finish_run(id, RunStatus::complete);
    }
  }
  ASSERT_EQ(query_one(path, "SELECT count(*) FROM sqlite_master WHERE name='sample_invalid'"), "1");
  auto read = [&](bool include_invalid) {
    ResultsStore store(path, ResultsStore::Access::read_only);
    SideFilter f;
    f.variant = "a";
    f.include_invalid = include_invalid;
    return store.side_samples(f);
  };
  const StoredSide indexed = read(false), indexed_all = read(true);
  exec_sql(path, "DROP INDEX sample_invalid");
  const StoredSide plain = read(false), plain_all = read(true);
  for (const auto* pair : {&indexed, &indexed_all}) {
    const StoredSide& a = *pair;
    const StoredSide& b = pair == &indexed ? plain : plain_all;
    EXPECT_EQ(a.run_ids, b.run_ids);
    ASSERT_EQ(a.cells.size(), b.cells.size());
    for (std::size_t c = 0; c < a.cells.size(); ++c) {
      EXPECT_EQ(a.cells[c].metrics, b.cells[c].metrics);
      EXPECT_EQ(a.cells[c].monitors, b.cells[c].monitors);
      EXPECT_EQ(a.cells[c].metric_run_sizes, b.cells[c].metric_run_sizes);
      ASSERT_EQ(a.cells[c].invalid.size(), b.cells[c].invalid.size());
      for (const auto& [name, inv] : a.cells[c].invalid) {
        const InvalidSamples& other = b.cells[c].invalid.at(name);
        EXPECT_EQ(inv.count, other.count) << name;
        EXPECT_EQ(inv.reason, other.reason) << name;
        EXPECT_EQ(inv.run_id, other.run_id) << name;
        EXPECT_EQ(inv.iteration, other.iteration) << name;
      }
    }
  }
  // What the side holds: of its runs (0, 1, 3, 4, 6, 7, 9, 10), runs 1 and 9
  // (both values of iteration 2) and run 6 (latency of iteration 3) hold
  // invalid samples.
  ASSERT_EQ(indexed.cells.size(), 2u);
  int invalid = 0;
  std::size_t valid = 0, all = 0;
  for (std::size_t c = 0; c < 2; ++c) {
    for (const auto& [name, inv] : indexed.cells[c].invalid) invalid += inv.count;
    for (const auto& [name, v] : indexed.cells[c].metrics) valid += v.size();
    for (const auto& [name, v] : indexed_all.cells[c].metrics) all += v.size();
  }
  EXPECT_EQ(invalid, 2 * 2 + 1);
  EXPECT_EQ(all, 8u * 3 * 2);
  EXPECT_EQ(valid, all - 5);
}

// A version 3 database: the version 4 schema with the 3 -> 4 change undone
// (iteration's CHECK without 'invalid', no sample.invalid), holding a run.
TEST(StoreInvalid, MigratesAVersion3DatabaseKeepingEverySample) {
  TempDir dir;
  const std::string path = dir.path() + "/v3.db";
  std::int64_t id = 0;
  {
    ResultsStore store(path);
    id = complete_run(store, "a", "1", {3, 4});
  }
  exec_sql(path,
           "BEGIN;"
           "CREATE TABLE iteration_v3(run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE "
           "CASCADE, iteration INTEGER NOT NULL, status TEXT NOT NULL CHECK(status IN ('ok', "
           "'failed')), reason TEXT NOT NULL DEFAULT '', started_at TEXT NOT NULL, duration_sec "
           "REAL NOT NULL, PRIMARY KEY(run_id, iteration));"
           "INSERT INTO iteration_v3 SELECT * FROM iteration;"
           "DROP TABLE iteration; ALTER TABLE iteration_v3 RENAME TO iteration;"
           "DROP INDEX sample_invalid; ALTER TABLE sample DROP COLUMN invalid;"
           "DROP INDEX run_context_by_fact; DROP TABLE kernel_config;"
           "PRAGMA user_version=3; COMMIT;");
  ASSERT_EQ(query_one(path, "PRAGMA user_version"), "3");
  EXPECT_THROW(exec_sql(path, "UPDATE iteration SET status='invalid'"), std::exception);

  ResultsStore store(path);
  EXPECT_EQ(query_one(path, "PRAGMA user_version"), std::to_string(ResultsStore::kSchemaVersion));
  EXPECT_EQ(ResultsStore::kSchemaVersion, 9);
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM sqlite_master WHERE name='sample_invalid'"), "1");
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM sqlite_master WHERE name='kernel_config'"), "1");
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM iteration WHERE status='ok'"), "2");
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM sample WHERE invalid IS NULL"), "2");
  const auto samples = store.samples(id);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].value, 4);
  // The new schema takes invalid iterations and samples.
  IterationResult it;
  it.metrics["throughput"] = 1;
  it.invalid = "why";
  store.add_iteration(id, 3, it, {}, 0.1);
  EXPECT_EQ(query_one(path, "SELECT status FROM iteration WHERE iteration=3"), "invalid");
  EXPECT_EQ(query_one(path, "SELECT invalid FROM sample WHERE iteration=3"), "why");
}

// A version 5 database holding a bisect session (bisect_step's CHECK
// without 'branch'): the 5 -> 6 rebuild keeps every step and every run
// linked to a step, and then takes `branch` steps.
TEST(StoreBisect, MigratesAVersion5DatabaseKeepingEveryStepAndItsRuns) {
  TempDir dir;
  const std::string path = dir.path() + "/v5.db";
  std::int64_t session = 0;
  {
    ResultsStore store(path);
    const std::int64_t a = complete_run(store, "a", "1", {3, 4});
    const std::int64_t b = complete_run(store, "b", "1", {5, 6});
    BisectSession s;
    s.kind = "run";
    s.repo = "/repo";
    s.good_rev = "v1";
    s.job_path = "/job.yaml";
    s.job = "job";
    s.metric = "throughput";
    session = store.create_bisect_session(s);
    const int good = store.add_bisect_step(session, "c0", "zero", BisectRole::good);
    const int test = store.add_bisect_step(session, "c1", "one", BisectRole::test);
    store.link_bisect_runs(session, good, {a});
    store.link_bisect_runs(session, test, {a, b});
  }
  // bisect_step as version 5 had it (foreign keys are off in this connection),
  // without version 7's index and version 8's kernel_config.
  exec_sql(path,
           "BEGIN; DROP INDEX sample_invalid; DROP TABLE kernel_config;"
           "CREATE TABLE bisect_step_v5 AS SELECT * FROM bisect_step;"
           "DROP TABLE bisect_step;"
           "CREATE TABLE bisect_step(session_id INTEGER NOT NULL REFERENCES bisect_session(id) "
           "ON DELETE CASCADE, step INTEGER NOT NULL, commit_id TEXT NOT NULL, subject TEXT NOT "
           "NULL DEFAULT '', role TEXT NOT NULL CHECK(role IN ('good', 'bad', 'test')), "
           "build_status TEXT NOT NULL CHECK(build_status IN ('pending', 'ok', 'failed', "
           "'none')), build_seconds REAL, build_output TEXT NOT NULL DEFAULT '', decision TEXT "
           "NOT NULL CHECK(decision IN ('pending', 'good', 'bad', 'skip')), verdict TEXT NOT "
           "NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '', pct_change REAL, p REAL, q REAL, "
           "ratio_lo REAL, ratio_hi REAL, n_base INTEGER, n_now INTEGER, started_at TEXT NOT "
           "NULL, ended_at TEXT, PRIMARY KEY(session_id, step));"
           "INSERT INTO bisect_step SELECT * FROM bisect_step_v5; DROP TABLE bisect_step_v5;"
           "PRAGMA user_version=5; COMMIT;");
  ASSERT_EQ(query_one(path, "PRAGMA user_version"), "5");
  EXPECT_THROW(exec_sql(path, "UPDATE bisect_step SET role='branch'"), std::exception);

  ResultsStore store(path);
  EXPECT_EQ(query_one(path, "PRAGMA user_version"), "9");
  const std::vector<BisectStep> steps = store.bisect_steps(session);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].commit + " " + to_string(steps[0].role), "c0 good");
  EXPECT_EQ(steps[0].runs.size(), 1u);
  EXPECT_EQ(steps[1].commit + " " + steps[1].subject + " " + to_string(steps[1].role),
            "c1 one test");
  EXPECT_EQ(steps[1].runs.size(), 2u);
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v5'"), "0");
  // The links still cascade from their step, and a `branch` step is taken.
  const int branch = store.add_bisect_step(session, "s1", "side", BisectRole::branch);
  store.link_bisect_runs(session, branch, {steps[0].runs[0]});
  EXPECT_EQ(store.bisect_steps(session).back().role, BisectRole::branch);
  exec_sql(path, "PRAGMA foreign_keys=ON; DELETE FROM bisect_step WHERE step=2");
  EXPECT_EQ(query_one(path, "SELECT count(*) FROM bisect_run"), "2");
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
  f.statuses = {BisectStatus::running};
  ASSERT_TRUE(store.newest_bisect_session(f).has_value());
  EXPECT_EQ(store.newest_bisect_session(f)->options, s.options);
  f.statuses = {BisectStatus::found, BisectStatus::failed};
  EXPECT_FALSE(store.newest_bisect_session(f).has_value());

  EXPECT_EQ(store.add_bisect_step(id, "abc", "subject", BisectRole::good), 1);
  EXPECT_EQ(store.add_bisect_step(id, "def", "", BisectRole::test), 2);
  store.set_bisect_build(id, 2, BisectBuild::ok, 12.5, "");
  const std::int64_t run = complete_run(store, "a", "1", {1});
  store.link_bisect_runs(id, 2, {run, run});
  BisectVerdict v;
  v.decision = BisectDecision::bad;
  v.verdict = "regression";
  v.pct_change = -9.5;
  v.p = std::numeric_limits<double>::quiet_NaN();  // stored as NULL
  v.n_base = 5;
  store.set_bisect_decision(id, 2, v);
  store.finish_bisect_session(id, BisectStatus::found, "def is the first bad commit", "def");

  const std::vector<BisectStep> steps = store.bisect_steps(id);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].decision, BisectDecision::pending);
  EXPECT_FALSE(steps[0].build_seconds.has_value());
  const BisectStep& st = steps[1];
  EXPECT_EQ(st.commit, "def");
  EXPECT_EQ(st.build_status, BisectBuild::ok);
  EXPECT_EQ(st.build_seconds, 12.5);
  EXPECT_EQ(st.decision, BisectDecision::bad);
  EXPECT_EQ(st.verdict, "regression");
  EXPECT_EQ(st.pct_change, -9.5);
  EXPECT_FALSE(st.p.has_value());
  EXPECT_EQ(st.n_base, 5);
  EXPECT_FALSE(st.n_now.has_value());
  EXPECT_FALSE(st.ended_at.empty());
  EXPECT_EQ(st.runs, std::vector<std::int64_t>{run});
  const std::optional<BisectSession> done = store.bisect_session(id);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->status, BisectStatus::found);
  EXPECT_EQ(done->first_bad, "def");
  EXPECT_FALSE(done->ended_at.empty());
  EXPECT_EQ(query_one(store.path(), "SELECT count(*) FROM bisect_run"), "1");
}

}  // namespace
}  // namespace nightjar

// Unit under test: results/io/csv.{h,cpp}, the tidy sample CSV: the exact
// layout write_samples_csv writes, the byte-identical round trip export ->
// import -> export, every kind of malformed row parse_samples_csv refuses
// (with its line number), and import_samples_csv's one transaction, id
// keeping/renumbering and re-import detection. Databases are written through
// the ResultsStore API in a temporary directory.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"
#include "test_support.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

using test::query_one;
using test::TempDir;

struct Sample {
  int iteration;
  std::string metric;
  double value;
};

// A run of workload `fake` stored as `nightjar run` stores it.
std::int64_t add_run(ResultsStore& store, const std::string& variant, const std::string& build,
                     const std::map<std::string, std::string>& params,
                     const std::vector<Sample>& samples, const std::string& kernel = "6.1.0-test",
                     const std::string& host = "box1") {
  NewRun run;
  run.job = "fx";
  run.job_path = "jobs/fx.yaml";
  run.cell.workload = "fake";
  for (const auto& [k, v] : params) run.cell.params[k] = ParamValue{v, 0};
  run.variant = variant;
  run.build = build;
  run.kernel.release = kernel;
  run.kernel.version = "#1 SMP test";
  run.testbox.hostname = host;
  run.testbox.cpu_model = "Test CPU";
  run.testbox.cpus = 4;
  int max_iteration = 0;
  for (const auto& s : samples) max_iteration = std::max(max_iteration, s.iteration);
  run.iterations = max_iteration;
  std::int64_t id = store.begin_run(run);
  for (int i = 1; i <= max_iteration; ++i) {
    IterationResult r;
    for (const auto& s : samples)
      if (s.iteration == i) r.metrics[s.metric] = s.value;
    store.add_iteration(id, i, r, {{"vmstat.pgfault", 10.0 * i}}, 0.5);
  }
  store.finish_run(id, RunStatus::complete);
  return id;
}

void register_fake(ResultsStore& store) {
  store.register_metrics(
      "fake", {{"throughput", "ops/s", Direction::higher_is_better, MeanKind::harmonic, ""},
               {"latency", "ms", Direction::lower_is_better, MeanKind::arithmetic, ""}});
}

std::string export_all(const ResultsStore& store) {
  std::ostringstream out;
  write_samples_csv(store, select_export_runs(store, {}, "", ""), out);
  return out.str();
}

SamplesCsv parse(const std::string& text, const std::string& source = "in.csv") {
  std::istringstream in(text);
  return parse_samples_csv(in, source, workload_catalog(), probe_machine_facts());
}

std::string count(const ResultsStore& store, const std::string& sql) {
  return query_one(store.path(), sql);
}

// The message of the UsageError `f` throws ("" when it throws none).
template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

class CsvIo : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<ResultsStore>(dir_.path() + "/a.db");
    register_fake(*store_);
  }
  std::unique_ptr<ResultsStore> fresh(const std::string& name) {
    return std::make_unique<ResultsStore>(dir_.path() + "/" + name);
  }
  TempDir dir_;
  std::unique_ptr<ResultsStore> store_;
};

const std::string kHeader =
    "run,job,workload,param.fail_at,param.script,variant,build,kernel,testbox,started_at,iteration,"
    "metric,unit,direction,mean,value\n";

TEST_F(CsvIo, ExportWritesOneTidyRowPerSampleInRunIterationMetricOrder) {
  add_run(
      *store_, "vanilla", "v1", {{"fail_at", "2"}, {"script", "a,b \"q\""}},
      {{1, "throughput", 100}, {1, "latency", 10}, {2, "throughput", 0.1}, {2, "latency", 1e-300}});
  add_run(*store_, "patched", "", {{"fail_at", "4"}},
          {{1, "throughput", 123456789.123456789}, {1, "undeclared", -2.5}}, "6.2.0-rc1", "box2");
  test::exec_sql(dir_.path() + "/a.db",
                 "UPDATE run SET started_at = '2026-11-0' || id || 'T08:46:49Z'");
  EXPECT_EQ(export_all(*store_),
            kHeader +
                "1,fx,fake,2,\"a,b "
                "\"\"q\"\"\",vanilla,v1,6.1.0-test,box1,2026-11-01T08:46:49Z,1,latency,ms,lower,"
                "amean,10\n"
                "1,fx,fake,2,\"a,b "
                "\"\"q\"\"\",vanilla,v1,6.1.0-test,box1,2026-11-01T08:46:49Z,1,throughput,ops/s,"
                "higher,hmean,100\n"
                "1,fx,fake,2,\"a,b "
                "\"\"q\"\"\",vanilla,v1,6.1.0-test,box1,2026-11-01T08:46:49Z,2,latency,ms,lower,"
                "amean,1e-300\n"
                "1,fx,fake,2,\"a,b "
                "\"\"q\"\"\",vanilla,v1,6.1.0-test,box1,2026-11-01T08:46:49Z,2,throughput,ops/s,"
                "higher,hmean,0.1\n"
                "2,fx,fake,4,,patched,,6.2.0-rc1,box2,2026-11-02T08:46:49Z,1,throughput,ops/"
                "s,higher,hmean,"
                "123456789.12345679\n"
                "2,fx,fake,4,,patched,,6.2.0-rc1,box2,2026-11-02T08:46:49Z,1,undeclared,,,,-2.5\n");
}

TEST_F(CsvIo, RoundTripIsByteIdentical) {
  add_run(*store_, "vanilla", "v1", {{"fail_at", "2"}, {"script", "two\nlines, \"quoted\""}},
          {{1, "throughput", 1.0 / 3},
           {1, "latency", 3.0},
           {2, "throughput", 2.0 / 3},
           {3, "throughput", 1e17},
           {3, "latency", 5e-324}});
  add_run(*store_, "patched", "v2", {{"fail_at", "4"}, {"script", ""}},
          {{1, "throughput", 99.99999999999999}, {1, "latency", 1e300}});
  std::int64_t skipped = store_->record_skipped(NewRun{}, "no samples: writes no row");
  ASSERT_EQ(skipped, 3);
  const std::string first = export_all(*store_);

  SamplesCsv csv = parse(first);
  EXPECT_EQ(csv.rows, 7u);
  ASSERT_EQ(csv.runs.size(), 2u);
  auto copy = fresh("b.db");
  CsvImportResult r = import_samples_csv(*copy, csv, workload_catalog(), probe_machine_facts());
  EXPECT_EQ(r.run_ids, (std::vector<std::int64_t>{1, 2}));  // ids kept in a new database
  EXPECT_EQ(r.samples, 7u);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(export_all(*copy), first);

  // What the import recreated.
  EXPECT_EQ(count(*copy,
                  "SELECT group_concat(x, '|') FROM (SELECT status || ':' || cell AS x "
                  "FROM run ORDER BY id)"),
            "complete:fail_at=2 script=two\nlines, \"quoted\"|complete:fail_at=4");
  EXPECT_EQ(count(*copy,
                  "SELECT group_concat(iteration, ',') FROM (SELECT iteration FROM "
                  "iteration WHERE run_id=1 ORDER BY iteration)"),
            "1,2,3");
  EXPECT_EQ(count(*copy, "SELECT iterations FROM run WHERE id=1"), "3");
  EXPECT_EQ(count(*copy,
                  "SELECT group_concat(name || ' ' || unit || ' ' || direction || ' ' || mean, "
                  "'|') FROM (SELECT * FROM metric ORDER BY name)"),
            "latency ms lower amean|throughput ops/s higher hmean");
  EXPECT_EQ(count(*copy, "SELECT count(*) FROM kernel"), "1");
  EXPECT_EQ(count(*copy, "SELECT value FROM run_context WHERE run_id=2 AND key='import.format'"),
            "csv");
}

TEST_F(CsvIo, SelectorsPickRunsAndBadOnesAreUsageErrors) {
  add_run(*store_, "vanilla", "v1", {{"fail_at", "1"}}, {{1, "throughput", 1}});
  add_run(*store_, "patched", "v2", {{"fail_at", "1"}}, {{1, "throughput", 2}});
  add_run(*store_, "patched", "v3", {{"fail_at", "1"}}, {{1, "throughput", 3}});
  EXPECT_EQ(select_export_runs(*store_, {"patched"}, "", ""), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(select_export_runs(*store_, {"build=v3", "run=1"}, "", ""),
            (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(select_export_runs(*store_, {"kernel=6.1.0-test,testbox=box1"}, "fx", "fake").size(),
            3u);
  EXPECT_NE(usage_error([&] {
              select_export_runs(*store_, {"nosuch"}, "", "");
            }).find("selector 'nosuch' matched no runs"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              select_export_runs(*store_, {"color=red"}, "", "");
            }).find("unknown key 'color'"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              select_export_runs(*store_, {}, "otherjob", "");
            }).find("matched no runs (with --job otherjob)"),
            std::string::npos);
}

// Every malformed row: SOURCE:LINE and what to write, before any database.
struct BadRow {
  const char* name;
  std::string text;  // the whole file
  const char* says;  // part of the message, starting with source:line
};

// The case as ctest names it, not as a byte dump.
void PrintTo(const BadRow& r, std::ostream* os) {
  *os << r.name;
}

const std::string kHead =
    "run,job,workload,param.fail_at,variant,build,kernel,testbox,iteration,metric,unit,"
    "direction,mean,value\n";
const std::string kRow = "1,fx,fake,2,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,100\n";

class CsvBadRow : public ::testing::TestWithParam<BadRow> {};

TEST_P(CsvBadRow, IsAUsageErrorNamingTheLine) {
  std::string message = usage_error([&] { parse(GetParam().text, "bad.csv"); });
  EXPECT_NE(message.find(GetParam().says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CsvBadRow,
    ::testing::Values(
        BadRow{"TooManyColumns", kHead + kRow + "1,fx,fake,2,vanilla,v1,k,box,2,x,,,,1,7\n",
               "bad.csv:3: 15 columns where the header has 14"},
        BadRow{"TooFewColumns", kHead + kRow + kRow.substr(0, kRow.rfind(',')) + "\n",
               "bad.csv:3: 13 columns where the header has 14"},
        BadRow{"ParameterTheWorkloadDoesNotHave",
               "run,job,workload,param.clients,variant,build,kernel,testbox,iteration,metric,"
               "unit,direction,mean,value\n" +
                   kRow,
               "bad.csv:2: column 'param.clients': workload 'fake' has no parameter 'clients'; "
               "its parameters are value, cv, seed"},
        BadRow{"ParameterValueTheDescriptorRefuses",
               kHead + "1,fx,fake,lots,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,100\n",
               "bad.csv:2: column 'param.fail_at': "},
        BadRow{"TextInTheValue",
               kHead + "1,fx,fake,2,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,fast\n",
               "bad.csv:2: column 'value': 'fast' is not a finite number"},
        BadRow{"NonFiniteValue",
               kHead + "1,fx,fake,2,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,inf\n",
               "bad.csv:2: column 'value': 'inf' is not a finite number"},
        BadRow{"TextInTheRun",
               kHead + "one,fx,fake,2,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,1\n",
               "bad.csv:2: column 'run': 'one' is not a run id"},
        BadRow{"ZeroIteration",
               kHead + "1,fx,fake,2,vanilla,v1,k,box,0,throughput,ops/s,higher,hmean,1\n",
               "bad.csv:2: column 'iteration': '0' is not an iteration number"},
        BadRow{"UnknownDirection",
               kHead + kRow + "1,fx,fake,2,vanilla,v1,k,box,1,lat,ms,down,amean,1\n",
               "bad.csv:3: column 'direction': 'down' is not a direction; write higher"},
        BadRow{"UnitWithoutDirection", kHead + "1,fx,fake,2,vanilla,v1,k,box,1,lat,ms,,,1\n",
               "bad.csv:2: column 'direction' is empty but metric 'lat' has a unit"},
        BadRow{"UnknownMean", kHead + "1,fx,fake,2,vanilla,v1,k,box,1,lat,ms,lower,median,1\n",
               "bad.csv:2: column 'mean': 'median' is not a mean"},
        BadRow{"EmptyMetric", kHead + "1,fx,fake,2,vanilla,v1,k,box,1,,ms,lower,amean,1\n",
               "bad.csv:2: column 'metric' is empty"},
        BadRow{"RunDisagrees",
               kHead + kRow + "1,fx,fake,2,patched,v1,k,box,2,throughput,ops/s,higher,hmean,1\n",
               "bad.csv:3: run 1 has variant 'patched' here but 'vanilla' on line 2"},
        BadRow{"ParameterDisagrees",
               kHead + kRow + "1,fx,fake,4,vanilla,v1,k,box,2,throughput,ops/s,higher,hmean,1\n",
               "bad.csv:3: run 1 has param.fail_at '4' here but '2' on line 2"},
        BadRow{"MetricDisagrees",
               kHead + kRow + "2,fx,fake,2,vanilla,v1,k,box,1,throughput,MB/s,higher,hmean,1\n",
               "bad.csv:3: metric 'throughput' of workload 'fake' has unit 'MB/s'"},
        BadRow{"SampleTwice", kHead + kRow + kRow,
               "bad.csv:3: run 1 iteration 1 metric 'throughput' is given twice (also line 2)"},
        BadRow{"UnclosedQuote",
               kHead + "1,fx,fake,\"2,vanilla,v1,k,box,1,throughput,ops/s,higher,hmean,1\n",
               "bad.csv:2: a quoted field is not closed"},
        BadRow{"UnknownColumn", "run,job,workload,colour\n", "bad.csv:1: unknown column 'colour'"},
        BadRow{"MissingColumn",
               "run,job,workload,variant,build,kernel,testbox,iteration,metric,unit,value\n",
               "bad.csv:1: the header has no column 'direction'"},
        BadRow{"RepeatedColumn", "run,run\n", "bad.csv:1: column 'run' appears twice"},
        BadRow{"Empty", "", "bad.csv: the file is empty"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(CsvIo, ColumnsInAnyOrderWithoutMeanAndBlankLines) {
  SamplesCsv csv = parse(
      "value,metric,direction,unit,iteration,testbox,kernel,build,variant,workload,job,run\n"
      "5,throughput,higher,ops/s,2,box,k,,v,fake,fx,7\n"
      "\n"
      "4,throughput,higher,ops/s,1,box,k,,v,fake,fx,7\n"
      "9,time,lower,s,1,box,k,,v,other,fx,8\n");
  ASSERT_EQ(csv.runs.size(), 2u);
  EXPECT_EQ(csv.runs[0].id, 7);
  EXPECT_EQ(csv.runs[0].line, 2);
  ASSERT_EQ(csv.runs[0].samples.size(), 2u);
  EXPECT_EQ(csv.runs[0].samples[0].iteration, 1);  // sorted by iteration
  EXPECT_EQ(csv.runs[0].samples[0].value, 4);
  ASSERT_EQ(csv.metrics.size(), 2u);
  EXPECT_EQ(csv.metrics[0].descriptor.mean, MeanKind::harmonic);    // fake declares Hmean
  EXPECT_EQ(csv.metrics[1].descriptor.mean, MeanKind::arithmetic);  // lower: Amean
  EXPECT_FALSE(csv.metrics[0].mean_given);
  EXPECT_TRUE(parse(kHead).runs.empty());  // header only: nothing to import
}

// The reader keeps rows of runs that arrive in order as they are and sorts
// the others; runs of different sizes, interleaved, keep their own samples.
TEST_F(CsvIo, RowsOfInterleavedRunsOfAnySizeAreSortedAndARepeatFarApartIsRefused) {
  const std::string row7 = "7,fx,fake,2,vanilla,v1,k,box,";
  const std::string row8 = "8,fx,fake,2,vanilla,v1,k,box,";
  const std::string row9 = "9,fx,fake,2,vanilla,v1,k,box,";
  std::string text = kHead;
  for (int i = 1; i <= 6; ++i)  // run 7: in order, six iterations of two metrics
    text += row7 + std::to_string(i) + ",latency,ms,lower,amean," + std::to_string(i) + "\n" +
            row7 + std::to_string(i) + ",throughput,ops/s,higher,hmean," + std::to_string(10 * i) +
            "\n";
  text += row8 + "2,throughput,ops/s,higher,hmean,20\n";  // run 8: two rows, reversed
  text += row9 + "1,throughput,ops/s,higher,hmean,30\n";  // run 9 between them
  text += row8 + "1,throughput,ops/s,higher,hmean,10\n";
  text += row9 + "1,latency,ms,lower,amean,3\n";  // run 9: metrics out of order
  SamplesCsv csv = parse(text);
  ASSERT_EQ(csv.runs.size(), 3u);
  ASSERT_EQ(csv.runs[0].samples.size(), 12u);
  for (std::size_t k = 0; k < 12; ++k) {
    EXPECT_EQ(csv.runs[0].samples[k].iteration, static_cast<int>(k / 2 + 1));
    EXPECT_EQ(csv.runs[0].samples[k].metric, k % 2 ? "throughput" : "latency");
  }
  ASSERT_EQ(csv.runs[1].samples.size(), 2u);
  EXPECT_EQ(csv.runs[1].samples[0].value, 10);
  EXPECT_EQ(csv.runs[1].samples[1].value, 20);
  ASSERT_EQ(csv.runs[2].samples.size(), 2u);
  EXPECT_EQ(csv.runs[2].samples[0].metric, "latency");
  EXPECT_EQ(csv.runs[2].samples[1].metric, "throughput");
  EXPECT_EQ(csv.runs[2].samples[1].value, 30);

  // The same sample twelve lines apart, with other samples of its run between.
  const std::string repeat = text + row7 + "3,latency,ms,lower,amean,3\n";
  const std::string message = usage_error([&] { parse(repeat, "far.csv"); });
  EXPECT_NE(message.find("far.csv:18: run 7 iteration 3 metric 'latency' is given twice (also "
                         "line 6)"),
            std::string::npos)
      << message;
}

TEST_F(CsvIo, ImportStoresNothingWhenADescriptorDisagreesWithTheDatabase) {
  add_run(*store_, "vanilla", "v1", {{"fail_at", "1"}}, {{1, "throughput", 1}});
  const std::string before = export_all(*store_);
  // throughput is recorded as ops/s; the file says MB/s (rows of run 5 come first).
  SamplesCsv csv = parse(kHead +
                             "5,fx,fake,2,vanilla,v1,k,box,1,latency,ms,lower,amean,1\n"
                             "6,fx,fake,2,vanilla,v1,k,box,1,throughput,MB/s,higher,hmean,1\n",
                         "conflict.csv");
  std::string message = usage_error(
      [&] { import_samples_csv(*store_, csv, workload_catalog(), probe_machine_facts()); });
  EXPECT_NE(message.find("conflict.csv:3: metric 'throughput' of workload 'fake' is recorded in"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nothing imported"), std::string::npos);
  EXPECT_EQ(store_->run_count(), 1);
  EXPECT_EQ(export_all(*store_), before);
  EXPECT_EQ(count(*store_, "SELECT count(*) FROM kernel"), "1");  // the rollback took all
}

TEST_F(CsvIo, ImportingTwiceAddsNothingAndUsedIdsAreRenumbered) {
  add_run(*store_, "vanilla", "v1", {{"fail_at", "1"}}, {{1, "throughput", 1}});
  add_run(*store_, "patched", "v2", {{"fail_at", "1"}}, {{1, "throughput", 2}});
  SamplesCsv csv = parse(export_all(*store_));

  CsvImportResult again =
      import_samples_csv(*store_, csv, workload_catalog(), probe_machine_facts());
  EXPECT_TRUE(again.run_ids.empty());
  EXPECT_EQ(again.already_stored, 2u);
  ASSERT_EQ(again.notes.size(), 1u);
  EXPECT_NE(again.notes[0].find("2 run(s) of in.csv already stored with the same samples"),
            std::string::npos);
  EXPECT_EQ(store_->run_count(), 2);

  // Another database whose run 1 is something else: every run gets a new id,
  // in file order.
  auto other = fresh("c.db");
  register_fake(*other);
  add_run(*other, "mine", "", {{"fail_at", "8"}}, {{1, "throughput", 9}});
  CsvImportResult r = import_samples_csv(*other, csv, workload_catalog(), probe_machine_facts());
  EXPECT_EQ(r.run_ids, (std::vector<std::int64_t>{2, 3}));
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("stored under new ids: 1 -> 2, 2 -> 3"), std::string::npos);
  EXPECT_EQ(count(*other,
                  "SELECT group_concat(variant, ',') FROM (SELECT variant FROM run ORDER "
                  "BY id)"),
            "mine,vanilla,patched");

  // The renumbered runs are found again by their identity (testbox, file run
  // id, start): a second import adds nothing.
  CsvImportResult twice =
      import_samples_csv(*other, csv, workload_catalog(), probe_machine_facts());
  EXPECT_TRUE(twice.run_ids.empty());
  EXPECT_EQ(twice.already_stored, 2u);
  ASSERT_EQ(twice.notes.size(), 1u);
  EXPECT_NE(twice.notes[0].find("1 (stored as 2), 2 (stored as 3)"), std::string::npos)
      << twice.notes[0];
  EXPECT_EQ(other->run_count(), 3);
}

// A file whose run was imported before but whose samples changed since: the
// import is refused naming both runs, and nothing is stored.
TEST_F(CsvIo, AChangedFileWithTheSameRunIsRefused) {
  add_run(*store_, "vanilla", "v1", {{"fail_at", "1"}}, {{1, "throughput", 1}});
  const std::string text = export_all(*store_);
  auto other = fresh("c.db");
  register_fake(*other);
  add_run(*other, "mine", "", {{"fail_at", "8"}}, {{1, "throughput", 9}});
  import_samples_csv(*other, parse(text), workload_catalog(), probe_machine_facts());
  ASSERT_EQ(other->run_count(), 2);

  std::string changed = text;
  const auto at = changed.rfind(",1\n");
  ASSERT_NE(at, std::string::npos);
  changed.replace(at, 3, ",1.5\n");
  std::string message = usage_error([&] {
    import_samples_csv(*other, parse(changed, "changed.csv"), workload_catalog(),
                       probe_machine_facts());
  });
  EXPECT_NE(message.find("changed.csv:2: run 1 (testbox 'box1', started "), std::string::npos)
      << message;
  EXPECT_NE(message.find("was imported before as run 2 of"), std::string::npos) << message;
  EXPECT_NE(message.find("Nothing imported"), std::string::npos) << message;
  EXPECT_EQ(other->run_count(), 2);
}

// A workload nightjar does not know (another tool's) keeps the parameters
// the file gives.
TEST_F(CsvIo, ParametersOfAnUnknownWorkloadPass) {
  SamplesCsv csv = parse(
      "run,job,workload,param.clients,param.anything,variant,build,kernel,testbox,iteration,"
      "metric,unit,direction,mean,value\n"
      "1,j,othertool,lots,x y,vanilla,,k,box,1,score,,higher,,3\n");
  ASSERT_EQ(csv.runs.size(), 1u);
  EXPECT_EQ(csv.runs[0].params.at("clients"), "lots");
}

// started_at survives the round trip, so trend order does; a file without
// the column (written before it existed) is dated at import; a bad date is
// refused naming the line.
TEST_F(CsvIo, StartedAtIsExportedAndImported) {
  std::int64_t id = add_run(*store_, "vanilla", "v1", {{"fail_at", "1"}}, {{1, "throughput", 1}});
  test::exec_sql(dir_.path() + "/a.db",
                 "UPDATE run SET started_at='2025-03-04T05:06:07Z' WHERE id=" + std::to_string(id));
  const std::string text = export_all(*store_);
  ASSERT_NE(text.find(",box1,2025-03-04T05:06:07Z,1,throughput,"), std::string::npos) << text;
  auto other = fresh("c.db");
  import_samples_csv(*other, parse(text), workload_catalog(), probe_machine_facts());
  EXPECT_EQ(count(*other, "SELECT started_at FROM run"), "2025-03-04T05:06:07Z");

  // An offset is converted to UTC.
  std::string offset = text;
  offset.replace(offset.find("2025-03-04T05:06:07Z"), 20, "2025-03-04T07:06:07+02:00");
  EXPECT_EQ(parse(offset).runs.at(0).started_at, "2025-03-04T05:06:07Z");

  for (const char* bad : {"2025-02-30T05:06:07Z", "yesterday", "2025-03-04T05:06:07"}) {
    std::string broken = text;
    broken.replace(broken.find("2025-03-04T05:06:07Z"), 20, bad);
    std::string message = usage_error([&] { parse(broken, "bad.csv"); });
    EXPECT_NE(message.find("bad.csv:2: column 'started_at': '" + std::string(bad) +
                           "' is not a date and time"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace nightjar

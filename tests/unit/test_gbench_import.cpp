// Unit under test: results/io/gbench.{h,cpp} (Google Benchmark JSON ->
// metrics and repetitions, import_gbench) and workloads/gbench.cpp (the
// gbench workload through the Workload interface). Hand-written reports
// cover each rule; the fixture binary (tests/fixtures/gbench_fixture.cpp,
// NIGHTJAR_GBENCH_FIXTURE) gives a real report: its JSON imported holds as
// many samples and metrics as its repetitions and counters (issue 6, check 3).
#include <gtest/gtest.h>

#include <algorithm>

#include <SQLiteCpp/SQLiteCpp.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "results/io/gbench.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"
#include "test_support.h"
#include "workloads/sys/process.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

using test::query_one;
using test::TempDir;

// Google Benchmark 1.7 layout: two repetitions of BM_a/8 (ns, with counters)
// and of BM_b (us), each followed by its aggregates.
const std::string kReport = R"({
  "context": {
    "date": "2026-01-02T03:04:05+00:00",
    "host_name": "elsewhere",
    "executable": "/home/u/build/my_bench",
    "num_cpus": 8,
    "mhz_per_cpu": 3000,
    "cpu_scaling_enabled": true,
    "caches": [{"type": "Data", "level": 1, "size": 32768, "num_sharing": 1}],
    "load_avg": [0.5, 0.25, 0],
    "library_build_type": "release"
  },
  "benchmarks": [
    {"name": "BM_a/8", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_a/8",
     "run_type": "iteration", "repetitions": 2, "repetition_index": 0, "threads": 1,
     "iterations": 1000, "real_time": 10.5, "cpu_time": 10.25, "time_unit": "ns",
     "bytes_per_second": 800.0, "items_per_second": 100.0, "frames": 3, "label": "x"},
    {"name": "BM_a/8", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_a/8",
     "run_type": "iteration", "repetitions": 2, "repetition_index": 1, "threads": 1,
     "iterations": 1000, "real_time": 11.5, "cpu_time": 11.25, "time_unit": "ns",
     "bytes_per_second": 700.0, "items_per_second": 90.0, "frames": 4, "label": "x"},
    {"name": "BM_a/8_mean", "family_index": 0, "per_family_instance_index": 0,
     "run_name": "BM_a/8", "run_type": "aggregate", "repetitions": 2, "threads": 1,
     "aggregate_name": "mean", "aggregate_unit": "time", "iterations": 2, "real_time": 11.0,
     "cpu_time": 10.75, "time_unit": "ns", "bytes_per_second": 750.0,
     "items_per_second": 95.0, "frames": 3.5},
    {"name": "BM_a/8_cv", "family_index": 0, "per_family_instance_index": 0,
     "run_name": "BM_a/8", "run_type": "aggregate", "repetitions": 2, "threads": 1,
     "aggregate_name": "cv", "aggregate_unit": "percentage", "iterations": 2,
     "real_time": 0.06, "cpu_time": 0.06, "time_unit": "ns"},
    {"name": "BM_b", "family_index": 1, "per_family_instance_index": 0, "run_name": "BM_b",
     "run_type": "iteration", "repetitions": 2, "repetition_index": 0, "threads": 1,
     "iterations": 10, "real_time": 1.5, "cpu_time": 1.25, "time_unit": "us"},
    {"name": "BM_b", "family_index": 1, "per_family_instance_index": 0, "run_name": "BM_b",
     "run_type": "iteration", "repetitions": 2, "repetition_index": 1, "threads": 1,
     "iterations": 10, "real_time": 2.5, "cpu_time": 2.25, "time_unit": "us"},
    {"name": "BM_b_median", "family_index": 1, "per_family_instance_index": 0,
     "run_name": "BM_b", "run_type": "aggregate", "repetitions": 2, "threads": 1,
     "aggregate_name": "median", "aggregate_unit": "time", "iterations": 2, "real_time": 2.0,
     "cpu_time": 1.75, "time_unit": "us"}
  ]
})";

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string describe(const MetricDescriptor& d) {
  return d.name + " " + d.unit + " " + std::string(to_string(d.direction)) + " " +
         std::string(to_string(d.mean));
}

TEST(GbenchJson, RepetitionsBecomeSamplesAndAggregatesAreSkipped) {
  GbenchReport r = parse_gbench_json(kReport, {}, "r.json");
  std::vector<std::string> metrics;
  for (const auto& d : r.metrics) metrics.push_back(describe(d));
  EXPECT_EQ(metrics, (std::vector<std::string>{
                         "BM_a/8.real_time ns lower amean",
                         "BM_a/8.cpu_time ns lower amean",
                         "BM_a/8.bytes_per_second bytes/s higher hmean",
                         "BM_a/8.items_per_second items/s higher hmean",
                         "BM_a/8.frames  higher amean",
                         "BM_b.real_time us lower amean",
                         "BM_b.cpu_time us lower amean",
                     }));
  ASSERT_EQ(r.repetitions.size(), 2u);
  EXPECT_EQ(r.repetitions[0], (std::map<std::string, double>{{"BM_a/8.real_time", 10.5},
                                                             {"BM_a/8.cpu_time", 10.25},
                                                             {"BM_a/8.bytes_per_second", 800},
                                                             {"BM_a/8.items_per_second", 100},
                                                             {"BM_a/8.frames", 3},
                                                             {"BM_b.real_time", 1.5},
                                                             {"BM_b.cpu_time", 1.25}}));
  EXPECT_EQ(r.repetitions[1].at("BM_a/8.real_time"), 11.5);
  EXPECT_EQ(r.repetitions[1].at("BM_b.cpu_time"), 2.25);
  EXPECT_EQ(r.samples(), 14u);
  EXPECT_EQ(r.benchmarks, 2u);
  EXPECT_EQ(r.iteration_entries, 4u);
  EXPECT_EQ(r.aggregate_entries, 3u);
  EXPECT_EQ(r.error_entries, 0u);
  EXPECT_EQ(r.host_name, "elsewhere");
  EXPECT_EQ(r.executable, "/home/u/build/my_bench");
  EXPECT_EQ(r.num_cpus, 8u);
  EXPECT_EQ(r.context.at("gbench.load_avg"), "0.5 0.25 0");
  EXPECT_EQ(r.context.at("gbench.cpu_scaling_enabled"), "true");
  EXPECT_EQ(r.context.count("gbench.caches"), 0u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("CPU frequency scaling was enabled"), std::string::npos);
}

TEST(GbenchJson, TimeUnitAndCounterDeclarations) {
  GbenchOptions o;
  o.time_unit = "ns";
  o.counters =
      parse_counter_declarations("frames:frames/s:higher:hmean; bytes_per_second:B/s", "--counter");
  GbenchReport r = parse_gbench_json(kReport, o, "r.json");
  EXPECT_EQ(r.repetitions[0].at("BM_b.real_time"), 1500);  // 1.5 us
  EXPECT_EQ(r.repetitions[1].at("BM_b.cpu_time"), 2250);
  std::set<std::string> metrics;
  for (const auto& d : r.metrics) metrics.insert(describe(d));
  EXPECT_TRUE(metrics.count("BM_b.real_time ns lower amean"));
  EXPECT_TRUE(metrics.count("BM_a/8.frames frames/s higher hmean"));
  EXPECT_TRUE(metrics.count("BM_a/8.bytes_per_second B/s higher hmean"));

  EXPECT_EQ(describe(gbench_counter_metric("BM_x", "max_bytes_used", {})),
            "BM_x.max_bytes_used bytes lower amean");
  EXPECT_EQ(describe(gbench_counter_metric("BM_x", "pages_per_second", {})),
            "BM_x.pages_per_second pages/s higher hmean");
  EXPECT_THROW(parse_counter_declarations("real_time:s:lower", "--counter"), ParamError);
  EXPECT_THROW(parse_counter_declarations("x:u:sideways", "--counter"), ParamError);
  EXPECT_EQ(gbench_time_unit_seconds("ms"), 1e-3);
  EXPECT_EQ(gbench_time_unit_seconds("min"), 0);
}

TEST(GbenchJson, ErrorsNonFiniteValuesAndOldReports) {
  // An errored benchmark, a NaN counter and Infinity (written bare by
  // Google Benchmark), and a report without run_type/repetition_index
  // (Google Benchmark < 1.5): repetitions are counted in file order.
  const std::string text = R"({"benchmarks": [
    {"name": "BM_fail", "error_occurred": true, "error_message": "no device",
     "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"},
    {"name": "BM_old", "iterations": 5, "real_time": 3, "cpu_time": 2, "time_unit": "ms",
     "ratio": NaN, "rate_per_second": Infinity, "note": "NaN in a string stays"},
    {"name": "BM_old", "iterations": 5, "real_time": 4, "cpu_time": 3, "time_unit": "ms"},
    {"name": "BM_old_mean", "aggregate_name": "mean", "iterations": 2, "real_time": 3.5,
     "cpu_time": 2.5, "time_unit": "ms"}
  ]})";
  GbenchReport r = parse_gbench_json(text, {}, "old.json");
  ASSERT_EQ(r.repetitions.size(), 2u);
  EXPECT_EQ(r.repetitions[0],
            (std::map<std::string, double>{{"BM_old.real_time", 3}, {"BM_old.cpu_time", 2}}));
  EXPECT_EQ(r.repetitions[1].at("BM_old.real_time"), 4);
  EXPECT_EQ(r.error_entries, 1u);
  EXPECT_EQ(r.aggregate_entries, 1u);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "the report has no \"context\" object: its host, date and CPUs are "
                            "unknown (recorded testbox 'unknown', dated at import)",
                            "BM_fail: skipped by the benchmark: no device; no samples",
                            "BM_old.ratio of repetition 1 is not a finite number; left out",
                            "BM_old.rate_per_second of repetition 1 is not a finite number; "
                            "left out"}));
}

// Non-finite numbers in any spelling are left out with the same warning; a
// time that is zero or negative measures nothing and is left out too; a
// benchmark whose repetitions use two time units is stored in the first.
TEST(GbenchJson, OtherSpellingsNonPositiveTimesAndMixedUnits) {
  const std::string text = R"({"benchmarks": [
    {"name": "BM_n", "real_time": nan, "cpu_time": -inf, "time_unit": "ns"},
    {"name": "BM_n", "real_time": 2, "cpu_time": +Infinity, "time_unit": "ns", "r": -NAN},
    {"name": "BM_z", "real_time": 0, "cpu_time": -1, "time_unit": "ns"},
    {"name": "BM_z", "real_time": 3, "cpu_time": 2, "time_unit": "ns", "items_per_second": -5},
    {"name": "BM_u", "real_time": 1500, "cpu_time": 1000, "time_unit": "ns"},
    {"name": "BM_u", "real_time": 2, "cpu_time": 1, "time_unit": "us"}
  ]})";
  GbenchReport r = parse_gbench_json(text, {}, "s.json");
  ASSERT_EQ(r.repetitions.size(), 2u);
  EXPECT_EQ(r.repetitions[0].count("BM_n.real_time"), 0u);
  EXPECT_EQ(r.repetitions[1].at("BM_n.real_time"), 2);
  EXPECT_EQ(r.repetitions[0].count("BM_z.real_time"), 0u);
  EXPECT_EQ(r.repetitions[0].count("BM_z.cpu_time"), 0u);
  EXPECT_EQ(r.repetitions[1].at("BM_z.real_time"), 3);
  EXPECT_EQ(r.repetitions[1].at("BM_u.real_time"), 2000);  // 2 us in ns
  EXPECT_EQ(r.repetitions[1].at("BM_u.cpu_time"), 1000);
  for (const auto& d : r.metrics) {
    if (d.name.starts_with("BM_u.")) {
      EXPECT_EQ(d.unit, "ns") << d.name;
    }
  }
  const auto warned = [&](const std::string& w) {
    return std::find(r.warnings.begin(), r.warnings.end(), w) != r.warnings.end();
  };
  EXPECT_TRUE(warned("BM_n.real_time of repetition 1 is not a finite number; left out"));
  EXPECT_TRUE(warned("BM_n.cpu_time of repetition 1 is not a finite number; left out"));
  EXPECT_TRUE(warned("BM_n.cpu_time of repetition 2 is not a finite number; left out"));
  EXPECT_TRUE(warned("BM_n.r of repetition 2 is not a finite number; left out"));
  EXPECT_TRUE(warned("BM_z.real_time = 0 ns: a time must be positive (repetition 1); left out"));
  EXPECT_TRUE(warned("BM_z.cpu_time = -1 ns: a time must be positive (repetition 1); left out"));
  EXPECT_TRUE(
      warned("BM_z.items_per_second = -5 items/s: a rate (Hmean) must be positive "
             "(repetition 2); left out"));
  EXPECT_EQ(r.repetitions[1].count("BM_z.items_per_second"), 0u);
}

struct BadReport {
  const char* name;
  std::string text;
  const char* says;
};

// The case as ctest names it, not as a byte dump.
void PrintTo(const BadReport& r, std::ostream* os) {
  *os << r.name;
}

class GbenchBadReport : public ::testing::TestWithParam<BadReport> {};

TEST_P(GbenchBadReport, IsAUsageError) {
  std::string message = usage_error([&] { parse_gbench_json(GetParam().text, {}, "b.json"); });
  EXPECT_NE(message.find(GetParam().says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, GbenchBadReport,
    ::testing::Values(
        BadReport{"NotJson", "name,real_time\n", "b.json: not valid JSON"},
        BadReport{"NoBenchmarks", R"({"context": {}})",
                  "b.json: not a Google Benchmark JSON report (no \"benchmarks\" array)"},
        BadReport{"Empty", R"({"benchmarks": []})",
                  "b.json: no benchmark results to import: the \"benchmarks\" array is empty"},
        BadReport{"OnlyAggregates",
                  R"({"benchmarks": [{"name": "BM_a_mean", "run_name": "BM_a",
                      "run_type": "aggregate", "aggregate_name": "mean", "real_time": 1,
                      "cpu_time": 1, "time_unit": "ns"}]})",
                  "no repetitions: run the benchmarks without --benchmark_report_aggregates_only"},
        BadReport{"OnlyErrors",
                  R"({"benchmarks": [{"name": "BM_a", "error_occurred": true,
                      "real_time": 0, "cpu_time": 0}]})",
                  "every benchmark reported an error (1 entries)"},
        BadReport{"RepetitionTwice",
                  R"({"benchmarks": [
                      {"name": "BM_a", "repetition_index": 0, "real_time": 1, "cpu_time": 1},
                      {"name": "BM_a", "repetition_index": 0, "real_time": 2, "cpu_time": 2}]})",
                  "b.json: benchmarks[1] (BM_a): repetition 1 of BM_a is given twice (also "
                  "benchmarks[0])"},
        BadReport{"UnknownTimeUnit",
                  R"({"benchmarks": [{"name": "BM_a", "real_time": 1, "cpu_time": 1,
                      "time_unit": "min"}]})",
                  "b.json: benchmarks[0] (BM_a): time_unit \"min\" is not ns, us, ms or s"},
        BadReport{"NoRealTime", R"({"benchmarks": [{"name": "BM_a", "cpu_time": 1}]})",
                  "b.json: benchmarks[0] (BM_a): no \"real_time\""},
        BadReport{"EntryNotAnObject", R"({"benchmarks": [7]})",
                  "b.json: benchmarks[0] is number, not an object"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GbenchJson, DefaultJobIsTheExecutablesName) {
  GbenchReport r;
  EXPECT_EQ(default_gbench_job(r, "/tmp/out/base.json"), "base");
  r.executable = "/home/u/build/bench/micro_bench";
  EXPECT_EQ(default_gbench_job(r, "/tmp/out/base.json"), "micro_bench");
  EXPECT_EQ(default_gbench_job(GbenchReport{}, "-"), "gbench");
}

class GbenchStore : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::make_unique<ResultsStore>(dir_.path() + "/g.db"); }
  std::string one(const std::string& sql) { return query_one(store_->path(), sql); }
  TempDir dir_;
  std::unique_ptr<ResultsStore> store_;
};

TEST_F(GbenchStore, ImportStoresOneRunOfItsRepetitions) {
  GbenchReport report = parse_gbench_json(kReport, {}, "r.json");
  GbenchImportResult r =
      import_gbench(*store_, report, {"r.json", "my_bench", "base", "b1", "6.1.0-x", {}, {}});
  EXPECT_EQ(r.run_id, 1);
  EXPECT_EQ(r.metrics, 7u);
  EXPECT_EQ(r.samples, 14u);
  EXPECT_EQ(r.iterations, 2u);
  EXPECT_EQ(one("SELECT job || ' ' || workload || ' ' || variant || ' ' || build || ' ' || "
                "status || ' [' || cell || '] ' || iterations || ' ' || started_at FROM run"),
            "my_bench gbench base b1 complete [] 2 2026-01-02T03:04:05Z");
  EXPECT_EQ(one("SELECT k.release || ' ' || t.hostname || ' ' || t.cpus FROM run r JOIN kernel "
                "k ON k.id = r.kernel_id JOIN testbox t ON t.id = r.testbox_id"),
            "6.1.0-x elsewhere 8");
  EXPECT_EQ(one("SELECT count(*) FROM sample"), "14");
  EXPECT_EQ(one("SELECT value FROM sample WHERE iteration = 2 AND metric = 'BM_a/8.frames'"),
            "4.0");
  EXPECT_EQ(one("SELECT unit || ' ' || direction || ' ' || mean FROM metric WHERE "
                "name = 'BM_b.real_time'"),
            "us lower amean");
  EXPECT_EQ(one("SELECT value FROM run_context WHERE key = 'gbench.library_build_type'"),
            "release");
  EXPECT_EQ(one("SELECT count(*) FROM iteration WHERE status = 'ok'"), "2");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("written on elsewhere (not this machine)"), std::string::npos);
}

// Importing one report twice adds nothing; importing it again under other
// labels is refused naming the stored run (it would count one measurement
// twice); another report of the same binary (another date) is a new run.
TEST_F(GbenchStore, ImportingAReportTwiceAddsNothing) {
  GbenchReport report = parse_gbench_json(kReport, {}, "r.json");
  GbenchImportResult first =
      import_gbench(*store_, report, {"r.json", "my_bench", "base", "", "", {}, {}});
  EXPECT_FALSE(first.already_imported);
  GbenchImportResult again =
      import_gbench(*store_, report, {"copy.json", "my_bench", "base", "", "", {}, {}});
  EXPECT_TRUE(again.already_imported);
  EXPECT_EQ(again.run_id, first.run_id);
  EXPECT_EQ(store_->run_count(), 1);
  EXPECT_EQ(one("SELECT count(*) FROM sample"), "14");

  std::string message = usage_error([&] {
    import_gbench(*store_, report, {"r.json", "my_bench", "patched", "", "", {}, {}});
  });
  EXPECT_NE(message.find("r.json: this report (host elsewhere, date 2026-01-02T03:04:05Z) was "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("was imported before as run 1 of"), std::string::npos) << message;
  EXPECT_NE(message.find("(job my_bench, variant base)"), std::string::npos) << message;
  EXPECT_EQ(store_->run_count(), 1);

  std::string later = kReport;
  later.replace(later.find("2026-01-02T03:04:05"), 19, "2026-01-03T03:04:05");
  GbenchImportResult next = import_gbench(*store_, parse_gbench_json(later, {}, "r2.json"),
                                          {"r2.json", "my_bench", "base", "", "", {}, {}});
  EXPECT_FALSE(next.already_imported);
  EXPECT_EQ(store_->run_count(), 2);
}

// A date that is not ISO 8601 with a zone is refused; a report without a
// context is stored on testbox "unknown", dated at import, with a warning.
TEST_F(GbenchStore, ABadDateIsRefusedAndAMissingContextIsUnknown) {
  for (const char* bad : {"yesterday", "2026-02-30T03:04:05+00:00", "2026-01-02 03:04:05"}) {
    std::string text = kReport;
    text.replace(text.find("2026-01-02T03:04:05+00:00"), 25, bad);
    std::string message = usage_error([&] { parse_gbench_json(text, {}, "d.json"); });
    EXPECT_NE(message.find("d.json: context.date '" + std::string(bad) +
                           "' is not an ISO 8601 date and time with a zone"),
              std::string::npos)
        << message;
  }
  GbenchReport bare = parse_gbench_json(
      R"({"benchmarks": [{"name": "BM_x", "real_time": 2, "cpu_time": 1, "time_unit": "ns"}]})", {},
      "bare.json");
  ASSERT_FALSE(bare.warnings.empty());
  EXPECT_NE(bare.warnings[0].find("no \"context\" object"), std::string::npos);
  import_gbench(*store_, bare, {"bare.json", "bare", "base", "", "", {}, {}});
  EXPECT_EQ(one("SELECT t.hostname FROM run r JOIN testbox t ON t.id = r.testbox_id"), "unknown");
}

TEST_F(GbenchStore, ADifferentTimeUnitForAStoredMetricStoresNothing) {
  GbenchReport report = parse_gbench_json(kReport, {}, "r.json");
  import_gbench(*store_, report, {"r.json", "my_bench", "base", "", "", {}, {}});
  GbenchOptions ns;
  ns.time_unit = "ns";
  // Another report of the same benchmarks (a later date), read in ns.
  std::string later = kReport;
  ASSERT_NE(later.find("2026-01-02T03:04:05"), std::string::npos);
  later.replace(later.find("2026-01-02T03:04:05"), 19, "2026-01-03T03:04:05");
  GbenchReport in_ns = parse_gbench_json(later, ns, "r2.json");
  std::string message = usage_error([&] {
    import_gbench(*store_, in_ns, {"r2.json", "my_bench", "new", "", "", {}, {}});
  });
  EXPECT_NE(message.find("r2.json: metric BM_b.real_time is already recorded for workload gbench "
                         "in 'us' (lower is better) but this report has 'ns'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("import with --time-unit us"), std::string::npos);
  EXPECT_EQ(store_->run_count(), 1);
  EXPECT_EQ(one("SELECT count(*) FROM sample"), "14");
}

#ifdef NIGHTJAR_GBENCH_FIXTURE
// Runs the fixture binary with `repetitions` and returns its JSON report.
std::string run_fixture(const TempDir& dir, int repetitions) {
  CommandSpec spec;
  const std::string out = dir.path() + "/fixture.json";
  spec.argv = {NIGHTJAR_GBENCH_FIXTURE, "--benchmark_repetitions=" + std::to_string(repetitions),
               "--benchmark_out=" + out, "--benchmark_out_format=json"};
  spec.timeout_sec = 120;
  CommandResult r = run_command(spec);
  EXPECT_TRUE(r.ok()) << r.describe() << " " << r.tail();
  return test::read_file(out);
}

// Check 3: a Google Benchmark binary's JSON imported gives one sample per
// repetition of every metric: 3 benchmarks, 11 metrics (real_time and
// cpu_time of each, bytes/items per second of the two BM_Sum, widgets of
// BM_Widgets), 3 repetitions -> 33 samples, each the value in the JSON.
TEST_F(GbenchStore, FixtureBinaryReportImportsEveryRepetitionAndCounter) {
  const std::string text = run_fixture(dir_, 3);
  GbenchReport report = parse_gbench_json(text, {}, "fixture.json");
  EXPECT_EQ(report.benchmarks, 3u);
  EXPECT_EQ(report.metrics.size(), 11u);
  EXPECT_EQ(report.repetitions.size(), 3u);
  EXPECT_EQ(report.aggregate_entries, 12u);  // mean, median, stddev, cv of each
  GbenchImportResult r =
      import_gbench(*store_, report, {"fixture.json", "fixture", "a", "", "", {}, {}});
  EXPECT_EQ(r.metrics, 11u);
  EXPECT_EQ(r.samples, 33u);
  EXPECT_EQ(one("SELECT count(DISTINCT metric) || ' ' || count(*) FROM sample"), "11 33");
  EXPECT_EQ(one("SELECT group_concat(n) FROM (SELECT count(*) AS n FROM sample GROUP BY metric "
                "HAVING n <> 3)"),
            "");  // every metric has exactly its 3 repetitions
  EXPECT_EQ(one("SELECT unit FROM metric WHERE name = 'BM_Widgets/iterations:1000.real_time'"),
            "us");

  // Every iteration entry's real_time, cpu_time and counters are the samples.
  auto doc = nlohmann::json::parse(text);
  SQLite::Database db(store_->path());
  SQLite::Statement q(db, "SELECT value FROM sample WHERE iteration = ? AND metric = ?");
  std::size_t checked = 0;
  for (const auto& e : doc["benchmarks"]) {
    if (e["run_type"] != "iteration") continue;
    for (const char* field :
         {"real_time", "cpu_time", "bytes_per_second", "items_per_second", "widgets"}) {
      if (!e.contains(field)) continue;
      q.reset();
      q.bind(1, e["repetition_index"].get<int>() + 1);
      q.bind(2, e["run_name"].get<std::string>() + "." + field);
      ASSERT_TRUE(q.executeStep()) << e["run_name"] << " " << field;
      EXPECT_EQ(q.getColumn(0).getDouble(), e[field].get<double>());
      ++checked;
    }
  }
  EXPECT_EQ(checked, 33u);
}

// Builds a cell of the gbench workload from text values, as a job would.
Cell gbench_cell(const Workload& w, const std::map<std::string, std::string>& given) {
  Cell cell;
  cell.workload = "gbench";
  MachineFacts facts;
  for (const auto& d : w.params()) {
    auto it = given.find(d.name);
    cell.params[d.name] = parse_param(d, it == given.end() ? d.default_value : it->second, facts);
  }
  return cell;
}

TEST(GbenchWorkload, DeclaresListedBenchmarksAndHandsOutRepetitionsAsIterations) {
  const Workload* w = find_workload("gbench");
  ASSERT_NE(w, nullptr);
  Cell cell = gbench_cell(*w, {{"binary", NIGHTJAR_GBENCH_FIXTURE},
                               {"filter", "BM_Sum|BM_Widgets"},
                               {"repetitions", "2"},
                               {"counters", "widgets:widgets:higher:amean"},
                               {"time_unit", "us"}});
  ASSERT_NO_THROW(w->validate(cell, MachineFacts{}));
  std::vector<MetricDescriptor> declared = w->cell_metrics(cell);
  ASSERT_EQ(declared.size(), 15u);  // 3 benchmarks x (2 times + 2 rates + widgets)
  EXPECT_EQ(describe(declared[0]), "BM_Sum/64/iterations:2000.real_time us lower amean");
  EXPECT_EQ(describe(declared[4]), "BM_Sum/64/iterations:2000.widgets widgets higher amean");
  EXPECT_EQ(describe(declared[12]),
            "BM_Widgets/iterations:1000.bytes_per_second bytes/s higher hmean");

  RunContext ctx;
  std::map<std::string, std::string> facts;
  std::vector<std::string> warnings;
  ctx.record = [&](const std::string& k, const std::string& v) { facts[k] = v; };
  ctx.warn = [&](const std::string& m) { warnings.push_back(m); };
  auto session = w->start(cell, ctx);
  for (int i = 1; i <= 3; ++i) {
    IterationResult r = session->measure();
    ASSERT_FALSE(r.failure) << *r.failure;
    EXPECT_EQ(r.metrics.size(), 11u) << "iteration " << i;
    EXPECT_EQ(r.metrics.at("BM_Widgets/iterations:1000.widgets"), 7);
    EXPECT_GT(r.metrics.at("BM_Sum/512/iterations:2000.real_time"), 0);
  }
  EXPECT_EQ(facts.at("gbench.benchmarks"), "3");
  EXPECT_EQ(facts.at("gbench.executable"), NIGHTJAR_GBENCH_FIXTURE);
  for (const auto& m : warnings)  // (CPU scaling may be on where the tests run)
    EXPECT_EQ(m.find("was not declared"), std::string::npos) << m;
}

TEST(GbenchWorkload, BadParametersAndBinaries) {
  const Workload* w = find_workload("gbench");
  ASSERT_NE(w, nullptr);
  auto field_of = [&](const std::map<std::string, std::string>& given) {
    try {
      w->validate(gbench_cell(*w, given), MachineFacts{});
    } catch (const ParamError& e) {
      return e.field + ": " + e.message;
    }
    return std::string();
  };
  EXPECT_NE(field_of({{"binary", ""}}).find("binary: required"), std::string::npos);
  EXPECT_NE(field_of({{"binary", "x"}, {"args", "--benchmark_out=/tmp/x"}})
                .find("args: '--benchmark_out=/tmp/x' is set by nightjar"),
            std::string::npos);
  EXPECT_NE(field_of({{"binary", "x"}, {"counters", "cpu_time"}}).find("counters: 'cpu_time'"),
            std::string::npos);

  RunContext ctx;
  EXPECT_THROW(w->start(gbench_cell(*w, {{"binary", "/nonexistent/bench"}}), ctx),
               EnvironmentError);
  try {
    w->start(gbench_cell(*w, {{"binary", NIGHTJAR_GBENCH_FIXTURE}, {"filter", "BM_Nothing"}}), ctx);
    ADD_FAILURE() << "a filter matching nothing must fail the run";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("filter 'BM_Nothing' matches no benchmark"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("BM_Widgets/iterations:1000"), std::string::npos);
  }
}
#endif

}  // namespace
}  // namespace nightjar

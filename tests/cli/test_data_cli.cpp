// Unit under test: `nightjar export` and `nightjar import` end to end
// (harness/cli/cmd_data.cpp), and the gbench workload through `nightjar run`:
//  - issue 6 check 2: export -> import into a new database -> export is byte
//    identical; a file with a bad row (wrong column count, text in a number,
//    unknown direction) exits 2 naming the line, and the database is unchanged;
//  - issue 6 check 3: the fixture Google Benchmark binary's JSON imported with
//    --format gbench holds as many samples and metrics as its repetitions and
//    counters, and the gbench workload stores the same metrics per iteration;
//  - selectors, flags and usage errors of both commands.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "workloads/sys/process.h"

using namespace nightjar::test;

namespace {

std::string fake_job(const std::string& script, int seed) {
  return "workload: fake\nparams:\n  script: \"" + script + "\"\n  seed: " + std::to_string(seed) +
         "\niterations: 4\nwarmup: 0\n";
}

// Two variants of two cells of the fake workload, with scripted samples.
class DataCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->path() + "/results.db";
    auto run = [](std::vector<std::string> args) {
      auto r = run_nightjar(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    run({"run", "--db", db_, "--variant", "vanilla", "--build", "v1",
         dir_->write("a1/fx.yaml", fake_job("100,101.5,99.25,100.125", 1)),
         dir_->write("a2/fx.yaml", fake_job("200,201,0.1,1e+20", 2))});
    run({"run", "--db", db_, "--variant", "patched", "--build", "v2",
         dir_->write("b1/fx.yaml", fake_job("110,111.5,109.25,110.125", 1))});
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // Every stored row that an import could change, as text.
  static std::string snapshot(const std::string& db) {
    return query_one(db,
                     "SELECT (SELECT count(*) FROM run) || ' runs, ' || (SELECT count(*) FROM "
                     "sample) || ' samples, ' || (SELECT count(*) FROM iteration) || ' "
                     "iterations, ' || (SELECT count(*) FROM metric) || ' metrics, ' || (SELECT "
                     "count(*) FROM kernel) || ' kernels, ' || (SELECT total(value) FROM sample)");
  }
  static TempDir* dir_;
  static std::string db_;
};
TempDir* DataCli::dir_ = nullptr;
std::string DataCli::db_;

// Issue 15 check 6: the same CSV imported twice into a database whose ids
// it collides with (so its runs are renumbered) adds nothing the second time.
TEST_F(DataCli, TheSameCsvImportedTwiceAddsNothing) {
  TempDir t;
  const std::string csv = t.path() + "/a.csv";
  ASSERT_EQ(run_nightjar({"export", "--db", db_, "-o", csv}).exit_code, 0);
  const std::string db = t.path() + "/target.db";
  ASSERT_EQ(run_nightjar({"run", "--db", db, "--variant", "mine",
                          dir_->write("mine2/fx.yaml", fake_job("5,6", 9))})
                .exit_code,
            0);
  auto first = run_nightjar({"import", "--db", db, csv});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("imported 3 run(s) (ids 2-4), 24 samples from"), std::string::npos)
      << first.out;
  auto second = run_nightjar({"import", "--db", db, csv});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("imported 0 run(s), 0 samples from " + csv +
                            "; 3 run(s) already stored, skipped"),
            std::string::npos)
      << second.out;
  EXPECT_NE(second.err.find("3 run(s) of " + csv + " already stored with the same samples"),
            std::string::npos)
      << second.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run"), "4");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run_context WHERE key = 'import.identity'"), "3");
}

TEST_F(DataCli, CsvRoundTripIsByteIdentical) {
  TempDir t;
  auto first = run_nightjar({"export", "--db", db_, "-o", t.path() + "/a.csv"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("nightjar: exported 24 samples of 3 run(s) to"), std::string::npos)
      << first.err;
  const std::string a = read_file(t.path() + "/a.csv");
  EXPECT_EQ(a.substr(0, a.find('\n')),
            "run,job,workload,param.cv,param.fail_at,param.script,param.seed,param.sleep,"
            "param.value,variant,build,kernel,testbox,started_at,iteration,metric,unit,direction,"
            "mean,value");
  EXPECT_NE(a.find(",\"200,201,0.1,1e+20\",2,0s,100,vanilla,v1,"), std::string::npos);
  EXPECT_NE(a.find(",2,throughput,ops/s,higher,hmean,201\n"), std::string::npos);

  auto imported = run_nightjar({"import", "--db", t.path() + "/b.db", t.path() + "/a.csv"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(imported.out, "imported 3 run(s) (ids 1-3), 24 samples from " + t.path() + "/a.csv\n");
  auto second = run_nightjar({"export", "--db", t.path() + "/b.db", "-o", t.path() + "/b.csv"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(read_file(t.path() + "/b.csv"), a);

  auto to_stdout = run_nightjar({"export", "--db", t.path() + "/b.db"});  // -o - by default
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, a);

  // The imported database answers compare like the original (the CSV holds
  // samples, not monitor deltas: the metric rows are the same).
  auto metric_rows = [](const std::string& csv) {
    std::string out;
    std::istringstream in(csv);
    for (std::string l; std::getline(in, l);)
      if (l.starts_with("metric,")) out += l + "\n";
    return out;
  };
  auto c1 = run_nightjar({"compare", "vanilla", "patched", "--db", db_, "--ignore-param", "script",
                          "--format", "csv"});
  auto c2 = run_nightjar({"compare", "vanilla", "patched", "--db", t.path() + "/b.db",
                          "--ignore-param", "script", "--format", "csv"});
  ASSERT_EQ(c1.exit_code, 0) << c1.err;
  EXPECT_EQ(std::count(c1.out.begin(), c1.out.end(), '\n') > 3, true);
  EXPECT_EQ(metric_rows(c2.out), metric_rows(c1.out));
  EXPECT_EQ(metric_rows(c1.out).size() > 0, true);

  // Importing the same file again adds nothing.
  auto again = run_nightjar({"import", "--db", t.path() + "/b.db", t.path() + "/a.csv"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("3 run(s) of " + t.path() + "/a.csv already stored"), std::string::npos);
  EXPECT_EQ(query_one(t.path() + "/b.db", "SELECT count(*) FROM run"), "3");
}

// Check 2: each kind of bad row exits 2 with its line, and nothing changes.
TEST_F(DataCli, BadRowExitsTwoWithItsLineAndLeavesTheDatabaseUnchanged) {
  TempDir t;
  auto exported = run_nightjar({"export", "--db", db_, "-o", t.path() + "/a.csv"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::vector<std::string> lines;
  {
    std::ifstream in(t.path() + "/a.csv");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 25u);
  auto with_line = [&](std::size_t index, const std::string& replacement) {
    std::string text;
    for (std::size_t i = 0; i < lines.size(); ++i)
      text += (i == index ? replacement : lines[i]) + "\n";
    return text;
  };
  std::string row = lines[10];  // line 11 of the file: run 2, iteration 1, throughput
  ASSERT_NE(row.find(",throughput,ops/s,higher,"), std::string::npos) << row;
  auto last_comma = row.rfind(',');
  struct Bad {
    std::string name, text, says;
  };
  std::string unknown_direction = row;
  unknown_direction.replace(unknown_direction.find(",higher,"), 8, ",upward,");
  const std::vector<Bad> bad = {
      {"columns.csv", with_line(10, row + ",7"),
       "columns.csv:11: 21 columns where the header has 20"},
      {"number.csv", with_line(10, row.substr(0, last_comma) + ",12.5 Mbps"),
       "number.csv:11: column 'value': '12.5 Mbps' is not a finite number"},
      {"direction.csv", with_line(10, unknown_direction),
       "direction.csv:11: column 'direction': 'upward' is not a direction"},
  };
  // A database holding other runs already.
  const std::string db = t.path() + "/target.db";
  auto seed = run_nightjar(
      {"run", "--db", db, "--variant", "mine", dir_->write("mine/fx.yaml", fake_job("5,6", 9))});
  ASSERT_EQ(seed.exit_code, 0) << seed.err;
  const std::string before = snapshot(db);
  // throughput 5, 6, 5, 6 and latency 1000/throughput: 22 + 2 * (200 + 166.67)
  EXPECT_EQ(before, "1 runs, 8 samples, 4 iterations, 2 metrics, 1 kernels, 755.333333333333");
  for (const auto& b : bad) {
    const std::string file = t.write(b.name, b.text);
    auto r = run_nightjar({"import", "--db", db, file});
    EXPECT_EQ(r.exit_code, 2) << b.name << ": " << r.err;
    EXPECT_NE(r.err.find(t.path() + "/" + b.says), std::string::npos) << r.err;
    EXPECT_EQ(snapshot(db), before) << b.name;
    // Into a database that does not exist yet: it is not even created.
    auto fresh = run_nightjar({"import", "--db", t.path() + "/never.db", file});
    EXPECT_EQ(fresh.exit_code, 2);
    EXPECT_TRUE(read_file(t.path() + "/never.db").empty());
    EXPECT_NE(fresh.err.find(b.says), std::string::npos) << fresh.err;
  }
  // A bad row after thousands of good ones is still caught before anything
  // is written: the same file with the bad row last.
  auto last = t.write("last.csv", with_line(24, lines[24].substr(0, lines[24].rfind(',')) + ",x"));
  auto r = run_nightjar({"import", "--db", db, last});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("last.csv:25: column 'value': 'x'"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(db), before);
}

TEST_F(DataCli, ExportSelectorsAndUsageErrors) {
  auto patched = run_nightjar({"export", "patched", "--db", db_});
  ASSERT_EQ(patched.exit_code, 0) << patched.err;
  EXPECT_EQ(std::count(patched.out.begin(), patched.out.end(), '\n'), 9);  // header + 8
  EXPECT_EQ(patched.out.find(",vanilla,"), std::string::npos);
  auto two = run_nightjar({"export", "run=1", "build=v2", "--db", db_, "--job", "fx"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.err.find("exported 16 samples of 2 run(s)"), std::string::npos) << two.err;

  auto none = run_nightjar({"export", "nosuch", "--db", db_});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("selector 'nosuch' matched no runs; the database holds variants"),
            std::string::npos)
      << none.err;
  EXPECT_EQ(run_nightjar({"export", "run=x", "--db", db_}).exit_code, 2);
  EXPECT_EQ(run_nightjar({"export", "--format", "xml", "--db", db_}).exit_code, 2);
  TempDir t;
  auto missing = run_nightjar({"export", "--db", t.path() + "/none.db"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no results database at"), std::string::npos);

  auto no_file = run_nightjar({"import", "--db", t.path() + "/x.db", t.path() + "/absent.csv"});
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.err.find("absent.csv: cannot read CSV file: No such file"), std::string::npos)
      << no_file.err;
  auto csv_flags = run_nightjar(
      {"import", "--db", t.path() + "/x.db", "--variant", "v", t.write("e.csv", "run\n")});
  EXPECT_EQ(csv_flags.exit_code, 2);
  EXPECT_NE(csv_flags.err.find("--variant only apply to --format gbench"), std::string::npos);
}

#ifdef NIGHTJAR_GBENCH_FIXTURE
std::string fixture_json(const TempDir& t, int repetitions) {
  nightjar::CommandSpec spec;
  const std::string out = t.path() + "/fixture.json";
  spec.argv = {NIGHTJAR_GBENCH_FIXTURE, "--benchmark_repetitions=" + std::to_string(repetitions),
               "--benchmark_out=" + out, "--benchmark_out_format=json"};
  spec.timeout_sec = 120;
  auto r = nightjar::run_command(spec);
  EXPECT_TRUE(r.ok()) << r.describe() << " " << r.tail();
  return out;
}

// Check 3 through the command line.
TEST(GbenchCli, ImportStoresEveryRepetitionOfEveryMetric) {
  TempDir t;
  const std::string json = fixture_json(t, 3);
  const std::string db = t.path() + "/g.db";
  auto r = run_nightjar({"import", "--format", "gbench", json, "--variant", "base", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "imported run 1 (job nightjar_gbench_fixture, workload gbench, variant base): 3 "
            "benchmarks, 11 metrics, 3 repetitions, 33 samples from " +
                json + "\n");
  EXPECT_NE(r.err.find("12 aggregate entries (mean, median, stddev, cv) not imported"),
            std::string::npos);
  EXPECT_EQ(query_one(db, "SELECT count(DISTINCT metric) || ' ' || count(*) FROM sample"), "11 33");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM metric WHERE workload = 'gbench'"), "11");

  // A second report of the same binary under another variant: compare them.
  auto r2 = run_nightjar({"import", "--format", "gbench", fixture_json(t, 3), "--variant", "new",
                          "--build", "b2", "--db", db});
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  auto c = run_nightjar({"compare", "base", "new", "--db", db, "--format", "csv"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 12);  // header + 11 metric rows
  EXPECT_NE(c.out.find("BM_Widgets/iterations:1000.real_time,us,lower,amean"), std::string::npos)
      << c.out;

  // Issue 15 check 6: the same report (the file holds the second one now)
  // again adds nothing and says so; under another variant it is refused
  // naming the run that holds it.
  auto twice = run_nightjar(
      {"import", "--format", "gbench", json, "--variant", "new", "--build", "b2", "--db", db});
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_EQ(twice.out, "imported 0 runs: " + json +
                           " is already stored as run 2 (same report, same labels and samples); "
                           "importing it again would count its samples twice\n");
  auto relabelled =
      run_nightjar({"import", "--format", "gbench", json, "--variant", "other", "--db", db});
  EXPECT_EQ(relabelled.exit_code, 2);
  EXPECT_NE(relabelled.err.find("was imported before as run 2 of"), std::string::npos)
      << relabelled.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run"), "2");

  // Usage errors: no variant, JSON imported as CSV, CSV imported as gbench.
  auto no_variant = run_nightjar({"import", "--format", "gbench", json, "--db", db});
  EXPECT_EQ(no_variant.exit_code, 2);
  EXPECT_NE(no_variant.err.find("--format gbench needs --variant NAME"), std::string::npos);
  auto as_csv = run_nightjar({"import", json, "--db", db});
  EXPECT_EQ(as_csv.exit_code, 2);
  EXPECT_NE(as_csv.err.find("this is JSON, not tidy CSV; import Google Benchmark output with "
                            "--format gbench"),
            std::string::npos);
  auto as_json = run_nightjar({"import", "--format", "gbench", t.write("x.csv", "run,job\n"),
                               "--variant", "v", "--db", db});
  EXPECT_EQ(as_json.exit_code, 2);
  EXPECT_NE(as_json.err.find("x.csv: not valid JSON"), std::string::npos) << as_json.err;
  auto bad_counter = run_nightjar({"import", "--format", "gbench", json, "--variant", "v",
                                   "--counter", "widgets:w:sideways", "--db", db});
  EXPECT_EQ(bad_counter.exit_code, 2);
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run"), "2");
}

// The gbench workload: `nightjar run` of a job naming the fixture binary.
TEST(GbenchCli, WorkloadStoresTheBenchmarksAsMetrics) {
  TempDir t;
  const std::string db = t.path() + "/w.db";
  const std::string job = t.write(
      "micro.yaml", std::string("workload: gbench\nparams:\n  binary: ") + NIGHTJAR_GBENCH_FIXTURE +
                        "\n  repetitions: 2\n  counters: "
                        "\"widgets:widgets:higher\"\n"
                        "iterations: 4\nwarmup: 1\n");
  for (const char* variant : {"a", "b"}) {
    auto r = run_nightjar({"run", "--db", db, "--variant", variant, job});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(query_one(db, "SELECT group_concat(status, ',') FROM run"), "complete,complete");
  // 2 runs x 4 iterations x 11 metrics.
  EXPECT_EQ(query_one(db, "SELECT count(DISTINCT metric) || ' ' || count(*) FROM sample"), "11 88");
  EXPECT_EQ(query_one(db,
                      "SELECT unit || ' ' || direction || ' ' || mean FROM metric WHERE "
                      "name = 'BM_Widgets/iterations:1000.widgets'"),
            "widgets higher hmean");
  EXPECT_EQ(query_one(db,
                      "SELECT value FROM run_context WHERE run_id = 1 AND key = "
                      "'gbench.benchmarks'"),
            "3");
  auto c = run_nightjar({"compare", "a", "b", "--db", db, "--format", "csv"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("BM_Sum/64/iterations:2000.real_time,ns,lower,amean"), std::string::npos)
      << c.out;

  // A binary that is not there: the run is stored as failed, saying why.
  const std::string missing =
      t.write("missing.yaml", "workload: gbench\nparams:\n  binary: /nonexistent/bench\n");
  auto f = run_nightjar({"run", "--db", db, "--variant", "c", missing});
  EXPECT_NE(query_one(db, "SELECT reason FROM run WHERE variant = 'c'")
                .find("gbench: cannot run '/nonexistent/bench'"),
            std::string::npos)
      << f.err;
}
#endif

}  // namespace

// ---- issue 15 check 3: only regular files (or - for stdin) are imported ------

// `nightjar import ARGS` with stdin from `input`, killed after 30 s (a hang fails).
CommandResult import_with_stdin(const std::string& input, const std::vector<std::string>& args) {
  std::vector<std::string> wrapper = {
      "timeout", "-s", "KILL", "30", "sh", "-c", "exec \"$0\" \"$@\" <" + input};
  std::vector<std::string> all = {"import"};
  all.insert(all.end(), args.begin(), args.end());
  return run_nightjar_under(wrapper, all);
}

TEST(ImportInputCli, DevicesFifosAndDirectoriesExitTwoAtOnceNamingTheFile) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  struct Case {
    std::string file, pattern;
  };
  const std::vector<Case> cases = {
      {"/dev/zero", "/dev/zero: not a regular file (a character device)"},
      {fifo, fifo + ": not a regular file (a FIFO)"},
      {dir.path(), dir.path() + ": not a regular file (a directory)"},
  };
  for (const bool gbench : {false, true})
    for (const auto& c : cases) {
      std::vector<std::string> args = {c.file, "--db", db};
      if (gbench) args.insert(args.begin(), {"--format", "gbench", "--variant", "x"});
      auto r = import_with_stdin("/dev/null", args);
      EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.err;
      EXPECT_NE(r.err.find(c.pattern), std::string::npos) << r.err;
    }
  EXPECT_FALSE(std::ifstream(db).good());  // nothing was created
}

TEST(ImportInputCli, StdinIsReadAndAnEndlessStdinIsStopped) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string csv = dir.write(
      "a.csv",
      "run,job,workload,variant,build,kernel,testbox,iteration,metric,unit,direction,value\n"
      "1,j,fake,v,,k,box,1,throughput,ops/s,higher,100\n");
  auto ok = import_with_stdin(csv, {"-", "--db", db});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("from (stdin)"), std::string::npos) << ok.out;
  // /dev/zero as stdin: the CSV line reader stops at its 1 MiB line limit,
  // the JSON reader at the 64 MiB cap; neither reads on.
  auto zero_csv = import_with_stdin("/dev/zero", {"-", "--db", db});
  EXPECT_EQ(zero_csv.exit_code, 2) << zero_csv.err;
  EXPECT_NE(zero_csv.err.find("(stdin)"), std::string::npos) << zero_csv.err;
  auto zero_json =
      import_with_stdin("/dev/zero", {"--format", "gbench", "--variant", "x", "-", "--db", db});
  EXPECT_EQ(zero_json.exit_code, 2) << zero_json.err;
  EXPECT_NE(zero_json.err.find("(stdin): larger than a Google Benchmark report may be "
                               "(67108864 bytes, 64 MiB)"),
            std::string::npos)
      << zero_json.err;
}

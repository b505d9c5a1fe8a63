// Unit under test: `nightjar import --format lkp` and `--format mmtests` end
// to end (harness/cli/cmd_data.cpp, results/io/lkp.h, results/io/mmtests.h,
// harness/job/lkp_job.h), on the real result trees of tests/fixtures/lkp/
// and tests/fixtures/mmtests/ and their malformed variants in
// tests/fixtures/bad-input/ (issue 38):
//  - LKP: names, units and directions kept from LKP's table, unknown metrics
//    stored without a direction and with a warning, testbox and cell from
//    job.yaml, a result root's matrix.json as one run of one iteration per
//    LKP run, the kernel and commit of a job that names them; importing
//    twice adds nothing, with other labels is refused;
//  - LKP --as-nightjar (check 1): a netperf TCP_SENDFILE tree as a
//    tcp_sendfile run whose cell compare matches with a local run (testbox
//    warning), imported twice adding nothing; a test no workload measures
//    and a key the workload's table lacks refused;
//  - mmtests: netperf, pft and futexbench logs as runs per run name (the
//    build) with one sample per mmtests sample, and compare's Hmean of them;
//  - bad input (a truncated stats.json, a ragged matrix.json, a job without
//    testbox, text in a value, a missing iteration, a netperf sample gap, a
//    cut pft line): exit 2 naming file and field, and nothing stored.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string lkp(const std::string& name) {
  return source_path("tests/fixtures/lkp/" + name);
}
std::string mmtests(const std::string& name) {
  return source_path("tests/fixtures/mmtests/" + name);
}
std::string bad(const std::string& name) {
  return source_path("tests/fixtures/bad-input/" + name);
}

// Every stored row an import could change, as text.
std::string snapshot(const std::string& db) {
  return query_one(db,
                   "SELECT (SELECT count(*) FROM run) || ' runs, ' || (SELECT count(*) FROM "
                   "sample) || ' samples, ' || (SELECT count(*) FROM metric) || ' metrics, ' || "
                   "(SELECT count(*) FROM run_context) || ' facts, ' || (SELECT total(value) "
                   "FROM sample)");
}

TEST(LkpImport, NetperfRunKeepsLkpNamesUnitsAndTestbox) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  auto r = run_nightjar({"import", "--db", db, "--format", "lkp", lkp("netperf")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 1 run(s) (id 1), 7 samples from 1 LKP result directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("6 metric(s) not in LKP's direction table stored without a direction"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT unit || ' ' || direction || ' ' || mean FROM metric WHERE "
                      "workload = 'netperf' AND name = 'netperf.Throughput_Mbps'"),
            "Mbps higher hmean");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM metric"), "1");
  EXPECT_EQ(query_one(db, "SELECT value FROM sample WHERE metric = 'netperf.Throughput_Mbps'"),
            "7954.40015625");
  EXPECT_EQ(query_one(db,
                      "SELECT job || ' ' || workload || ' ' || variant || ' ' || cell FROM "
                      "run"),
            "netperf netperf lkp ip=ipv4 nr_threads=200% runtime=300s send_size=10K "
            "test=SCTP_STREAM_MANY");
  EXPECT_EQ(query_one(db, "SELECT hostname || ' ' || cpus FROM testbox"), "lkp-netperf-box 32");
  EXPECT_EQ(query_one(db, "SELECT value FROM run_context WHERE key = 'import.format'"), "lkp");
}

TEST(LkpImport, ImportingTwiceAddsNothingAndOtherLabelsAreRefused) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"import", "--db", db, "--format", "lkp", lkp("netperf")}).exit_code, 0);
  const std::string before = snapshot(db);
  auto again = run_nightjar({"import", "--db", db, "--format", "lkp", lkp("netperf")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("imported 0 run(s), 0 samples from 1 LKP result directory; already "
                           "stored, skipped: "),
            std::string::npos)
      << again.out;
  EXPECT_EQ(snapshot(db), before);
  auto other =
      run_nightjar({"import", "--db", db, "--format", "lkp", "--variant", "other", lkp("netperf")});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("was imported before as run 1 of"), std::string::npos) << other.err;
  EXPECT_EQ(snapshot(db), before);
}

TEST(LkpImport, ResultRootMatrixIsOneRunWithAnIterationPerLkpRun) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  auto r = run_nightjar({"import", "--db", db, "--format", "lkp", lkp("pmbench")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 1 run(s) (id 1), 9 samples"), std::string::npos) << r.out;
  EXPECT_EQ(query_one(db,
                      "SELECT iterations || ' ' || workload || ' ' || job || ' ' || cell "
                      "FROM run"),
            "3 pmbench pmbench cold=1 mapsize=75% nr_threads=100% runtime=30s");
  EXPECT_EQ(query_one(db,
                      "SELECT value FROM sample WHERE iteration = 2 AND metric = "
                      "'mpstat.cpu.all.usr%'"),
            "73.121");
  // One of its run directories is a stats.json run of its own.
  auto one = run_nightjar({"import", "--db", db, "--format", "lkp", lkp("pmbench/2")});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE run_id = 2"), "3");
}

TEST(LkpImport, KernelAndCommitComeFromTheJob) {
  TempDir t;
  std::string job = read_file(lkp("netperf/job.yaml"));
  job +=
      "commit: 0bb80ecc33a8fb5a682236443c1e740d5c917d1d\n"
      "kernel: /pkg/linux/x86_64-rhel-8.3/gcc-12/0bb80ecc33a8fb5a682236443c1e740d5c917d1d/"
      "vmlinuz-6.6.0-rc1\n";
  t.write("tree/job.yaml", job);
  t.write("tree/stats.json", read_file(lkp("netperf/stats.json")));
  const std::string db = t.path() + "/r.db";
  auto r = run_nightjar({"import", "--db", db, "--format", "lkp", t.path() + "/tree"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT run.build || ' ' || kernel.release FROM run JOIN kernel ON "
                      "kernel.id = run.kernel_id"),
            "0bb80ecc33a8fb5a682236443c1e740d5c917d1d 6.6.0-rc1");
}

// The real netperf job turned into the sibling job lkp-tests' netperf job file
// lists beside SCTP_STREAM_MANY (lkp-tests holds no TCP_SENDFILE result, so
// the values stay the fixture's), one instance for one second.
std::string sendfile_tree(TempDir& t) {
  std::string job = read_file(lkp("netperf/job.yaml"));
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"test: SCTP_STREAM_MANY", "test: TCP_SENDFILE"},
        {"runtime: 300s", "runtime: 1s"},
        {"nr_threads: 200%", "nr_threads: 1"}}) {
    const auto at = job.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) job.replace(at, from.size(), to);
  }
  t.write("tree/job.yaml", job);
  t.write("tree/stats.json", read_file(lkp("netperf/stats.json")));
  return t.path() + "/tree";
}

// Issue 38 check 1: an LKP netperf TCP_SENDFILE tree imported --as-nightjar is
// a tcp_sendfile run with nightjar's metric names and cell, so that compare
// matches it with a local run of the same cell (and warns that the testboxes
// differ); importing it twice adds nothing.
TEST(LkpImport, AsNightjarMatchesTheCellOfALocalRun) {
  TempDir t;
  const std::string db = t.path() + "/r.db", tree = sendfile_tree(t);
  auto r = run_nightjar({"import", "--db", db, "--format", "lkp", "--as-nightjar", tree});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 1 run(s) (id 1), 2 samples from 1 LKP result directory"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("5 LKP metric(s) that tcp_sendfile has no metric for left out"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(query_one(db, "SELECT job || ' ' || workload || ' ' || cell FROM run"),
            "tcp_sendfile tcp_sendfile clients=1 cpu_util=on duration=1s family=ipv4 port=0 "
            "recv_size=0 send_size=10K");
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(metric || '=' || value, ' ') FROM (SELECT * FROM "
                      "sample ORDER BY metric)"),
            "throughput=7954.40015625 throughput_total=509081.61");
  EXPECT_EQ(query_one(db, "SELECT value FROM run_context WHERE key = 'lkp.as_nightjar'"),
            "netperf test=TCP_SENDFILE");
  const std::string before = snapshot(db);
  auto again = run_nightjar({"import", "--db", db, "--format", "lkp", "--as-nightjar", tree});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("imported 0 run(s), 0 samples"), std::string::npos) << again.out;
  EXPECT_EQ(snapshot(db), before);

  const std::string job =
      t.write("tcp_sendfile.yaml",
              "workload: tcp_sendfile\nparams:\n  clients: 1\n  duration: "
              "1s\n  family: ipv4\n  send_size: 10K\niterations: 2\nwarmup: 0\n");
  auto run = run_nightjar({"run", job, "--db", db, "--variant", "local"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto c = run_nightjar({"compare", "--db", db, "lkp", "local"});
  EXPECT_NE(c.exit_code, 2) << c.err;
  EXPECT_EQ(c.err.find("no cell"), std::string::npos) << c.err;
  EXPECT_NE(c.out.find("throughput"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("7954.40"), std::string::npos) << c.out;
  EXPECT_NE((c.out + c.err).find("sides ran on different testboxes: lkp (lkp-netperf-box)"),
            std::string::npos)
      << c.out << c.err;
}

// Without the option the names stay LKP's; with it, a test no nightjar
// workload measures (the real fixture's SCTP_STREAM_MANY) and an LKP key the
// workload's table does not name are refused, naming file and key, and
// nothing is stored.
TEST(LkpImport, AsNightjarRefusesWhatNoWorkloadMeasures) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"import", "--db", db, "--format", "lkp", lkp("pmbench")}).exit_code, 0);
  const std::string before = snapshot(db);
  auto r = run_nightjar({"import", "--db", db, "--format", "lkp", "--as-nightjar", lkp("netperf")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("netperf/job.yaml: testcase 'netperf' with test 'SCTP_STREAM_MANY': no "
                       "nightjar workload measures it"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("netperf test=TCP_SENDFILE as tcp_sendfile"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("without --as-nightjar"), std::string::npos) << r.err;
  std::string job = read_file(sendfile_tree(t) + "/job.yaml");
  t.write("tree/job.yaml", job.replace(job.find("send_size: 10K"), 14, "nr_ssd: 2"));
  auto key =
      run_nightjar({"import", "--db", db, "--format", "lkp", "--as-nightjar", t.path() + "/tree"});
  EXPECT_EQ(key.exit_code, 2);
  EXPECT_NE(key.err.find("tree/job.yaml: nr_ssd: '2' is not one of the LKP keys tcp_sendfile "
                         "takes"),
            std::string::npos)
      << key.err;
  EXPECT_EQ(snapshot(db), before);
  auto csv = run_nightjar({"import", "--db", db, "--as-nightjar", t.path() + "/tree/job.yaml"});
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_NE(csv.err.find("--as-nightjar applies to --format lkp only"), std::string::npos)
      << csv.err;
}

// Issue 38 check 4 (LKP): each malformed tree exits 2 naming its file and
// field, and a good tree given with it is not stored either.
TEST(LkpImport, BadTreesExit2NamingFileAndFieldAndStoreNothing) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"import", "--db", db, "--format", "lkp", lkp("pmbench")}).exit_code, 0);
  const std::string before = snapshot(db);
  struct Case {
    std::string dir, message;
  };
  for (const Case& c : std::vector<Case>{
           {"lkp/truncated", "truncated/stats.json: not valid JSON (byte "},
           {"lkp/ragged",
            "ragged/matrix.json: key 'mpstat.cpu.all.sys%' has 2 values but "
            "'perf-stat.i.cpu-cycles' (the first key) has 3"},
           {"lkp/no-testbox", "no-testbox/job.yaml: testbox: missing"},
           {"lkp/text-value",
            "text-value/stats.json: key 'netperf.Throughput_Mbps' holds string where a number "
            "belongs"},
       }) {
    auto r = run_nightjar({"import", "--db", db, "--format", "lkp", lkp("netperf"), bad(c.dir)});
    EXPECT_EQ(r.exit_code, 2) << c.dir << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.dir << ": " << r.err;
    EXPECT_EQ(snapshot(db), before) << c.dir;
  }
}

TEST(MmtestsImport, NetperfRunNamesAreBuildsAndCompareGivesTheirHmean) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  auto r = run_nightjar({"import", "--db", db, "--format", "mmtests", mmtests("netperf")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 2 run(s) (ids 1-2), 6 samples of 2 mmtests run name(s)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(build || ':' || workload || ':' || iterations, ' ') "
                      "FROM (SELECT * FROM run ORDER BY id)"),
            "no-svq:netperf-tcp:3 svq:netperf-tcp:3");
  EXPECT_EQ(query_one(db, "SELECT name || ' ' || unit || ' ' || direction FROM metric"),
            "tcpstream-send-16384 Mbps higher");
  auto c = run_nightjar({"compare", "--db", db, "build=no-svq", "build=svq"});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  // One run per build and no history: mmtests' -14% is not far enough outside
  // the conservative prior's run-to-run noise to be called (docs/statistics.md
  // "Where the between-run variation comes from").
  EXPECT_NE(c.out.find("0 regressions, 0 improvements, 0 unchanged, 1 inconclusive"),
            std::string::npos)
      << c.out;
  EXPECT_NE(c.out.find("from the conservative prior"), std::string::npos) << c.out;
  // Hmean of 9061.03, 8962.94, 9005.92 and of 7689.72, 7752.07, 7750.30.
  EXPECT_NE(c.out.find("9009.78"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("7730.59"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("-14.20%"), std::string::npos) << c.out;

  const std::string before = snapshot(db);
  auto again = run_nightjar({"import", "--db", db, "--format", "mmtests", mmtests("netperf")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("; 2 run(s) already stored, skipped"), std::string::npos) << again.out;
  EXPECT_EQ(snapshot(db), before);
}

TEST(MmtestsImport, PftAndFutexbenchOperationsAreMetrics) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"import", "--db", db, "--format", "mmtests", mmtests("pft")}).exit_code,
            0);
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(name, ' ') FROM (SELECT name FROM metric WHERE "
                      "workload = 'pft' ORDER BY name)"),
            "faults/cpu-1 faults/cpu-2 faults/cpu-4 faults/cpu-8 faults/sec-1 faults/sec-2 "
            "faults/sec-4 faults/sec-8");
  EXPECT_EQ(query_one(db,
                      "SELECT value FROM sample JOIN run ON run.id = sample.run_id WHERE "
                      "run.build = 'patched' AND metric = 'faults/sec-8'"),
            "297380.041");
  auto r = run_nightjar({"import", "--db", db, "--format", "mmtests", mmtests("futexbench")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) || ' ' || min(value) FROM sample WHERE metric = "
                      "'hash-shared-8'"),
            "8 489168.0");
  EXPECT_EQ(query_one(db,
                      "SELECT unit || ' ' || direction || ' ' || mean FROM metric WHERE name "
                      "= 'wake-shared-8'"),
            "ms lower amean");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE metric = 'requeue-shared-8'"), "10");
}

// Issue 38 check 4 (mmtests): a missing iteration, a gap in the netperf
// samples and a cut pft line exit 2 naming the file, and store nothing.
TEST(MmtestsImport, BadDirectoriesExit2NamingTheFileAndStoreNothing) {
  TempDir t;
  const std::string db = t.path() + "/r.db";
  ASSERT_EQ(run_nightjar({"import", "--db", db, "--format", "mmtests", mmtests("pft")}).exit_code,
            0);
  const std::string before = snapshot(db);
  struct Case {
    std::string dir, message;
  };
  for (const Case& c : std::vector<Case>{
           {"mmtests/missing-iter", "missing-iter/work/log/patched/iter-1: missing: "},
           {"mmtests/netperf-gap",
            "logs/TCP_STREAM-16384.2: missing: the samples of TCP_STREAM size 16384 are"},
           {"mmtests/pft-cut", "logs/pft-2.log:2: not a pft result line"},
       }) {
    auto r = run_nightjar({"import", "--db", db, "--format", "mmtests", bad(c.dir)});
    EXPECT_EQ(r.exit_code, 2) << c.dir << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.dir << ": " << r.err;
    EXPECT_EQ(snapshot(db), before) << c.dir;
  }
}

TEST(MmtestsImport, FlagsThatDoNotApplyAreRefused) {
  TempDir t;
  auto r = run_nightjar({"import", "--db", t.path() + "/r.db", "--format", "mmtests", "--build",
                         "x", mmtests("pft")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format mmtests takes --variant only"), std::string::npos) << r.err;
  auto two = run_nightjar({"import", "--db", t.path() + "/r.db", "a.csv", "b.csv"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("--format csv imports one file at a time (2 given)"), std::string::npos)
      << two.err;
  EXPECT_FALSE(std::filesystem::exists(t.path() + "/r.db"));
}

}  // namespace

// Unit under test: invalid samples end to end (issue 12, docs/compare.md
// "Invalid samples"), on databases written by the real binary with the fake
// workload: a scripted rate of 0 is stored invalid by the runner, `invalid_at`
// iterations invalid as a workload decides it; `show --run` lists them with
// their reasons; compare, check, report, trend, plot data and export leave
// them out and say so (`n=4 (1 invalid)`), `--include-invalid` pools them
// and says so; check exits 3 when a cell has too few valid samples; a tidy
// CSV round-trips them through its `invalid` column and refuses a 0 rate
// without one, naming the line.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string job(const std::string& script, const std::string& invalid_at = "") {
  std::string text = "workload: fake\nparams:\n  script: \"" + script + "\"\n";
  if (!invalid_at.empty()) text += "  invalid_at: \"" + invalid_at + "\"\n";
  return text + "iterations: 5\nwarmup: 0\n";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs job `text` (as fx.yaml in its own directory) as `variant` into `db`.
void run_job(const TempDir& dir, const std::string& db, const std::string& variant,
             const std::string& text) {
  const std::string path = dir.write(variant + "/fx.yaml", text);
  CommandResult r = run_nightjar({"run", "--db", db, "--variant", variant, path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

class InvalidCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/r.db";
    run_job(dir_, db_, "a", job("9810,9790,9805,9795,9800"));
    run_job(dir_, db_, "b", job("9810,9790,9805,0,9800"));
  }
  CommandResult nightjar(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_);
    return run_nightjar(args);
  }

  TempDir dir_;
  std::string db_;
};

// Acceptance check 3 of issue 12: the 0 is an invalid sample; show and
// compare give Hmean 9801.24 with n=4 (1 invalid).
TEST_F(InvalidCli, AZeroRateIsAnInvalidSampleThatShowAndCompareLeaveOut) {
  EXPECT_EQ(query_one(db_, "SELECT invalid FROM sample WHERE run_id=2 AND iteration=4"),
            "throughput = 0 ops/s: a rate (Hmean) must be positive");
  EXPECT_EQ(query_one(db_, "SELECT status || ' ' || reason FROM run WHERE id=2"), "complete ");

  CommandResult show = nightjar({"show", "--run", "2"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_TRUE(contains(show.out, "4 (1 invalid)")) << show.out;
  EXPECT_TRUE(contains(show.out, "9801.24")) << show.out;
  EXPECT_TRUE(contains(show.out, "invalid samples (left out of every statistic")) << show.out;
  EXPECT_TRUE(contains(show.out,
                       "  iteration 4: throughput=0: throughput = 0 ops/s: a rate "
                       "(Hmean) must be positive\n"))
      << show.out;
  CommandResult list = nightjar({"show"});
  EXPECT_TRUE(contains(list.out, "4/5 (1 invalid)")) << list.out;

  CommandResult cmp = nightjar({"compare", "a", "b", "--ignore-param", "script"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_TRUE(contains(cmp.out, "9801.24")) << cmp.out;
  EXPECT_TRUE(contains(cmp.out,
                       "note: b: throughput n=4 (1 invalid): run 2 iteration 4: "
                       "throughput = 0 ops/s: a rate (Hmean) must be positive"))
      << cmp.out;
  EXPECT_FALSE(contains(cmp.out, "undefined")) << cmp.out;
  CommandResult md =
      nightjar({"compare", "a", "b", "--ignore-param", "script", "--format", "markdown"});
  EXPECT_TRUE(contains(md.out, "9801.24 ±0.09% (4, 1 invalid)")) << md.out;

  // --include-invalid pools the 0 (Hmean undefined) and says so.
  CommandResult incl =
      nightjar({"compare", "a", "b", "--ignore-param", "script", "--include-invalid"});
  ASSERT_EQ(incl.exit_code, 0) << incl.err;
  EXPECT_TRUE(contains(incl.out, "note: --include-invalid: invalid samples are pooled"))
      << incl.out;
  EXPECT_TRUE(contains(incl.out, "n=5 (1 invalid included)")) << incl.out;
  EXPECT_TRUE(contains(incl.out, "undefined")) << incl.out;

  CommandResult report = nightjar({"report", "a", "b", "--ignore-param", "script"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  // The legend may wrap: compare with its words joined by single blanks.
  std::string words;
  for (char ch : report.out) {
    const bool blank = ch == ' ' || ch == '\n';
    if (!blank)
      words += ch;
    else if (!words.empty() && words.back() != ' ')
      words += ' ';
  }
  EXPECT_TRUE(contains(words, "1 invalid left out")) << report.out;

  CommandResult trend =
      nightjar({"trend", "--job", "fx", "--metric", "throughput", "--variant", "b", "--history"});
  ASSERT_EQ(trend.exit_code, 0) << trend.err;
  EXPECT_TRUE(contains(trend.out, "4 (1 invalid)")) << trend.out;
}

// Workload-level invalid iterations (fake's invalid_at): all their values are
// invalid; a cell with fewer than 3 valid samples is inconclusive: check
// exits 3, never 1, though the valid ones are far worse.
TEST_F(InvalidCli, CheckIsInconclusiveWhenTooFewSamplesAreValid) {
  run_job(dir_, db_, "c", job("5000,5000,5000,5000,5000", "1,2,3"));
  EXPECT_EQ(query_one(db_, "SELECT count(*) FROM iteration WHERE run_id=3 AND status='invalid'"),
            "3");
  EXPECT_EQ(query_one(db_, "SELECT reason FROM run WHERE id=3"), "3 of 5 iterations invalid");
  EXPECT_EQ(query_one(db_,
                      "SELECT count(*) FROM sample WHERE run_id=3 AND invalid="
                      "'scripted invalid sample at iteration 2'"),
            "2");  // throughput and latency
  CommandResult check =
      nightjar({"check", "a", "c", "--ignore-param", "script", "--ignore-param", "invalid_at"});
  EXPECT_EQ(check.exit_code, 3) << check.out << check.err;
  EXPECT_TRUE(contains(check.out, "n=2 (3 invalid)")) << check.out;
  EXPECT_TRUE(contains(check.out,
                       "fewer than 3 samples per side (base 5, new 2); invalid "
                       "samples left out: base 0, new 3"))
      << check.out;
  // Inspected with them: 5 samples of a 50% drop, a regression.
  CommandResult incl = nightjar({"check", "a", "c", "--ignore-param", "script", "--ignore-param",
                                 "invalid_at", "--include-invalid"});
  EXPECT_EQ(incl.exit_code, 1) << incl.out << incl.err;
}

// The tidy CSV: exported without the invalid samples (and says so), or with
// them and their reason (--include-invalid); an import keeps them invalid; a
// file without an `invalid` column that holds a 0 rate is refused, naming
// the line.
TEST_F(InvalidCli, CsvExportAndImportKeepInvalidSamplesInvalid) {
  CommandResult valid = nightjar({"export", "b"});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_FALSE(contains(valid.out, ",0\n"));
  EXPECT_FALSE(contains(valid.out.substr(0, valid.out.find('\n')), "invalid"));
  EXPECT_TRUE(contains(valid.err, "1 invalid sample(s) left out; --include-invalid")) << valid.err;
  // A run whose samples are all invalid writes no row; they are counted.
  run_job(dir_, db_, "c", job("5000,5000,5000,5000,5000", "1,2,3,4,5"));
  CommandResult none = nightjar({"export", "c"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(contains(none.err, "exported 0 samples of 0 run(s)")) << none.err;
  EXPECT_TRUE(contains(none.err, "10 invalid sample(s) left out")) << none.err;
  EXPECT_TRUE(contains(none.err,
                       "1 matching run(s) have no samples (skipped, failed, only "
                       "invalid ones or still running)"))
      << none.err;

  CommandResult all = nightjar({"export", "b", "--include-invalid"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::string header = all.out.substr(0, all.out.find('\n'));
  EXPECT_TRUE(header.ends_with(",value,invalid")) << header;
  EXPECT_TRUE(contains(all.out,
                       ",throughput,ops/s,higher,hmean,0,throughput = 0 ops/s: a rate "
                       "(Hmean) must be positive\n"))
      << all.out;
  const std::string file = dir_.write("b.csv", all.out);
  const std::string other = dir_.path() + "/other.db";
  CommandResult imp = run_nightjar({"import", file, "--db", other});
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_EQ(query_one(other, "SELECT count(*) FROM sample WHERE invalid IS NOT NULL"), "1");
  // The round trip gives the same bytes.
  CommandResult again = run_nightjar({"export", "--include-invalid", "--db", other});
  EXPECT_EQ(again.out, all.out);

  // The same values without the invalid column: refused, naming the line.
  const std::string bare = valid.out.substr(0, valid.out.find('\n') + 1);
  std::string rows;
  for (std::size_t at = 0; at < all.out.size();) {
    const std::size_t end = all.out.find('\n', at);
    const std::string line = all.out.substr(at, end - at);
    at = end + 1;
    if (line.starts_with("run,")) continue;
    rows += line.substr(0, line.rfind(',')) + "\n";  // without the invalid field
  }
  const std::string refused = dir_.write("bare.csv", bare + rows);
  CommandResult no = run_nightjar({"import", refused, "--db", dir_.path() + "/third.db"});
  EXPECT_EQ(no.exit_code, 2) << no.err;
  EXPECT_TRUE(contains(no.err,
                       "bare.csv:8: throughput = 0 ops/s: a rate (Hmean) must be "
                       "positive: not a measurement"))
      << no.err;
}

// ---------------------------------------------------------------------------
// tcp_sendfile (acceptance checks 1 and 2 of issue 12): no root needed
// without a cgroup: section; loopback IPv4.
// ---------------------------------------------------------------------------

const char* kTwoClients =
    "workload: tcp_sendfile\nparams:\n  clients: 2\n  duration: 2s\n  family: ipv4\n"
    "iterations: 1\nwarmup: 0\n";

std::string comm_of(pid_t pid) {
  std::string comm = read_file("/proc/" + std::to_string(pid) + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return comm;
}

// Check 2: one sender SIGSTOPped for 3 s in a 2 s test: its window is ~5 s,
// so the sample is invalid with the two windows in the reason.
TEST(InvalidTcpCli, AStoppedSenderMakesTheSampleInvalidNamingBothWindows) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string job = dir.write("tcp.yaml", kTwoClients);
  const pid_t nightjar = spawn_nightjar({"run", job, "--db", db}, dir.path(), "stop");
  ASSERT_GT(nightjar, 0);
  // The senders are nightjar's children named tcp_sendfile-tx; they connect
  // and start within milliseconds, then send for 2 s.
  std::vector<pid_t> senders;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (senders.size() < 2 && std::chrono::steady_clock::now() < deadline) {
    senders.clear();
    for (pid_t p : children_of(nightjar))
      if (comm_of(p) == "tcp_sendfile-tx") senders.push_back(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(senders.size(), 2u) << read_file(dir.path() + "/stop.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(senders[1], SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ::kill(senders[1], SIGCONT);
  const int code = wait_exit_code(nightjar);
  const std::string err = read_file(dir.path() + "/stop.err");
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(query_one(db, "SELECT status FROM iteration"), "invalid") << err;
  const std::string reason = query_one(db, "SELECT reason FROM iteration");
  EXPECT_TRUE(contains(reason,
                       "where the test window is 2.000 s (tolerance 0.250 s): the "
                       "clients did not run concurrently"))
      << reason;
  // Stopped 0.5 s in for 3 s: its window is about 3.5 s (more on a busy box).
  const std::string said = "'s window is ";
  const std::size_t at = reason.find(said);
  ASSERT_NE(at, std::string::npos) << reason;
  const double window = std::stod(reason.substr(at + said.size()));
  EXPECT_GE(window, 3.0) << reason;
  EXPECT_LT(window, 10.0) << reason;
  EXPECT_TRUE(contains(err, "iteration 1 invalid: ")) << err;
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE invalid IS NULL"), "0");
}

// Check 1: every sendfile() returns 0 (strace's fault injection): both
// clients moved 0 bytes; the sample is invalid naming them; no service demand
// is stored; compare shows n=0 (1 invalid) and check exits 3.
TEST(InvalidTcpCli, SendfileReturningZeroMakesTheSampleInvalidAndCheckInconclusive) {
  if (::access("/usr/bin/strace", X_OK) != 0) GTEST_SKIP() << "strace is not installed";
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string job = dir.write("tcp.yaml", kTwoClients);
  CommandResult base = run_nightjar({"run", job, "--db", db, "--variant", "base"});
  ASSERT_EQ(base.exit_code, 0) << base.err;
  CommandResult zero = run_nightjar_under({"strace", "-f", "-qq", "-o", "/dev/null", "-e",
                                           "trace=sendfile", "-e", "inject=sendfile:retval=0"},
                                          {"run", job, "--db", db, "--variant", "zero"});
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_EQ(query_one(db, "SELECT status FROM iteration WHERE run_id=2"), "invalid");
  EXPECT_TRUE(contains(query_one(db, "SELECT reason FROM iteration WHERE run_id=2"),
                       "clients 0, 1 moved 0 bytes"));
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE run_id=2 AND invalid IS NULL"), "0");
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM sample WHERE run_id=2 AND "
                      "metric='service_demand'"),
            "0");
  EXPECT_EQ(query_one(db,
                      "SELECT count(*) FROM sample WHERE run_id=1 AND "
                      "metric='service_demand' AND invalid IS NULL"),
            "1");
  CommandResult cmp = run_nightjar({"compare", "base", "zero", "--db", db});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_TRUE(contains(cmp.out,
                       "note: zero: throughput n=0 (1 invalid): run 2 iteration 1: "
                       "clients 0, 1 moved 0 bytes"))
      << cmp.out;
  CommandResult check = run_nightjar({"check", "base", "zero", "--db", db});
  EXPECT_EQ(check.exit_code, 3) << check.out << check.err;
}

}  // namespace

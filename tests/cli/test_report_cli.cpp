// Unit under test: `nightjar report` end to end on a database written by the
// real binary (`nightjar run` with the fake workload's scripted samples):
// the two-build block, --by with --group over a cell parameter and over a run
// attribute (build: one comparison per build), the mmtests layout, and usage
// errors (exit 2) that name the flag and list what exists.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

std::string job(const std::string& script, int seed) {
  return "workload: fake\nparams:\n  script: \"" + script + "\"\n  seed: " + std::to_string(seed) +
         "\niterations: 5\nwarmup: 0\n";
}

// Variants a and b, builds rt and nort, cells seed=1,2; b is 10% faster on
// build nort, seed 2, and the same elsewhere.
class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->path() + "/r.db";
    const std::string same = "100,102,98,101,99";
    const std::string faster = "110,112.2,107.8,111.1,108.9";
    int n = 0;
    for (const char* build : {"rt", "nort"}) {
      for (const char* variant : {"a", "b"}) {
        std::vector<std::string> args = {"run",   "--db",    db_,  "--variant",
                                         variant, "--build", build};
        for (int seed : {1, 2}) {
          const bool up = std::string(variant) == "b" && std::string(build) == "nort" && seed == 2;
          args.push_back(
              dir_->write("j" + std::to_string(n++) + "/fx.yaml", job(up ? faster : same, seed)));
        }
        auto r = run_nightjar(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
      }
    }
    // The scripted samples are the same in every run: a testbox calibrated
    // as such, so the tables show the posts' verdicts (issue 35).
    calibrate_quietly(db_);
  }
  static void TearDownTestSuite() { delete dir_; }
  CommandResult report(std::vector<std::string> extra) {
    std::vector<std::string> args = {"report", "--db", db_, "--ignore-param", "script"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_nightjar(args);
  }
  static TempDir* dir_;
  static std::string db_;
};
TempDir* ReportCli::dir_ = nullptr;
std::string ReportCli::db_;

TEST_F(ReportCli, BlockPerCellWithLabels) {
  auto r = report({"build=nort,variant=a", "build=nort,variant=b", "--label", "Without", "--label",
                   "With patch", "--metric", "throughput"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Results (Hmean throughput of fake, seed=2):\n"
                       "Without     100.0 ops/s"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("With patch  110.0 ops/s (10.0% improvement)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("Without     100.0 ops/s\nWith patch  100.0 ops/s (no change, inconclusive)"),
      std::string::npos)
      << r.out;
}

TEST_F(ReportCli, MatrixGroupedByBuild) {
  auto r = report({"a", "b", "--by", "seed", "--group", "build", "--precision", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One table per build that both sides ran, in name order.
  const auto nort = r.out.find("nort build:\n-----------\nseed | a           | b\n");
  const auto rt = r.out.find("rt build:\n---------\n");
  ASSERT_NE(nort, std::string::npos) << r.out;
  ASSERT_NE(rt, std::string::npos) << r.out;
  EXPECT_LT(nort, rt);
  // The heading is printed once, above both groups.
  EXPECT_EQ(r.out.find("Results (Hmean throughput of fake):\n\nnort build:"), 0u) << r.out;
  EXPECT_EQ(r.out.find("Results", 1), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  2  | 99.98 ops/s | 109.98 ops/s (+10.00%)*\n", nort), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("* significant"), std::string::npos) << r.out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), 72u) << line;
}

TEST_F(ReportCli, MmtestsLayoutPerGroup) {
  auto r = report({"a", "b", "--group", "build", "--format", "mmtests"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nort build:\n\n0 regressions, 2 improvements, 0 unchanged, 2 inconclusive"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Hmean     throughput-2"), std::string::npos) << r.out;
}

// --group-label VALUE=TITLE: the user's titles for the tables of a run
// attribute (one comparison per build) and of a cell parameter; bad items
// are usage errors naming the flag (issue 16).
TEST_F(ReportCli, GroupTitlesAreTheUsersWords) {
  auto r = report({"a", "b", "--by", "seed", "--group", "build", "--group-label",
                   "nort=Without PREEMPT_RT", "--group-label", "rt=PREEMPT_RT kernel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nWithout PREEMPT_RT:\n-------------------\nseed | a "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nPREEMPT_RT kernel:\n------------------\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" build:"), std::string::npos) << r.out;
  auto m = report({"a", "b", "--group", "build", "--format", "mmtests", "--group-label",
                   "rt=PREEMPT_RT kernel"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("nort build:\n\n"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("PREEMPT_RT kernel:\n\n"), std::string::npos) << m.out;
  auto p = report({"build=nort,variant=a", "build=nort,variant=b", "--by", "cv", "--group", "seed",
                   "--group-label", "2=the second seed"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("\nthe second seed:\n"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("\n1 seed:\n"), std::string::npos) << p.out;

  const struct {
    std::vector<std::string> args;
    const char* says;
  } bad[] = {
      {{"a", "b", "--by", "seed", "--group-label", "rt=RT"}, "give --group AXIS with it"},
      {{"a", "b", "--by", "seed", "--group", "build", "--group-label", "rt"}, "write VALUE=TITLE"},
      {{"a", "b", "--by", "seed", "--group", "build", "--group-label", "=RT"}, "write VALUE=TITLE"},
      {{"a", "b", "--by", "seed", "--group", "build", "--group-label", "rt=x", "--group-label",
        "rt=y"},
       "the value 'rt' is given twice"},
      {{"a", "b", "--by", "seed", "--group", "build", "--group-label", "v9=RT"},
       "--group-label v9=RT: 'v9' is no build that holds runs of every side; they are nort, rt"},
      {{"a", "b", "--by", "cv", "--group", "seed", "--group-label", "7=x"},
       "'7' is not a value of --group seed; its values: 1, 2"},
      {{"a", "b", "--by", "seed", "--group", "build", "--group-label", "rt=a\tb"},
       "--group-label title"},
  };
  for (const auto& c : bad) {
    auto e = report(c.args);
    EXPECT_EQ(e.exit_code, 2) << c.says << ": " << e.out;
    EXPECT_NE(e.err.find(c.says), std::string::npos) << e.err;
  }
}

TEST_F(ReportCli, UsageErrorsNameTheFlag) {
  auto r = report({"a", "b", "--by", "clients"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--by clients: not a parameter of the compared cells; parameters: cv, "
                       "fail_at, seed, sleep, value"),
            std::string::npos)
      << r.err;
  r = report({"a", "b", "--metric", "faults"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("metrics: latency, throughput"), std::string::npos) << r.err;
  r = report({"a", "b", "--format", "html"});
  EXPECT_EQ(r.exit_code, 2);
  r = report({"a"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give a BASE and at least one NEW selector"), std::string::npos) << r.err;
  r = report({"build=rt", "b", "--group", "build"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already fixes build"), std::string::npos) << r.err;
  r = report({"a", "b", "--label", "x", "--label", "y", "--label", "z"});
  EXPECT_EQ(r.exit_code, 2);
  auto none = run_nightjar({"report", "a", "b", "--db", dir_->path() + "/missing.db"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no results database at"), std::string::npos) << none.err;
}

}  // namespace

// Rows tested on run means (>= 2 runs per side) say so in the legend: the n
// of the test is of runs, the samples pooled are given beside it (a new user
// read "n=15" where compare had tested 3 run means per side).
TEST(ReportCliRuns, TheLegendCountsRunsWhenRunMeansWereTested) {
  TempDir dir;
  const std::string db = dir.path() + "/r.db";
  const std::string file = dir.write("fx.yaml", job("100,102,98,101,99", 1));
  for (const char* variant : {"a", "b"}) {
    auto r = run_nightjar({"run", file, "--db", db, "--variant", variant, "--runs", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto r = run_nightjar({"report", "--db", db, "a", "b"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string flat = r.out;
  for (char& c : flat)
    if (c == '\n') c = ' ';
  EXPECT_NE(flat.find("3 runs (n=15)"), std::string::npos) << r.out;
  // One run per side: the n is of samples, as before.
  TempDir one;
  const std::string db1 = one.path() + "/r.db";
  const std::string file1 = one.write("fx.yaml", job("100,102,98,101,99", 1));
  for (const char* variant : {"a", "b"})
    ASSERT_EQ(run_nightjar({"run", file1, "--db", db1, "--variant", variant}).exit_code, 0);
  auto single = run_nightjar({"report", "--db", db1, "a", "b"});
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(single.out.find(" runs (n="), std::string::npos) << single.out;
  EXPECT_NE(single.out.find("n=5"), std::string::npos) << single.out;
}

// Unit under test: `nightjar audit` end to end (docs/statistics.md "Auditing
// a testbox"): A/A pairs of the fake workload run by the real binary, the
// rates printed and stored per cell, metric, testbox and mode, and shown by
// compare (a note) and on the published cell page; bad flags exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.h"

using namespace nightjar::test;

namespace {

constexpr const char* kJob =
    "workload: fake\nparams:\n  value: 1000\n  cv: 0.02\n  seed: 7\niterations: 4\nwarmup: 0\n";

class AuditCli : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/audit.db";
    job_ = dir_.write("auditjob.yaml", kJob);
  }
  TempDir dir_;
  std::string db_, job_;
};

TEST_F(AuditCli, PairsAreComparedCountedStoredAndShownByCompareAndTheSite) {
  auto r =
      run_nightjar({"audit", job_, "--pairs", "3", "--shift", "5", "--shift", "50", "--db", db_});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // Every run of a seeded fake cell has the same samples: an A/A pair can
  // never be flagged, and 50% worse is far outside the iterations' 2% noise.
  EXPECT_NE(
      r.out.find("auditjob [cv=0.02 fail_at=0 seed=7 sleep=0s value=1000] throughput: one run "
                 "per side, 3 A/A pairs: false alarms 0.0% [0.0, 56.1] (0 of 3)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; power at 5%: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("; power at 50%: 100.0% [43.9, 100.0] (3 of 3)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("audit: 3 A/A pairs of 1 run(s) per side"), std::string::npos) << r.err;
  EXPECT_EQ(query_one(db_, "SELECT count(*) FROM run WHERE build LIKE 'audit-%'"), "6");
  // One row per metric and shift (0 = the A/A), keyed by the testbox.
  EXPECT_EQ(query_one(db_, "SELECT count(*) FROM audit WHERE mode='one run per side'"),
            query_one(db_, "SELECT 3 * count(DISTINCT metric) FROM sample"));
  EXPECT_EQ(query_one(db_,
                      "SELECT pairs || '/' || flagged FROM audit WHERE metric='throughput' "
                      "AND shift_pct=50"),
            "3/3");

  auto c = run_nightjar({"compare", "run=1", "run=2", "--db", db_});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("note: audit of this testbox ("), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("throughput: one run per side, 3 A/A pairs: false alarms 0.0%"),
            std::string::npos)
      << c.out;

  // A second mode is kept beside the first.
  auto runs = run_nightjar({"audit", job_, "--pairs", "2", "--runs", "2", "--db", db_});
  ASSERT_EQ(runs.exit_code, 0) << runs.err << runs.out;
  EXPECT_NE(runs.out.find("throughput: 2 runs per side, 2 A/A pairs: false alarms 0.0%"),
            std::string::npos)
      << runs.out;
  EXPECT_EQ(query_one(db_, "SELECT count(DISTINCT mode) FROM audit"), "2");

  const std::string site = dir_.path() + "/site";
  auto p = run_nightjar({"publish", "--db", db_, "-o", site});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::string pages;
  for (const auto& e : std::filesystem::directory_iterator(site + "/cells"))
    pages += read_file(e.path().string());
  EXPECT_NE(pages.find("<h2>Error rates on this testbox</h2>"), std::string::npos) << pages;
  EXPECT_NE(pages.find(": 2 runs per side, 2 A/A pairs: false alarms 0.0%"), std::string::npos)
      << pages;
  EXPECT_NE(pages.find(": one run per side, 3 A/A pairs: false alarms 0.0%"), std::string::npos)
      << pages;
}

TEST_F(AuditCli, BadFlagsAreUsageErrorsAndStoreNothing) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--pairs", "1"}, {"--shift", "0"}, {"--shift", "95"}, {"--runs", "0"}}) {
    std::vector<std::string> argv{"audit", job_, "--db", db_};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_nightjar(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(db_)) << args[0];
  }
  const std::string two = dir_.write(
      "two.yaml",
      "workload: fake\nparams:\n  value: 10\nvariants:\n  a: {}\n  b: {}\niterations: 2\n");
  auto r = run_nightjar({"audit", two, "--db", db_});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("selects 2 variants; an audit measures one variant's cells against "
                       "themselves: pass --variant NAME"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(db_));
}

}  // namespace

// Unit under test: `nightjar compare` on real measurements (issue 5, check 4):
// an A/A comparison on this machine. jobs/pft-quick.yaml (4 cells, 512M) is
// run as variant `a` and as variant `b` of the same kernel, and
// `nightjar compare a b` must star nothing: no row may be a significant
// regression or improvement.
//
// The two variants are interleaved, a b a b a b, with 3 measured iterations
// per run (plus the job's warm-up), and each side pools its 3 runs (9 samples
// per cell). Running all of `a` and then all of `b` would test the machine's
// drift between two periods rather than a difference between a and b: on a
// shared machine the background load changes from minute to minute, and
// interleaving spreads it over both sides (docs/reference.md
// "Where variance comes from": execution order). About a minute on 2 CPUs.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "test_support.h"

using namespace nightjar::test;

namespace {

TEST(AaSlow, PftQuickRunTwiceAsAAndBHasNoStar) {
  TempDir dir;
  const std::string db = dir.path() + "/aa.db";
  const std::string job = source_path("jobs/pft-quick.yaml");
  for (int round = 0; round < 3; ++round) {
    for (const char* variant : {"a", "b"}) {
      auto r = run_nightjar({"run", job, "--db", db, "--variant", variant, "--iterations", "3"});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      if (query_one(db, "SELECT count(*) FROM run WHERE status='skipped'") != "0")
        GTEST_SKIP() << "pft cannot run here: "
                     << query_one(db, "SELECT reason FROM run WHERE status='skipped'");
    }
  }
  auto r = run_nightjar({"compare", "a", "b", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::cout << r.out;
  const std::string verdict = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(verdict.rfind("0 regressions, 0 improvements, ", 0), 0u) << r.out;
  // No star anywhere in the table.
  EXPECT_EQ(r.out.find('*'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: a: pooled 3 runs per cell"), std::string::npos) << r.out;
}

}  // namespace

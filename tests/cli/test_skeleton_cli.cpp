// Unit under test: the skeleton workload (workloads/skeleton.cpp) through the
// real binary: the example of the workload contract is registered by its own
// file alone, listed by `nightjar list`, and a tiny job of it runs, stores
// every sample, its metric declarations and its counter.
#include <gtest/gtest.h>

#include <string>

#include "test_support.h"

using namespace nightjar::test;

namespace {

const char* kSkeletonJob = R"(workload: skeleton
description: the example workload, tiny
params:
  loops: [1000, 2000]
iterations: 3
warmup: 1
)";

}  // namespace

TEST(SkeletonCli, ListShowsTheExample) {
  auto r = run_nightjar({"list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("skeleton — the example workload"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loops_per_sec"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("requires: a writable /tmp"), std::string::npos) << r.out;
}

TEST(SkeletonCli, TinyJobStoresEverySample) {
  TempDir dir;
  std::string job = dir.write("skeleton.yaml", kSkeletonJob);
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("2 complete, 0 failed, 0 skipped, 0 aborted"), std::string::npos) << r.err;
  EXPECT_EQ(
      query_one(db, "SELECT count(*) FROM run WHERE workload='skeleton' AND status='complete'"),
      "2");
  // 2 cells x 3 measured iterations, each with both declared metrics.
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE metric='loops_per_sec' AND value > 0"),
            "6");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sample WHERE metric='elapsed' AND value > 0"), "6");
  EXPECT_EQ(query_one(db,
                      "SELECT unit || ' ' || direction || ' ' || mean FROM metric "
                      "WHERE workload='skeleton' AND name='loops_per_sec'"),
            "loops/s higher hmean");
  EXPECT_EQ(query_one(db,
                      "SELECT unit || ' ' || direction || ' ' || mean FROM metric "
                      "WHERE workload='skeleton' AND name='elapsed'"),
            "s lower amean");
  // The workload's own counter, stored beside the monitors.
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM monitor WHERE name='skeleton.loops'"), "6");
  EXPECT_EQ(
      query_one(db, "SELECT CAST(sum(value) AS INTEGER) FROM monitor WHERE name='skeleton.loops'"),
      "9000");
  EXPECT_NE(r.out.find("loops=1000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loops_per_sec"), std::string::npos) << r.out;
}

TEST(SkeletonCli, BadParameterIsAUsageErrorNamingIt) {
  TempDir dir;
  std::string job =
      dir.write("bad.yaml", "workload: skeleton\nparams:\n  loops: 0\niterations: 1\nwarmup: 0\n");
  std::string db = dir.path() + "/r.db";
  auto r = run_nightjar({"run", job, "--db", db});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("loops"), std::string::npos) << r.err;
}

// Unit under test: `nightjar export --format kcidb` (harness/cli/cmd_data.cpp,
// results/io/kcidb.cpp), issue 38 check 3: the KCIDB document of a two-build
// comparison validates against KCIDB's own schema (the kcidb-io schema v5.3,
// tests/fixtures/kcidb/, checked by python3-jsonschema through
// tests/fixtures/kcidb/validate.py), and the same document with a required
// field removed does not; its tests carry the summary mean, the samples and
// the verdict; bad options are usage errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"
#include "workloads/sys/process.h"

using namespace nightjar::test;

namespace {

std::string fake_job(const std::string& script) {
  return "workload: fake\nparams:\n  script: \"" + script +
         "\"\n  seed: 1\niterations: 4\nwarmup: 0\n";
}

// Runs validate.py SCHEMA FILE: its exit code and what it printed.
nightjar::CommandResult validate(const std::string& file) {
  nightjar::CommandSpec s;
  s.argv = {"python3", source_path("tests/fixtures/kcidb/validate.py"),
            source_path("tests/fixtures/kcidb/kcidb-v05_03.schema.json"), file};
  s.merge_stderr = true;
  s.timeout_sec = 60;
  return nightjar::run_command(s);
}

// Builds v1 (base) and v2 (throughput 10% lower) of one fake cell, two runs each.
class KcidbCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = dir_->path() + "/results.db";
    auto run = [](std::vector<std::string> args) {
      auto r = run_nightjar(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    };
    const std::string v1 = dir_->write("v1/fx.yaml", fake_job("100,101.5,99.25,100.125"));
    const std::string v2 = dir_->write("v2/fx.yaml", fake_job("90,91.5,89.25,90.125"));
    for (int i = 0; i < 2; ++i) {
      run({"run", "--db", db_, "--variant", "vanilla", "--build", "v1", v1});
      run({"run", "--db", db_, "--variant", "vanilla", "--build", "v2", v2});
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TempDir* dir_;
  static std::string db_;
};
TempDir* KcidbCli::dir_ = nullptr;
std::string KcidbCli::db_;

TEST_F(KcidbCli, TwoBuildComparisonValidatesAndARemovedRequiredFieldDoesNot) {
  const std::string out = dir_->path() + "/kcidb.json";
  auto r = run_nightjar({"export", "--db", db_, "--format", "kcidb", "--base", "build=v1",
                         "build=v2", "--ignore-param", "script", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("exported 4 test(s) of 2 side(s), 2 build(s) as KCIDB v5.3"),
            std::string::npos)
      << r.err;
  auto ok = validate(out);
  ASSERT_TRUE(ok.started) << ok.error;
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("valid KCIDB v5.3"), std::string::npos) << ok.out;

  nlohmann::json doc = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(doc["version"]["major"], 5);
  ASSERT_EQ(doc["builds"].size(), 2u);
  ASSERT_EQ(doc["tests"].size(), 4u);
  for (const auto& t : doc["tests"]) {
    const auto& misc = t["misc"];
    EXPECT_EQ(misc["n"], 8) << t.dump();  // two runs of four iterations
    EXPECT_EQ(misc["samples"].size(), 8u);
    EXPECT_TRUE(misc.contains("CoeffVar"));
    if (misc["side"] == "build=v1") {
      EXPECT_EQ(t["status"], "DONE");
      EXPECT_EQ(misc["role"], "base");
    } else {
      // 10% less throughput (and 11% more latency) with CoeffVar ~1%: a regression.
      EXPECT_EQ(t["status"], "FAIL") << t.dump();
      EXPECT_EQ(misc["verdict"], "regression");
      EXPECT_EQ(misc["base"], "build=v1");
    }
    if (misc["metric"] == "throughput" && misc["side"] == "build=v1") {
      EXPECT_EQ(t["number"]["unit"], "ops/s");
      // Hmean of 100, 101.5, 99.25, 100.125 twice (the fake workload's throughput).
      EXPECT_NEAR(t["number"]["value"].get<double>(), 100.21, 0.01);
    }
  }

  // The schema requires a test's build_id: without it the document is refused.
  doc["tests"][0].erase("build_id");
  const std::string broken = dir_->path() + "/broken.json";
  std::ofstream(broken) << doc.dump(2);
  auto bad = validate(broken);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("'build_id' is a required property"), std::string::npos) << bad.out;
}

TEST_F(KcidbCli, WithoutSelectorsEachBuildIsASideWithStatusDone) {
  auto r = run_nightjar({"export", "--db", db_, "--format", "kcidb"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["tests"].size(), 4u);
  for (const auto& t : doc["tests"]) {
    EXPECT_EQ(t["status"], "DONE");
    EXPECT_FALSE(t["misc"].contains("verdict"));
  }
  const std::string out = dir_->path() + "/all.json";
  std::ofstream(out) << r.out;
  EXPECT_EQ(validate(out).exit_code, 0);
}

TEST_F(KcidbCli, BadOptionsAreUsageErrors) {
  auto origin = run_nightjar({"export", "--db", db_, "--format", "kcidb", "--origin", "My-Lab"});
  EXPECT_EQ(origin.exit_code, 2);
  EXPECT_NE(origin.err.find("--origin: 'My-Lab' is not a KCIDB origin"), std::string::npos)
      << origin.err;
  // A side pooling two builds cannot be one KCIDB build.
  auto pooled = run_nightjar({"export", "--db", db_, "--format", "kcidb", "vanilla"});
  EXPECT_EQ(pooled.exit_code, 2);
  EXPECT_NE(pooled.err.find("side 'vanilla' pools runs of several builds"), std::string::npos)
      << pooled.err;
  auto csv_base = run_nightjar({"export", "--db", db_, "--base", "build=v1"});
  EXPECT_EQ(csv_base.exit_code, 2);
  EXPECT_NE(csv_base.err.find("apply to --format kcidb only"), std::string::npos) << csv_base.err;
}

}  // namespace

// Unit under test: `nightjar trend` end to end: a nightly history built with
// `nightjar run --build NIGHT` of an exec job (one cell; 5 iterations at
// CoeffVar 3% per night, seeded) whose level drops 5% from a known night on:
// the change point is found at that night; a flat history raises no alarm;
// the output formats, --order, --cell and the errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

using namespace nightjar::test;

namespace {

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::string night(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "n%02d", i);
  return buf;
}

// Prints throughput = LEVEL * lognormal noise (CoeffVar 3%) seeded by the
// night's seed file and the iteration: the cell never changes, the build does.
const char* kScript = R"SH(#!/bin/sh
d=$(dirname "$0")
awk -v l="$(cat "$d/level")" -v s="$(cat "$d/seed")" -v i="$NIGHTJAR_ITERATION" 'BEGIN {
  srand(s * 1000 + i); u1 = 1 - rand(); u2 = rand();
  z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2); sg = sqrt(log(1 + 0.03 * 0.03));
  printf "throughput=%.6f\n", l * exp(sg * z - sg * sg / 2) }'
)SH";

struct History {
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  std::string job;
  History() {
    std::string script = dir.write("bench.sh", kScript);
    job = dir.write("nightly.yaml",
                    "workload: exec\nparams:\n  command: \"sh " + script +
                        "\"\n  metrics: \"throughput:ops/s:higher\"\n  timeout: [60s, 120s]\n"
                        "iterations: 5\nwarmup: 0\n");
  }
  // Nights 1..n: level 100, from night `step_at` on `low` (0: never).
  void record(int n, int step_at, const std::string& low = "95") {
    for (int i = 1; i <= n; ++i) {
      dir.write("level", step_at > 0 && i >= step_at ? low + "\n" : "100\n");
      dir.write("seed", std::to_string(100 + i) + "\n");
      auto r = run_nightjar({"run", job, "--db", db, "--build", night(i)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  // Nights 1..levels.size() at the given levels.
  void record_levels(const std::vector<std::string>& levels) {
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const int n = static_cast<int>(i) + 1;
      dir.write("level", levels[i] + "\n");
      dir.write("seed", std::to_string(100 + n) + "\n");
      auto r = run_nightjar({"run", job, "--db", db, "--build", night(n)});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

TEST(TrendCli, FindsTheNightOfAFivePercentStep) {
  History h;
  h.record(30, 16);
  auto r = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Two cells (the timeout axis), each with the step at night 16 (±1).
  EXPECT_TRUE(contains(r.out, "cell command=")) << r.out;
  EXPECT_TRUE(contains(r.out, "timeout=60s: 30 build(s), 1 change point(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "timeout=120s: 30 build(s), 1 change point(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "regression")) << r.out;

  auto j = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                         "--format", "json", "--cell", "timeout=120s"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["series"].size(), 1u);
  ASSERT_EQ(doc["series"][0]["change_points"].size(), 1u);
  const auto& cp = doc["series"][0]["change_points"][0];
  int at = std::stoi(cp["build"].get<std::string>().substr(1));
  EXPECT_GE(at, 15);
  EXPECT_LE(at, 17);
  EXPECT_NEAR(cp["pct_change"].get<double>(), -5, 1.5);
  EXPECT_LT(cp["p"].get<double>(), 0.001);
  EXPECT_EQ(cp["verdict"], "regression");

  auto md = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                          "--format", "markdown", "--cell", "timeout=60s"});
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_TRUE(contains(md.out, "| at build | date | before (ops/s) |")) << md.out;

  // --history marks the night; --order reverses time, and the step becomes
  // an improvement.
  auto hist = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                            "--history", "--cell", "timeout=60s"});
  EXPECT_TRUE(contains(hist.out, "<- change point")) << hist.out;
  std::string order;
  for (int i = 30; i >= 1; --i) order += (order.empty() ? "" : ",") + night(i);
  auto rev = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                           "--order", order, "--cell", "timeout=60s"});
  ASSERT_EQ(rev.exit_code, 0) << rev.err;
  EXPECT_TRUE(contains(rev.out, "improvement")) << rev.out;

  // A stricter minimum effect than the step hides it.
  auto strict = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                              "--min-effect", "10", "--cell", "timeout=60s"});
  EXPECT_TRUE(contains(strict.out, "0 change point(s)")) << strict.out;
}

TEST(TrendCli, FlatHistoryRaisesNoAlarm) {
  History h;
  h.record(30, 0);
  auto r = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "timeout=60s: 30 build(s), 0 change point(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "timeout=120s: 30 build(s), 0 change point(s)")) << r.out;
}

TEST(TrendCli, DropOnTheLastNightIsAPossibleChange) {
  History h;
  h.record(12, 12, "90");
  auto r = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                         "--cell", "timeout=60s"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "12 build(s), 0 change point(s)")) << r.out;
  EXPECT_TRUE(contains(r.out, "possible change since night 12 (n12), needs confirmation (1 night)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "regression")) << r.out;
}

// The double step a new user planted: 100, 100, 130, 130, then 150 for 12
// nights. Segments of 2 nights are below the change points' minimum of 5, so
// each step shows as a possible change on a short segment; a one-night spike
// in a flat history shows nothing (docs/statistics.md "Short segments").
TEST(TrendCli, ADoubleStepShowsAtEachStepAndASpikeShowsNothing) {
  History h;
  std::vector<std::string> levels{"100", "100", "130", "130"};
  levels.resize(16, "150");
  h.record_levels(levels);
  auto r = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                         "--cell", "timeout=60s", "--history"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "possible change at night 3 (n03), a short segment (2 | 2 nights)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "possible change at night 5 (n05), a short segment (2 | 12 nights)"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "<- possible change (short segment)")) << r.out;
  auto j = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", h.db,
                         "--cell", "timeout=60s", "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["series"][0]["short_changes"].size(), 2u) << j.out;
  EXPECT_EQ(doc["series"][0]["short_changes"][1]["build"], "n05");

  History spike;
  std::vector<std::string> flat(16, "100");
  flat[7] = "150";
  spike.record_levels(flat);
  auto s = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--db", spike.db,
                         "--cell", "timeout=60s"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_TRUE(contains(s.out, "16 build(s), 0 change point(s)")) << s.out;
  EXPECT_FALSE(contains(s.out, "possible change")) << s.out;
}

TEST(TrendCli, UsageErrors) {
  History h;
  h.record(2, 0);
  auto job = run_nightjar({"trend", "--job", "weekly", "--metric", "throughput", "--db", h.db});
  EXPECT_EQ(job.exit_code, 2);
  EXPECT_TRUE(contains(job.err, "the database holds jobs: nightly")) << job.err;
  auto metric = run_nightjar({"trend", "--job", "nightly", "--metric", "speed", "--db", h.db});
  EXPECT_EQ(metric.exit_code, 2);
  EXPECT_TRUE(contains(metric.err, "its metrics are")) << metric.err;
  auto cell = run_nightjar({"trend", "--job", "nightly", "--metric", "throughput", "--cell",
                            "timeout=5s", "--db", h.db});
  EXPECT_EQ(cell.exit_code, 2);
  auto missing =
      run_nightjar({"trend", "--metric", "throughput", "--db", h.db});  // --job is required
  EXPECT_EQ(missing.exit_code, 2);
  // Without --metric: every metric of the job, one after another.
  auto all = run_nightjar({"trend", "--job", "nightly", "--db", h.db});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(contains(all.out, "trend of throughput")) << all.out;
  auto p = run_nightjar(
      {"trend", "--job", "nightly", "--metric", "throughput", "--max-p", "3", "--db", h.db});
  EXPECT_EQ(p.exit_code, 2);
  auto seg = run_nightjar(
      {"trend", "--job", "nightly", "--metric", "throughput", "--min-segment", "1", "--db", h.db});
  EXPECT_EQ(seg.exit_code, 2);
}

}  // namespace

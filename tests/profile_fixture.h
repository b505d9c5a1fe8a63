// A database whose runs carry perf-profile stacks, for the flame graph's CLI
// and browser tests (docs/compare.md "The flame graph"): job fx (the fake
// workload, 5 iterations), variant a (build v1, BASE) and variant b (build
// v2, NEW) with the same samples, then per measured iteration folded stacks
// written into the store's profile tables:
//   a: main;f;g 80+i%3, main;f;h 20+i%2, main;k 10
//   b: main;f;g 30+i%3, main;f;h 70+i%2, main;n 10
// so that h has more samples in NEW (red), g fewer (blue), n only NEW
// (orange) and k only BASE (no width).
#pragma once

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <string>

#include "test_support.h"

namespace nightjar::test {

inline std::string profile_fixture_db(const TempDir& dir) {
  const std::string db = dir.path() + "/profiles.db";
  const std::string job = dir.write(
      "profile-job/fx.yaml",
      "workload: fake\nparams:\n  script: \"100,101,99,100,100\"\n  seed: 1\niterations: 5\n"
      "warmup: 0\n");
  for (const auto& [variant, build] : {std::pair{"a", "v1"}, std::pair{"b", "v2"}}) {
    auto r = run_nightjar({"run", "--db", db, "--variant", variant, "--build", build, job});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  SQLite::Database d(db, SQLite::OPEN_READWRITE);
  d.exec(
      "INSERT INTO profile(run_id, iteration, event, frequency_hz, lost) "
      "SELECT i.run_id, i.iteration, 'cpu-clock', 499, 0 FROM iteration i");
  d.exec(
      "INSERT OR IGNORE INTO profile_stack(folded) "
      "VALUES('main;f;g'), ('main;f;h'), ('main;k'), ('main;n')");
  d.exec(
      "INSERT INTO profile_sample(run_id, iteration, stack_id, count) "
      "SELECT run_id, iteration, stack_id, n FROM ("
      " SELECT i.run_id, i.iteration, s.id AS stack_id, CASE s.folded"
      "  WHEN 'main;f;g' THEN CASE r.variant WHEN 'a' THEN 80 ELSE 30 END + i.iteration % 3"
      "  WHEN 'main;f;h' THEN CASE r.variant WHEN 'a' THEN 20 ELSE 70 END + i.iteration % 2"
      "  WHEN 'main;k' THEN CASE r.variant WHEN 'a' THEN 10 ELSE 0 END"
      "  ELSE CASE r.variant WHEN 'b' THEN 10 ELSE 0 END END AS n"
      " FROM iteration i JOIN run r ON r.id = i.run_id CROSS JOIN profile_stack s)"
      " WHERE n > 0");
  return db;
}

}  // namespace nightjar::test

// A nightly history for the tests of `nightjar publish` (tests/cli/
// test_publish_cli.cpp, tests/browser/): an exec job of three cells run
// night by night with `nightjar run --build nightNN`, seeded, CoeffVar 2%:
//  - "flat": level 100 every night;
//  - "down": level 100, then 90 from night `kStepNight` on (a planted -10%
//    step), its command holding `<script>`, double and single quotes;
//  - "uni":  level 100 every night, its command holding unicode;
//  - "up" (only with `improvement` set): level 100, then 108 from night
//    `kUpNight` on (a planted +8% step, too recent to be a change point).
// Every run has the variant `<b>"v"</b>ü` (a label with markup and unicode).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_support.h"

namespace nightjar::test {

/// Nights recorded and the first night of the planted step.
inline constexpr int kNights = 14;
inline constexpr int kStepNight = 8;
/// The first night of the planted improvement of the "up" cell.
inline constexpr int kUpNight = 14;
/// The variant label of every run.
inline const char* const kOddVariant = "<b>\"v\"</b>\xc3\xbc";
/// The special argument of the "down" cell as stored in its cell id.
inline const char* const kScriptArg = "'<script>alert(\"x\")</script>'";
/// The unicode argument of the "uni" cell.
inline const char* const kUnicodeArg = "ünïcødé→";

/// The directory of the fixture's benchmark script: a 98-byte name without
/// a blank, so that every cell id (which holds the script's path) is long
/// and cannot wrap at a blank (the index must still fit a 1280-pixel window).
inline const std::string kLongDir =
    "a-directory-whose-name-is-one-hundred-bytes-long-so-that-the-cell-ids-of-this-history-are-"
    "long-too";

/// "night01", "night02", ...
inline std::string night_label(int i) {
  std::string n = std::to_string(i);
  return "night" + std::string(n.size() < 2 ? 2 - n.size() : 0, '0') + n;
}

/// The history in a temporary directory: `db` is the database.
struct PublishHistory {
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  int nights = kNights;      ///< nights recorded
  bool improvement = false;  ///< adds the "up" cell

  /// Records the nights; fails the test (ASSERT) on a failed run.
  void record() {
    std::string script = dir.write(kLongDir + "/bench.sh", R"SH(#!/bin/sh
d=$(dirname "$0")/..
awk -v c="$1" -v n="$(cat "$d/night")" -v s="$(cat "$d/step")" -v u="$(cat "$d/up")" -v i="$NIGHTJAR_ITERATION" 'BEGIN {
  l = 100; if (c == "down" && n >= s) l = 90; if (c == "up" && n >= u) l = 108;
  srand(n * 1000 + i + length(c) * 100); u1 = 1 - rand(); u2 = rand();
  z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2); sg = sqrt(log(1 + 0.02 * 0.02));
  printf "throughput=%.6f\n", l * exp(sg * z - sg * sg / 2) }'
)SH");
    dir.write("step", std::to_string(kStepNight) + "\n");
    dir.write("up", std::to_string(kUpNight) + "\n");
    const std::string up = improvement ? "    - \"sh " + script + " up\"\n" : "";
    std::string job =
        dir.write("nightly.yaml", "workload: exec\nparams:\n  command:\n    - \"sh " + script +
                                      " flat\"\n    - \"sh " + script + " down " +
                                      "'<script>alert(\\\"x\\\")</script>'\"\n    - \"sh " +
                                      script + " uni " + kUnicodeArg + "\"\n" + up +
                                      "  metrics: \"throughput:ops/s:higher\"\n  timeout: 60s\n"
                                      "iterations: 3\nwarmup: 0\n");
    for (int i = 1; i <= nights; ++i) {
      dir.write("night", std::to_string(i) + "\n");
      auto r = run_nightjar(
          {"run", job, "--db", db, "--build", night_label(i), "--variant", kOddVariant});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

}  // namespace nightjar::test

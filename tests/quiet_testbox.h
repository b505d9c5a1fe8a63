// A testbox whose runs do not differ, for tests that build comparisons by
// hand (build_comparison) and are not about the between-run model.
#pragma once

#include <optional>

#include "results/compare/between_runs.h"

namespace nightjar::test {

/// A lookup giving every row a between-run variance of 0 (df 1e6) from a
/// calibration, as `nightjar calibrate` measures for a script that replays
/// the same values: rows with one run per side are then decided on their
/// iterations' noise. The tests of matching, labels, counts, exit codes and
/// the seed posts' tables use it; the between-run model itself is tested in
/// tests/unit/test_between_runs.cpp (docs/statistics.md "Where the
/// between-run variation comes from").
inline CalibrationLookup quiet_testbox() {
  return [](const CalibrationKey&) {
    return std::optional<stats::BetweenRunVariance>(
        stats::BetweenRunVariance{0.0, 1e6, stats::BetweenSource::calibration, 2});
  };
}

}  // namespace nightjar::test

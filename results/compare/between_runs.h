// Where a comparison with one run on a side gets its between-run variation
// (docs/statistics.md "Where the between-run variation comes from"), in
// order: the testbox's calibration (`nightjar calibrate`), the cell's own
// history on the testbox (runs nightjar already holds and knows to be alike),
// else the conservative prior (stats::prior_between_variance). A verdict is
// never taken on the iterations alone: they cannot see how runs differ.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "results/stats/run_model.h"
#include "results/store/calibration.h"

namespace nightjar {

class ResultsStore;
struct LoadedSide;

/// The between-run variance of one row's cell and metric on the base side's
/// testbox for a row with one run on a side, or nullopt when the caller has
/// none (build_comparison then uses the prior).
using CalibrationLookup =
    std::function<std::optional<stats::BetweenRunVariance>(const CalibrationKey& key)>;

/// The between-run variance of a cell's history (`runs`: ResultsStore::
/// cell_history, ascending by run id), leaving out the runs in `exclude` (the
/// runs being compared: they must not vouch for themselves):
///  1. repeated runs of one build: runs grouped by (kernel, build, variant),
///     pooled by stats::history_between_variance;
///  2. when that has fewer than stats::kHistoryMinDf degrees of freedom: per
///     variant, the runs in order, their geometric means cut into segments by
///     stats::detect_change_points (default options: a real change between
///     nightly builds is a change point, not noise) and also at the changes
///     trend reports unconfirmed (stats::detect_short_changes,
///     stats::detect_recent_change: a step in the newest nights is not noise
///     either); each segment is a group of alike runs, pooled the same way.
/// std::nullopt when neither reaches kHistoryMinDf. source = history.
std::optional<stats::BetweenRunVariance> cell_history_between_variance(
    std::span<const HistoryRun> runs, const std::set<std::int64_t>& exclude);

/// The lookup compare uses for rows with one run on a side: the store's
/// calibration of the key, else cell_history_between_variance of
/// store.cell_history(key) leaving out every run of `sides`; nullopt
/// otherwise (the prior, in build_comparison). `store` must outlive the
/// lookup; the compared run ids are copied once when it is made.
CalibrationLookup stored_between_lookup(const ResultsStore& store,
                                        const std::vector<LoadedSide>& sides);

}  // namespace nightjar

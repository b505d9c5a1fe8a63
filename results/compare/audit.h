// A testbox's measured error rates (`nightjar audit`, docs/statistics.md
// "Auditing a testbox"): how the A/A pairs and the injected shifts of an
// audit are counted into the store's AuditRow records, and how a stored
// audit reads beside a comparison. The measuring itself (running the pairs)
// is harness/cli/cmd_audit.cpp; the statistics are the comparison's own
// (results/compare/comparison.h) and stats::wilson_interval.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/compare/comparison.h"
#include "results/store/calibration.h"

namespace nightjar {

/// "one run per side" (runs 1) or "3 runs per side": AuditRow::mode.
std::string audit_mode(int runs_per_side);

/// Counts one pair's comparison into `row` (row.pairs, row.flagged,
/// row.unchanged): the verdict of NEW against BASE of `c`'s metric row named
/// `metric` of cell (workload, job, cell). With row.shift_pct 0 (A/A) a
/// regression or an improvement is flagged (a false alarm); with a shift
/// only a regression is (a hit). `runs_needed` collects the row's "needs
/// about N runs" when it said one. Returns false (counting nothing) when
/// `c` has no such row.
bool count_audit_pair(const Comparison& c, const std::string& workload, const std::string& job,
                      const std::string& cell, const std::string& metric, AuditRow& row,
                      std::vector<double>& runs_needed);

/// One mode's audit as text: "one run per side, 20 A/A pairs: false alarms
/// 5.0% [0.9, 23.6] (1 of 20), decided unchanged 75% (15 of 20); power at
/// 5%: 85% [64.0, 94.8] (17 of 20)", intervals Wilson's 95%, and "; median
/// runs to decide 6" when the pairs said. `rows` are the rows of one mode
/// (shift 0 first); "" when there is no A/A row among them.
std::string audit_text(const std::vector<AuditRow>& rows);

/// The notes of a comparison (Comparison::notes) giving the stored audits of
/// each compared cell's key metric (its first metric row) on the BASE
/// side's testbox: "audit of this testbox (HOST), JOB [CELL] METRIC: " and
/// audit_text per mode, joined by "; ". None when nothing is stored.
std::vector<std::string> audit_notes(const CalibrationStore& store, const Comparison& c,
                                     const std::vector<LoadedSide>& sides);

}  // namespace nightjar

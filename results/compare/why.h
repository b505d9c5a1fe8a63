// "What else changed" (`nightjar compare --why`, docs/monitors.md): the
// monitor rows of a comparison whose change is significant, decided with
// the metrics' statistics — stats::decide_significance over one family per
// NEW side holding every monitor row of that side (Benjamini–Hochberg
// across them, the same test, minimum effect and equivalence rule as the
// metric rows) — and ranked by effect, |ln(mean_new/mean_base)|. A monitor
// has no better direction: the verdict only says changed (regression or
// improvement of the rule, with higher taken as better) or not. Rows whose
// base mean is 0 are undefined for a ratio test; those that went from all
// zeros to all non-zero, completely separated, are listed first as
// appeared; a significant change to all zeros is marked vanished. Renderers: results/render/why.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/stats/significance.h"

namespace nightjar {

/// One monitor row that moved, for one NEW side.
struct WhyEntry {
  std::string operation;               ///< the row's label (ComparisonRow::operation)
  std::string name;                    ///< the monitor row name ("perf.page-faults")
  std::string cell;                    ///< the cell's canonical id
  double base_mean = 0, new_mean = 0;  ///< Amean of the per-iteration values
  int base_n = 0, new_n = 0;           ///< samples per side
  /// (new − base)/base·100; NaN for appeared rows.
  double change_pct = 0;
  /// |ln(new/base)|: the ranking key (infinite for appeared/vanished rows).
  double effect = 0;
  /// The decision of the rule (p, q, ratio CI); for appeared/vanished rows
  /// the rule's own (undefined) decision.
  stats::Significance significance;
  /// True for a row with base mean 0 and every NEW sample > 0 ("appeared",
  /// listed without a test), or every base sample > 0, NEW mean 0 and the
  /// rule's verdict a change ("vanished").
  bool appeared = false, vanished = false;
};

/// The block of one NEW side against the BASE.
struct WhySide {
  std::string base, side;  ///< side names (selectors as written)
  std::size_t family = 0;  ///< monitor rows in the family (tested together)
  /// Significant rows, largest effect first; appeared/vanished rows first.
  std::vector<WhyEntry> moved;
};

/// The whole block, one WhySide per NEW side.
struct WhyBlock {
  std::vector<WhySide> sides;
  double alpha = 0.05;  ///< the FDR level of the family
};

/// Decides the monitor rows of `cmp` on the samples of `sides` (the loaded
/// sides the comparison was built from, [0] = BASE) with `options` (as the
/// comparison's). Rows with fewer than 3 samples on a side are
/// inconclusive and not listed. Throws std::invalid_argument for bad
/// options, as decide_significance.
WhyBlock explain_monitors(const Comparison& cmp, const std::vector<LoadedSide>& sides,
                          const stats::SignificanceOptions& options);

/// Loads the sides of `selectors` again (load_side, as compare_selectors
/// does) and explains `cmp`, the comparison of those selectors.
WhyBlock explain_monitors(const Comparison& cmp, const ResultsStore& store,
                          const std::vector<Selector>& selectors, const SideQuery& query,
                          const stats::SignificanceOptions& options);

}  // namespace nightjar

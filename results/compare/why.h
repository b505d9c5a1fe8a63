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
// appeared; a significant change to all zeros is marked vanished.
//
// Under the monitor rows, the profile block (perf-profile monitor,
// docs/compare.md "The profile block"): per cell, each symbol's self share
// (samples whose leaf frame it is) and children share (samples whose stack
// holds it) of each iteration's samples, Welch's test on the per-iteration
// shares of the two sides, Benjamini–Hochberg across every symbol share of
// the cell, the moved ones ranked by |difference| in percentage points.
// Renderers: results/render/why.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "results/model/profile.h"

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

/// One symbol share that moved between the sides' profiles of a cell.
struct ProfileMove {
  std::string symbol;  ///< frame name as stored (kernel or program symbol, "[kernel]", ...)
  /// True: the self share (samples whose leaf frame is the symbol); false:
  /// the children share (samples whose stack holds it, inclusive).
  bool self = true;
  /// Mean over the side's iterations of the share, % of the iteration's samples.
  double base_pct = 0, new_pct = 0;
  /// new_pct − base_pct in percentage points, and its (1 − alpha) Welch CI.
  double diff_pts = 0, lo_pts = 0, hi_pts = 0;
  double p = 1;  ///< Welch's two-sided p on the per-iteration shares
  double q = 1;  ///< BH-adjusted over the cell's symbol shares
  /// The file in which WhyBlock::commit changed this function
  /// (attribute_to_commit), "" when it did not or no commit was given.
  std::string changed_in;
};

/// One frame of the merged differential flame graph of a cell
/// (`compare --why --flamegraph`, docs/compare.md "The flame graph"): the
/// call path from the root to this frame, with the samples of each side
/// whose stack begins with that path, summed over the side's iterations.
struct FlameNode {
  std::string name;                 ///< the frame ("all" at the root)
  std::uint64_t base = 0, now = 0;  ///< inclusive samples of the path, BASE and NEW
  /// now − base·scale (ProfileDelta::flame_scale): > 0 more in NEW, < 0 fewer.
  double delta = 0;
  std::vector<FlameNode> children;  ///< by name
};

/// The profile delta of one cell: NEW against BASE.
struct ProfileDelta {
  std::string cell;                   ///< the cell's canonical id (CellKey::cell)
  std::string base_event, new_event;  ///< the sampled event of each side ("cpu-clock", "cycles")
  int base_n = 0, new_n = 0;          ///< iterations with samples on each side
  std::uint64_t base_samples = 0, new_samples = 0;  ///< samples over those iterations
  std::uint64_t base_lost = 0, new_lost = 0;        ///< samples the kernel dropped
  std::size_t family = 0;                           ///< symbol shares tested together (BH family)
  /// Shares with q < alpha, largest |diff_pts| first.
  std::vector<ProfileMove> moved;
  /// The merged stacks of both sides (merge_flame); root "all".
  FlameNode flame;
  /// new_samples / base_samples: BASE counts are scaled by it in
  /// FlameNode::delta, so that a side with more iterations or a longer
  /// window does not look hotter everywhere (1 when BASE has no samples).
  double flame_scale = 1;
};

/// The block of one NEW side against the BASE.
struct WhySide {
  std::string base, side;  ///< side names (selectors as written)
  std::size_t family = 0;  ///< monitor rows in the family (tested together)
  /// Significant rows, largest effect first; appeared/vanished rows first.
  std::vector<WhyEntry> moved;
  /// The cells whose runs on both sides have perf-profile stacks, in cell
  /// order (CellKey); empty without profiles.
  std::vector<ProfileDelta> profiles;
};

/// The whole block, one WhySide per NEW side.
struct WhyBlock {
  std::vector<WhySide> sides;
  double alpha = 0.05;  ///< the FDR level of the family
  /// The commit the moved symbols were joined to (`--commit`), "" when none.
  std::string commit;
};

/// The name a profile symbol has in source: without a compiler suffix
/// (".isra.0", ".constprop.0", ".part.0", ".cold") and, for a C++ name,
/// the part after the last "::" ("nightjar::pft::touch" -> "touch").
std::string source_function_name(const std::string& symbol);

/// Joins the moved symbols of `block` to commit `commit`: each ProfileMove
/// whose source_function_name is in `functions` (function -> file, as
/// parse_changed_functions of harness/bisect/git.h gives them) gets
/// changed_in = its file, and block.commit = `commit`.
void attribute_to_commit(WhyBlock& block, const std::string& commit,
                         const std::map<std::string, std::string>& functions);

/// Decides the monitor rows of `cmp` on the samples of `sides` (the loaded
/// sides the comparison was built from, [0] = BASE) with `options` (as the
/// comparison's). Rows with fewer than 3 samples on a side are
/// inconclusive and not listed. Throws std::invalid_argument for bad
/// options, as decide_significance.
WhyBlock explain_monitors(const Comparison& cmp, const std::vector<LoadedSide>& sides,
                          const stats::SignificanceOptions& options);

/// The profile delta of cell `cell` from the profiles of its BASE
/// iterations `base` and NEW iterations `now` (iterations without samples
/// are left out): per symbol its self and children share of each
/// iteration's samples in percent (0 in an iteration that did not sample
/// it), stats::welch_test on those shares at `alpha`, and
/// stats::benjamini_hochberg over every share tested. A side with fewer
/// than 2 iterations gives a delta with family 0 and nothing moved. Throws
/// std::invalid_argument unless 0 < alpha < 1.
ProfileDelta explain_profile(const std::string& cell, std::span<const IterationProfile> base,
                             std::span<const IterationProfile> now, double alpha);

/// The merged differential flame graph of BASE iterations `base` and NEW
/// iterations `now`: every folded stack's samples summed over the side's
/// iterations, merged into one tree of call paths (root "all", frames split
/// at ';', children ordered by name), each node holding both sides'
/// inclusive samples and delta = now − base·scale with scale =
/// `now` samples / `base` samples (1 when `base` has none).
FlameNode merge_flame(std::span<const IterationProfile> base, std::span<const IterationProfile> now,
                      double* scale = nullptr);

/// Loads the sides of `selectors` again (load_side, as compare_selectors
/// does) and explains `cmp`, the comparison of those selectors; adds each
/// side's profile deltas from the perf-profile stacks of the cells' runs
/// (ResultsStore::iteration_profiles).
WhyBlock explain_monitors(const Comparison& cmp, const ResultsStore& store,
                          const std::vector<Selector>& selectors, const SideQuery& query,
                          const stats::SignificanceOptions& options);

}  // namespace nightjar

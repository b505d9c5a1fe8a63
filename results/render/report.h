// `nightjar report`: the tables kernel developers paste into patch changelogs
// and cover letters, rendered from a comparison record (results/compare/comparison.h).
// Like the other renderers it computes no statistics of its own: every mean
// and verdict was computed by the statistics module when the record was built;
// the one figure derived here, the %change of the statistic shown, is
// stats::percent_change (mmtests' %change) of two of those means.
//
// Layouts (docs/reference.md "Changelog tables", after the patch posts):
//  - two-build block, one per cell (no --by):
//      Results (Hmean throughput of WORKLOAD):
//      Without (6.0-rc1)  10482.7 Mbps
//      With patch         12413.7 Mbps (18.4% improvement)
//  - matrix over an axis (--by clients), one table per value of --group:
//      PREEMPT_RT config:
//      ------------------
//      clients | Without series       | With series
//        6     | 38559.1 Mbps         | 38652.6 Mbps (+0.2%)
//    NEW values carry their %change and a mark: `*` significant, `?`
//    inconclusive, `!` undefined.
// Changelog text is plain ASCII, at most 72 columns, without trailing blanks
// (side labels too wide for that are replaced by A, B, ... and spelled out
// under the table); one legend line names the test, n and alpha. Markdown
// gives the same tables in GitHub-flavoured Markdown. A block line or table
// row whose figures hold a run measured under qemu TCG ends with
// kEmulationTag ("[TCG]"), which the legend's emulation warning explains.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/compare/comparison.h"

namespace nightjar {

/// Which statistic the tables show.
enum class ReportStat {
  own_mean,  ///< the metric's declared mean (Hmean for rates, Amean for times)
  hmean,
  amean,
  median,
};

/// Parses "hmean" / "amean" / "median" / "mean" (= own_mean); throws
/// UsageError naming --stat otherwise.
ReportStat report_stat_from_string(const std::string& s);

/// Options of render_report.
struct ReportOptions {
  std::string format = "changelog";  ///< changelog | markdown
  /// Metric to show per workload; "" = each workload's first metric in the
  /// comparison (its first declared metric: the key metric).
  std::string metric;
  std::string by;     ///< cell parameter of the matrix rows; "" = one block per cell
  std::string group;  ///< cell parameter: one table per value; "" = none
  ReportStat stat = ReportStat::own_mean;
  /// Column / line labels per side ([0] = BASE); missing ones default to the
  /// side's name (its selector text).
  std::vector<std::string> labels;
  int precision = 1;   ///< decimals of the values and of the %change
  int max_width = 72;  ///< changelog: longest line, columns
  /// --group-label VALUE=TITLE: the title of the table of `group` value
  /// VALUE (instead of "VALUE GROUP"). A VALUE that is no value of `group`
  /// in the compared cells is a UsageError listing the values.
  std::map<std::string, std::string> group_labels;
};

/// One group of a report whose caller split the comparison itself, one per
/// value of a run attribute (`--group kernel`: one comparison per kernel).
struct ReportGroup {
  std::string title;  ///< e.g. "6.1.0-rt kernel"; printed above the group's tables
  const Comparison* comparison = nullptr;
};

/// Renders the report of `c` (metric rows only; monitor rows are not part of
/// changelog tables). Throws UsageError when `by` or `group` is not a
/// parameter of the compared cells or `metric` is not one of their metrics
/// (listing what exists), when `by` equals `group`, or when the format is
/// unknown.
std::string render_report(const Comparison& c, const ReportOptions& options);

/// The same for several groups, rendered one after another with one legend at
/// the end (n over every group). Errors as above.
std::string render_report(const std::vector<ReportGroup>& groups, const ReportOptions& options);

/// The legend of a report over `comparisons` (one per group when the caller
/// split them): which marks mean what (`*` always, `?` / `!` when `marks`
/// holds them; none for blocks, whose verdicts are spelled out), the test and
/// its alpha and minimum effect, and n per side ("n=5", or "n=3-5" when it
/// varies over the shown rows of `metric`, "" = each workload's first),
/// the CoeffVar of the sides ("CoeffVar 0.4-2.1%") and the smallest change
/// the rows could detect at the test's alpha and 80% power ("detects
/// >=1.2-3.5%", stats::Significance::smallest_detectable_change_pct), then
/// the comparisons' warnings. One line when it fits in `max_width` columns,
/// else wrapped.
std::string report_legend(const std::vector<const Comparison*>& comparisons,
                          const std::string& metric, const std::string& marks, int max_width);

}  // namespace nightjar

// The HTML pages of `nightjar publish` (docs/publish.md): the index of every
// published cell and one page per cell. Renderers only: they read the trend
// record (results/compare/trend.h) and figures drawn before (plots/svg.h),
// and compute nothing. Every page is produced by a mustache template (kainjow
// mustache, libkainjow-mustache-dev: header-only, packaged for Debian 12,
// logic-less, so a template cannot compute), which HTML-escapes every value;
// only the SVG figures, written by plots/svg.h through a template of its
// own, are inserted as markup. The pages use relative links only and need no
// server and no network (they work from file://).
#pragma once

#include <string>
#include <vector>

#include "results/compare/comparison.h"
#include "results/compare/trend.h"
#include "results/compare/why.h"
#include "results/store/bisect_log.h"

namespace nightjar {

/// What every page states about its source.
struct HtmlPageInfo {
  std::string database;      ///< path of the results database
  std::string generated_at;  ///< when the site was written, ISO 8601 UTC
  std::string testboxes;     ///< testbox hostnames of the published runs, comma separated
  std::string kernels;       ///< kernel releases of the published runs, comma separated
};

/// A link to a page of the site, relative to the index.
struct SiteLink {
  std::string text, page;
};

/// One published comparison (`nightjar compare BASE NEW...` on the same
/// database, default options): its record and where its page is.
struct SiteComparison {
  std::string title;      ///< "BASE vs NEW", the selectors as given
  std::string page;       ///< "compare/ID.html", relative to the index
  Comparison comparison;  ///< as compare_selectors built it
  std::string mmtests;    ///< the record in `compare`'s default layout (render_mmtests)
  /// `compare --why`'s block of the comparison (explain_monitors), whose
  /// profile deltas the flame page draws (results/render/flame.h).
  WhyBlock why;
  /// "flame/ID.html" when a cell of the comparison has perf-profile samples
  /// on both sides (has_flame_graphs), linked from its page; "" otherwise.
  std::string flame_page;
};

/// One published bisect session: its record, its steps and where its page is.
struct SiteBisect {
  BisectSession session;
  std::vector<BisectStep> steps;
  std::string page;          ///< "bisect/ID.html", relative to the index
  SiteLink first_bad_table;  ///< the comparison good vs first bad commit; page "" = none
  std::string log;           ///< the session as `nightjar bisect log` prints it
};

/// One published cell: its history, its figures and where its page is.
struct SiteCell {
  std::string job, workload;
  std::string page;                ///< the cell page, relative to the index ("cells/ID.html")
  std::string testboxes, kernels;  ///< of this cell's runs, comma separated
  MetricDescriptor metric;         ///< the metric shown
  TrendSeries series;              ///< builds, change points, possible change
  std::string sparkline_svg;       ///< small figure for the index (plots/svg.h markup)
  std::string figure_svg;          ///< history figure for the cell page (plots/svg.h markup)
  /// The verdict of this cell's row in the job's latest comparison (newest
  /// build against the last good one), e.g. "regression", with the %change;
  /// empty when no comparison holds the cell.
  std::string latest_verdict, latest_verdict_class;
  double latest_pct = 0;              ///< the %change of that row (NaN: undefined)
  std::string latest_base;            ///< that comparison's base build (the last good build)
  SiteLink latest_comparison;         ///< the page of that comparison
  std::vector<SiteLink> comparisons;  ///< every published comparison holding the cell
  /// The stored audits of `metric` on the cell's testboxes (`nightjar
  /// audit`): "TESTBOX: " + audit_text per testbox and mode
  /// (results/compare/audit.h); empty when none is stored.
  std::vector<std::string> audits;
};

/// The whole site: the cells in index order (the caller orders them: worst
/// regression first).
struct SiteIndex {
  HtmlPageInfo info;
  stats::ChangePointOptions detection;  ///< the change-point parameters used
  std::vector<SiteCell> cells;
  std::vector<SiteComparison> comparisons;
  std::vector<SiteBisect> bisects;
  std::vector<std::string> notes;  ///< what was left out and why
};

/// index.html: a header (database, testboxes, kernels, generation time),
/// filters by job, workload, testbox and kernel (an inline script that hides
/// non-matching rows; without script every row shows), and one table row per
/// cell (`<tr class="cell-row">` with data-job/-workload/-testbox/-kernel):
/// job, workload, cell (link to its page), metric, sparkline, builds, latest
/// build and value, the newest change points, the status of the newest
/// builds and the latest verdict (a link to its comparison); then the list of
/// comparisons and the list of bisect sessions. A cell with a latest verdict
/// gets its status from that verdict (the same decision: docs/publish.md
/// "The pages"), dated by the trend's newest change when that change lies
/// after the comparison's base and goes the same way; a cell without one
/// gets the trend's newest change, or "no change".
std::string render_site_index_html(const SiteIndex& site);

/// The page of `cell` (written at cell.page, one folder below the index): the
/// header, the history figure, the change points (build, date, before ->
/// after, %change, p, verdict), a possible change of the newest builds, and
/// the table of builds (`<table class="builds">`: build, date, the number of
/// runs pooled, their run ids, n, mean, CoeffVar, invalid samples, change
/// point), and links to the comparisons holding it.
std::string render_site_cell_html(const SiteIndex& site, const SiteCell& cell);

/// The page of comparison `c` (written at c.page, one folder below the
/// index): the header (the sides' testboxes and kernels), the sides (runs,
/// variants, builds, kernels, testboxes, excluded runs), the verdict line,
/// a table of the metric rows (`<tr class="compare-row">`, the decision
/// first so that it fits a 1280-pixel window: cell, metric, per side mean;
/// per NEW side %change, the verdict with its reason, p and q; then per side
/// CoeffVar, n with invalid samples, within/between-run CoeffVar; every
/// table in a box that scrolls on its own when wider than the window),
/// a link to the flame page when it has one (c.flame_page), the monitor
/// rows, the unmatched cells, the warnings and notes, and the
/// same record as `nightjar compare` prints it (mmtests layout, in <pre>).
std::string render_site_comparison_html(const SiteIndex& site, const SiteComparison& c);

/// The page of bisect session `b` (written at b.page): the header, the
/// session (kind, repository, good and bad revisions with their commits,
/// job, metric, status, result, first bad commit, times), the first bad
/// commit's comparison (link, when published), the table of steps
/// (`<tr class="bisect-step">`: step, commit, subject, role, build status
/// and seconds, decision, verdict, %change, p, q, n base/now, runs, reason)
/// and the session as `nightjar bisect log` prints it (in <pre>).
std::string render_site_bisect_html(const SiteIndex& site, const SiteBisect& b);

}  // namespace nightjar

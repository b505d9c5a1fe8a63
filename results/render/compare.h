// Renderers of a comparison record (results/compare/comparison.h), one file each:
// compare_mmtests.cpp, compare_lkp.cpp, compare_markdown.cpp, compare_json.cpp,
// compare_csv.cpp (the table of formats: compare_formats.cpp). They read only the record and
// compute nothing: every figure they print was computed by the statistics module when the record
// was built. Layouts: docs/reference.md "mmtests compare table" and "LKP compare table"; examples
// in docs/compare.md. Text layouts (mmtests, lkp, markdown) print the verdict line first, then
// Comparison::warnings. Figures measured under qemu TCG carry kEmulationTag ("[TCG]", explained by
// the emulation warning): at the end of each line of the row in mmtests and lkp (whose columns have
// fixed widths), beside the side's value in markdown, `"emulated": true` in JSON and the columns
// base_emulated, new_emulated in CSV. Invalid samples (docs/compare.md "Invalid samples"): every
// layout's notes name each row that left some out ("b: throughput n=4 (1 invalid): run 7 iteration
// 4:
// ..."); markdown adds them to its n ("(4, 1 invalid)"), JSON has an
// "invalid" count beside "n" (absent: 0), CSV the columns base_invalid and
// new_invalid (only when some side holds any).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results/compare/comparison.h"
#include "results/model/text.h"

namespace nightjar {

/// Options of the text layouts.
struct RenderOptions {
  int width = 12;      ///< mmtests: value width W of `%W.Pf`
  int precision = 2;   ///< mmtests and markdown: decimals P of `%W.Pf`
  bool color = false;  ///< ANSI colour: red regression, green improvement (mmtests, lkp)
  /// n per side (issue 19): mmtests adds an `n` line per metric row, lkp
  /// puts each side's n (or its range over the rows) beside the side's name
  /// in its header. Markdown, JSON and CSV always show n.
  bool show_n = true;
  /// CoeffVar per row: lkp prints ` ±N%` on every row (0-day prints it only
  /// above 2%: false gives that). mmtests always has its CoeffVar line and
  /// markdown its ±CoeffVar.
  bool show_cv = true;
};

/// `text` in the ANSI colour of a verdict: red for a regression, green for
/// an improvement (the colours of mmtests' and LKP's terminals); other
/// verdicts, or `enabled` false, leave it as it is. The one colour helper of
/// the renderers (NO_COLOR and --color are decided by the CLI).
std::string verdict_colour(const std::string& text, stats::Verdict verdict, bool enabled);

/// mmtests compare-kernels layout (docs/reference.md "mmtests compare table"): verdict line,
/// warnings, blank line, two header rows (the side's kernel release, when it ran on one, above the
/// side's name; both whole, never split at a '-' as mmtests does), then per statistic (Min,
/// Hmean/Amean, Stddev, CoeffVar, Max, BHmean-50/95/99 or BAmean-xx for times) every operation;
/// `%W.Pf` then ` (%7.2f%%)`, or ` *%7.2f%%*` on the mean line of a significant row; W is
/// --width or, when wider, the widest value or header, and the %change is
/// as wide as its widest text when that exceeds 7 (a change of 1e4% or
/// more), so every column stays aligned; an undefined change is
/// ` (     n/a)`, as wide. With show_n an `n` line per operation follows
/// (each side's sample count right-aligned in its value column, no
/// %change). Monitor rows follow after a blank line (Amean, plain %change,
/// never starred), then the notes ("note: ...").
std::string render_mmtests(const Comparison& c, const RenderOptions& options = {});

/// LKP / 0-day layout (docs/reference.md "LKP compare table"): verdict line, warnings, 0-day
/// headlines of the significant rows ("-18.4% regression of
/// fake.throughput"), then the `%stddev %change %stddev` table: metric rows
/// (named workload.operation), then monitor rows grouped by prefix; then the
/// notes. Averages are the rows' summary means (Hmean for rates); %change is
/// plain (sign of new − base). With show_n each side's header names its n
/// over the metric rows ("a (n=5)", "b (n=5-10)"); show_cv prints ` ±N%` on
/// every row, else only above 2% as 0-day.
std::string render_lkp(const Comparison& c, const RenderOptions& options = {});

/// Markdown: verdict line in bold, a table of metric rows (summary mean ±
/// CoeffVar per side, %change, verdict, q), a table of monitor rows, notes as
/// a list. Significant changes are bold.
std::string render_markdown(const Comparison& c, const RenderOptions& options = {});

/// JSON, versioned: {"format": "nightjar-compare", "version": 1, ...}; see
/// docs/compare.md for every key. Undefined numbers are null.
std::string render_json(const Comparison& c);

/// CSV (RFC 4180 quoting): a header line, then one line per row and NEW side
/// (metric rows, then monitor rows). Undefined numbers are empty.
std::string render_csv(const Comparison& c);

/// One layout of a comparison (`compare --format NAME`).
struct ComparisonFormat {
  std::string_view name;  ///< the --format value: "mmtests", "lkp", ...
  std::string_view doc;   ///< for --help
  std::string (*render)(const Comparison& c, const RenderOptions& options);
};

/// Every layout of a comparison, the default (mmtests) first. A new layout
/// is a render function and one row of this table (compare_formats.cpp).
const std::vector<ComparisonFormat>& comparison_formats();

/// The layout named `name`, or nullptr.
const ComparisonFormat* find_comparison_format(std::string_view name);

}  // namespace nightjar

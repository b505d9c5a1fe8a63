// Layouts of the "what else changed" block (results/compare/why.h) that
// `nightjar compare --why` prints under the comparison: text (after the
// mmtests and lkp tables), markdown (after the markdown layout) and JSON
// (with --format json the comparison object gains a "why" array). They
// read the record only (docs/monitors.md "Reading the block").
#pragma once

#include <cstddef>
#include <string>

#include "results/compare/why.h"

namespace nightjar {

/// Text: per NEW side a heading line saying the rule and the family size,
/// then one line per moved row, largest effect first: label, both means,
/// %change, ratio new/base with its CI, q; then the appeared/vanished rows.
/// "no monitor row changed significantly" when none moved.
std::string render_why_text(const WhyBlock& block, int precision = 2);

/// Markdown: the same as a table per NEW side under "### What else changed".
std::string render_why_markdown(const WhyBlock& block, int precision = 2);

/// The block for a changelog (`nightjar report --why`), at most `width`
/// columns: per NEW side a heading with the rule, then the moved monitor rows
/// ("  perf.page-faults  -99.80%  x0.002  q 1e-12"), then per profiled cell
/// up to `limit` moved symbol shares ("  clear_page_erms  self  3.2% ->
/// 92.4%  +89.2 pts"), long names cut in the middle. ASCII only.
std::string render_why_changelog(const WhyBlock& block, std::size_t width = 72,
                                 std::size_t limit = 10);

/// Text of the profile block of one NEW side (docs/compare.md "The profile
/// block"): per cell a heading (event, iterations and samples per side, how
/// many of the tested symbol shares moved), then up to `limit` moved shares,
/// largest |change| first: "symbol  self|children  B% -> N%  (+D pts [lo,
/// hi])  q Q", and "  — changed by SHA (FILE)" when the share's function
/// was changed by `commit` (ProfileMove::changed_in). Empty when the side has
/// no profiles. render_why_text ends with it.
std::string render_profile_text(const WhySide& side, double alpha, std::size_t limit = 20,
                                const std::string& commit = "");

/// JSON (one line, no trailing newline): an array with one object per NEW
/// side {"commit" (`--commit`, or ""),"base","new","family","moved":[
/// {"operation","name","cell",
/// "base_mean","new_mean","base_n","new_n","change_pct","effect","verdict",
/// "p","q","ratio_lo","ratio_hi","appeared","vanished"}],"profiles":[{"cell",
/// "base_event","new_event","base_iterations","new_iterations",
/// "base_samples","new_samples","base_lost","new_lost","family","moved":[
/// {"symbol","share" ("self"|"children"),"base_pct","new_pct","diff_pts",
/// "lo_pts","hi_pts","p","q","changed_in"}],"flame_scale","flame"}]} (shares in % of samples,
/// differences in percentage points, changed_in the file --commit changed
/// the function in or ""), then "flame_scale" and "flame": the merged
/// differential flame graph of the cell (ProfileDelta::flame) as a tree of
/// {"name","base","new","delta","children":[...]}, root "all", base and new
/// the samples of the path summed over each side's iterations, delta = new −
/// base·flame_scale; non-finite numbers are null.
std::string render_why_json(const WhyBlock& block);

}  // namespace nightjar

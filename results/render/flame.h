// The differential flame graph page of `nightjar compare --why --flamegraph
// FILE.html` and of `nightjar publish` (flame/ID.html), docs/compare.md "The
// flame graph". A renderer only: it reads the merged stacks that
// explain_profile recorded (ProfileDelta::flame, results/compare/why.h) and
// draws them with the vendored d3 7.9.2 and d3-flame-graph 5.0.0
// (results/render/vendor/, compiled into the binary by
// cmake/embed_text.cmake), inlined into the page so that it works from
// file:// without network. Each NEW side's cell with profiles gets one graph:
// the frames are NEW's merged stacks (width = NEW samples), coloured by
// d3-flame-graph's differential colour mapper on FlameNode::delta: red more
// samples in NEW than in BASE (scaled to NEW's total), blue fewer, orange a
// path BASE never sampled; the legend names the sides with their selectors.
#pragma once

#include <string>

#include "results/compare/why.h"

namespace nightjar {

/// The vendored scripts (generated from results/render/vendor/).
std::string vendor_d3_js();
std::string vendor_flamegraph_js();

/// True when a side of `block` has a cell with NEW samples to draw.
bool has_flame_graphs(const WhyBlock& block);

/// The standalone HTML page: a title naming the sides, a legend ("red: more
/// in NEW (SELECTOR), blue: fewer than BASE (SELECTOR)"), and per NEW side
/// and cell with profiles a section (`<section class="flame">`) with the
/// cell, both sides' samples, iterations and events, and two graphs
/// (d3-flame-graph's SVG, one `<rect>` a frame; hovering a frame shows its
/// samples on both sides and the delta): NEW's stacks in
/// `<div class="flame-graph new-graph">`, then BASE's stacks with the same
/// colours in `<div class="flame-graph base-graph">`, where the paths that
/// NEW lost entirely (no width in the first) show.
/// `back` is a link shown at the top ("" = none), for the published site.
std::string render_flame_html(const WhyBlock& block, const std::string& title,
                              const std::string& back = "");

}  // namespace nightjar

// A dependency-free SVG drawing of a history figure (plots/plot.h, PlotKind::
// history), for the pages of `nightjar publish` (docs/publish.md): every
// sample as a dot, the per-build summary mean as a line, each change point as
// a dashed vertical line at the first build of the new level. The SVG text is
// produced by a mustache template (kainjow mustache, libkainjow-mustache-dev),
// which escapes every label; the writer reads the record and only maps its
// numbers to pixels.
#pragma once

#include <string>

#include "plots/plot.h"

namespace nightjar {

/// Size and detail of a drawn history.
struct SvgFigureSpec {
  int width = 720;   ///< SVG user units (pixels at 100% zoom)
  int height = 320;  ///< SVG user units
  /// A sparkline for the index: no axes, title or dots, only the mean lines
  /// and the change-point markers.
  bool small = false;
};

/// The history figure of `data` as one `<svg>` element (inline in HTML, or a
/// file of its own). The figure carries `class="nightjar-figure"`, each mean
/// line `class="mean-line"`, each sample dot `class="sample"` and each change
/// marker `class="change-point"` with `data-build` (the build label), and
/// each point of runs under qemu TCG (PlotPoint::emulated) an open triangle
/// `class="emulated"` with `data-build`, explained by a legend
/// `class="emulated-legend"` (kEmulationMark; neither in a sparkline), so
/// that tests find them in the DOM. Points with an undefined mean are
/// skipped. Throws std::invalid_argument unless data.kind is history and the
/// size is at least 40x20.
std::string render_history_svg(const PlotData& data, const SvgFigureSpec& spec);

}  // namespace nightjar

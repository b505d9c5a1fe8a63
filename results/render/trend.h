// Renderers of `nightjar trend` (results/compare/trend.h): they read the
// trend record and compute nothing.
#pragma once

#include <string>

#include "results/compare/trend.h"

namespace nightjar {

/// Text layout: per cell, the method line, the change points (build where the
/// new level starts, before -> after, %change, p, verdict word) and, with
/// `history`, every point with a marker at the change points.
std::string render_trend_text(const TrendReport& report, bool history);
/// Markdown (for the nightly report): one table of change points per cell.
std::string render_trend_markdown(const TrendReport& report);
/// JSON {"format": "nightjar-trend", "version": 1, ...}.
std::string render_trend_json(const TrendReport& report);

}  // namespace nightjar

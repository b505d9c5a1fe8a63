// The table of comparison layouts (results/render/compare.h).
#include "results/render/compare.h"

namespace nightjar {

const std::vector<ComparisonFormat>& comparison_formats() {
  static const std::vector<ComparisonFormat> formats = {
      {"mmtests", "mmtests compare-kernels table", render_mmtests},
      {"lkp", "LKP / 0-day %stddev %change table", render_lkp},
      {"markdown", "markdown tables", render_markdown},
      {"json", "versioned JSON (nightjar-compare)",
       [](const Comparison& c, const RenderOptions&) { return render_json(c); }},
      {"csv", "one CSV line per row and NEW side",
       [](const Comparison& c, const RenderOptions&) { return render_csv(c); }},
  };
  return formats;
}

const ComparisonFormat* find_comparison_format(std::string_view name) {
  for (const auto& f : comparison_formats())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace nightjar

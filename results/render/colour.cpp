// The one colour helper of the renderers (results/render/compare.h).
#include "results/render/compare.h"

namespace nightjar {

std::string verdict_colour(const std::string& text, stats::Verdict verdict, bool enabled) {
  if (!enabled) return text;
  if (verdict == stats::Verdict::regression) return "\033[31m" + text + "\033[0m";
  if (verdict == stats::Verdict::improvement) return "\033[32m" + text + "\033[0m";
  return text;
}

}  // namespace nightjar

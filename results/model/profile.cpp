// Folded call stacks and their per-symbol counts.
#include "results/model/profile.h"

#include <set>
#include <vector>

#include "results/model/text.h"

namespace nightjar {

std::uint64_t IterationProfile::samples() const {
  std::uint64_t n = 0;
  for (const auto& [stack, count] : stacks) n += count;
  return n;
}

std::string fold_frames(std::span<const std::string> leaf_first) {
  std::string out;
  for (auto it = leaf_first.rbegin(); it != leaf_first.rend(); ++it) {
    if (!out.empty()) out += ';';
    if (it->empty()) {
      out += "[unknown]";
      continue;
    }
    for (char c : *it) out += c == ';' ? ':' : c;
  }
  return out;
}

std::string folded_text(const IterationProfile& profile) {
  std::string out;
  for (const auto& [stack, count] : profile.stacks)
    out += stack + " " + std::to_string(count) + "\n";
  return out;
}

SymbolCounts symbol_counts(const std::map<std::string, std::uint64_t>& stacks) {
  SymbolCounts out;
  std::set<std::string_view> seen;
  for (const auto& [stack, count] : stacks) {
    out.samples += count;
    const std::vector<std::string> frames = split(stack, ';');
    if (frames.empty()) continue;
    out.self[frames.back()] += count;
    seen.clear();
    for (const auto& f : frames)
      if (seen.insert(f).second) out.children[f] += count;
  }
  return out;
}

}  // namespace nightjar

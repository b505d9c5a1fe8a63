// The "what else changed" block in text, markdown and JSON.
#include "results/render/why.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace nightjar {
namespace {

std::string number(double v, int precision) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, precision) : "n/a";
}

std::string pct(const WhyEntry& e) {
  if (e.appeared) return "appeared";
  if (e.vanished) return "vanished";
  return std::isfinite(e.change_pct) ? fmt::format("{:+.2f}%", e.change_pct) : "n/a";
}

// "x0.0021 [0.0020, 0.0022]" or "x512 [497, 530]": new/base and its CI.
std::string ratio(const WhyEntry& e) {
  if (!(e.base_mean > 0) || !(e.new_mean >= 0) || e.appeared || e.vanished) return "";
  std::string out = fmt::format("x{:.4g}", e.new_mean / e.base_mean);
  const auto& s = e.significance;
  if (s.ratio_lo && s.ratio_hi) out += fmt::format(" [{:.4g}, {:.4g}]", *s.ratio_lo, *s.ratio_hi);
  return out;
}

std::string q_text(const WhyEntry& e) {
  return e.significance.q ? fmt::format("{:.2g}", *e.significance.q) : "";
}

std::string heading(const WhySide& s, double alpha) {
  return fmt::format(
      "what else changed, {} vs {}: {} of {} monitor rows moved (the metrics' rule: BH over the "
      "monitor rows at q < {}), largest effect first",
      s.side, s.base, s.moved.size(), s.family, alpha);
}

}  // namespace

std::string render_why_text(const WhyBlock& block, int precision) {
  std::string out;
  for (const auto& s : block.sides) {
    out += "\n" + heading(s, block.alpha) + "\n";
    if (s.moved.empty()) {
      out += "  no monitor row changed significantly\n";
      continue;
    }
    std::size_t w = 7, wb = s.base.size(), wn = s.side.size();
    for (const auto& e : s.moved) {
      w = std::max(w, e.operation.size());
      wb = std::max(wb, number(e.base_mean, precision).size());
      wn = std::max(wn, number(e.new_mean, precision).size());
    }
    out += fmt::format("  {:<{}}  {:>{}}  {:>{}}  {:>10}  {:<34}  {}\n", "monitor", w, s.base, wb,
                       s.side, wn, "change", "ratio new/base [CI]", "q");
    for (const auto& e : s.moved)
      out += fmt::format("  {:<{}}  {:>{}}  {:>{}}  {:>10}  {:<34}  {}\n", e.operation, w,
                         number(e.base_mean, precision), wb, number(e.new_mean, precision), wn,
                         pct(e), ratio(e), q_text(e));
  }
  return out;
}

std::string render_why_markdown(const WhyBlock& block, int precision) {
  std::string out;
  for (const auto& s : block.sides) {
    out += "\n### What else changed: " + s.side + " vs " + s.base + "\n\n" +
           heading(s, block.alpha) + ".\n\n";
    if (s.moved.empty()) {
      out += "No monitor row changed significantly.\n";
      continue;
    }
    out += "| monitor | " + s.base + " | " + s.side + " | change | ratio new/base [CI] | q |\n";
    out += "|---|--:|--:|--:|---|--:|\n";
    for (const auto& e : s.moved)
      out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", e.operation,
                         number(e.base_mean, precision), number(e.new_mean, precision), pct(e),
                         ratio(e), q_text(e));
  }
  return out;
}

std::string render_why_json(const WhyBlock& block) {
  using nlohmann::ordered_json;
  auto num = [](double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); };
  auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : ordered_json(nullptr); };
  ordered_json sides = ordered_json::array();
  for (const auto& s : block.sides) {
    ordered_json moved = ordered_json::array();
    for (const auto& e : s.moved)
      moved.push_back({{"operation", e.operation},
                       {"name", e.name},
                       {"cell", e.cell},
                       {"base_mean", num(e.base_mean)},
                       {"new_mean", num(e.new_mean)},
                       {"base_n", e.base_n},
                       {"new_n", e.new_n},
                       {"change_pct", num(e.change_pct)},
                       {"effect", num(e.effect)},
                       {"verdict", std::string(stats::to_string(e.significance.verdict))},
                       {"p", opt(e.significance.p)},
                       {"q", opt(e.significance.q)},
                       {"ratio_lo", opt(e.significance.ratio_lo)},
                       {"ratio_hi", opt(e.significance.ratio_hi)},
                       {"appeared", e.appeared},
                       {"vanished", e.vanished}});
    sides.push_back({{"base", s.base}, {"new", s.side}, {"family", s.family}, {"moved", moved}});
  }
  return sides.dump();
}

}  // namespace nightjar

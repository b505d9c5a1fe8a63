// The "what else changed" block in text, markdown and JSON.
#include "results/render/why.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "results/model/text.h"

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

// "clear_page_erms  self  0.2% -> 61.3%  (+61.1 pts [+58.2, +64.0])".
std::string share_move(const ProfileMove& m) {
  return fmt::format("{:.1f}% -> {:.1f}%  ({:+.1f} pts [{:+.1f}, {:+.1f}])", m.base_pct, m.new_pct,
                     m.diff_pts, m.lo_pts, m.hi_pts);
}

// "  — changed by 3f2a1b2c4d5e (mm/memory.c)" or "".
std::string changed_by(const ProfileMove& m, const std::string& commit) {
  if (m.changed_in.empty()) return "";
  return fmt::format("  \u2014 changed by {} ({})", commit.substr(0, 12), m.changed_in);
}

std::string profile_heading(const WhySide& s, const ProfileDelta& d, double alpha) {
  std::string events =
      d.base_event == d.new_event ? d.base_event : d.base_event + " vs " + d.new_event;
  std::string lost;
  if (d.base_lost + d.new_lost > 0)
    lost = fmt::format(", {} and {} samples lost", d.base_lost, d.new_lost);
  return fmt::format(
      "profile, {} vs {}, {}: {}, {} vs {} iterations, {} vs {} samples{}; {} of {} symbol "
      "shares moved (Welch on per-iteration shares, BH at q < {}), largest first",
      s.side, s.base, d.cell, events, d.base_n, d.new_n, d.base_samples, d.new_samples, lost,
      d.moved.size(), d.family, alpha);
}

}  // namespace

std::string render_profile_text(const WhySide& side, double alpha, std::size_t limit,
                                const std::string& commit) {
  std::string out;
  for (const auto& d : side.profiles) {
    out += "\n" + profile_heading(side, d, alpha) + "\n";
    if (d.base_n < 2 || d.new_n < 2) {
      out += "  fewer than 2 profiled iterations on a side: not tested\n";
      continue;
    }
    if (d.moved.empty()) {
      out += "  no symbol's share of samples changed significantly\n";
      continue;
    }
    std::size_t w = 6;
    const std::size_t shown = std::min(limit, d.moved.size());
    for (std::size_t i = 0; i < shown; ++i) w = std::max(w, d.moved[i].symbol.size());
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& m = d.moved[i];
      out += fmt::format("  {:<{}}  {:<8}  {:<44}  q {:.2g}{}\n", m.symbol, w,
                         m.self ? "self" : "children", share_move(m), m.q, changed_by(m, commit));
    }
    if (shown < d.moved.size())
      out += fmt::format("  ... {} more (--format json lists them all)\n", d.moved.size() - shown);
  }
  return out;
}

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
  for (const auto& s : block.sides) out += render_profile_text(s, block.alpha, 20, block.commit);
  return out;
}

namespace {

// `text` wrapped to `width` columns, continuation lines indented by two.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out;
  for (const auto& line : wrap_words(text, width)) out += line + "\n";
  return out;
}

}  // namespace

std::string render_why_changelog(const WhyBlock& block, std::size_t width, std::size_t limit) {
  std::string out;
  const std::size_t name_w = width > 44 ? width - 44 : 12;
  for (const auto& s : block.sides) {
    out += "\n" + wrapped(fmt::format("What else changed, {} vs {}: {} of {} monitor rows "
                                      "moved (BH, q < {}).",
                                      s.side, s.base, s.moved.size(), s.family, block.alpha),
                          width);
    for (std::size_t i = 0; i < std::min(limit, s.moved.size()); ++i) {
      const auto& e = s.moved[i];
      std::string r = ratio(e);
      if (const auto sp = r.find(' '); sp != std::string::npos) r = r.substr(0, sp);
      out +=
          rstrip_spaces(fmt::format("  {:<{}}  {:>9}  {:<9}  q {}", cut_middle(e.operation, name_w),
                                    name_w, pct(e), r, q_text(e))
                            .substr(0, width)) +
          "\n";
    }
    if (s.moved.size() > limit)
      out += fmt::format("  ... {} more (compare --why)\n", s.moved.size() - limit);
    for (const auto& d : s.profiles) {
      out += wrapped(
          fmt::format("Profile of {} ({}, {} vs {} iterations): {} of {} symbol shares moved.",
                      d.cell, d.base_event, d.base_n, d.new_n, d.moved.size(), d.family),
          width);
      for (std::size_t i = 0; i < std::min(limit, d.moved.size()); ++i) {
        const auto& m = d.moved[i];
        out += rstrip_spaces(fmt::format("  {:<{}}  {:<8}  {:>5.1f}% -> {:>5.1f}%  {:+.1f} pts",
                                         cut_middle(m.symbol, name_w), name_w,
                                         m.self ? "self" : "children", m.base_pct, m.new_pct,
                                         m.diff_pts)) +
               "\n";
        if (!m.changed_in.empty())
          out += fmt::format("    changed by {} ({})\n", block.commit.substr(0, 12),
                             cut_middle(m.changed_in, width - 30));
      }
      if (d.moved.size() > limit)
        out += fmt::format("  ... {} more (compare --why)\n", d.moved.size() - limit);
    }
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
  for (const auto& s : block.sides)
    for (const auto& d : s.profiles) {
      out += "\n#### Profile: " + s.side + " vs " + s.base + ", " + d.cell + "\n\n" +
             profile_heading(s, d, block.alpha) + ".\n\n";
      if (d.moved.empty()) {
        out += "No symbol's share of samples changed significantly.\n";
        continue;
      }
      out += "| symbol | share | " + s.base + " | " + s.side + " | change pts [CI] | q |\n";
      out += "|---|---|--:|--:|---|--:|\n";
      for (std::size_t i = 0; i < std::min<std::size_t>(d.moved.size(), 25); ++i) {
        const auto& m = d.moved[i];
        out += fmt::format(
            "| `{}` | {} | {:.1f}% | {:.1f}% | {:+.1f} [{:+.1f}, {:+.1f}] | {:.2g}{} |\n", m.symbol,
            m.self ? "self" : "children", m.base_pct, m.new_pct, m.diff_pts, m.lo_pts, m.hi_pts,
            m.q, changed_by(m, block.commit));
      }
      if (d.moved.size() > 25)
        out += fmt::format("\n{} more in `--format json`.\n", d.moved.size() - 25);
    }
  return out;
}

namespace {

// {"name","base","new","delta","children":[...]}: the merged tree as stored.
nlohmann::ordered_json flame_json(const FlameNode& n) {
  nlohmann::ordered_json children = nlohmann::ordered_json::array();
  for (const auto& c : n.children) children.push_back(flame_json(c));
  return {{"name", n.name},
          {"base", n.base},
          {"new", n.now},
          {"delta", std::isfinite(n.delta) ? nlohmann::ordered_json(n.delta)
                                           : nlohmann::ordered_json(nullptr)},
          {"children", std::move(children)}};
}

}  // namespace

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
    ordered_json profiles = ordered_json::array();
    for (const auto& d : s.profiles) {
      ordered_json symbols = ordered_json::array();
      for (const auto& m : d.moved)
        symbols.push_back({{"symbol", m.symbol},
                           {"share", m.self ? "self" : "children"},
                           {"base_pct", num(m.base_pct)},
                           {"new_pct", num(m.new_pct)},
                           {"diff_pts", num(m.diff_pts)},
                           {"lo_pts", num(m.lo_pts)},
                           {"hi_pts", num(m.hi_pts)},
                           {"p", num(m.p)},
                           {"q", num(m.q)},
                           {"changed_in", m.changed_in}});
      profiles.push_back({{"cell", d.cell},
                          {"base_event", d.base_event},
                          {"new_event", d.new_event},
                          {"base_iterations", d.base_n},
                          {"new_iterations", d.new_n},
                          {"base_samples", d.base_samples},
                          {"new_samples", d.new_samples},
                          {"base_lost", d.base_lost},
                          {"new_lost", d.new_lost},
                          {"family", d.family},
                          {"moved", symbols},
                          {"flame_scale", num(d.flame_scale)},
                          {"flame", flame_json(d.flame)}});
    }
    sides.push_back({{"commit", block.commit},
                     {"base", s.base},
                     {"new", s.side},
                     {"family", s.family},
                     {"moved", moved},
                     {"profiles", profiles}});
  }
  return sides.dump();
}

}  // namespace nightjar

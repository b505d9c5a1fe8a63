// Renderers of a trend report (results/render/trend.h).
#include "results/render/trend.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "results/model/text.h"
#include "results/render/table.h"

namespace nightjar {

namespace {

using stats::verdict_word;

std::string method_line(const TrendReport& r) {
  const auto& d = r.detection;
  return fmt::format(
      "change points: E-divisive means (exponent {:g}, windows of {} points) + Welch t-test on "
      "log values, kept when p <= {:g} and |%change| >= {:g}%, at least {} points per side",
      d.exponent, d.window == 0 ? std::string("all") : std::to_string(d.window), d.max_p,
      d.min_effect_pct, d.min_segment);
}

// "possible change since night 12 (b12), needs confirmation (1 night): 100.0000
// -> 90.0000, -10.00% regression, p 0.0010" (stats::detect_recent_change).
std::string possible_text(const TrendSeries& s, const stats::ChangePoint& cp) {
  const std::size_t k = cp.segment_end - cp.index;
  return fmt::format(
      "possible change since night {} ({}), needs confirmation ({} night{}): {} -> {}, {:.2f}% "
      "{}, p {}",
      cp.index + 1, s.points[cp.index].build, k, k == 1 ? "" : "s", table_number(cp.mean_before),
      table_number(cp.mean_after), cp.pct_change, verdict_word(cp), p_text(cp.p));
}

// "possible change at night 3 (b3), a short segment (2 | 2 nights): 100.0000
// -> 130.0000, 30.00% improvement, p 0.0001" (stats::detect_short_changes).
std::string short_text(const TrendSeries& s, const stats::ChangePoint& cp) {
  return fmt::format(
      "possible change at night {} ({}), a short segment ({} | {} nights): {} -> {}, {:.2f}% {}, "
      "p {}",
      cp.index + 1, s.points[cp.index].build, cp.index - cp.segment_begin,
      cp.segment_end - cp.index, table_number(cp.mean_before), table_number(cp.mean_after),
      cp.pct_change, verdict_word(cp), p_text(cp.p));
}

}  // namespace

std::string render_trend_text(const TrendReport& r, bool history) {
  using A = TextTable::Align;
  std::string out =
      fmt::format("trend of {} ({}, {} is better, {}) in job {}\n", r.metric.name,
                  r.metric.unit.empty() ? "no unit" : r.metric.unit,
                  r.metric.direction == Direction::higher_is_better ? "higher" : "lower",
                  mean_label(r.metric.mean), r.job);
  out += method_line(r) + "\n";
  for (const auto& s : r.series) {
    out += fmt::format("\ncell {}: {} build(s), {} change point(s)\n", s.cell, s.points.size(),
                       s.change_points.size());
    if (s.points.size() < 2 * r.detection.min_segment)
      out += fmt::format("  (too short to find change points: needs {} builds)\n",
                         2 * r.detection.min_segment);
    if (!s.change_points.empty()) {
      TextTable t({"  at build", "date", "before", "after", "%change", "p", "verdict", "points"},
                  {A::left, A::left, A::right, A::right, A::right, A::right, A::left, A::left});
      for (const auto& cp : s.change_points) {
        const TrendPoint& p = s.points[cp.index];
        t.add_row({"  " + p.build, p.date, table_number(cp.mean_before),
                   table_number(cp.mean_after), fmt::format("{:.2f}%", cp.pct_change), p_text(cp.p),
                   verdict_word(cp),
                   fmt::format("{} | {}", cp.index - cp.segment_begin, cp.segment_end - cp.index)});
      }
      out += t.render();
    }
    for (const auto& cp : s.short_changes) out += "  " + short_text(s, cp) + "\n";
    if (s.possible_change) out += "  " + possible_text(s, *s.possible_change) + "\n";
    if (history) {
      std::map<std::size_t, const stats::ChangePoint*> at;
      for (const auto& cp : s.change_points) at[cp.index] = &cp;
      TextTable t({"  #", "build", "date", "runs", "n", mean_label(r.metric.mean), "CoeffVar", ""},
                  {A::right, A::left, A::left, A::right, A::right, A::right, A::right, A::left});
      for (std::size_t i = 0; i < s.points.size(); ++i) {
        const TrendPoint& p = s.points[i];
        auto it = at.find(i);
        std::string mark = it == at.end()
                               ? ""
                               : fmt::format("<- change point: {:.2f}% {}", it->second->pct_change,
                                             verdict_word(*it->second));
        for (const auto& cp : s.short_changes)
          if (cp.index == i)
            mark = fmt::format("<- possible change (short segment): {:.2f}% {}", cp.pct_change,
                               verdict_word(cp));
        if (s.possible_change && s.possible_change->index == i)
          mark = fmt::format("<- possible change: {:.2f}% {}", s.possible_change->pct_change,
                             verdict_word(*s.possible_change));
        t.add_row({"  " + std::to_string(i + 1), p.build, p.date, std::to_string(p.run_ids.size()),
                   std::to_string(p.n) +
                       (p.invalid ? fmt::format(" ({} invalid)", p.invalid) : std::string()),
                   table_number(p.mean),
                   std::isfinite(p.coeff_var) ? fmt::format("{:.2f}%", p.coeff_var) : "-", mark});
      }
      out += "\n" + t.render();
    }
  }
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string render_trend_markdown(const TrendReport& r) {
  std::string out = fmt::format("### Trend of `{}` in `{}`\n\n", r.metric.name, r.job);
  out += method_line(r) + ".\n";
  for (const auto& s : r.series) {
    out += fmt::format("\n**{}**: {} builds, {} change point(s)\n",
                       s.cell.empty() ? "(no parameters)" : s.cell, s.points.size(),
                       s.change_points.size());
    for (const auto& cp : s.short_changes) out += "\n- " + short_text(s, cp) + "\n";
    if (s.possible_change) out += "\n- " + possible_text(s, *s.possible_change) + "\n";
    if (s.change_points.empty()) continue;
    out +=
        fmt::format("\n| at build | date | before ({0}) | after ({0}) | %change | p | verdict |\n",
                    r.metric.unit);
    out += "|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& cp : s.change_points) {
      const TrendPoint& p = s.points[cp.index];
      out += fmt::format("| {} | {} | {} | {} | {:.2f}% | {} | {} |\n", p.build, p.date,
                         table_number(cp.mean_before), table_number(cp.mean_after), cp.pct_change,
                         p_text(cp.p), verdict_word(cp));
    }
  }
  for (const auto& n : r.notes) out += "\n- note: " + n;
  if (!r.notes.empty()) out += "\n";
  return out;
}

std::string render_trend_json(const TrendReport& r) {
  using nlohmann::json;
  auto num = [](double v) -> json { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["format"] = "nightjar-trend";
  j["version"] = 1;
  j["job"] = r.job;
  j["metric"] = {{"name", r.metric.name},
                 {"unit", r.metric.unit},
                 {"direction", std::string(to_string(r.metric.direction))},
                 {"mean", std::string(to_string(r.metric.mean))}};
  j["detection"] = {
      {"method", "e-divisive means + welch"}, {"max_p", r.detection.max_p},
      {"window", r.detection.window},         {"min_effect_pct", r.detection.min_effect_pct},
      {"exponent", r.detection.exponent},     {"min_segment", r.detection.min_segment}};
  j["series"] = json::array();
  for (const auto& s : r.series) {
    json js;
    js["workload"] = s.workload;
    js["cell"] = s.cell;
    js["points"] = json::array();
    for (const auto& p : s.points) {
      json point = {{"build", p.build}, {"date", p.date},      {"runs", p.run_ids},
                    {"n", p.n},         {"mean", num(p.mean)}, {"coeff_var", num(p.coeff_var)}};
      if (p.invalid) point["invalid"] = p.invalid;  // absent: none
      js["points"].push_back(std::move(point));
    }
    js["change_points"] = json::array();
    for (const auto& cp : s.change_points)
      js["change_points"].push_back({{"index", cp.index},
                                     {"build", s.points[cp.index].build},
                                     {"previous_build", s.points[cp.index - 1].build},
                                     {"before", num(cp.mean_before)},
                                     {"after", num(cp.mean_after)},
                                     {"pct_change", num(cp.pct_change)},
                                     {"p", num(cp.p)},
                                     {"verdict", verdict_word(cp)},
                                     {"points_before", cp.index - cp.segment_begin},
                                     {"points_after", cp.segment_end - cp.index}});
    js["short_changes"] = nlohmann::json::array();
    for (const auto& cp : s.short_changes)
      js["short_changes"].push_back({{"index", cp.index},
                                     {"build", s.points[cp.index].build},
                                     {"before", num(cp.mean_before)},
                                     {"after", num(cp.mean_after)},
                                     {"pct_change", num(cp.pct_change)},
                                     {"p", num(cp.p)},
                                     {"verdict", verdict_word(cp)},
                                     {"points_before", cp.index - cp.segment_begin},
                                     {"points_after", cp.segment_end - cp.index}});
    js["possible_change"] = nullptr;
    if (const auto& cp = s.possible_change)
      js["possible_change"] = {{"index", cp->index},
                               {"build", s.points[cp->index].build},
                               {"nights", cp->segment_end - cp->index},
                               {"before", num(cp->mean_before)},
                               {"after", num(cp->mean_after)},
                               {"pct_change", num(cp->pct_change)},
                               {"p", num(cp->p)},
                               {"verdict", verdict_word(*cp)}};
    j["series"].push_back(std::move(js));
  }
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace nightjar

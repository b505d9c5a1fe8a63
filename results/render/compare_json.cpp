// JSON layout of a comparison, versioned (docs/compare.md "json").
#include <nlohmann/json.hpp>

#include <cmath>

#include "results/render/compare.h"

namespace nightjar {
namespace {

using nlohmann::ordered_json;

ordered_json json_num(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}
ordered_json json_num(const std::optional<double>& v) {
  return v ? json_num(*v) : ordered_json(nullptr);
}

const char* kind_name(ComparisonRow::Kind k) {
  return k == ComparisonRow::Kind::metric ? "metric" : "monitor";
}

ordered_json side_figures(const SideFigures& f) {
  const auto& s = f.summary;
  ordered_json j{{"n", s.n}};
  if (f.invalid > 0) j["invalid"] = f.invalid;  // absent: none
  j.update(ordered_json{{"runs", f.runs},
                        {"aborted_runs", f.aborted_runs},
                        {"mean", json_num(f.mean)},
                        {"min", json_num(s.n ? s.min : NAN)},
                        {"max", json_num(s.n ? s.max : NAN)},
                        {"amean", json_num(s.n ? s.amean : NAN)},
                        {"hmean", json_num(s.hmean)},
                        {"gmean", json_num(s.gmean)},
                        {"median", json_num(s.n ? s.median : NAN)},
                        {"stddev", json_num(s.stddev)},
                        {"coeff_var", json_num(s.coeff_var)},
                        {"within_run_coeff_var", json_num(f.within_cv_pct)},
                        {"between_run_coeff_var", json_num(f.between_cv_pct)}});
  if (f.emulated) j["emulated"] = true;  // absent: no run under qemu TCG
  return j;
}

// The "environment" array: per NEW side with differences, its facts and
// kconfig diff (docs/environment.md "In compare and check").
ordered_json environment_json(const Comparison& c) {
  ordered_json environment = ordered_json::array();
  for (const auto& d : c.environment) {
    if (d.empty()) continue;
    ordered_json facts = ordered_json::array();
    for (const auto& f : d.facts)
      facts.push_back({{"key", f.key},
                       {"base", f.base},
                       {"new", f.now},
                       {"kind", f.intended   ? "intended"
                                : f.accepted ? "accepted"
                                             : "confounder"}});
    ordered_json e{{"base", d.base_name}, {"new", d.now_name}, {"facts", facts}};
    if (d.kconfig) {
      auto options = [](const std::vector<KconfigChange>& v) {
        ordered_json a = ordered_json::array();
        for (const auto& k : v)
          a.push_back({{"option", k.option}, {"base", k.before}, {"new", k.after}});
        return a;
      };
      e["kconfig"] = {{"removed", options(d.kconfig->removed)},
                      {"added", options(d.kconfig->added)},
                      {"changed", options(d.kconfig->changed)}};
    }
    environment.push_back(e);
  }
  return environment;
}

// The decision of one NEW side on a row: verdict, p/q, intervals, basis and
// its between-run source, what an undecided row needs, and the reason.
void add_significance(ordered_json& ch, const stats::Significance& sig) {
  ch["verdict"] = std::string(stats::to_string(sig.verdict));
  ch["p"] = json_num(sig.p);
  ch["q"] = json_num(sig.q);
  ch["ratio_ci"] = (sig.ratio_lo && sig.ratio_hi)
                       ? ordered_json::array({json_num(sig.ratio_lo), json_num(sig.ratio_hi)})
                       : ordered_json(nullptr);
  ch["smallest_detectable_change_pct"] = json_num(sig.smallest_detectable_change_pct);
  ch["basis"] = std::string(stats::to_string(sig.basis));
  // Where a side with one run took its between-run variation from
  // (docs/statistics.md "Where the between-run variation comes from").
  ch["between_source"] = sig.between
                             ? ordered_json(std::string(stats::to_string(sig.between->source)))
                             : ordered_json(nullptr);
  ch["min_effect_pct"] = sig.min_effect_pct;
  ch["equivalence_ci"] =
      (sig.equivalence_lo && sig.equivalence_hi)
          ? ordered_json::array({json_num(sig.equivalence_lo), json_num(sig.equivalence_hi)})
          : ordered_json(nullptr);
  ch["runs_needed"] = sig.runs_needed ? ordered_json(*sig.runs_needed) : ordered_json(nullptr);
  ch["iterations_needed"] =
      sig.iterations_needed ? ordered_json(*sig.iterations_needed) : ordered_json(nullptr);
  ch["reason"] = sig.reason;
}

}  // namespace

std::string render_json(const Comparison& c) {
  ordered_json j;
  j["format"] = "nightjar-compare";
  j["version"] = 1;
  j["verdict"] = c.verdict;
  if (c.include_invalid) j["include_invalid"] = true;  // absent: invalid samples left out
  j["warnings"] = c.warnings;
  j["options"] = {{"test", std::string(stats::to_string(c.options.test))},
                  {"alpha", c.options.alpha},
                  {"min_effect_pct", c.options.min_effect_pct},
                  {"power", c.options.power}};
  ordered_json sides = ordered_json::array();
  for (std::size_t i = 0; i < c.sides.size(); ++i) {
    const auto& s = c.sides[i];
    ordered_json excluded = ordered_json::array();
    for (const auto& e : s.excluded)
      excluded.push_back({{"run", e.id}, {"status", to_string(e.status)}, {"reason", e.reason}});
    ordered_json side{
        {"role", i == 0 ? "base" : "new"}, {"name", s.name},           {"runs", s.run_ids},
        {"variants", s.variants},          {"builds", s.builds},       {"kernels", s.kernels},
        {"testboxes", s.testboxes},        {"excluded_runs", excluded}};
    // Measured under qemu TCG (software emulation): kEmulationTag's rows.
    side["emulated"] = i < c.guests.size() && c.guests[i].emulated;
    if (i > 0) {
      const auto& n = c.counts[i - 1];
      side["counts"] = {{"regression", n.regressions},
                        {"improvement", n.improvements},
                        {"unchanged", n.unchanged},
                        {"inconclusive", n.inconclusive},
                        {"undefined", n.undefined}};
    }
    sides.push_back(std::move(side));
  }
  j["sides"] = std::move(sides);

  ordered_json rows = ordered_json::array();
  for (const auto& row : c.rows) {
    ordered_json r{{"kind", kind_name(row.kind)},
                   {"workload", row.workload},
                   {"job", row.job},
                   {"cell", row.cell},
                   {"name", row.name},
                   {"operation", row.operation}};
    if (row.kind == ComparisonRow::Kind::metric) {
      r["unit"] = row.unit;
      r["direction"] = std::string(to_string(row.direction));
      r["mean"] = std::string(to_string(row.mean));
    }
    ordered_json figures = ordered_json::array();
    for (const auto& f : row.sides) figures.push_back(side_figures(f));
    r["sides"] = std::move(figures);
    ordered_json stats_lines = ordered_json::array();
    for (const auto& l : row.lines) {
      ordered_json values = ordered_json::array(), pcts = ordered_json::array();
      for (double v : l.value) values.push_back(json_num(v));
      for (double v : l.pct) pcts.push_back(json_num(v));
      stats_lines.push_back({{"stat", l.name}, {"values", values}, {"pct_change", pcts}});
    }
    r["stats"] = std::move(stats_lines);
    ordered_json changes = ordered_json::array();
    for (std::size_t s = 1; s < row.sides.size(); ++s) {
      ordered_json ch{{"side", s},
                      {"pct_change", json_num(row.change_pct[s])},
                      {"plain_change_pct", json_num(row.plain_change_pct[s])}};
      if (const auto& sig = row.significance[s]) add_significance(ch, *sig);
      changes.push_back(std::move(ch));
    }
    r["changes"] = std::move(changes);
    rows.push_back(std::move(r));
  }
  j["rows"] = std::move(rows);

  ordered_json unmatched = ordered_json::array();
  for (const auto& u : c.unmatched)
    unmatched.push_back(
        {{"workload", u.workload}, {"job", u.job}, {"cell", u.cell}, {"present_on", u.present_on}});
  j["unmatched"] = std::move(unmatched);
  j["notes"] = c.notes;
  if (auto env = environment_json(c); !env.empty()) j["environment"] = env;  // else absent
  return j.dump(2) + "\n";
}

}  // namespace nightjar

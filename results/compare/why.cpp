// "What else changed": the significant monitor rows of a comparison.
#include "results/compare/why.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

namespace nightjar {
namespace {

const std::vector<double>* monitor_samples(const LoadedSide& side, const ComparisonRow& row) {
  auto cell = side.cells.find(CellKey{row.workload, row.job, row.cell});
  if (cell == side.cells.end()) return nullptr;
  auto it = cell->second.monitors.find(row.name);
  return it == cell->second.monitors.end() ? nullptr : &it->second;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

// True when every sample of `v` is > 0 (and there are at least 3).
bool all_positive(const std::vector<double>& v) {
  return v.size() >= 3 && std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
}

bool all_zero(const std::vector<double>& v) {
  return v.size() >= 3 && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
}

WhySide explain_side(const Comparison& cmp, const std::vector<LoadedSide>& sides, std::size_t s,
                     const stats::SignificanceOptions& options) {
  WhySide out{cmp.sides[0].name, cmp.sides[s].name, 0, {}};
  std::vector<const ComparisonRow*> rows;
  std::vector<std::pair<const std::vector<double>*, const std::vector<double>*>> samples;
  std::vector<stats::RowInput> family;
  for (const auto& row : cmp.rows) {
    if (row.kind != ComparisonRow::Kind::monitor) continue;
    const auto* base = monitor_samples(sides[0], row);
    const auto* now = monitor_samples(sides[s], row);
    if (!base || !now) continue;
    rows.push_back(&row);
    samples.emplace_back(base, now);
    family.push_back({std::span<const double>(*base), std::span<const double>(*now),
                      Direction::higher_is_better, MeanKind::arithmetic});
  }
  out.family = family.size();
  const std::vector<stats::Significance> decided = stats::decide_significance(family, options);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const auto& [base, now] = samples[r];
    WhyEntry e{rows[r]->operation,
               rows[r]->name,
               rows[r]->cell,
               mean_of(*base),
               mean_of(*now),
               static_cast<int>(base->size()),
               static_cast<int>(now->size()),
               0,
               0,
               decided[r],
               all_zero(*base) && all_positive(*now),
               all_positive(*base) && all_zero(*now)};
    const stats::Verdict v = decided[r].verdict;
    const bool changed = v == stats::Verdict::regression || v == stats::Verdict::improvement;
    // A vanished row has a base mean > 0, so the rule decided it: listed
    // only when it says changed. An appeared row is undefined for the rule.
    e.vanished = e.vanished && changed;
    if (!changed && !e.appeared) continue;
    e.change_pct = e.base_mean != 0 ? (e.new_mean - e.base_mean) / std::abs(e.base_mean) * 100
                                    : std::numeric_limits<double>::quiet_NaN();
    e.effect = (e.appeared || e.vanished)          ? std::numeric_limits<double>::infinity()
               : e.base_mean > 0 && e.new_mean > 0 ? std::abs(std::log(e.new_mean / e.base_mean))
                                                   : std::abs(e.change_pct) / 100;
    out.moved.push_back(std::move(e));
  }
  std::stable_sort(out.moved.begin(), out.moved.end(),
                   [](const WhyEntry& a, const WhyEntry& b) { return a.effect > b.effect; });
  return out;
}

}  // namespace

WhyBlock explain_monitors(const Comparison& cmp, const std::vector<LoadedSide>& sides,
                          const stats::SignificanceOptions& options) {
  WhyBlock block;
  block.alpha = options.alpha;
  for (std::size_t s = 1; s < sides.size() && s < cmp.sides.size(); ++s)
    block.sides.push_back(explain_side(cmp, sides, s, options));
  return block;
}

WhyBlock explain_monitors(const Comparison& cmp, const ResultsStore& store,
                          const std::vector<Selector>& selectors, const SideQuery& query,
                          const stats::SignificanceOptions& options) {
  std::vector<LoadedSide> sides;
  for (std::size_t i = 0; i < selectors.size(); ++i)
    sides.push_back(load_side(store, selectors[i], query, i == 0 ? "BASE" : "NEW"));
  return explain_monitors(cmp, sides, options);
}

}  // namespace nightjar

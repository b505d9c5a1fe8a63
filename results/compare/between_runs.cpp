// The sources of the between-run variation: see between_runs.h.
#include "results/compare/between_runs.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "results/compare/selector.h"
#include "results/stats/change_points.h"
#include "results/store/store.h"

namespace nightjar {

namespace {

using Group = std::vector<std::vector<double>>;

// The runs' geometric mean (every sample > 0: run_components already refuses
// the others), NaN for a run without samples.
double geometric_mean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nan("");
  double sum = 0.0;
  for (double x : xs) sum += std::log(x);
  return std::exp(sum / static_cast<double>(xs.size()));
}

// Step 2: per variant, segments between change points of the runs' gmeans.
std::vector<Group> trend_segments(std::span<const HistoryRun> runs,
                                  const std::set<std::int64_t>& exclude) {
  std::map<std::string, std::vector<const HistoryRun*>> by_variant;
  for (const auto& r : runs)
    if (!exclude.count(r.run_id) && !r.samples.empty()) by_variant[r.variant].push_back(&r);
  std::vector<Group> groups;
  for (const auto& [variant, list] : by_variant) {
    std::vector<double> series;
    for (const HistoryRun* r : list) series.push_back(geometric_mean(r->samples));
    bool finite = true;
    for (double x : series) finite = finite && std::isfinite(x) && x > 0.0;
    if (!finite) continue;
    std::size_t begin = 0;
    auto add_segment = [&](std::size_t end) {
      Group& g = groups.emplace_back();
      for (std::size_t i = begin; i < end; ++i) g.push_back(list[i]->samples);
      begin = end;
    };
    // Cut at the change points, and also at the changes trend shows without
    // confirming them (short segments, the newest nights): a step the
    // history has not confirmed yet is not run-to-run noise.
    const auto cps = stats::detect_change_points(series);
    std::set<std::size_t> cuts;
    for (const auto& cp : cps) cuts.insert(cp.index);
    for (const auto& cp : stats::detect_short_changes(series, cps)) cuts.insert(cp.index);
    if (auto recent = stats::detect_recent_change(series, cps)) cuts.insert(recent->index);
    for (std::size_t cut : cuts) add_segment(cut);
    add_segment(series.size());
  }
  return groups;
}

}  // namespace

std::optional<stats::BetweenRunVariance> cell_history_between_variance(
    std::span<const HistoryRun> runs, const std::set<std::int64_t>& exclude) {
  std::map<std::tuple<std::int64_t, std::string, std::string>, Group> builds;
  for (const auto& r : runs)
    if (!exclude.count(r.run_id) && !r.samples.empty())
      builds[{r.kernel_id, r.build, r.variant}].push_back(r.samples);
  std::vector<Group> groups;
  for (auto& [_, g] : builds) groups.push_back(std::move(g));
  if (auto b = stats::history_between_variance(groups)) return b;
  return stats::history_between_variance(trend_segments(runs, exclude));
}

CalibrationLookup stored_between_lookup(const ResultsStore& store,
                                        const std::vector<LoadedSide>& sides) {
  // The compared runs, gathered once for every row the lookup serves.
  std::set<std::int64_t> compared;
  for (const auto& s : sides) compared.insert(s.run_ids.begin(), s.run_ids.end());
  return [&store, compared = std::move(compared)](
             const CalibrationKey& key) -> std::optional<stats::BetweenRunVariance> {
    if (auto c = store.calibration(key))
      return stats::BetweenRunVariance{c->between_var, c->df, stats::BetweenSource::calibration,
                                       c->runs};
    return cell_history_between_variance(store.cell_history(key), compared);
  };
}

}  // namespace nightjar

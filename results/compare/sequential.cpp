#include "results/compare/sequential.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/stats/descriptive.h"
#include "results/stats/distributions.h"
#include "results/stats/equivalence.h"

namespace nightjar {

namespace {

// The nominal level of a boundary: the upper tail beyond it; a look that
// spends nothing (+inf) gets a level that never decides (0 would mean alpha).
double upper_tail(double c) {
  if (!std::isfinite(c)) return 1e-300;
  return std::max(1e-300, 1.0 - stats::normal_cdf(c));
}

}  // namespace

LookLevels look_levels(const std::vector<double>& t, double alpha, stats::Spending spending) {
  // The levels depend on the design only (looks so far, alpha, spending) and
  // cost milliseconds of numerical integration: each design is computed once
  // per process (every cell of a run and every trial of bench/decide_bench
  // share the looks).
  static std::mutex mutex;
  static std::map<std::tuple<std::vector<double>, double, stats::Spending>, LookLevels> cache;
  auto key = std::make_tuple(t, alpha, spending);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const auto change = stats::one_sided_boundaries(t, alpha / 2.0, spending);
  const auto equivalence = stats::one_sided_boundaries(t, std::min(alpha, 0.25), spending);
  LookLevels l;
  l.change_level = std::min(0.999, 2.0 * upper_tail(change.back()));
  l.equivalence_level = std::min(0.499, upper_tail(equivalence.back()));
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 10000) cache.clear();  // bounded: designs are few
  cache.emplace(std::move(key), l);
  return l;
}

bool is_decided(stats::Verdict v) {
  return v == stats::Verdict::regression || v == stats::Verdict::improvement ||
         v == stats::Verdict::unchanged;
}

// A stored BASE too short for the row's margin: what it would need, or "".
std::string base_limit(const ComparisonRow& row, const stats::Significance& sig,
                       const Comparison& c) {
  const stats::Summary& base = row.sides[0].summary;
  const double cv = base.coeff_var, m = sig.min_effect_pct;
  if (base.n < 2 || !std::isfinite(cv) || m <= 0) return "";
  const double limit = stats::smallest_detectable_change_unequal(base.n, 1000000, cv,
                                                                 c.options.alpha, c.options.power);
  if (limit <= m) return "";
  // With both sides at n the margin is seen: the base alone needs about half that.
  auto n = stats::iterations_needed(m, cv, c.options.alpha, c.options.power);
  return fmt::format(
      "BASE has n={} at CoeffVar {:.2g}%: no length of this run can decide ±{:g}%; measure the "
      "BASE longer (about {} iterations)",
      base.n, cv, m, n ? fmt::format("{}", *n) : std::string("many more"));
}

LookResult evaluate_look(const Comparison& c, const std::vector<std::string>& decide_on,
                         bool base_grows) {
  LookResult out;
  std::set<std::string> names, wanted(decide_on.begin(), decide_on.end());
  for (const auto& row : c.rows) {
    if (row.kind != ComparisonRow::Kind::metric) continue;
    names.insert(row.name);
    if (!wanted.empty() && !wanted.count(row.name)) continue;
    for (const auto& sig : row.significance) {
      if (!sig) continue;
      RowState s{row.cell, row.operation, row.name, sig->verdict, ""};
      if (!is_decided(sig->verdict)) {
        if (sig->runs_needed)
          s.needs = fmt::format("about {} runs per side", *sig->runs_needed);
        else if (sig->iterations_needed)
          s.needs = fmt::format("about {} iterations per side", *sig->iterations_needed);
        else
          s.needs = sig->reason;
        if (!base_grows && !row.sides.empty()) {
          if (std::string why = base_limit(row, *sig, c); !why.empty()) {
            s.needs = std::move(why);
            s.base_limited = true;
          }
        }
      }
      out.rows.push_back(std::move(s));
    }
  }
  for (const auto& w : wanted)
    if (!names.count(w))
      throw UsageError(
          fmt::format("--decide-on: no metric '{}' in this comparison; its metrics: {}", w,
                      join(std::vector<std::string>(names.begin(), names.end()), ", ")));
  out.decided =
      !out.rows.empty() && std::all_of(out.rows.begin(), out.rows.end(),
                                       [](const RowState& r) { return is_decided(r.verdict); });
  out.hopeless = !out.decided &&
                 std::any_of(out.rows.begin(), out.rows.end(),
                             [](const RowState& r) { return r.base_limited; }) &&
                 std::all_of(out.rows.begin(), out.rows.end(), [](const RowState& r) {
                   return is_decided(r.verdict) || r.base_limited;
                 });
  return out;
}

SequentialLooks::SequentialLooks(SequentialDesign design) : d_(std::move(design)) {
  if (d_.max_iterations < 3)
    throw UsageError(fmt::format(
        "--max-iterations {}: a decision needs at least 3 iterations per side; write 3 or more",
        d_.max_iterations));
  d_.first_look = std::clamp(d_.first_look, 3, d_.max_iterations);
}

std::optional<LookOutcome> SequentialLooks::after_round(int iterations, bool out_of_time,
                                                        const CompareAt& compare) {
  const int first = d_.first_look;
  const bool last = iterations >= d_.max_iterations || (out_of_time && iterations >= 3);
  const bool scheduled = iterations >= first && (iterations - first) % first == 0;
  if (!last && !scheduled) return std::nullopt;
  t_.push_back(std::min(1.0, static_cast<double>(iterations) / d_.max_iterations));
  LookOutcome out;
  out.look = looks();
  out.iterations = iterations;
  stats::SignificanceOptions options = d_.significance;
  out.levels = look_levels(t_, options.alpha, d_.spending);
  options.change_level = out.levels.change_level;
  options.equivalence_level = out.levels.equivalence_level;
  out.result = evaluate_look(compare(options), d_.decide_on, d_.base_grows);
  out.stop = out.result.decided || out.result.hopeless || last;
  return out;
}

LoadedSide one_run_side(const CellKey& cell, std::int64_t run_id, const std::string& variant,
                        const std::map<std::string, std::vector<double>>& samples) {
  LoadedSide side;
  side.selector.text = fmt::format("run={}", run_id);
  side.selector.run_id = run_id;
  side.run_ids = {run_id};
  side.variants = {variant};
  CellSamples& cs = side.cells[cell];
  cs.first_run = run_id;
  cs.run_ids = {run_id};
  for (const auto& [metric, values] : samples) {
    cs.metric_runs[metric] = {values};
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    cs.metrics[metric] = std::move(sorted);
  }
  return side;
}

std::string look_summary(const LookResult& look) {
  std::vector<std::string> parts;
  for (const auto& r : look.rows)
    parts.push_back(fmt::format("{} {}", r.operation, stats::to_string(r.verdict)));
  return join(parts, ", ");
}

std::optional<std::size_t> iterations_to_decide(double cv_pct, double margin_pct, double alpha,
                                                double power) {
  auto n =
      stats::equivalence_iterations_needed(margin_pct, 0.0, cv_pct, std::min(alpha, 0.25), power);
  if (!n) return std::nullopt;
  return std::max<std::size_t>(3, *n);
}

std::optional<SamplingPlan> plan_from_history(const LoadedSide& history,
                                              const std::vector<std::string>& decide_on,
                                              double margin_pct, double alpha, double power) {
  const std::set<std::string> wanted(decide_on.begin(), decide_on.end());
  std::optional<SamplingPlan> best;
  for (const auto& [key, cell] : history.cells) {
    for (const auto& [metric, runs] : cell.metric_runs) {
      if (!wanted.empty() && !wanted.count(metric)) continue;
      std::vector<double> cvs;
      for (const auto& samples : runs) {
        if (samples.size() < 2) continue;
        const double cv = stats::summarize(samples).coeff_var;
        if (std::isfinite(cv)) cvs.push_back(cv);
      }
      if (cvs.empty()) continue;
      const double cv = stats::summarize(cvs).median;
      if (best && cv <= best->cv_pct) continue;
      auto n = iterations_to_decide(cv, margin_pct, alpha, power);
      if (!n) continue;
      best = SamplingPlan{metric, cv, margin_pct, *n, static_cast<int>(cvs.size())};
    }
  }
  return best;
}

std::string plan_line(const SamplingPlan& p) {
  return fmt::format(
      "at CoeffVar {:.2g}% ({}, {} stored run{}), deciding ±{:g}% needs about {} iterations per "
      "side",
      p.cv_pct, p.metric, p.history_runs, p.history_runs == 1 ? "" : "s", p.margin_pct,
      p.iterations);
}

}  // namespace nightjar

#include "harness/run/until_decided.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "results/compare/selector.h"
#include "results/model/text.h"
#include "workloads/workload.h"

namespace nightjar {

SequentialSampler::SequentialSampler(const ResultsStore& store, UntilDecidedOptions options,
                                     int first_look)
    : store_(store), o_(std::move(options)) {
  first_ = std::max(3, first_look);
  max_ = o_.max_iterations > 0 ? o_.max_iterations : std::max(30, 4 * first_);
  // SequentialLooks checks the budget (UsageError below 3) and clamps the first look.
  first_ = SequentialLooks(design()).design().first_look;
}

SequentialDesign SequentialSampler::design() const {
  return {first_, max_, o_.spending, o_.significance, o_.decide_on, !o_.base};
}

bool SequentialSampler::look(const PlannedJob& job, const Cell& cell,
                             const std::vector<std::int64_t>& run_ids, int iterations) {
  const std::string key = job.job.name + '\0' + cell.id();
  if (key != current_ || !looks_) {
    current_ = key;
    looks_.emplace(design());
  }
  if (o_.max_seconds > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >=
          o_.max_seconds)
    out_of_time_ = true;

  auto compare = [&](const stats::SignificanceOptions& options) {
    std::vector<Selector> selectors;
    SideQuery query;
    query.ignore_params = o_.ignore_params;
    query.declared = &workload_catalog();
    query.include_running = true;
    if (o_.base) {
      selectors.push_back(*o_.base);
      query.job = job.job.name;
    }
    for (auto id : run_ids) selectors.push_back({.text = fmt::format("run={}", id), .run_id = id});
    return compare_selectors(store_, selectors, query, options);
  };
  std::optional<LookOutcome> look = looks_->after_round(iterations, out_of_time_, compare);
  if (!look) return false;
  std::cerr << fmt::format(
      "nightjar: look {} at {}/{} iterations per side, {} {}: {} (levels: change {:.3g}, "
      "equivalence {:.3g})\n",
      look->look, iterations, max_, job.job.name, cell.id(), look_summary(look->result),
      look->levels.change_level, look->levels.equivalence_level);
  if (look->result.hopeless) stopped_by_base_ = true;
  if (!look->stop) return false;
  cells_.push_back({job.job.name, cell.id(), iterations, look->look, std::move(look->result)});
  return true;
}

std::string SequentialSampler::report() const {
  std::string out;
  std::vector<std::string> open;
  for (const auto& c : cells_) {
    std::vector<std::string> verdicts;
    for (const auto& r : c.last.rows) {
      verdicts.push_back(fmt::format("{} {}", r.operation, stats::to_string(r.verdict)));
      if (!is_decided(r.verdict))
        open.push_back(fmt::format("  {} {} {}: {}: needs {}", c.job, c.cell, r.operation,
                                   stats::to_string(r.verdict), r.needs));
    }
    out +=
        fmt::format("until-decided: {} {}: {} after {} iterations per side ({} look{})\n", c.job,
                    c.cell, join(verdicts, ", "), c.iterations, c.looks, c.looks == 1 ? "" : "s");
  }
  if (!open.empty()) {
    out +=
        fmt::format("until-decided: {} row(s) still open ({}):\n", open.size(),
                    stopped_by_base_ ? std::string("the stored BASE is too short to decide them")
                    : out_of_time_   ? fmt::format("time budget of {:g}s spent", o_.max_seconds)
                                     : fmt::format("budget of {} iterations per side spent", max_));
    for (const auto& line : open) out += line + "\n";
  }
  return out;
}

ExitCode SequentialSampler::exit_code() const {
  bool open = cells_.empty();
  for (const auto& c : cells_)
    for (const auto& r : c.last.rows) {
      if (r.verdict == stats::Verdict::regression) return ExitCode::regression;
      if (!is_decided(r.verdict)) open = true;
    }
  return open ? ExitCode::inconclusive : ExitCode::ok;
}

std::optional<SamplingPlan> stored_plan(const ResultsStore& store,
                                        const std::optional<Selector>& selector,
                                        const std::string& job,
                                        const std::vector<std::string>& ignore_params,
                                        const std::vector<std::string>& decide_on,
                                        const stats::SignificanceOptions& significance) {
  SideQuery query;
  query.job = job;
  query.ignore_params = ignore_params;
  query.declared = &workload_catalog();
  if (!selector && job.empty()) return std::nullopt;  // nothing names the history
  try {
    const Selector s = selector ? *selector : Selector{.text = "job=" + job, .job = job};
    const LoadedSide side = load_side(store, s, query, "history");
    return plan_from_history(side, decide_on, significance.min_effect_pct, significance.alpha,
                             significance.power);
  } catch (const Error&) {
    return std::nullopt;  // no history: the job's iterations are the first look
  }
}

}  // namespace nightjar

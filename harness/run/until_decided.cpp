#include "harness/run/until_decided.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <iostream>
#include <set>

#include "results/compare/between_runs.h"
#include "results/compare/selector.h"
#include "results/model/text.h"
#include "results/stats/run_model.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

// The progress line of a look: "look 1 at 3/6 runs per side, job cell: ...".
void print_look(const LookOutcome& look, int max, const char* unit, const std::string& job,
                const std::string& cell) {
  std::cerr << fmt::format(
      "nightjar: look {} at {}/{} {} per side, {} {}: {} (levels: change {:.3g}, "
      "equivalence {:.3g})\n",
      look.look, look.iterations, max, unit, job, cell, look_summary(look.result),
      look.levels.change_level, look.levels.equivalence_level);
}

std::string cell_key(const std::string& job, const std::string& cell) {
  return job + '\0' + cell;
}

}  // namespace

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
  const std::string key = cell_key(job.job.name, cell.id());
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
  print_look(*look, max_, "iterations", job.job.name, cell.id());
  if (look->result.hopeless) stopped_by_base_ = true;
  if (!look->stop) return false;
  cells_.push_back(
      {job.job.name, cell.id(), iterations, look->look, std::move(look->result), "iterations"});
  return true;
}

std::string SequentialSampler::report() const {
  return until_decided_report(
      cells_, stopped_by_base_ ? std::string("the stored BASE is too short to decide them")
              : out_of_time_   ? fmt::format("time budget of {:g}s spent", o_.max_seconds)
                               : fmt::format("budget of {} iterations per side spent", max_));
}

ExitCode SequentialSampler::exit_code() const {
  return until_decided_exit_code(cells_);
}

std::string until_decided_report(const std::vector<DecidedCell>& cells,
                                 const std::string& why_open) {
  std::string out;
  std::vector<std::string> open;
  for (const auto& c : cells) {
    std::vector<std::string> verdicts;
    for (const auto& r : c.last.rows) {
      verdicts.push_back(fmt::format("{} {}", r.operation, stats::to_string(r.verdict)));
      if (!is_decided(r.verdict))
        open.push_back(fmt::format("  {} {} {}: {}: needs {}", c.job, c.cell, r.operation,
                                   stats::to_string(r.verdict), r.needs));
    }
    out += fmt::format("until-decided: {} {}: {} after {} {} per side ({} look{})\n", c.job, c.cell,
                       join(verdicts, ", "), c.per_side, c.unit, c.looks, c.looks == 1 ? "" : "s");
  }
  if (!open.empty()) {
    out += fmt::format("until-decided: {} row(s) still open ({}):\n", open.size(), why_open);
    for (const auto& line : open) out += line + "\n";
  }
  return out;
}

ExitCode until_decided_exit_code(const std::vector<DecidedCell>& cells) {
  bool open = cells.empty();
  for (const auto& c : cells)
    for (const auto& r : c.last.rows) {
      if (r.verdict == stats::Verdict::regression) return ExitCode::regression;
      if (!is_decided(r.verdict)) open = true;
    }
  return open ? ExitCode::inconclusive : ExitCode::ok;
}

void RunsSampler::check_budget(int max_runs) {
  if (max_runs < kLookEvery)
    throw UsageError(fmt::format(
        "--runs {} with --until-decided: runs are the unit of the decision and its first look "
        "needs {} runs per side; write --runs {} or more (the budget of runs per side), or leave "
        "out --runs to decide on iterations",
        max_runs, kLookEvery, kLookEvery));
}

RunsSampler::RunsSampler(const ResultsStore& store, UntilDecidedOptions options, int max_runs)
    : store_(store), o_(std::move(options)), max_(max_runs) {
  check_budget(max_runs);
}

bool RunsSampler::open(const std::string& job, const std::string& cell) const {
  auto it = cells_by_key_.find(cell_key(job, cell));
  return it == cells_by_key_.end() || !it->second.ended;
}

std::vector<PlannedJob> RunsSampler::open_plan(const std::vector<PlannedJob>& plan) const {
  std::vector<PlannedJob> out;
  for (const auto& job : plan) {
    PlannedJob narrowed = job;
    std::erase_if(narrowed.cells, [&](const Cell& c) { return !open(job.job.name, c.id()); });
    if (!narrowed.cells.empty()) out.push_back(std::move(narrowed));
  }
  return out;
}

Comparison RunsSampler::compare(const PlannedJob& job, const CellRuns& runs,
                                const stats::SignificanceOptions& options) const {
  std::vector<Selector> selectors;
  SideQuery query;
  query.ignore_params = o_.ignore_params;
  query.declared = &workload_catalog();
  if (o_.base) {
    selectors.push_back(*o_.base);
    query.job = job.job.name;
  }
  for (const auto& v : job.variants)
    selectors.push_back({.text = v.name, .variant = v.name, .run_ids = runs.by_variant.at(v.name)});
  return compare_selectors(store_, selectors, query, options);
}

bool RunsSampler::after_round(const std::vector<PlannedJob>& plan,
                              const std::vector<std::int64_t>& run_ids) {
  std::set<std::string> unusable;  // cells with a run of this round that gave no samples
  for (const auto id : run_ids) {
    RunFilter f;
    f.run_id = id;
    for (const RunRow& r : store_.runs(f)) {
      const std::string key = cell_key(r.job, r.cell);
      if (r.status == RunStatus::complete || r.status == RunStatus::aborted)
        cells_by_key_[key].by_variant[r.variant].push_back(r.id);
      else
        unusable.insert(key);
    }
  }
  for (const auto& job : plan)
    for (const auto& cell : job.cells) {
      CellRuns& c = cells_by_key_[cell_key(job.job.name, cell.id())];
      if (c.ended) continue;
      if (unusable.count(cell_key(job.job.name, cell.id()))) {
        c.ended = true;  // skipped or failed: stored with its reason; nothing to decide
        std::cerr << fmt::format(
            "nightjar: until-decided: {} {}: a run gave no samples; the cell is not measured "
            "again\n",
            job.job.name, cell.id());
        continue;
      }
      int per_side = INT_MAX;
      for (const auto& v : job.variants)
        per_side = std::min(per_side, static_cast<int>(c.by_variant[v.name].size()));
      if (per_side == 0) continue;
      if (!c.looks)
        c.looks.emplace(
            SequentialDesign{kLookEvery, max_, o_.spending, o_.significance, o_.decide_on, true});
      std::optional<LookOutcome> look = c.looks->after_round(
          per_side, false,
          [&](const stats::SignificanceOptions& options) { return compare(job, c, options); });
      if (!look) continue;
      print_look(*look, max_, "runs", job.job.name, cell.id());
      if (!look->stop) continue;
      c.ended = true;
      cells_.push_back(
          {job.job.name, cell.id(), per_side, look->look, std::move(look->result), "runs"});
    }
  return open_plan(plan).empty();
}

std::string RunsSampler::report() const {
  return until_decided_report(cells_, fmt::format("budget of {} runs per side spent", max_));
}

namespace {

// The cell and metric of the history that needs the most runs.
struct RunsNeed {
  std::string metric, cell;
  std::size_t runs = 0;
  stats::BetweenRunVariance between;
  double within_var = 0;
};

// The largest need over the history's cells and metrics; `unmeasured` is set
// when a cell and metric has no between-run variance yet.
std::optional<RunsNeed> largest_need(const ResultsStore& store, const LoadedSide& history,
                                     const std::string& testbox,
                                     const std::vector<std::string>& decide_on,
                                     const stats::SignificanceOptions& significance, int iterations,
                                     bool& unmeasured) {
  const std::set<std::string> wanted(decide_on.begin(), decide_on.end());
  const CalibrationLookup between_of = stored_between_lookup(store, {});
  std::optional<RunsNeed> worst;
  for (const auto& [key, cell] : history.cells)
    for (const auto& [metric, runs] : cell.metric_runs) {
      if (!wanted.empty() && !wanted.count(metric)) continue;
      const auto parts = stats::run_components(runs);
      if (!parts || !std::isfinite(parts->within_var)) continue;
      const std::string stored = cell.stored_cell.empty() ? key.cell : cell.stored_cell;
      const auto between = between_of({key.workload, key.job, stored, metric, testbox});
      if (!between) {
        unmeasured = true;
        continue;
      }
      const double run_var = between->var + parts->within_var / std::max(1, iterations);
      // runs_needed caps at 10000 and gives nullopt when nothing can detect the margin.
      const std::size_t need = stats::runs_needed(significance.min_effect_pct, run_var,
                                                  significance.alpha, significance.power)
                                   .value_or(kUnrealisticRuns);
      if (!worst || need > worst->runs)
        worst = RunsNeed{metric, key.cell, need, *between, parts->within_var};
    }
  return worst;
}

}  // namespace

std::string runs_plan_line(const ResultsStore& store, const std::optional<Selector>& base,
                           const std::string& job, const std::string& testbox,
                           const std::vector<std::string>& ignore_params,
                           const std::vector<std::string>& decide_on,
                           const stats::SignificanceOptions& significance, int iterations,
                           int budget_runs) {
  const std::string looks =
      fmt::format("a look at {0} runs per side, then every {0} (budget {1} runs per side)",
                  RunsSampler::kLookEvery, budget_runs);
  const std::string unmeasured_text =
      "the between-run variation of its cells is not measured yet (no calibration, too little "
      "history): the looks measure it from this run's runs; " +
      looks;
  SideQuery query;
  query.job = job;
  query.ignore_params = ignore_params;
  query.declared = &workload_catalog();
  std::optional<LoadedSide> history;
  try {
    history = load_side(store, base ? *base : Selector{.text = "job=" + job, .job = job}, query,
                        "history");
  } catch (const Error&) {
    return "no stored history of its cells: " + unmeasured_text;
  }
  bool unmeasured = false;
  const auto need =
      largest_need(store, *history, testbox, decide_on, significance, iterations, unmeasured);
  if (!need) return unmeasured_text;
  const double m = significance.min_effect_pct;
  const std::string at = fmt::format(
      "at between-run CoeffVar {:.2g}% ({}) and within-run CoeffVar {:.2g}% ({}, {})",
      stats::log_variance_coeff_var(need->between.var), stats::between_source_text(need->between),
      stats::log_variance_coeff_var(need->within_var), need->metric, need->cell);
  if (need->runs >= kUnrealisticRuns)
    return fmt::format(
        "{}, ±{:g}% cannot be decided within any realistic number of runs (budget {} runs per "
        "side): widen the job's `min_effect:` to the smallest change that matters",
        at, m, budget_runs);
  const std::size_t runs = std::max<std::size_t>(RunsSampler::kLookEvery, need->runs);
  if (runs > static_cast<std::size_t>(budget_runs))
    return fmt::format(
        "{}, deciding ±{:g}% needs about {} runs per side, more than the budget of {}: raise "
        "--runs, or widen the job's `min_effect:`",
        at, m, runs, budget_runs);
  return fmt::format("{}, deciding ±{:g}% needs about {} runs per side (budget {} runs per side)",
                     at, m, runs, budget_runs);
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

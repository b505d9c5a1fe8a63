// `nightjar calibrate JOB [--pairs N]`: runs A/A pairs of every cell of a job
// on this testbox and stores each cell's and metric's between-run variance
// (results/store/calibration.cpp), which compare and check use for rows with
// one run on a side (docs/statistics.md "Runs as the unit").
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/stats/run_model.h"
#include "workloads/sys/probe.h"

namespace nightjar {
namespace {

struct CalibrateArgs : PairedRunArgs {
  int pairs = 5;
};

// Stores the between-run variance of every cell and metric of the side and
// prints one line each; returns how many were stored.
int store_components(ResultsStore& store, const LoadedSide& side) {
  const std::string testbox = side.testboxes.empty() ? "" : *side.testboxes.begin();
  int stored = 0;
  for (const auto& [key, cell] : side.cells) {
    for (const auto& [metric, runs] : cell.metric_runs) {
      const auto c = stats::run_components(runs);
      if (!c || c->runs < 2 || std::isnan(c->between_var)) continue;
      const double df = static_cast<double>(c->runs) - 1.0;
      store.store_calibration({key.workload, key.job, key.cell, metric, testbox},
                              {c->between_var, df, static_cast<int>(c->runs)});
      std::cout << fmt::format(
          "{} [{}] {}: between-run CoeffVar {:.2f}%, within-run {:.2f}% ({} runs)\n", key.job,
          key.cell, metric, stats::log_variance_coeff_var(c->between_var),
          stats::log_variance_coeff_var(c->within_var), c->runs);
      ++stored;
    }
  }
  return stored;
}

ExitCode cmd_calibrate(const CalibrateArgs& a) {
  PairedRuns r = run_paired(a, 2 * a.pairs, "calibrate");
  if (r.outcome.interrupted) return ExitCode::interrupted;
  LoadedSide side = load_side(r.store, Selector{.text = r.build, .run_ids = r.outcome.run_ids},
                              SideQuery{}, "calibration");
  const int stored = store_components(r.store, side);
  std::cerr << fmt::format(
      "nightjar: calibrated {} cell metric(s) from {} runs (build label {}); database {}\n", stored,
      r.outcome.run_ids.size(), r.build, r.store.path());
  if (r.outcome.failed || stored == 0) return ExitCode::environment;
  return ExitCode::ok;
}

}  // namespace

void add_paired_run_options(CLI::App* cmd, PairedRunArgs& a, const std::string& what) {
  cmd->add_option("job", a.job, "job file (YAML)")->required();
  cmd->add_option("--variant", a.variant, "the job's variant to " + what + " (default: the job's)");
  cmd->add_option("--iterations,-i", a.iterations, "measured iterations per run")
      ->check(at_least(1));
  cmd->add_option("--warmup,-w", a.warmup, "warm-up iterations per run")->check(at_least(0));
  cmd->add_option("--set,-s", a.sets, "key=value[,value...]: override or add a matrix axis");
  cmd->add_option("--db", a.db, "results database path");
}

PairedRuns run_paired(const PairedRunArgs& a, int runs, const std::string& prefix,
                      const std::function<void(const std::vector<PlannedJob>&)>& check_plan) {
  RunOptions o;
  o.job_paths = {a.job};
  o.variant = a.variant;
  o.iterations = a.iterations;
  o.warmup = a.warmup;
  o.runs = runs;
  for (const auto& s : a.sets) o.overrides.push_back(parse_set(s));
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  o.build =
      fmt::format("{}-{}", prefix, std::chrono::duration_cast<std::chrono::seconds>(now).count());
  auto plan = plan_runs(o, probe_machine_facts());
  if (check_plan) check_plan(plan);
  ResultsStore store = open_store(a.db);
  RunOutcome outcome = execute_runs(plan, o, store);
  return {std::move(store), std::move(outcome), o.build};
}

Subcommand add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Run A/A pairs of a job's cells and store their run-to-run variation for this testbox");
  add_paired_run_options(cmd, *a, "calibrate");
  cmd->add_option("--pairs", a->pairs, "A/A pairs per cell (2N runs; default 5)")
      ->check(in_range(1, 500));
  s.cmd = cmd;
  s.run = [a] { return cmd_calibrate(*a); };
  return s;
}

}  // namespace nightjar

#include "harness/runner.h"

#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "harness/exit_codes.h"
#include "harness/identity.h"
#include "harness/monitors.h"
#include "harness/progress.h"
#include "harness/signals.h"

namespace nightjar {

std::vector<PlannedJob> plan_runs(const RunOptions& options, const MachineFacts& machine) {
  if (options.job_paths.empty())
    throw UsageError("run: no job file given; write `nightjar run jobs/pft-quick.yaml`");
  std::vector<PlannedJob> plan;
  for (const auto& path : options.job_paths) {
    PlannedJob p;
    p.job = load_job(path);
    p.workload = find_workload(p.job.workload);
    if (!p.workload)  // load_job checks this too; keep the runner safe on its own
      throw UsageError(path + ": workload: unknown workload '" + p.job.workload + "'");
    p.cells = expand_matrix(p.job, *p.workload, options.overrides, machine);
    p.iterations = options.iterations.value_or(p.job.iterations);
    p.warmup = options.warmup.value_or(p.job.warmup);
    if (p.iterations < 1) throw UsageError("--iterations: must be at least 1");
    if (p.warmup < 0) throw UsageError("--warmup: must be 0 or more");
    p.cgroup = parse_cgroup_spec(p.job.cgroup, p.job.path);
    p.variant = !options.variant.empty() ? options.variant
                : !p.job.variant.empty() ? p.job.variant
                                         : "default";
    plan.push_back(std::move(p));
  }
  return plan;
}

namespace {

std::string describe_cell(const PlannedJob& job, const Cell& cell) {
  return fmt::format("{} [{}] {}", job.job.name, job.variant, cell.id());
}

// Runs one cell: returns its final status. Throws Interrupted after storing
// the run as aborted.
RunStatus run_cell(const PlannedJob& job, const Cell& cell, const NewRun& base, ResultsStore& store,
                   Progress& progress, const std::vector<std::string>& env_warnings,
                   std::int64_t& run_id) {
  NewRun run = base;
  run.cell = cell;
  if (auto reason = job.workload->unmet_requirement(cell)) {
    run_id = store.record_skipped(run, *reason);
    progress.message(fmt::format("skipped {}: {}", cell.id(), *reason));
    return RunStatus::skipped;
  }
  std::string memcg_reason;
  if (job.cgroup.enabled()) memcg_reason = memcg_unavailable_reason(CgroupLayout::detect());
  if (!memcg_reason.empty()) {
    std::string reason = "the job asks for cgroup placement but " + memcg_reason;
    run_id = store.record_skipped(run, reason);
    progress.message(fmt::format("skipped {}: {}", cell.id(), reason));
    return RunStatus::skipped;
  }
  run_id = store.begin_run(run);
  for (const auto& w : env_warnings) store.add_warning(run_id, w);

  RunContext ctx;
  ctx.machine = MachineFacts::probe();
  ctx.interrupted = [] { return interrupted(); };
  std::int64_t id = run_id;
  ctx.warn = [&store, &progress, id](const std::string& text) {
    progress.message("warning: " + text);
    store.add_warning(id, text);
  };
  ctx.record = [&store, id](const std::string& k, const std::string& v) {
    store.add_context(id, k, v);
  };

  int ok = 0, failed = 0;
  try {
    // Declared before the session so that it is destroyed after it: the
    // workload's processes leave the leaves before the tree is removed.
    std::unique_ptr<CgroupTree> cgroups;
    if (job.cgroup.enabled()) {
      auto it = cell.params.find("clients");
      int clients = it == cell.params.end() ? 1 : static_cast<int>(it->second.number);
      cgroups = std::make_unique<CgroupTree>(CgroupLayout::detect(),
                                             fmt::format("run{}-{}", run_id, getpid()), job.cgroup, clients);
      ctx.cgroups = cgroups.get();
      store.add_context(run_id, "cgroup.tree", cgroups->relative(cgroups->owned_root()));
      store.add_context(run_id, "cgroup.tree_version", std::to_string(cgroups->version()));
    }
    auto session = job.workload->start(cell, ctx);
    for (int w = 1; w <= job.warmup; ++w) {
      auto t0 = std::chrono::steady_clock::now();
      session->warmup();
      throw_if_interrupted();
      progress.iteration(
          true, w, job.warmup,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    for (int i = 1; i <= job.iterations; ++i) {
      MonitorSnapshot before = take_snapshot();
      auto t0 = std::chrono::steady_clock::now();
      IterationResult result = session->measure();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      MonitorSnapshot after = take_snapshot();
      // A signal that arrived during the iteration: the iteration may have
      // been cut short, so it is not a sample.
      throw_if_interrupted();
      store.add_iteration(run_id, i, result, monitor_deltas(before, after), seconds);
      for (const auto& f : result.flags) progress.message(fmt::format("iteration {}: {}", i, f));
      if (result.failure) {
        ++failed;
        progress.message(fmt::format("iteration {} failed: {}", i, *result.failure));
      } else {
        ++ok;
      }
      progress.iteration(false, i, job.iterations, seconds);
    }
  } catch (const Interrupted&) {
    store.finish_run(run_id, RunStatus::aborted,
                     fmt::format("interrupted by signal {} after {} iteration(s)",
                                 interrupt_signal(), ok + failed));
    throw;
  } catch (const Error& e) {
    store.finish_run(run_id, RunStatus::failed, e.what());
    progress.message(fmt::format("failed {}: {}", cell.id(), e.what()));
    return RunStatus::failed;
  } catch (const std::exception& e) {
    store.finish_run(run_id, RunStatus::failed, e.what());
    progress.message(fmt::format("failed {}: {}", cell.id(), e.what()));
    return RunStatus::failed;
  }
  // Signal during teardown (session destructor): still keep the samples.
  if (interrupted()) {
    store.finish_run(run_id, RunStatus::aborted, "interrupted during teardown");
    throw Interrupted();
  }
  if (ok == 0) {
    store.finish_run(run_id, RunStatus::failed, fmt::format("all {} iterations failed", failed));
    return RunStatus::failed;
  }
  store.finish_run(run_id, RunStatus::complete,
                   failed ? fmt::format("{} of {} iterations failed", failed, failed + ok) : "");
  return RunStatus::complete;
}

}  // namespace

RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store) {
  install_interrupt_handlers();
  NewRun base;
  base.kernel = KernelIdentity::probe();
  base.testbox = Testbox::probe();
  SystemContext system = SystemContext::probe();
  base.context = system.facts;
  for (const auto& [k, v] : options.context) base.context[k] = v;
  base.build = options.build;

  int total_cells = 0;
  long total_iterations = 0;
  for (const auto& job : plan) {
    total_cells += static_cast<int>(job.cells.size());
    total_iterations += static_cast<long>(job.cells.size()) * (job.iterations + job.warmup);
  }
  Progress progress(total_cells, total_iterations);
  std::vector<std::string> env_warnings = system.warnings(base.testbox.cpus);
  for (const auto& w : env_warnings) progress.message("warning: " + w);

  RunOutcome outcome;
  int index = 0;
  for (const auto& job : plan) {
    store.register_metrics(job.workload->name().data(), job.workload->metrics());
    base.job = job.job.name;
    base.job_path = job.job.path;
    base.variant = job.variant;
    base.iterations = job.iterations;
    base.warmup = job.warmup;
    for (const auto& cell : job.cells) {
      progress.cell(++index, describe_cell(job, cell));
      std::int64_t run_id = 0;
      try {
        RunStatus s = run_cell(job, cell, base, store, progress, env_warnings, run_id);
        outcome.run_ids.push_back(run_id);
        if (s == RunStatus::complete) ++outcome.complete;
        if (s == RunStatus::failed) ++outcome.failed;
        if (s == RunStatus::skipped) ++outcome.skipped;
      } catch (const Interrupted&) {
        if (run_id) outcome.run_ids.push_back(run_id);
        ++outcome.aborted;
        outcome.interrupted = true;
        progress.message(fmt::format(
            "interrupted: run {} stored as aborted with its completed samples", run_id));
        progress.finish();
        return outcome;
      }
    }
  }
  progress.finish();
  return outcome;
}

}  // namespace nightjar

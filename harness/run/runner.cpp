#include "harness/run/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "harness/run/progress.h"
#include "harness/run/system_reads.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/monitor_set.h"
#include "workloads/sys/monitors.h"
#include "workloads/sys/probe.h"

namespace nightjar {

namespace {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.erase(0, 1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.pop_back();
    if (item.empty())
      throw UsageError("--variant '" + list +
                       "': empty name; write --variant all, --variant NAME or --variant A,B");
    require_label("--variant", item);
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<PlannedVariant> plan_variants(const JobFile& job, const RunOptions& options) {
  std::vector<PlannedVariant> out;
  const bool all = options.variant == "all";
  std::vector<std::string> asked;
  if (!options.variant.empty() && !all) asked = split_names(options.variant);
  if (job.variants.empty()) {
    // Label-only variants: --variant names, else the job's `variant:`, else "default".
    if (asked.empty()) asked.push_back(!job.variant.empty() ? job.variant : "default");
    for (const auto& name : asked) {
      if (std::find_if(out.begin(), out.end(),
                       [&](const PlannedVariant& p) { return p.name == name; }) != out.end())
        continue;
      out.push_back(PlannedVariant{name, {}, job.cgroup});
    }
    return out;
  }
  std::vector<const VariantSpec*> chosen;
  if (asked.empty() && !all && !job.variant.empty()) asked.push_back(job.variant);
  if (asked.empty()) {
    for (const auto& v : job.variants) chosen.push_back(&v);
  } else {
    std::string names;
    for (const auto& v : job.variants) names += (names.empty() ? "" : ", ") + v.name;
    for (const auto& name : asked) {
      auto it = std::find_if(job.variants.begin(), job.variants.end(),
                             [&](const VariantSpec& v) { return v.name == name; });
      if (it == job.variants.end())
        throw UsageError(fmt::format(
            "--variant {}: {} has no variant '{}'; its variants are {} (or write --variant all)",
            options.variant, job.path, name, names));
      if (std::find(chosen.begin(), chosen.end(), &*it) == chosen.end()) chosen.push_back(&*it);
    }
  }
  for (const VariantSpec* v : chosen) {
    check_knob_targets(*v, job.path);
    out.push_back(PlannedVariant{v->name, v->knobs, v->cgroup});
  }
  return out;
}

}  // namespace

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
    const Matrix matrix = plan_matrix(p.job, *p.workload, options.overrides, machine);
    p.iterations = options.iterations.value_or(p.job.iterations);
    p.warmup = options.warmup.value_or(p.job.warmup);
    if (p.iterations < 1) throw UsageError("--iterations: must be at least 1");
    if (p.warmup < 0) throw UsageError("--warmup: must be 0 or more");
    p.variants = plan_variants(p.job, options);
    p.variant = p.variants.front().name;
    p.cgroup = p.variants.front().cgroup;
    if (options.check_matrix) options.check_matrix(p, matrix);  // before any cell is built
    p.cells = expand_cells(matrix, p.job, *p.workload, machine);
    plan.push_back(std::move(p));
  }
  return plan;
}

namespace {

std::string describe_cell(const PlannedJob& job, const std::string& variant, const Cell& cell) {
  return fmt::format("{} [{}] {}", job.job.name, variant, cell.id());
}

// Whether warning `w` concerns the runs of `workload`: every workload, or
// only those that declare its fact (FactWarning::workload_specific).
bool concerns(const FactWarning& w, const Workload& workload) {
  if (!w.workload_specific) return true;
  const auto facts = workload.sensitive_facts();
  return std::find(facts.begin(), facts.end(), w.fact) != facts.end();
}

// What every cell of a plan shares while execute_runs() runs it.
struct PlanRun {
  const RunOptions& options;
  ResultsStore& store;
  Progress& progress;
  SystemReads& system;
  /// The system's warnings, stored with every run they concern (CellRun::begin).
  std::vector<FactWarning> env_warnings;
  int index = 0;  ///< runs begun so far, for the progress line
  RunOutcome outcome;
};

// The knobs of one variant, applied: what is recorded with its runs.
struct AppliedKnobs {
  std::map<std::string, std::string> in_force;  ///< "knob.<path>" -> value read back
  std::vector<std::string> warnings;            ///< read-back mismatches
};

// One run of one cell for one variant: stored, warmed up, measured and ended
// in phases, so that the runs of several variants can alternate per
// iteration (--interleave). Each phase stores what it did at once.
class CellRun {
 public:
  CellRun(const PlannedJob& job, const PlannedVariant& variant, const Cell& cell, PlanRun& plan)
      : job_(job),
        variant_(variant),
        cell_(cell),
        store_(plan.store),
        progress_(plan.progress),
        system_(plan.system) {}
  CellRun(const CellRun&) = delete;
  CellRun& operator=(const CellRun&) = delete;

  std::int64_t id() const { return run_id_; }
  RunStatus status() const { return status_; }
  bool running() const { return status_ == RunStatus::running && run_id_ != 0; }

  // Stores the run as skipped with `reason`.
  void skip(const NewRun& base, const std::string& reason) {
    NewRun run = base;
    run.cell = cell_;
    run_id_ = store_.record_skipped(run, reason);
    status_ = RunStatus::skipped;
    progress_.message(fmt::format("skipped {} [{}]: {}", cell_.id(), variant_.name, reason));
  }

  // Checks requirements, stores the run, creates its cgroups and starts the
  // workload session. Afterwards status() is running, skipped or failed.
  void begin(const NewRun& base, const std::vector<FactWarning>& env_warnings,
             const AppliedKnobs& knobs) {
    if (auto reason = job_.workload->unmet_requirement(cell_)) return skip(base, *reason);
    if (variant_.cgroup.enabled()) {
      const CgroupLayout layout = system_.cgroup_layout();
      std::string memcg_reason = system_.memcg_unavailable(layout);
      if (!memcg_reason.empty())
        return skip(base, "the job asks for cgroup placement but " + memcg_reason);
      // A knob this cgroup version does not have (memory.min on v1) is an
      // unmet requirement of the machine, not an error of the job.
      if (auto why = cgroup_version_problem(variant_.cgroup, memcg_version(layout)))
        return skip(base, *why);
    }
    NewRun run = base;
    run.cell = cell_;
    for (const auto& [k, v] : knobs.in_force) run.context[k] = v;
    run_id_ = store_.begin_run(run);
    status_ = RunStatus::running;
    for (const auto& w : env_warnings)
      if (concerns(w, *job_.workload)) store_.add_warning(run_id_, w.text);
    for (const auto& w : knobs.warnings) {
      progress_.message("warning: " + w);
      store_.add_warning(run_id_, w);
    }

    ctx_.machine = system_.machine();
    SystemReads& system = system_;
    ctx_.interrupted = [&system] { return system.interrupted(); };
    std::int64_t id = run_id_;
    ResultsStore& store = store_;
    Progress& progress = progress_;
    ctx_.warn = [&store, &progress, id](const std::string& text) {
      progress.message("warning: " + text);
      store.add_warning(id, text);
    };
    ctx_.record = [&store, id](const std::string& k, const std::string& v) {
      store.add_context(id, k, v);
    };
    guarded([&] {
      if (variant_.cgroup.enabled()) make_cgroups();
      open_monitors();
      session_ = job_.workload->start(cell_, ctx_);
    });
  }

  // One untimed warm-up iteration (w of job.warmup).
  void warmup(int w) {
    if (!running()) return;
    guarded([&] {
      auto t0 = std::chrono::steady_clock::now();
      session_->warmup();
      throw_if_interrupted();
      progress_.iteration(
          true, w, job_.warmup,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
          variant_.name);
    });
  }

  // Measured iteration i of job.iterations, committed at once.
  void measure(int i) {
    if (!running()) return;
    guarded([&] {
      const auto events_before = memcg_events();
      MonitorSnapshot before = system_.snapshot();
      MonitorSet::Reading extra_before = monitors_ ? monitors_->read() : MonitorSet::Reading{};
      // perf-profile samples the measured window only (docs/monitors.md).
      if (monitors_) monitors_->start_profile();
      auto t0 = std::chrono::steady_clock::now();
      IterationResult result = session_->measure();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (monitors_) monitors_->stop_profile();
      MonitorSet::Reading extra_after = monitors_ ? monitors_->read() : MonitorSet::Reading{};
      MonitorSnapshot after = system_.snapshot();
      // A signal that arrived during the iteration: the iteration may have
      // been cut short, so it is not a sample.
      throw_if_interrupted();
      mark_impossible_values(result);
      std::map<std::string, double> monitors = monitor_deltas(before, after);
      monitors.merge(cgroup_event_deltas(events_before, memcg_events()));
      std::erase_if(monitors, [&](const auto& row) {
        return !monitor_selected_row(selected_monitors_, row.first);
      });
      if (monitors_) monitors.merge(monitors_->deltas(extra_before, extra_after));
      const std::optional<IterationProfile> profile =
          monitors_ ? monitors_->take_profile() : std::nullopt;
      store_.add_iteration(run_id_, i, result, monitors, seconds, profile ? &*profile : nullptr);
      for (const auto& f : result.flags) progress_.message(fmt::format("iteration {}: {}", i, f));
      if (result.failure) {
        ++failed_;
        progress_.message(fmt::format("iteration {} failed: {}", i, *result.failure));
      } else if (result.invalid) {
        ++invalid_;
        progress_.message(fmt::format("iteration {} invalid: {}", i, *result.invalid));
      } else {
        ++ok_;
        for (const auto& [metric, why] : result.invalid_metrics)
          progress_.message(fmt::format("iteration {}: invalid value: {}", i, why));
      }
      progress_.iteration(false, i, job_.iterations, seconds, variant_.name);
    });
  }

  // The run cannot go on (a knob could not be switched back in): failed.
  void fail(const std::string& reason) {
    if (!running()) return;
    teardown();
    store_.finish_run(run_id_, RunStatus::failed, reason);
    status_ = RunStatus::failed;
    progress_.message(fmt::format("failed {} [{}]: {}", cell_.id(), variant_.name, reason));
  }

  // Tears the session down and stores the final status. Throws Interrupted
  // (after storing the run as aborted) when a signal arrived meanwhile.
  RunStatus finish() {
    if (!running()) return status_;
    teardown();
    // Signal during teardown (session destructor): still keep the samples.
    if (system_.interrupted()) {
      store_.finish_run(run_id_, RunStatus::aborted, "interrupted during teardown");
      status_ = RunStatus::aborted;
      throw Interrupted();
    }
    if (ok_ + invalid_ == 0) {
      store_.finish_run(run_id_, RunStatus::failed,
                        fmt::format("all {} iterations failed", failed_));
      status_ = RunStatus::failed;
    } else {
      // Invalid iterations are stored samples (left out by every statistic):
      // the run is complete, and its reason says how many.
      const int all = ok_ + failed_ + invalid_;
      std::vector<std::string> why;
      if (failed_) why.push_back(fmt::format("{} of {} iterations failed", failed_, all));
      if (invalid_) why.push_back(fmt::format("{} of {} iterations invalid", invalid_, all));
      store_.finish_run(run_id_, RunStatus::complete, join(why, "; "));
      status_ = RunStatus::complete;
    }
    return status_;
  }

  // SIGINT/SIGTERM: store the run as aborted with its completed samples.
  void abort() noexcept {
    if (!running()) return;
    teardown();
    try {
      store_.finish_run(run_id_, RunStatus::aborted,
                        fmt::format("interrupted by signal {} after {} iteration(s)",
                                    system_.interrupt_signal(), ok_ + failed_ + invalid_));
    } catch (...) {
      // The next invocation marks a run left "running" as aborted.
    }
    status_ = RunStatus::aborted;
  }

 private:
  // Runs `step`; an error ends the run as failed (stored), Interrupted ends
  // it as aborted (stored) and propagates.
  template <typename F>
  void guarded(F&& step) {
    try {
      step();
    } catch (const Interrupted&) {
      abort();
      throw;
    } catch (const std::exception& e) {
      // A full disk ends the whole run (every later write would fail too):
      // the run is marked failed if that still fits, and the CLI says
      // "disk full" naming the database (results/store/store.h).
      if (disk_full_message(e)) {
        try {
          fail(e.what());
        } catch (const std::exception&) {
        }
        throw;
      }
      fail(e.what());
    }
  }

  // The one place where the harness marks values that cannot be
  // measurements (impossible_value(): a rate <= 0, a time <= 0, a value that
  // is not finite), whatever the workload: each gets its reason in
  // result.invalid_metrics (a reason the workload gave is kept). A NaN
  // cannot be stored (SQLite holds no NaN): it is dropped with a flag.
  // A metric the cell does not declare is checked as a plain number (only
  // for being finite).
  void mark_impossible_values(IterationResult& result) {
    if (result.failure) return;
    if (!declared_) {
      declared_.emplace();
      for (auto& d : job_.workload->cell_metrics(cell_)) declared_->emplace(d.name, std::move(d));
    }
    for (auto it = result.metrics.begin(); it != result.metrics.end();) {
      auto d = declared_->find(it->first);
      std::optional<std::string> why = impossible_value(
          d != declared_->end()
              ? d->second
              : MetricDescriptor{.name = it->first, .mean = MeanKind::arithmetic, .doc = ""},
          it->second);
      if (why && std::isnan(it->second)) {
        result.flags.push_back("invalid value not stored: " + *why);
        it = result.metrics.erase(it);
        continue;
      }
      if (why) result.invalid_metrics.try_emplace(it->first, *why);
      ++it;
    }
  }

  void throw_if_interrupted() {
    if (system_.interrupted()) throw Interrupted();
  }

  void teardown() noexcept {
    // The workload's processes leave the leaves before the tree is removed.
    session_.reset();
    monitors_.reset();
    cgroups_.reset();
  }

  // The job's extra monitors (workloads/sys/monitor_set.h), opened on this
  // thread before the session starts so that perf-stat counts every thread
  // and process the workload creates; what is selected but unavailable is
  // stored as the run fact monitor.unavailable and said once.
  void open_monitors() {
    monitors_ = system_.open_monitors(selected_monitors_, cgroups_.get());
    if (!monitors_ || monitors_->unavailable().empty()) return;
    const std::string text = join(monitors_->unavailable(), "; ");
    store_.add_context(run_id_, "monitor.unavailable", text);
    progress_.message(fmt::format("monitors unavailable [{}]: {}", variant_.name, text));
  }

  // The job's cgroup tree, and what is in force in it recorded with the
  // run: each knob as read back after writing, the file written (v1:
  // memory.soft_limit_in_bytes for memory.low), the cgroup2 mount options.
  void make_cgroups() {
    const CgroupLayout layout = system_.cgroup_layout();
    const int clients = job_.workload->cgroup_clients(cell_);
    cgroups_ = std::make_unique<CgroupTree>(layout, fmt::format("run{}-{}", run_id_, getpid()),
                                            variant_.cgroup, clients);
    ctx_.cgroups = cgroups_.get();
    store_.add_context(run_id_, "cgroup.tree", cgroups_->relative(cgroups_->owned_root()));
    store_.add_context(run_id_, "cgroup.tree_version", std::to_string(cgroups_->version()));
    store_.add_context(run_id_, "cgroup.v2_mount_options",
                       layout.v2_options.empty() ? "(no cgroup2 mount)" : layout.v2_options);
    for (const auto& [knob, value] : variant_.cgroup.top)
      store_.add_context(run_id_, "cgroup.top." + knob, value);
    for (const auto& w : cgroups_->knob_writes()) {
      const std::string key = "cgroup." + cgroup_level_name(w.dir) + "." + w.knob;
      store_.add_context(run_id_, key, w.read_back);
      store_.add_context(run_id_, key + ".written",
                         fmt::format("{}={} ({}: {})", w.file, w.value, w.source, w.asked));
    }
  }

  // The cgroup tree's event counters (memory.events; v1 failcnt, oom_kill),
  // for per-iteration monitor deltas; empty without a tree.
  std::map<std::string, std::uint64_t> memcg_events() const {
    return cgroups_ ? system_.cgroup_events(*cgroups_) : std::map<std::string, std::uint64_t>{};
  }

  const PlannedJob& job_;
  const PlannedVariant& variant_;
  const Cell& cell_;
  ResultsStore& store_;
  Progress& progress_;
  SystemReads& system_;
  std::int64_t run_id_ = 0;
  RunStatus status_ = RunStatus::running;
  int ok_ = 0, failed_ = 0, invalid_ = 0;
  // The cell's metric descriptors by name, read at the first measured iteration.
  std::optional<std::map<std::string, MetricDescriptor>> declared_;
  RunContext ctx_;
  // Declared before the session so that it is destroyed after it.
  std::unique_ptr<CgroupTree> cgroups_;
  // The job's monitors (job_monitors) and the extra ones open for this run.
  const std::vector<std::string> selected_monitors_ = job_monitors(job_.job);
  std::unique_ptr<MonitorSet> monitors_;
  std::unique_ptr<CellSession> session_;
};

// Writes a variant's knobs into `knobs`. Returns the reason when one cannot
// be written (nothing is then left changed).
std::optional<std::string> apply_knobs(const PlannedVariant& variant, KnobSet& knobs,
                                       AppliedKnobs& applied) {
  if (auto reason = knobs.apply(variant.knobs))
    return fmt::format("variant {}: a knob cannot be written: {}", variant.name, *reason);
  applied.in_force = knobs.in_force();
  applied.warnings = knobs.mismatches();
  return std::nullopt;
}

// The run description of a variant: the system facts as they are with its
// knobs in force (THP etc. change with them) and the --context pairs.
NewRun variant_base(const NewRun& base, PlanRun& plan, const PlannedVariant& variant) {
  NewRun run = base;
  run.variant = variant.name;
  if (!variant.knobs.empty()) {
    run.context = plan.system.context().facts;
    for (const auto& [k, v] : plan.options.context) run.context[k] = v;
  }
  return run;
}

void count(RunOutcome& outcome, const CellRun& run) {
  if (run.id()) outcome.run_ids.push_back(run.id());
  switch (run.status()) {
    case RunStatus::complete:
      ++outcome.complete;
      break;
    case RunStatus::failed:
      ++outcome.failed;
      break;
    case RunStatus::skipped:
      ++outcome.skipped;
      break;
    case RunStatus::aborted:
      ++outcome.aborted;
      break;
    case RunStatus::running:
      break;
  }
}

// Variants one after the other: knobs written once per variant.
void run_sequential(const PlannedJob& job, const NewRun& job_base, PlanRun& plan) {
  for (const auto& variant : job.variants) {
    KnobSet knobs;  // restored when this scope ends: normally, on error or on SIGINT
    AppliedKnobs applied;
    std::optional<std::string> knob_reason = apply_knobs(variant, knobs, applied);
    NewRun base = variant_base(job_base, plan, variant);
    for (const auto& cell : job.cells) {
      plan.progress.cell(++plan.index, variant.name, describe_cell(job, variant.name, cell));
      CellRun run(job, variant, cell, plan);
      try {
        if (knob_reason) {
          run.skip(base, *knob_reason);
        } else {
          run.begin(base, plan.env_warnings, applied);
          for (int w = 1; w <= job.warmup; ++w) run.warmup(w);
          for (int i = 1; i <= job.iterations; ++i) {
            run.measure(i);
            if (plan.options.look && run.running() && plan.options.look(job, cell, {run.id()}, i))
              break;
          }
          run.finish();
        }
      } catch (const Interrupted&) {
        run.abort();
        count(plan.outcome, run);
        throw;
      }
      count(plan.outcome, run);
    }
    for (const auto& problem : knobs.restore()) plan.progress.message("warning: " + problem);
  }
}

// --interleave: per cell, the variants' runs alternate per iteration
// (A1 B1 A2 B2 ...) to cancel drift; each slot writes its variant's knobs
// before and restores them after.
void run_interleaved(const PlannedJob& job, const NewRun& job_base, PlanRun& plan) {
  for (const auto& cell : job.cells) {
    std::vector<std::unique_ptr<CellRun>> runs;
    try {
      for (const auto& variant : job.variants) {
        plan.progress.cell(++plan.index, variant.name, describe_cell(job, variant.name, cell));
        runs.push_back(std::make_unique<CellRun>(job, variant, cell, plan));
        KnobSet knobs;
        AppliedKnobs applied;
        std::optional<std::string> reason = apply_knobs(variant, knobs, applied);
        NewRun base = variant_base(job_base, plan, variant);
        if (reason)
          runs.back()->skip(base, *reason);
        else
          runs.back()->begin(base, plan.env_warnings, applied);
      }
      // One slot: variant v's knobs in force around one step of its run.
      auto slot = [&](std::size_t v, auto&& step) {
        CellRun& run = *runs[v];
        if (!run.running()) return;
        KnobSet knobs;
        AppliedKnobs applied;
        if (auto reason = apply_knobs(job.variants[v], knobs, applied)) return run.fail(*reason);
        step(run);
      };
      for (int w = 1; w <= job.warmup; ++w)
        for (std::size_t v = 0; v < runs.size(); ++v) slot(v, [w](CellRun& r) { r.warmup(w); });
      for (int i = 1; i <= job.iterations; ++i) {
        for (std::size_t v = 0; v < runs.size(); ++v) slot(v, [i](CellRun& r) { r.measure(i); });
        if (!plan.options.look) continue;
        std::vector<std::int64_t> ids;
        for (auto& run : runs)
          if (run->running()) ids.push_back(run->id());
        if (ids.size() == runs.size() && plan.options.look(job, cell, ids, i)) break;
      }
      for (auto& run : runs) run->finish();
    } catch (const Interrupted&) {
      for (auto& run : runs) {
        run->abort();
        count(plan.outcome, *run);
      }
      throw;
    }
    for (auto& run : runs) count(plan.outcome, *run);
  }
}

// The run description every job of the plan starts from: kernel, testbox,
// system facts with the --context pairs over them, and the --build label.
NewRun plan_base(const RunOptions& options, SystemReads& system, SystemContext& facts) {
  NewRun base;
  base.kernel = system.kernel();
  base.testbox = system.testbox();
  facts = system.context();
  base.context = facts.facts;
  for (const auto& [k, v] : options.context) base.context[k] = v;
  // The --set overrides, in order, as typed: a bundle or a colleague reading
  // the run sees how the job file was changed (the cell id shows only the
  // result).
  std::string sets;
  for (const SetOverride& o : options.overrides)
    sets += (sets.empty() ? "" : " ") + o.key + "=" + join(o.values, ",");
  if (!sets.empty()) base.context["job.set"] = sets;
  base.context["nightjar.version"] = NIGHTJAR_VERSION;
  base.build = options.build;
  return base;
}

// The job's part of its runs' description: names, planned iterations and
// `min_effect:` (compare reads it back from the run context).
NewRun job_base(const NewRun& base, const PlannedJob& job) {
  NewRun run = base;
  run.job = job.job.name;
  // Absolute: `bundle` and `bisect` read the job file back from any
  // directory.
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(job.job.path, ec);
  run.job_path = ec ? job.job.path : absolute.lexically_normal().string();
  run.iterations = job.iterations;
  run.warmup = job.warmup;
  // The job file's text as it was run (docs/environment.md): an edit between
  // two runs shows as a differing job.hash.
  if (auto text = read_small_file(job.job.path)) run.context["job.hash"] = fnv1a64_hex(*text);
  for (const auto& [metric, pct] : job.job.min_effect)
    run.context[metric.empty() ? "min_effect" : "min_effect." + metric] = fmt::format("{}", pct);
  return run;
}

}  // namespace

void check_cgroup_plans(const std::vector<PlannedJob>& plan, const CgroupLayout& layout) {
  const int version = memcg_version(layout);
  if (version == 0) return;  // every such cell is skipped with the reason
  for (const auto& job : plan)
    for (const auto& variant : job.variants) {
      if (!variant.cgroup.enabled() || cgroup_version_problem(variant.cgroup, version)) continue;
      for (const auto& cell : job.cells) {
        try {
          (void)plan_cgroup_tree(variant.cgroup, job.workload->cgroup_clients(cell), version,
                                 layout.memory_recursiveprot());
        } catch (const UsageError& e) {
          throw UsageError(fmt::format("{}: variant {}, cell {}: {}", job.job.path, variant.name,
                                       cell.id(), e.what()));
        }
      }
    }
}

RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store) {
  LiveSystemReads live;
  return execute_runs(plan, options, store, live);
}

RunOutcome execute_runs(const std::vector<PlannedJob>& plan, const RunOptions& options,
                        ResultsStore& store, SystemReads& system) {
  system.watch_interrupts();
  check_cgroup_plans(plan, system.cgroup_layout());
  SystemContext facts;
  const NewRun base = plan_base(options, system, facts);

  int total_cells = 0;
  long total_iterations = 0;
  for (const auto& job : plan) {
    long runs = static_cast<long>(job.cells.size()) * static_cast<long>(job.variants.size()) *
                std::max(1, options.runs);
    total_cells += static_cast<int>(runs);
    total_iterations += runs * (job.iterations + job.warmup);
  }
  Progress progress(total_cells, total_iterations);
  // What killed nightjar processes left behind goes before anything runs.
  for (const auto& line : system.sweep_leftovers()) progress.message(line);
  PlanRun run{options, store, progress, system, facts.fact_warnings(base.testbox.cpus), 0, {}};
  for (const auto& w : run.env_warnings)
    if (std::any_of(plan.begin(), plan.end(),
                    [&](const auto& job) { return concerns(w, *job.workload); }))
      progress.message("warning: " + w.text);

  try {
    for (const auto& job : plan) {
      store.register_metrics(job.workload->name().data(), job.workload->metrics());
      for (const auto& cell : job.cells)  // job-declared metrics (exec)
        store.register_metrics(job.workload->name().data(), job.workload->cell_metrics(cell));
    }
    // --runs: rounds of the whole plan, so that variants alternate by run.
    for (int round = 0; round < std::max(1, options.runs); ++round) {
      for (const auto& job : plan) {
        if (options.interleave && job.variants.size() > 1)
          run_interleaved(job, job_base(base, job), run);
        else
          run_sequential(job, job_base(base, job), run);
      }
    }
  } catch (const Interrupted&) {
    // Every KnobSet and CgroupTree has been unwound by now: knobs restored.
    run.outcome.interrupted = true;
    std::int64_t last = run.outcome.run_ids.empty() ? 0 : run.outcome.run_ids.back();
    progress.message(
        fmt::format("interrupted: run {} stored as aborted with its completed samples", last));
  }
  progress.finish();
  return run.outcome;
}

}  // namespace nightjar

// `nightjar run` (jobs on this kernel, or in qemu guests with --kernel) and
// the hidden `nightjar guest-run` that the guest's /init starts.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/job/iteration_time.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "harness/run/until_decided.h"
#include "harness/vm/qemu.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/render/run_output.h"
#include "workloads/sys/probe.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

std::map<std::string, std::string> parse_context_pairs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const auto& p : pairs) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--context: '" + echo_input(p) +
                       "' is not key=value; write for example --context host_load=idle");
    require_label("--context key", p.substr(0, eq));
    require_label("--context value", p.substr(eq + 1));
    out[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return out;
}

struct RunArgs {
  std::vector<std::string> jobs, sets, context;
  std::string variant, build, db;
  std::optional<int> iterations, warmup;
  bool interleave = false;
  bool fail_if_skipped = false;  ///< --fail-if-skipped: exit 4 when any cell was skipped
  bool yes = false;  ///< --yes: run a matrix above the limits (docs/jobs.md "Large matrices")
  int runs = 1;
  CLI::Option* runs_option = nullptr;  ///< --runs, to tell a given --runs from the default
  std::string format = "text";         ///< a run-output format (results/render/run_output.h)
  QemuOptions vm;  ///< --kernel IMAGE...: the kernel axis in qemu (harness/vm/qemu.h)
  // --until-decided [BASE] and its budget (harness/run/until_decided.h).
  CLI::Option* until_decided = nullptr;
  std::string until_base, max_time, test = "welch";
  int max_iterations = 0;
  std::vector<std::string> decide_on, ignore_params;
  double alpha = 0.05;
  std::optional<double> min_effect;
};

// ---- the plan of each job and its limits (docs/jobs.md "Large matrices") -----

/// A job above either limit runs only with --yes.
constexpr std::size_t kMaxRunsWithoutYes = 1000;
constexpr double kMaxSecondsWithoutYes = 24 * 3600.0;
/// The stored estimate reads the newest this many complete runs of the job.
constexpr int kEstimateRuns = 20;

// "45 s", "12 min", "3.5 h", "40962 h".
std::string duration_text(double s) {
  if (s < 120) return fmt::format("{:.0f} s", s);
  if (s < 7200) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.{}f} h", s / 3600, s < 36000 ? 1 : 0);
}

// One iteration's time: "0.072 s", "46 s", "60 min".
std::string iteration_time_text(double s) {
  return s < 10 ? fmt::format("{:.3g} s", s) : duration_text(s);
}

// Seconds per iteration and where that came from, or nothing.
struct IterationEstimate {
  double seconds = 0;
  std::string source;
};

// Stored: the mean wall time of the ok iterations of the newest complete
// runs of this job and workload in the database, when there is one that this
// nightjar can read (read-only: nothing is created or migrated here).
std::optional<IterationEstimate> stored_estimate(const std::string& db, const PlannedJob& job) {
  const std::string path = ResultsStore::resolve_path(db);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  try {
    ResultsStore store(path, ResultsStore::Access::read_only);
    RunFilter filter;
    filter.job = job.job.name;
    filter.workload = job.workload->name();
    filter.status = RunStatus::complete;
    filter.limit = kEstimateRuns;
    double sum = 0;
    std::size_t n = 0, runs = 0;
    for (const auto& run : store.runs(filter)) {
      ++runs;
      for (const auto& it : store.iterations(run.id))
        if (it.status == IterationStatus::ok) sum += it.duration_sec, ++n;
    }
    if (n == 0) return std::nullopt;
    return IterationEstimate{
        sum / static_cast<double>(n),
        fmt::format("stored: {} per iteration, the mean of {} "
                    "iterations of {} earlier run(s)",
                    iteration_time_text(sum / static_cast<double>(n)), n, runs)};
  } catch (const Error&) {  // unreadable or older: the database is checked when opened to write
    return std::nullopt;
  }
}

// Declared: the workload's declared iteration time over the matrix
// (harness/job/iteration_time.h).
std::optional<IterationEstimate> declared_estimate(const PlannedJob& job, const Matrix& m) {
  const DeclaredIterationTime t = declared_iteration_time(*job.workload, m);
  if (t.params.empty()) return std::nullopt;
  return IterationEstimate{
      t.seconds, fmt::format("declared: {} per iteration from {}", iteration_time_text(t.seconds),
                             join(t.params, " + "))};
}

// Prints the plan of one job before any cell is built, and refuses it above
// the limits without --yes (exit 2, naming the count, the estimate and --yes).
void check_matrix_plan(const RunArgs& a, const PlannedJob& job, const Matrix& m) {
  const std::size_t kernels = std::max<std::size_t>(1, a.vm.kernels.size());
  const std::size_t runs =
      m.cells * job.variants.size() * static_cast<std::size_t>(a.runs) * kernels;
  const std::size_t per_run = static_cast<std::size_t>(job.warmup + job.iterations);
  const double iterations = static_cast<double>(runs) * static_cast<double>(per_run);
  std::optional<IterationEstimate> e = stored_estimate(a.db, job);
  if (!e) e = declared_estimate(job, m);
  const double seconds = e ? e->seconds * iterations : 0;
  std::string shape = fmt::format("{} cell(s)", m.cells);
  if (job.variants.size() > 1) shape += fmt::format(" x {} variants", job.variants.size());
  if (a.runs > 1) shape += fmt::format(" x {} runs", a.runs);
  if (kernels > 1) shape += fmt::format(" x {} kernels", kernels);
  const std::string plan = fmt::format(
      "{} x ({} warm-up + {} iterations) = {:.0f} iterations; {}", shape, job.warmup,
      job.iterations, iterations,
      e ? fmt::format("estimate {} ({})", duration_text(seconds), e->source)
        : std::string("no estimate (no stored iterations of this job, no duration parameter)"));
  // Runs, not cells: 10 000 variants of one cell are as long as 10 000 cells.
  const bool above = runs > kMaxRunsWithoutYes || seconds > kMaxSecondsWithoutYes;
  if (above && !a.yes)
    throw UsageError(fmt::format(
        "{}: {}: above the limit of {} runs (cells x variants x --runs x kernels) or {} h that "
        "runs without asking; shorten the lists or split the job, or pass --yes to run it "
        "(docs/jobs.md \"Large matrices\")",
        job.job.path, plan, kMaxRunsWithoutYes, kMaxSecondsWithoutYes / 3600));
  std::cerr << fmt::format("nightjar: matrix: {}: {}{}\n", job.job.name, plan,
                           above ? " (--yes: above the limits)" : "");
}

// --max-time: a duration as job files write them ("90s", "20m", "1h").
double parse_max_time(const std::string& text) {
  ParamDescriptor d;
  d.name = "max-time";
  d.type = ParamType::duration;
  d.min = 1.0;
  try {
    return parse_param(d, text, MachineFacts{}).number;
  } catch (const ParamError& e) {
    throw UsageError("--max-time: " + e.message + "; write for example --max-time 20m");
  }
}

// Refuses bad --until-decided input before the database is opened. Returns
// the stored side's selector, parsed (none: the run's variants compare).
std::optional<Selector> check_until_decided(const RunArgs& a, const std::vector<PlannedJob>& plan) {
  if (!a.max_time.empty()) (void)parse_max_time(a.max_time);
  std::optional<Selector> base;
  if (!a.until_base.empty()) base = parse_selector(a.until_base);
  for (const auto& job : plan) {
    if (!a.until_base.empty() && job.variants.size() > 1)
      throw UsageError(fmt::format(
          "--until-decided {}: {} selects {} variants; against a stored side run one, e.g. "
          "--variant {}",
          a.until_base, job.job.path, job.variants.size(), job.variants.front().name));
    if (a.until_base.empty() && job.variants.size() < 2)
      throw UsageError(fmt::format(
          "--until-decided: {} runs one variant ({}); give two or more with --variant a,b, or "
          "a stored side to compare with: --until-decided build=BASE",
          job.job.path, job.variants.front().name));
  }
  for (const auto& metric : a.decide_on) {
    std::vector<std::string> known;
    for (const auto& job : plan) {
      for (const auto& m : job.workload->metrics()) known.push_back(m.name);
      for (const auto& cell : job.cells)  // job-declared metrics (exec)
        for (const auto& m : job.workload->cell_metrics(cell)) known.push_back(m.name);
    }
    if (std::find(known.begin(), known.end(), metric) == known.end())
      throw UsageError(fmt::format("--decide-on {}: no such metric in these jobs; they have {}",
                                   metric, join(known, ", ")));
  }
  return base;
}

// The significance options of one job's plan line: its `min_effect:` unless
// --min-effect is given, else 1%.
stats::SignificanceOptions job_significance(const RunArgs& a, const PlannedJob& job) {
  auto it = job.job.min_effect.find("");
  return significance_options(
      a.test, a.alpha, a.min_effect.value_or(it != job.job.min_effect.end() ? it->second : 1.0));
}

// The options of --until-decided shared by both units; the significance is
// the fallback margin (rows take the job's `min_effect:` from the stored
// runs: compare's rule).
UntilDecidedOptions until_decided_base_options(const RunArgs& a, std::optional<Selector> base) {
  UntilDecidedOptions u;
  u.base = std::move(base);
  u.max_iterations = a.max_iterations;
  u.max_seconds = a.max_time.empty() ? 0 : parse_max_time(a.max_time);
  u.decide_on = a.decide_on;
  u.ignore_params = a.ignore_params;
  u.significance = significance_options(a.test, a.alpha, a.min_effect.value_or(1.0));
  return u;
}

// The options of --until-decided, its first look printed as the plan line.
UntilDecidedOptions until_decided_options(const RunArgs& a, std::optional<Selector> base,
                                          const std::vector<PlannedJob>& plan,
                                          const ResultsStore& store, int& first_look) {
  UntilDecidedOptions u = until_decided_base_options(a, std::move(base));
  first_look = 0;
  for (const auto& job : plan) {
    const stats::SignificanceOptions significance = job_significance(a, job);
    auto p = stored_plan(store, u.base, job.job.name, u.ignore_params, u.decide_on, significance);
    int n = a.iterations.value_or(job.iterations);
    if (p) {
      std::cerr << "nightjar: plan: " << job.job.name << ": " << plan_line(*p) << "\n";
      n = static_cast<int>(std::min<std::size_t>(p->iterations, 100000));
    } else {
      std::cerr << fmt::format(
          "nightjar: plan: {}: no stored history of its cells; first look at {} iterations per "
          "side\n",
          job.job.name, n);
    }
    first_look = std::max(first_look, n);
  }
  return u;
}

// --until-decided --runs N (issue 35): the plan line of each job, then
// rounds of one run per variant and cell (A B, A B, ...; the open cells
// only) until the sampler has decided every cell or N runs per side are
// stored. The outcome of every round together.
RunOutcome run_until_decided_by_runs(const RunArgs& a, std::optional<Selector> base,
                                     const std::vector<PlannedJob>& plan, RunOptions o,
                                     ResultsStore& store, std::unique_ptr<RunsSampler>& sampler) {
  UntilDecidedOptions u = until_decided_base_options(a, std::move(base));
  const std::string testbox = probe_testbox().hostname;
  for (const auto& job : plan)
    std::cerr << "nightjar: plan: " << job.job.name << ": "
              << runs_plan_line(store, u.base, job.job.name, testbox, u.ignore_params, u.decide_on,
                                job_significance(a, job), a.iterations.value_or(job.iterations),
                                a.runs)
              << "\n";
  sampler = std::make_unique<RunsSampler>(store, std::move(u), a.runs);
  o.runs = 1;
  RunOutcome total;
  for (int round = 0; round < sampler->max_runs(); ++round) {
    const std::vector<PlannedJob> open = sampler->open_plan(plan);
    if (open.empty()) break;
    RunOutcome r = execute_runs(open, o, store);
    total.run_ids.insert(total.run_ids.end(), r.run_ids.begin(), r.run_ids.end());
    total.complete += r.complete;
    total.failed += r.failed;
    total.skipped += r.skipped;
    total.aborted += r.aborted;
    total.interrupted = r.interrupted;
    if (r.interrupted || sampler->after_round(open, r.run_ids)) break;
  }
  return total;
}

// Refuses the combinations of --until-decided that its unit does not take,
// before the database is opened: --kernel, and with --runs N (runs as the
// unit) a budget below the first look or an iteration budget.
void check_until_decided_unit(const RunArgs& a, bool by_runs) {
  if (!a.vm.kernels.empty())
    throw UsageError(
        "--until-decided with --kernel: not supported yet; run the kernels with --runs N and "
        "`nightjar check`");
  if (!by_runs) return;
  RunsSampler::check_budget(a.runs);
  if (a.max_iterations || !a.max_time.empty())
    throw UsageError(fmt::format(
        "--until-decided --runs {}: runs are the unit and the budget is {} runs per side; "
        "--max-iterations and --max-time budget the iterations of one run per side: leave "
        "them out (or leave out --runs to decide on iterations)",
        a.runs, a.runs));
}

ExitCode cmd_run(const RunArgs& a) {
  RunOptions o;
  o.job_paths = a.jobs;
  o.variant = a.variant;
  o.interleave = a.interleave;
  o.runs = a.runs;
  o.build = a.build;
  if (!a.build.empty()) require_label("--build", a.build);
  o.iterations = a.iterations;
  o.warmup = a.warmup;
  for (const auto& s : a.sets) o.overrides.push_back(parse_set(s));
  o.context = parse_context_pairs(a.context);
  o.check_matrix = [&a](const PlannedJob& job, const Matrix& m) { check_matrix_plan(a, job, m); };
  // SIGINT/SIGTERM from here on: planning a large matrix takes seconds, and
  // an interrupt there exits 130 with nothing stored.
  install_interrupt_handlers();
  // Every job is parsed and every cell validated before the database is
  // opened: bad input never leaves rows behind.
  MachineFacts machine = probe_machine_facts();
  if (!a.vm.kernels.empty()) {
    // Cells are validated against the guest: its memory and CPUs.
    machine.mem_total_bytes = static_cast<std::uint64_t>(a.vm.memory_mb) << 20;
    if (a.vm.cpus > 0) machine.cpus = static_cast<unsigned>(a.vm.cpus);
    for (const auto& k : a.vm.kernels) inspect_kernel_image(k, a.vm.modules);
  }
  auto plan = plan_runs(o, machine);
  if (a.vm.kernels.empty())
    for (const auto& job : plan)
      if (job.job.vm_cgroup2_options)
        std::cerr << fmt::format(
            "nightjar: note: {}:{}: vm.cgroup2_options applies to qemu guests (--kernel); not "
            "used on this kernel\n",
            job.job.path, job.job.vm_line);
  const bool until = a.until_decided && a.until_decided->count() > 0;
  if (!until && (a.max_iterations || !a.max_time.empty() || !a.decide_on.empty()))
    throw UsageError(
        "--max-iterations, --max-time and --decide-on are the budget of --until-decided; add "
        "--until-decided (or --iterations N for a fixed length)");
  // --runs N with --until-decided: runs are the unit, N the budget (issue 35).
  const bool by_runs = until && a.runs_option && a.runs_option->count() > 0;
  if (until) check_until_decided_unit(a, by_runs);
  std::optional<Selector> until_base;
  if (until) until_base = check_until_decided(a, plan);
  ResultsStore store = open_store(a.db);
  std::unique_ptr<SequentialSampler> sampler;
  std::unique_ptr<RunsSampler> runs_sampler;
  RunOutcome outcome;
  if (by_runs) {
    outcome = run_until_decided_by_runs(a, std::move(until_base), plan, o, store, runs_sampler);
  } else if (until) {
    int first_look = 0;
    UntilDecidedOptions u =
        until_decided_options(a, std::move(until_base), plan, store, first_look);
    sampler = std::make_unique<SequentialSampler>(store, std::move(u), first_look);
    // The planned maximum is what each cell may measure; the sampler ends it earlier.
    for (auto& job : plan) job.iterations = sampler->max_iterations();
    o.interleave = true;
    o.look = [&sampler](const PlannedJob& job, const Cell& cell,
                        const std::vector<std::int64_t>& ids,
                        int n) { return sampler->look(job, cell, ids, n); };
  }
  if (!by_runs)
    outcome = a.vm.kernels.empty() ? execute_runs(plan, o, store)
                                   : execute_runs_in_vms(plan, o, a.vm, store);
  const RunOutputFormat* format = find_run_output_format(a.format);
  if (!format)  // --format is checked against the same table when parsed
    throw UsageError("--format: unknown run output '" + a.format + "'");
  RunOutput output = format->render(store, outcome.run_ids);
  std::cout << output.text;
  for (const auto& note : output.notes) std::cerr << "nightjar: " << note << "\n";
  std::cerr << fmt::format(
      "nightjar: {} complete, {} failed, {} skipped, {} aborted; database {}\n", outcome.complete,
      outcome.failed, outcome.skipped, outcome.aborted, store.path());
  if (outcome.interrupted) return ExitCode::interrupted;
  if (outcome.failed) return ExitCode::environment;
  if (a.fail_if_skipped && outcome.skipped) {
    std::cerr << fmt::format(
        "nightjar: --fail-if-skipped: {} of {} cell run(s) skipped (the reasons are above and in "
        "`nightjar show --status skipped`) -> exit {}\n",
        outcome.skipped, outcome.complete + outcome.skipped, to_int(ExitCode::environment));
    return ExitCode::environment;
  }
  if (!sampler && !runs_sampler) return ExitCode::ok;
  std::cout << (sampler ? sampler->report() : runs_sampler->report());
  const ExitCode code = sampler ? sampler->exit_code() : runs_sampler->exit_code();
  std::cerr << fmt::format("nightjar: until-decided -> exit {}\n", to_int(code));
  return code;
}

struct GuestArgs {
  std::string port, spec;
};

// The options of `run --kernel`: booting kernels in qemu (docs/qemu.md),
// and the two test hooks, hidden from --help.
void add_vm_options(CLI::App* cmd, const std::shared_ptr<RunArgs>& a) {
  cmd->add_option("--kernel", a->vm.kernels,
                  "IMAGE: boot this kernel image in qemu and run the jobs inside it "
                  "(repeatable: a kernel axis; docs/qemu.md)");
  cmd->add_option("--modules", a->vm.modules,
                  "DIR: kernel modules for --kernel (lib/modules/<release>, or a directory "
                  "holding it); default: next to each image");
  cmd->add_option("--vm-memory", a->vm.memory_mb, "MiB of guest memory (--kernel)")
      ->check(in_range(128, 1 << 20));
  cmd->add_option("--vm-cpus", a->vm.cpus, "guest CPUs (--kernel; default min(2, CPUs))")
      ->check(in_range(1, 256));
  cmd->add_option("--vm-timeout", a->vm.timeout_sec,
                  "seconds for one kernel's boot and job before qemu is killed (--kernel)")
      ->check(at_least(1));
  cmd->add_flag("--vm-hugepages", a->vm.hugepages,
                "back the guest's memory with the host's 2 MiB huge pages, reserved for the "
                "boots and given back after (--kernel, root; steadier figures under TCG: "
                "docs/qemu.md \"Guest memory on huge pages\")");
  cmd->add_option("--guest-binary", a->vm.guest_binary,
                  "statically linked nightjar for the guest (default: nightjar-static next "
                  "to this binary)");
  cmd->add_option("--vm-keep", a->vm.keep_dir,
                  "DIR: keep each kernel's initramfs, console and qemu logs there");
  cmd->add_option("--vm-cgroup-options", a->vm.cgroup2_options,
                  std::string("OPTS: mount options of the guest's cgroup2 (--kernel; a comma "
                              "list, \"\" = the kernel's defaults); overrides the jobs' `vm: "
                              "cgroup2_options`, default ") +
                      kDefaultCgroup2Options + "; recorded as vm.cgroup2_options")
      ->check([](const std::string& v) { return cgroup2_options_problem(v); }, "OPTS");
  cmd->add_option("--vm-init", a->vm.init_override,
                  "test hook: shell text run by the guest's /init")
      ->group("");
  cmd->add_option_function<std::vector<std::string>>(
         "--vm-file",
         [a](const std::vector<std::string>& files) {
           for (const auto& f : files) {
             auto eq = f.find('=');
             if (eq == std::string::npos || eq == 0 || f.size() <= eq + 1 || f[eq + 1] != '/')
               throw UsageError("--vm-file " + f +
                                ": write SRC=DEST with DEST an absolute path in the guest");
             a->vm.extra_files.emplace_back(f.substr(0, eq), f.substr(eq + 1));
           }
         },
         "test hook: SRC=DEST, copy SRC into the guest's initramfs at DEST")
      ->group("");
}

// The options of `run --until-decided` (docs/bisect.md "Until decided").
void add_until_decided_options(CLI::App* cmd, const std::shared_ptr<RunArgs>& a) {
  a->until_decided =
      cmd->add_option("--until-decided", a->until_base,
                      "[BASE]: measure in interleaved rounds until every metric row is decided "
                      "(regression, improvement, unchanged) or the budget is spent; compares "
                      "the variants (first = BASE), or this run with a stored side BASE "
                      "(a compare selector, e.g. build=v6.18); exit as check. Rounds of one "
                      "iteration per variant, or with --runs N of one run per variant (a look "
                      "at 3 runs per side, every 3 after, at most N)")
          ->expected(0, 1);
  cmd->add_option("--max-iterations", a->max_iterations,
                  "N: --until-decided: at most N iterations per side and cell "
                  "(default max(30, 4 x the first look))")
      ->check(in_range(3, 1000000));
  cmd->add_option("--max-time", a->max_time,
                  "T: --until-decided: time budget of the whole run (90s, 20m, 1h)");
  cmd->add_option("--decide-on", a->decide_on,
                  "METRIC: --until-decided: stop when these metrics' rows are decided "
                  "(repeatable; default all)");
  cmd->add_option("--ignore-param", a->ignore_params,
                  "--until-decided: match cells ignoring this parameter (as compare)")
      ->allow_extra_args(false);
  cmd->add_option("--test", a->test, "--until-decided: significance rule (as compare)")
      ->check(CLI::IsMember({"welch", "utest"}))
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "--until-decided: false discovery rate / test level")
      ->capture_default_str();
  cmd->add_option("--min-effect", a->min_effect,
                  "--until-decided: smallest |%change| that counts, percent (default: the "
                  "job's min_effect, else 1)");
}

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand("run", "Run job files on this kernel and store every sample");
  cmd->add_option("jobs", a->jobs,
                  "job files (YAML, regular files of at most 1 MiB; docs/jobs.md)");
  cmd->add_option("--variant", a->variant,
                  "all|NAME[,NAME...]: the job's variants to run (default: the job's "
                  "`variant:`, else all its `variants:`); for a job without `variants:`, "
                  "the label of these runs (default 'default')")
      ->check(not_empty("write --variant NAME, --variant A,B or --variant all, or leave the "
                        "option out"));
  cmd->add_flag("--fail-if-skipped", a->fail_if_skipped,
                "exit 4 when any cell was skipped (a missing kernel feature, no root): for CI "
                "gates that must not pass on nothing");
  cmd->add_flag("--yes,-y", a->yes,
                "run a job above the limits (more than 1000 cells, or an estimate over 24 h), "
                "which is otherwise refused; the plan line says what it will cost");
  cmd->add_flag("--interleave", a->interleave,
                "alternate the variants per iteration (A1 B1 A2 B2 ...) to cancel drift");
  a->runs_option =
      cmd->add_option("--runs", a->runs,
                      "N: run each cell N times as separate runs (own setup each), variants "
                      "alternating by run (A B A B); with --kernel one boot per run; with "
                      "--until-decided runs are the unit and N (at least 3) the budget of runs "
                      "per side")
          ->check(in_range(1, 1000));
  cmd->add_option("--build", a->build, "build label: commit id or name of the kernel build")
      ->check(not_empty("write a build label (e.g. --build v6.18) or leave --build out"));
  cmd->add_option("--iterations,-i", a->iterations,
                  "measured iterations per cell (overrides the job)")
      ->check(at_least(1));
  cmd->add_option("--warmup,-w", a->warmup,
                  "untimed warm-up iterations per cell (overrides the job)")
      ->check(at_least(0));
  cmd->add_option("--set,-s", a->sets, "key=value[,value...]: override or add a matrix axis");
  cmd->add_option("--db", a->db, "results database path");
  cmd->add_option("--context", a->context, "k=v: extra context recorded with every run");
  cmd->add_option("--format", a->format, "output on stdout: " + run_output_choices_text())
      ->check(CLI::IsMember(run_output_names()));
  add_vm_options(cmd, a);
  add_until_decided_options(cmd, a);
  s.cmd = cmd;
  s.run = [a] {
    if (a->jobs.empty())
      throw UsageError(
          "run: no job file given; write `nightjar run JOB.yaml...`, e.g. `nightjar run "
          "jobs/pft-quick.yaml` (docs/jobs.md says what a job holds)");
    return cmd_run(*a);
  };
  return s;
}

Subcommand add_guest_run_command(CLI::App& app) {
  auto a = std::make_shared<GuestArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand("guest-run", "inside a qemu guest: run the host's jobs");
  cmd->group("");
  cmd->add_option("--port", a->port, "results port")->required();
  cmd->add_option("--spec", a->spec, "spec written by the host")->required();
  s.cmd = cmd;
  s.run = [a] { return static_cast<ExitCode>(guest_run_main(a->port, a->spec)); };
  return s;
}

}  // namespace nightjar

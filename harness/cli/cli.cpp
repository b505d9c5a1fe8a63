#include "harness/cli/cli.h"
#include "harness/cli/commands.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "harness/bisect/bisect.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "harness/vm/qemu.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/compare/trend.h"
#include "results/model/exit_codes.h"
#include "results/render/compare.h"
#include "results/render/netperf.h"
#include "results/render/run_summary.h"
#include "results/render/table.h"
#include "results/render/trend.h"
#include "results/stats/statistics.h"
#include "results/store/store.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

std::map<std::string, std::string> parse_context_pairs(const std::vector<std::string>& pairs) {
  std::map<std::string, std::string> out;
  for (const auto& p : pairs) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--context: '" + p +
                       "' is not key=value; write for example --context host_load=idle");
    out[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return out;
}

// ---- run ----------------------------------------------------------------
struct RunArgs {
  std::vector<std::string> jobs, sets, context;
  std::string variant, build, db;
  std::optional<int> iterations, warmup;
  bool interleave = false;
  std::string format = "text";  ///< text (summary table) | netperf (netperf result blocks)
  QemuOptions vm;               ///< --kernel IMAGE...: the kernel axis in qemu (harness/qemu.h)
};

ExitCode cmd_run(const RunArgs& a) {
  RunOptions o;
  o.job_paths = a.jobs;
  o.variant = a.variant;
  o.interleave = a.interleave;
  o.build = a.build;
  o.iterations = a.iterations;
  o.warmup = a.warmup;
  for (const auto& s : a.sets) o.overrides.push_back(parse_set(s));
  o.context = parse_context_pairs(a.context);
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
  ResultsStore store = open_store(a.db);
  RunOutcome outcome = a.vm.kernels.empty() ? execute_runs(plan, o, store)
                                            : execute_runs_in_vms(plan, o, a.vm, store);
  if (a.format == "netperf") {
    std::vector<std::int64_t> other;
    std::cout << render_netperf(store, outcome.run_ids, &other);
    for (auto id : other)
      std::cerr << fmt::format(
          "nightjar: run {} has no netperf result blocks (not tcp_sendfile/"
          "tcp_stream, or no iterations)\n",
          id);
  } else {
    std::cout << render_run_summary(store, outcome.run_ids);
  }
  std::cerr << fmt::format(
      "nightjar: {} complete, {} failed, {} skipped, {} aborted; database {}\n", outcome.complete,
      outcome.failed, outcome.skipped, outcome.aborted, store.path());
  if (outcome.interrupted) return ExitCode::interrupted;
  if (outcome.failed) return ExitCode::environment;
  return ExitCode::ok;
}

// ---- list ---------------------------------------------------------------
ExitCode cmd_list() {
  using A = TextTable::Align;
  for (const auto& w : workload_registry()) {
    std::cout << fmt::format("{} — {}\n", w->name(), w->summary());
    auto reqs = w->requirements();
    if (!reqs.empty()) {
      std::string joined;
      for (const auto& r : reqs) joined += (joined.empty() ? "" : "; ") + r;
      std::cout << "  requires: " << joined << "\n";
    }
    auto params = w->params();
    if (!params.empty()) {
      TextTable t({"  parameter", "type", "unit", "default", "meaning"});
      for (const auto& p : params) {
        std::string type = to_string(p.type);
        if (p.type == ParamType::choice) {
          type += " (";
          for (std::size_t i = 0; i < p.choices.size(); ++i) type += (i ? "|" : "") + p.choices[i];
          type += ")";
        }
        // An empty default means "required", except for text parameters,
        // whose empty default is the empty text (unset): harness/params.h.
        const std::string def = !p.default_value.empty()    ? p.default_value
                                : p.type == ParamType::text ? "(unset)"
                                                            : "(required)";
        t.add_row({"  " + p.name, type, p.unit, def, p.doc});
      }
      std::cout << t.render();
    }
    TextTable m({"  metric", "unit", "direction", "mean", "meaning"},
                {A::left, A::left, A::left, A::left, A::left});
    for (const auto& d : w->metrics())
      m.add_row(
          {"  " + d.name, d.unit,
           d.direction == Direction::higher_is_better ? "higher is better" : "lower is better",
           std::string(to_string(d.mean)), d.doc});
    std::cout << m.render() << "\n";
  }
  return ExitCode::ok;
}

// ---- show ---------------------------------------------------------------
struct ShowArgs {
  std::string db, job, workload, variant, build, kernel, status;
  std::optional<std::int64_t> run;
  std::optional<int> last;
  bool summary = false;
};

ExitCode cmd_show(const ShowArgs& a) {
  ResultsStore store = open_store(a.db);
  RunFilter f;
  f.job = a.job;
  f.workload = a.workload;
  f.variant = a.variant;
  f.build = a.build;
  f.kernel_release = a.kernel;
  f.status = a.status;
  f.run_id = a.run;
  f.limit = a.last;
  auto runs = store.runs(f);
  if (runs.empty()) {
    std::cerr << "nightjar: no runs match\n";
    return ExitCode::ok;
  }
  if (a.summary || a.run) {
    std::vector<std::int64_t> ids;
    for (const auto& r : runs) ids.push_back(r.id);
    std::cout << render_run_summary(store, ids);
    if (a.run) {
      std::cout << "\ncontext:\n";
      for (const auto& [k, v] : store.run_context(*a.run))
        std::cout << "  " << k << " = " << v << "\n";
    }
  } else {
    std::cout << render_run_list(runs);
  }
  return ExitCode::ok;
}

// ---- env ----------------------------------------------------------------
ExitCode cmd_env() {
  KernelIdentity k = probe_kernel_identity();
  Testbox t = probe_testbox();
  SystemContext s = SystemContext::probe();
  std::cout << "kernel:\n";
  std::cout << "  release      " << k.release << "\n";
  std::cout << "  version      " << k.version << "\n";
  std::cout << "  cmdline      " << k.cmdline << "\n";
  std::cout << "  config_hash  "
            << (k.config_hash.empty() ? "(config not readable)" : k.config_hash)
            << (k.config_source.empty() ? "" : " from " + k.config_source) << "\n";
  std::cout << "testbox:\n";
  std::cout << "  hostname     " << t.hostname << "\n";
  std::cout << "  cpu_model    " << t.cpu_model << "\n";
  std::cout << "  cpus         " << t.cpus << "\n";
  std::cout << fmt::format("  memory       {} bytes ({:.1f} GiB)\n", t.memory_bytes,
                           static_cast<double>(t.memory_bytes) / (1ull << 30));
  std::cout << "context:\n";
  for (const auto& [key, value] : s.facts) std::cout << fmt::format("  {:<20} {}\n", key, value);
  auto warnings = s.warnings(t.cpus);
  std::cout << "warnings:" << (warnings.empty() ? " none\n" : "\n");
  for (const auto& w : warnings) std::cout << "  - " << w << "\n";
  return ExitCode::ok;
}

// ---- compare / check ----------------------------------------------------
struct CompareArgs {
  std::vector<std::string> sides;  // [0] = BASE
  std::string db, job, workload, format = "mmtests", test = "welch", color = "auto";
  std::vector<std::string> ignore_params;
  double alpha = 0.05, min_effect = 1.0;
  int width = 12, precision = 2;
  bool fail_on_regression = false;
};

// Colour only on a terminal, unless --color says otherwise; NO_COLOR (set and
// not empty, https://no-color.org) turns the automatic choice off.
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return isatty(STDOUT_FILENO) == 1;
}

// `compare` (gate = --fail-on-regression) and `check` (gate = true).
ExitCode cmd_compare(const CompareArgs& a, bool gate) {
  if (a.sides.size() < 2)
    throw UsageError(
        "compare: give a BASE and at least one NEW selector, e.g. `nightjar compare "
        "vanilla patched` or `nightjar compare build=v6.17 build=v6.18`");
  const stats::SignificanceOptions options = significance_options(a.test, a.alpha, a.min_effect);
  for (const auto& s : a.sides) (void)parse_selector(s);  // bad selectors before the database
  ResultsStore store = open_existing_store(a.db);
  SideQuery query{a.job, a.workload, a.ignore_params, &workload_catalog()};
  Comparison c = compare_selectors(store, a.sides, query, options);
  RenderOptions r{a.width, a.precision, use_color(a.color)};
  if (a.format == "lkp")
    std::cout << render_lkp(c, r);
  else if (a.format == "markdown")
    std::cout << render_markdown(c, r);
  else if (a.format == "json")
    std::cout << render_json(c);
  else if (a.format == "csv")
    std::cout << render_csv(c);
  else
    std::cout << render_mmtests(c, r);
  std::cout.flush();
  if (!gate) return ExitCode::ok;
  ExitCode code = check_exit_code(c);
  const char* meaning = code == ExitCode::regression     ? "significant regression"
                        : code == ExitCode::inconclusive ? "inconclusive key metrics"
                                                         : "no significant regression";
  std::cerr << fmt::format("nightjar: check: {} -> exit {} ({})\n", c.verdict, to_int(code),
                           meaning);
  return code;
}

void add_compare_options(CLI::App* cmd, CompareArgs& a) {
  cmd->add_option("--db", a.db, "results database path");
  cmd->add_option("--job", a.job, "only runs of this job (file stem), on every side");
  cmd->add_option("--workload", a.workload, "only runs of this workload, on every side");
  cmd->add_option("--format", a.format, "output layout")
      ->check(CLI::IsMember({"mmtests", "lkp", "markdown", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--test", a.test,
                  "significance rule: welch (Welch on logs + Benjamini-Hochberg + min effect), "
                  "utest, mmtests, lkp")
      ->check(CLI::IsMember({"welch", "utest", "mmtests", "lkp"}))
      ->capture_default_str();
  cmd->add_option("--alpha", a.alpha, "false discovery rate / test level")->capture_default_str();
  cmd->add_option("--min-effect", a.min_effect,
                  "smallest |%change| that counts as a change, percent")
      ->capture_default_str();
  cmd->add_option("--color", a.color,
                  "colour the stars: auto (on a terminal, unless NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_option(
         "--ignore-param", a.ignore_params,
         "match cells ignoring this parameter (repeatable); cells differing only in it are pooled")
      ->allow_extra_args(false);  // one name per flag: `--ignore-param script a b` keeps a and b
  cmd->add_option("--width", a.width, "mmtests layout: value width W of %W.Pf")
      ->check(CLI::Range(1, 40))
      ->capture_default_str();
  cmd->add_option("--precision", a.precision, "mmtests/markdown layout: decimals P of %W.Pf")
      ->check(CLI::Range(0, 12))
      ->capture_default_str();
}

// ---- trend --------------------------------------------------------------
struct TrendArgs {
  std::string db, job, metric, variant, host, format = "text";
  std::vector<std::string> cell, order;
  stats::ChangePointOptions detection;
  bool history = false;
};

ExitCode cmd_trend(const TrendArgs& a) {
  TrendOptions o;
  o.job = a.job;
  o.metric = a.metric;
  o.cell = a.cell;
  o.variant = a.variant;
  o.host = a.host;
  o.order = a.order;
  o.detection = a.detection;
  ResultsStore store = open_store(a.db);
  // Without --metric: every metric of the job with samples, one after another.
  std::vector<std::string> metrics = {a.metric};
  if (a.metric.empty()) metrics = trend_metrics(store, a.job, workload_catalog());
  std::vector<TrendReport> reports;
  for (const auto& m : metrics) {
    o.metric = m;
    try {
      reports.push_back(compute_trend(store, o));
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("trend: ") + e.what());
    }
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (a.format == "json") {
      // One metric: its object; several: a JSON array of them.
      if (reports.size() > 1) std::cout << (i == 0 ? "[\n" : ",\n");
      std::string doc = render_trend_json(reports[i]);
      std::cout << (reports.size() > 1 ? doc.substr(0, doc.size() - 1) : doc);
      if (reports.size() > 1 && i + 1 == reports.size()) std::cout << "\n]\n";
    } else if (a.format == "markdown") {
      std::cout << (i ? "\n" : "") << render_trend_markdown(reports[i]);
    } else {
      std::cout << (i ? "\n" : "") << render_trend_text(reports[i], a.history);
    }
  }
  return ExitCode::ok;
}

// ---- bisect -------------------------------------------------------------
struct BisectArgs {
  std::string db, repo = ".", good, bad, base, bad_base;
  std::optional<std::int64_t> session;
  std::vector<std::string> sets;
  BisectJobOptions job;
};

// The options shared by `bisect run` and `bisect step`.
void add_bisect_job_options(CLI::App* cmd, BisectArgs& a) {
  cmd->add_option("--job", a.job.job_path, "job file measured at each commit")->required();
  cmd->add_option("--metric", a.job.metric,
                  "metric to bisect on (default: the job's first metric)");
  cmd->add_option("--repo", a.repo, "git work tree (default: the current directory)");
  cmd->add_option("--build", a.job.build_command,
                  "shell command that builds the checked-out commit, run at the repository top; "
                  "failure -> skip the commit");
  cmd->add_option("--build-timeout", a.job.build_timeout,
                  "seconds before the build is killed (0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--iterations,-i", a.job.iterations,
                  "first batch of iterations per commit (default: the job's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup,-w", a.job.warmup, "warm-up iterations per run (default: the job's)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-iterations", a.job.max_iterations,
                  "when unsure, add iterations up to this many samples per commit, then skip it "
                  "(default 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--set,-s", a.sets, "key=value: override a job parameter");
  cmd->add_option("--variant", a.job.variant, "variant label of the runs (one variant)");
  cmd->add_option("--alpha", a.job.alpha, "false discovery rate of the comparison (default 0.05)")
      ->check(CLI::Range(1e-9, 0.999999));
  cmd->add_option(
         "--min-effect", a.job.min_effect_pct,
         "smallest |%change| that counts as different (default: half the endpoints' change, "
         "at least 1%)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--db", a.db, "results database path");
}

BisectJobOptions bisect_job(const BisectArgs& a) {
  BisectJobOptions j = a.job;
  for (const auto& s : a.sets) j.overrides.push_back(parse_set(s));
  return j;
}

// git bisect run reads 0 as good, 1-127 except 125 as bad, 125 as skip and
// 128 or more as abort (shared/reference/formats.md §6). Inside a bisect
// step every other outcome -- usage error (2), inconclusive (3), environment
// error (4) -- becomes 128 (abort): a misconfiguration must never blame a
// commit. 130 (interrupted) already aborts.
int bisect_step_exit_code(int rc) {
  if (rc == to_int(ExitCode::ok) || rc == to_int(ExitCode::regression) ||
      rc == to_int(ExitCode::bisect_skip) || rc >= to_int(ExitCode::bisect_abort))
    return rc;
  return to_int(ExitCode::bisect_abort);
}

// True for `nightjar bisect step ...` (options may come before the words).
bool is_bisect_step(int argc, char** argv) {
  std::vector<std::string_view> words;
  for (int i = 1; i < argc && words.size() < 2; ++i)
    if (argv[i][0] != '-') words.emplace_back(argv[i]);
  return words.size() == 2 && words[0] == "bisect" && words[1] == "step";
}

int run_cli(int argc, char** argv) {
  CLI::App app{
      "nightjar: Linux kernel performance regression harness.\n"
      "Runs workloads across parameter matrices, kernels and variants, and keeps every sample in "
      "SQLite."};
  app.set_version_flag("--version", std::string("nightjar ") + NIGHTJAR_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 significant regression, 2 usage error, 3 inconclusive,\n"
      "4 environment/workload/database error, 125 bisect skip, 128 bisect abort,\n130 "
      "interrupted.\n"
      "Database: --db PATH, else $NIGHTJAR_DB, else $XDG_DATA_HOME/nightjar/results.db,\n"
      "else ~/.local/share/nightjar/results.db.");

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run job files on this kernel and store every sample");
  run_cmd->add_option("jobs", run.jobs, "job files (YAML)")->required();
  run_cmd->add_option("--variant", run.variant,
                      "all|NAME[,NAME...]: the job's variants to run (default: the job's "
                      "`variant:`, else all its `variants:`); for a job without `variants:`, "
                      "the label of these runs (default 'default')");
  run_cmd->add_flag("--interleave", run.interleave,
                    "alternate the variants per iteration (A1 B1 A2 B2 ...) to cancel drift");
  run_cmd->add_option("--build", run.build, "build label: commit id or name of the kernel build");
  run_cmd
      ->add_option("--iterations,-i", run.iterations,
                   "measured iterations per cell (overrides the job)")
      ->check(CLI::PositiveNumber);
  run_cmd
      ->add_option("--warmup,-w", run.warmup,
                   "untimed warm-up iterations per cell (overrides the job)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--set,-s", run.sets, "key=value[,value...]: override or add a matrix axis");
  run_cmd->add_option("--db", run.db, "results database path");
  run_cmd->add_option("--context", run.context, "k=v: extra context recorded with every run");
  run_cmd
      ->add_option("--format", run.format,
                   "output on stdout: text (per-cell summary) or netperf (one netperf result block "
                   "per client and iteration of tcp_sendfile/tcp_stream runs)")
      ->check(CLI::IsMember({"text", "netperf"}));
  run_cmd->add_option("--kernel", run.vm.kernels,
                      "IMAGE: boot this kernel image in qemu and run the jobs inside it "
                      "(repeatable: a kernel axis; docs/qemu.md)");
  run_cmd->add_option("--modules", run.vm.modules,
                      "DIR: kernel modules for --kernel (lib/modules/<release>, or a directory "
                      "holding it); default: next to each image");
  run_cmd->add_option("--vm-memory", run.vm.memory_mb, "MiB of guest memory (--kernel)")
      ->check(CLI::Range(128, 1 << 20));
  run_cmd->add_option("--vm-cpus", run.vm.cpus, "guest CPUs (--kernel; default min(2, CPUs))")
      ->check(CLI::Range(1, 256));
  run_cmd
      ->add_option("--vm-timeout", run.vm.timeout_sec,
                   "seconds for one kernel's boot and job before qemu is killed (--kernel)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--guest-binary", run.vm.guest_binary,
                      "statically linked nightjar for the guest (default: nightjar-static next "
                      "to this binary)");
  run_cmd->add_option("--vm-keep", run.vm.keep_dir,
                      "DIR: keep each kernel's initramfs, console and qemu logs there");
  run_cmd
      ->add_option("--vm-init", run.vm.init_override,
                   "test hook: shell text run by the guest's /init")
      ->group("");

  std::string guest_port, guest_spec;
  auto* guest_cmd = app.add_subcommand("guest-run", "inside a qemu guest: run the host's jobs");
  guest_cmd->group("");
  guest_cmd->add_option("--port", guest_port, "results port")->required();
  guest_cmd->add_option("--spec", guest_spec, "spec written by the host")->required();

  auto* list_cmd = app.add_subcommand("list", "List workloads, their parameters and metrics");

  ShowArgs show;
  auto* show_cmd = app.add_subcommand("show", "List stored runs");
  show_cmd->add_option("--db", show.db, "results database path");
  show_cmd->add_option("--job", show.job, "only runs of this job (file stem)");
  show_cmd->add_option("--workload", show.workload, "only runs of this workload");
  show_cmd->add_option("--variant", show.variant, "only runs of this variant");
  show_cmd->add_option("--build", show.build, "only runs of this build label");
  show_cmd->add_option("--kernel", show.kernel, "only runs on this kernel release (uname -r)");
  show_cmd->add_option("--status", show.status, "only runs with this status")
      ->check(CLI::IsMember({"running", "complete", "aborted", "failed", "skipped"}));
  show_cmd->add_option("--run", show.run, "one run: its per-metric summary and context");
  show_cmd->add_option("--last", show.last, "only the newest N runs")->check(CLI::PositiveNumber);
  show_cmd->add_flag("--summary", show.summary,
                     "per-metric summary (n, mean, CoeffVar) instead of the list");

  auto* env_cmd = app.add_subcommand(
      "env", "Show what would be recorded about this kernel and testbox, with warnings");

  CompareArgs compare;
  auto* compare_cmd = app.add_subcommand(
      "compare",
      "Compare stored runs: BASE NEW [NEW...] selectors, Hmean tables with significance");
  compare_cmd
      ->add_option("sides", compare.sides,
                   "selectors: a variant name, or key=value[,key=value] with keys build, kernel, "
                   "variant, run, testbox, job, workload; the first is BASE")
      ->required();
  add_compare_options(compare_cmd, compare);
  compare_cmd->add_flag("--fail-on-regression", compare.fail_on_regression,
                        "exit like `check`: 1 on a significant regression, 3 when inconclusive");

  CompareArgs check;
  std::string check_base, check_new;
  auto* check_cmd = app.add_subcommand("check",
                                       "CI gate: compare BASE and NEW; exit 0 no significant "
                                       "regression, 1 regression, 3 inconclusive");
  check_cmd->add_option("base", check_base, "BASE selector")->required();
  check_cmd->add_option("new", check_new, "NEW selector")->required();
  add_compare_options(check_cmd, check);

  TrendArgs trend;
  auto* trend_cmd = app.add_subcommand(
      "trend", "Change points in a metric's history, build by build (E-divisive means + Welch)");
  trend_cmd->add_option("--job", trend.job, "job name (file stem)")->required();
  trend_cmd->add_option("--metric", trend.metric, "metric name (default: every metric of the job)");
  trend_cmd->add_option("--cell", trend.cell,
                        "k=v[ k=v...]: only cells with these parameters (default: every cell)");
  trend_cmd->add_option("--variant", trend.variant, "only runs of this variant");
  trend_cmd->add_option("--host", trend.host, "only runs on this testbox (hostname)");
  trend_cmd
      ->add_option("--order", trend.order,
                   "b1,b2,...: explicit build order (default: by build date)")
      ->delimiter(',');
  trend_cmd
      ->add_option("--max-p", trend.detection.max_p,
                   "keep change points with p <= this (default 0.001)")
      ->check(CLI::Range(1e-12, 0.5));
  trend_cmd->add_option(
      "--window", trend.detection.window,
      "points per E-divisive window, overlapping by half; 0 = whole history (default 50)");
  trend_cmd
      ->add_option("--min-effect", trend.detection.min_effect_pct,
                   "keep change points with |%change| >= this (default 1)")
      ->check(CLI::NonNegativeNumber);
  trend_cmd
      ->add_option("--min-segment", trend.detection.min_segment,
                   "builds needed on each side of a change point (default 5)")
      ->check(CLI::Range(2, 1000000));
  trend_cmd->add_option("--format", trend.format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  trend_cmd->add_flag("--history", trend.history,
                      "also list every build with the change points marked");
  trend_cmd->add_option("--db", trend.db, "results database path");

  BisectArgs bisect;
  auto* bisect_cmd =
      app.add_subcommand("bisect", "Find the commit that regressed a metric (git bisect)");
  bisect_cmd->require_subcommand(1);
  auto* bisect_run_cmd =
      bisect_cmd->add_subcommand("run",
                                 "Check the endpoints, then drive git bisect: build, run the job, "
                                 "compare with good at each commit");
  bisect_run_cmd->add_option("--good", bisect.good, "a commit without the regression")->required();
  bisect_run_cmd->add_option("--bad", bisect.bad, "a later commit with it")->required();
  add_bisect_job_options(bisect_run_cmd, bisect);
  auto* bisect_step_cmd =
      bisect_cmd->add_subcommand("step",
                                 "Decide the checked-out commit, for `git bisect run`: exit 0 "
                                 "good, 1 bad, 125 skip, 128 abort");
  bisect_step_cmd
      ->add_option("--base", bisect.base, "build label of stored runs of the good commit")
      ->required();
  bisect_step_cmd->add_option(
      "--bad-base", bisect.bad_base,
      "build label of stored runs of the bad commit (sets the minimum effect)");
  add_bisect_job_options(bisect_step_cmd, bisect);
  auto* bisect_log_cmd = bisect_cmd->add_subcommand("log", "Show the steps of a bisect session");
  bisect_log_cmd->add_option("--session", bisect.session, "session id (default: the newest)");
  bisect_log_cmd->add_option("--db", bisect.db, "results database path");
  auto* bisect_resume_cmd =
      bisect_cmd->add_subcommand("resume", "Continue an interrupted `bisect run`");
  bisect_resume_cmd->add_option("--session", bisect.session,
                                "session id (default: the newest unfinished)");
  bisect_resume_cmd->add_option("--db", bisect.db, "results database path");

  const std::vector<Subcommand> more = {add_report_command(app), add_export_command(app),
                                        add_import_command(app), add_plot_command(app)};

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : to_int(ExitCode::usage);
  }

  try {
    ExitCode code = ExitCode::ok;
    if (*run_cmd)
      code = cmd_run(run);
    else if (*guest_cmd)
      return guest_run_main(guest_port, guest_spec);
    else if (*list_cmd)
      code = cmd_list();
    else if (*show_cmd)
      code = cmd_show(show);
    else if (*env_cmd)
      code = cmd_env();
    else if (*compare_cmd)
      code = cmd_compare(compare, compare.fail_on_regression);
    else if (*check_cmd) {
      check.sides = {check_base, check_new};
      code = cmd_compare(check, true);
    } else if (*trend_cmd)
      code = cmd_trend(trend);
    else if (*bisect_run_cmd) {
      BisectRunOptions o;
      o.repo = bisect.repo;
      o.good = bisect.good;
      o.bad = bisect.bad;
      o.job = bisect_job(bisect);
      code = bisect_run(bisect.db, o, std::cout);
    } else if (*bisect_step_cmd) {
      BisectStepOptions o;
      o.repo = bisect.repo;
      o.base = bisect.base;
      o.bad_base = bisect.bad_base;
      o.job = bisect_job(bisect);
      code = bisect_step(bisect.db, o, std::cout);
    } else if (*bisect_log_cmd) {
      ResultsStore store = open_store(bisect.db);
      std::cout << render_bisect_log(store, bisect.session);
    } else if (*bisect_resume_cmd) {
      code = bisect_resume(bisect.db, bisect.session, std::cout);
    } else {
      for (const Subcommand& s : more)
        if (*s.cmd) code = s.run();
    }
    return to_int(code);
  } catch (const Error& e) {
    std::cerr << "nightjar: error: " << e.what() << "\n";
    return to_int(e.code());
  } catch (const std::exception& e) {
    std::cerr << (is_database_error(e) ? "nightjar: database error: " : "nightjar: error: ")
              << e.what() << "\n";
    return to_int(ExitCode::environment);
  }
}

}  // namespace

ResultsStore open_store(const std::string& db_flag) {
  std::string path = ResultsStore::resolve_path(db_flag);
  std::cerr << "nightjar: database " << path << "\n";
  ResultsStore store(path);
  if (store.stale_runs_aborted())
    std::cerr << fmt::format(
        "nightjar: marked {} run(s) left 'running' by an ended process as aborted\n",
        store.stale_runs_aborted());
  return store;
}

stats::SignificanceOptions significance_options(const std::string& test, double alpha,
                                                double min_effect) {
  if (!(alpha > 0.0 && alpha < 1.0))
    throw UsageError(
        fmt::format("--alpha {}: must be between 0 and 1 (exclusive), e.g. 0.05", alpha));
  if (!(min_effect >= 0.0) || !std::isfinite(min_effect))
    throw UsageError(fmt::format("--min-effect {}: must be a percentage >= 0, e.g. 1", min_effect));
  stats::SignificanceOptions options;
  try {
    options.test = stats::test_kind_from_string(test);
  } catch (const std::invalid_argument&) {
    throw UsageError("--test " + test + ": write welch, utest, mmtests or lkp");
  }
  options.alpha = alpha;
  options.min_effect_pct = min_effect;
  return options;
}

ResultsStore open_existing_store(const std::string& db_flag) {
  std::string path = ResultsStore::resolve_path(db_flag);
  if (!std::filesystem::exists(path))
    throw UsageError(
        "no results database at " + path +
        "; pass --db PATH (or set NIGHTJAR_DB), or store runs with `nightjar run` first");
  return open_store(db_flag);
}

int cli_main(int argc, char** argv) {
  int rc = run_cli(argc, argv);
  return is_bisect_step(argc, argv) ? bisect_step_exit_code(rc) : rc;
}

}  // namespace nightjar

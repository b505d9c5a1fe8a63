#include "harness/cli.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>

#include "harness/exit_codes.h"
#include "harness/identity.h"
#include "harness/job.h"
#include "harness/runner.h"
#include "results/store.h"
#include "results/summary.h"
#include "results/table.h"
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

// ---- run ----------------------------------------------------------------
struct RunArgs {
  std::vector<std::string> jobs, sets, context;
  std::string variant, build, db;
  std::optional<int> iterations, warmup;
};

ExitCode cmd_run(const RunArgs& a) {
  RunOptions o;
  o.job_paths = a.jobs;
  o.variant = a.variant;
  o.build = a.build;
  o.iterations = a.iterations;
  o.warmup = a.warmup;
  for (const auto& s : a.sets) o.overrides.push_back(parse_set(s));
  o.context = parse_context_pairs(a.context);
  // Every job is parsed and every cell validated before the database is
  // opened: bad input never leaves rows behind.
  MachineFacts machine = MachineFacts::probe();
  auto plan = plan_runs(o, machine);
  ResultsStore store = open_store(a.db);
  RunOutcome outcome = execute_runs(plan, o, store);
  std::cout << render_run_summary(store, outcome.run_ids);
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
        t.add_row({"  " + p.name, type, p.unit,
                   p.default_value.empty() ? "(required)" : p.default_value, p.doc});
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
  KernelIdentity k = KernelIdentity::probe();
  Testbox t = Testbox::probe();
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

}  // namespace

int cli_main(int argc, char** argv) {
  CLI::App app{
      "nightjar: Linux kernel performance regression harness.\n"
      "Runs workloads across parameter matrices, kernels and variants, and keeps every sample in "
      "SQLite."};
  app.set_version_flag("--version", std::string("nightjar ") + NIGHTJAR_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 significant regression, 2 usage error, 3 inconclusive,\n"
      "4 environment/workload/database error, 125 bisect skip, 130 interrupted.\n"
      "Database: --db PATH, else $NIGHTJAR_DB, else $XDG_DATA_HOME/nightjar/results.db,\n"
      "else ~/.local/share/nightjar/results.db.");

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run job files on this kernel and store every sample");
  run_cmd->add_option("jobs", run.jobs, "job files (YAML)")->required();
  run_cmd->add_option("--variant", run.variant,
                      "variant label of these runs (default: the job's, else 'default')");
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
    else if (*list_cmd)
      code = cmd_list();
    else if (*show_cmd)
      code = cmd_show(show);
    else if (*env_cmd)
      code = cmd_env();
    return to_int(code);
  } catch (const Error& e) {
    std::cerr << "nightjar: error: " << e.what() << "\n";
    return to_int(e.code());
  } catch (const SQLite::Exception& e) {
    std::cerr << "nightjar: database error: " << e.what() << "\n";
    return to_int(ExitCode::environment);
  } catch (const std::exception& e) {
    std::cerr << "nightjar: error: " << e.what() << "\n";
    return to_int(ExitCode::environment);
  }
}

}  // namespace nightjar

// `nightjar list` (workloads), `nightjar show` (stored runs) and `nightjar
// env` (what would be recorded about this kernel and testbox).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "results/compare/environment.h"
#include "results/compare/selector.h"
#include "results/model/exit_codes.h"
#include "results/render/environment.h"
#include "results/render/run_summary.h"
#include "results/render/table.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

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
        // whose empty default is the empty text (unset): results/model/params.h.
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

struct ShowArgs {
  std::string db, job, workload, variant, build, kernel, status;
  std::vector<std::string> facts;  ///< --fact KEY
  std::optional<std::int64_t> run;
  std::optional<int> last;
  bool summary = false;
};

ExitCode cmd_show(const ShowArgs& a) {
  ResultsStore store = open_existing_store(a.db);
  RunFilter f;
  f.job = a.job;
  f.workload = a.workload;
  f.variant = a.variant;
  f.build = a.build;
  f.kernel_release = a.kernel;
  if (!a.status.empty()) f.status = parse_run_status(a.status);  // checked by the option
  f.run_id = a.run;
  f.limit = a.last;
  auto runs = store.runs(f);
  if (runs.empty() && a.run && f.job.empty() && f.workload.empty() && f.variant.empty() &&
      f.build.empty() && f.kernel_release.empty() && !f.status)
    throw UsageError(fmt::format(
        "--run {}: no run {} in {}; `nightjar show` lists the stored runs and their ids", *a.run,
        *a.run, store.path()));
  if (runs.empty()) {
    std::cerr << "nightjar: no runs match\n";
    return ExitCode::ok;
  }
  if (a.summary || a.run) {
    std::vector<std::int64_t> ids;
    for (const auto& r : runs) ids.push_back(r.id);
    std::cout << render_run_summary(summarize_runs(store, ids));
    if (a.run) {
      if (std::string invalid = render_invalid_samples(store.samples(*a.run, SampleSet::all));
          !invalid.empty())
        std::cout << "\n" << invalid;
      std::cout << "\ncontext:\n";
      for (const auto& [k, v] : store.run_context(*a.run))
        std::cout << "  " << k << " = " << v << "\n";
    }
  } else {
    // --fact columns, and the LAVA job of runs that came from a LAVA lab
    // (docs/lava.md) without asking.
    std::vector<std::string> keys = a.facts;
    if (std::find(keys.begin(), keys.end(), "lava.job_id") == keys.end()) {
      auto lava = store.fact_values("lava.job_id");
      bool any = false;
      for (const auto& r : runs) any = any || lava.count(r.id);
      if (any) keys.push_back("lava.job_id");
    }
    std::vector<FactColumn> columns;
    for (const auto& k : keys) columns.push_back({k, store.fact_values(k)});
    std::cout << render_run_list(runs, columns);
  }
  return ExitCode::ok;
}

struct EnvArgs {
  std::vector<std::string> diff;  ///< --diff BASE NEW: two selectors
  std::string db, job, workload;
  std::vector<std::string> accept_env;
};

// `env --diff BASE NEW`: the fingerprint diff of two stored sides, the
// kernel config in full (docs/environment.md).
ExitCode cmd_env_diff(const EnvArgs& a) {
  const std::vector<Selector> sides = parse_selectors(a.diff);  // before the database
  check_distinct_sides(sides);
  const std::set<std::string> accepted = accepted_env_keys(a.accept_env);
  ResultsStore store = open_existing_store(a.db);
  SideQuery query{a.job, a.workload, {}, &workload_catalog(), false};
  const LoadedSide base = load_side(store, sides[0], query, "BASE");
  const LoadedSide now = load_side(store, sides[1], query, "NEW");
  std::cout << render_environment_diff(diff_sides(store, base, now, accepted));
  return ExitCode::ok;
}

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
  print_leftovers(std::cout);
  return ExitCode::ok;
}

}  // namespace

Subcommand add_list_command(CLI::App& app) {
  Subcommand s;
  s.cmd = app.add_subcommand("list", "List workloads, their parameters and metrics");
  s.run = [] { return cmd_list(); };
  return s;
}

Subcommand add_show_command(CLI::App& app) {
  auto a = std::make_shared<ShowArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand("show", "List stored runs");
  cmd->add_option("--db", a->db, "results database path");
  cmd->add_option("--job", a->job, "only runs of this job (file stem)");
  cmd->add_option("--workload", a->workload, "only runs of this workload");
  cmd->add_option("--variant", a->variant, "only runs of this variant");
  cmd->add_option("--build", a->build, "only runs of this build label");
  cmd->add_option("--kernel", a->kernel, "only runs on this kernel release (uname -r)");
  std::vector<std::string> statuses;
  for (RunStatus s : kRunStatuses) statuses.emplace_back(to_string(s));
  cmd->add_option("--status", a->status, "only runs with this status")
      ->check(CLI::IsMember(statuses));
  cmd->add_option("--run", a->run, "one run: its per-metric summary and context");
  cmd->add_option("--last", a->last, "only the newest N runs")->check(at_least(1));
  cmd->add_option("--fact", a->facts,
                  "KEY: add a column with this context fact of each run (repeatable; e.g. "
                  "lava.url); runs from LAVA show lava.job_id without asking");
  cmd->add_flag("--summary", a->summary,
                "per-metric summary (n, mean, CoeffVar) instead of the list");
  s.cmd = cmd;
  s.run = [a] { return cmd_show(*a); };
  return s;
}

Subcommand add_env_command(CLI::App& app) {
  Subcommand s;
  auto a = std::make_shared<EnvArgs>();
  CLI::App* cmd = app.add_subcommand(
      "env",
      "Show what would be recorded about this kernel and testbox, with warnings; with --diff, "
      "what differs between two stored sides");
  cmd->add_option("--diff", a->diff,
                  "BASE NEW: two selectors as compare takes them (kernel=6.1.0-13-amd64, run=42, "
                  "a variant name...): their differing facts and kernel config, as "
                  "scripts/diffconfig prints it")
      ->expected(2);
  cmd->add_option("--db", a->db, "results database path (with --diff)");
  cmd->add_option("--job", a->job, "with --diff: only runs of this job (file stem), both sides");
  cmd->add_option("--workload", a->workload, "with --diff: only runs of this workload");
  cmd->add_option("--accept-env", a->accept_env,
                  "KEY: with --diff, mark this known difference accepted (repeatable)")
      ->allow_extra_args(false);
  s.cmd = cmd;
  s.run = [a] {
    if (a->diff.empty()) {
      if (!a->db.empty() || !a->job.empty() || !a->workload.empty() || !a->accept_env.empty())
        throw UsageError("env: --db, --job, --workload and --accept-env go with --diff BASE NEW");
      return cmd_env();
    }
    return cmd_env_diff(*a);
  };
  return s;
}

}  // namespace nightjar

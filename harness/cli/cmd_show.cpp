// `nightjar list` (workloads), `nightjar show` (stored runs) and `nightjar
// env` (what would be recorded about this kernel and testbox).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "results/model/exit_codes.h"
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
  f.status = a.status;
  f.run_id = a.run;
  f.limit = a.last;
  auto runs = store.runs(f);
  if (runs.empty() && a.run && f.job.empty() && f.workload.empty() && f.variant.empty() &&
      f.build.empty() && f.kernel_release.empty() && f.status.empty())
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
  cmd->add_option("--status", a->status, "only runs with this status")
      ->check(CLI::IsMember({"running", "complete", "aborted", "failed", "skipped"}));
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
  s.cmd = app.add_subcommand(
      "env", "Show what would be recorded about this kernel and testbox, with warnings");
  s.run = [] { return cmd_env(); };
  return s;
}

}  // namespace nightjar

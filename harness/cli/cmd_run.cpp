// `nightjar run` (jobs on this kernel, or in qemu guests with --kernel) and
// the hidden `nightjar guest-run` that the guest's /init starts.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "harness/vm/qemu.h"
#include "results/model/exit_codes.h"
#include "results/render/run_output.h"
#include "workloads/sys/probe.h"

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

struct RunArgs {
  std::vector<std::string> jobs, sets, context;
  std::string variant, build, db;
  std::optional<int> iterations, warmup;
  bool interleave = false;
  int runs = 1;
  std::string format = "text";  ///< a run-output format (results/render/run_output.h)
  QemuOptions vm;               ///< --kernel IMAGE...: the kernel axis in qemu (harness/vm/qemu.h)
};

ExitCode cmd_run(const RunArgs& a) {
  RunOptions o;
  o.job_paths = a.jobs;
  o.variant = a.variant;
  o.interleave = a.interleave;
  o.runs = a.runs;
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
  return ExitCode::ok;
}

struct GuestArgs {
  std::string port, spec;
};

}  // namespace

Subcommand add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  Subcommand s;
  CLI::App* cmd = app.add_subcommand("run", "Run job files on this kernel and store every sample");
  cmd->add_option("jobs", a->jobs, "job files (YAML)")->required();
  cmd->add_option("--variant", a->variant,
                  "all|NAME[,NAME...]: the job's variants to run (default: the job's "
                  "`variant:`, else all its `variants:`); for a job without `variants:`, "
                  "the label of these runs (default 'default')");
  cmd->add_flag("--interleave", a->interleave,
                "alternate the variants per iteration (A1 B1 A2 B2 ...) to cancel drift");
  cmd->add_option("--runs", a->runs,
                  "N: run each cell N times as separate runs (own setup each), variants "
                  "alternating by run (A B A B); with --kernel one boot per run")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--build", a->build, "build label: commit id or name of the kernel build");
  cmd->add_option("--iterations,-i", a->iterations,
                  "measured iterations per cell (overrides the job)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup,-w", a->warmup,
                  "untimed warm-up iterations per cell (overrides the job)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--set,-s", a->sets, "key=value[,value...]: override or add a matrix axis");
  cmd->add_option("--db", a->db, "results database path");
  cmd->add_option("--context", a->context, "k=v: extra context recorded with every run");
  cmd->add_option("--format", a->format, "output on stdout: " + run_output_choices_text())
      ->check(CLI::IsMember(run_output_names()));
  cmd->add_option("--kernel", a->vm.kernels,
                  "IMAGE: boot this kernel image in qemu and run the jobs inside it "
                  "(repeatable: a kernel axis; docs/qemu.md)");
  cmd->add_option("--modules", a->vm.modules,
                  "DIR: kernel modules for --kernel (lib/modules/<release>, or a directory "
                  "holding it); default: next to each image");
  cmd->add_option("--vm-memory", a->vm.memory_mb, "MiB of guest memory (--kernel)")
      ->check(CLI::Range(128, 1 << 20));
  cmd->add_option("--vm-cpus", a->vm.cpus, "guest CPUs (--kernel; default min(2, CPUs))")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--vm-timeout", a->vm.timeout_sec,
                  "seconds for one kernel's boot and job before qemu is killed (--kernel)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--guest-binary", a->vm.guest_binary,
                  "statically linked nightjar for the guest (default: nightjar-static next "
                  "to this binary)");
  cmd->add_option("--vm-keep", a->vm.keep_dir,
                  "DIR: keep each kernel's initramfs, console and qemu logs there");
  cmd->add_option("--vm-init", a->vm.init_override,
                  "test hook: shell text run by the guest's /init")
      ->group("");
  s.cmd = cmd;
  s.run = [a] { return cmd_run(*a); };
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

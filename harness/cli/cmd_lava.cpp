// `nightjar lava jobs|run|submit|collect` (harness/lava/, docs/lava.md) and
// the hidden `nightjar lava report` that the LAVA guest runs.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "harness/lava/jobs.h"
#include "harness/lava/local.h"
#include "harness/lava/report.h"
#include "harness/lava/server.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/render/run_output.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

struct LavaArgs {
  LavaJobsOptions jobs;
  LavaRunOptions run;
  std::vector<std::string> context, templates, lava_context;
  std::string db, cases;           // lava report
  std::string server, token_file;  // lava submit, collect
  bool wait_flag = false;          // lava collect --wait
  double wait = 6 * 3600;          // --max-wait SECONDS
  double poll = 10;
  bool again = false;
};

std::map<std::string, std::string> pairs(const std::vector<std::string>& items,
                                         const std::string& option, const std::string& example) {
  std::map<std::string, std::string> out;
  for (const auto& p : items) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      throw UsageError(fmt::format("{} {}: not KEY=VALUE; write for example {} {}", option,
                                   echo_input(p), option, example));
    out[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return out;
}

ExitCode cmd_lava_jobs(LavaArgs& a) {
  a.jobs.context = pairs(a.context, "--context", "note=baseline");
  for (const auto& [k, v] : a.jobs.context) {
    require_label("--context key", k);
    require_label("--context value", v);
  }
  a.jobs.templates = pairs(a.templates, "--template", "x86=docs/lava-x86-ipxe.yaml");
  a.jobs.lava_context = pairs(a.lava_context, "--lava-context", "no_kvm=true");
  const LavaManifest m = write_lava_jobs(a.jobs);
  for (const auto& e : m.jobs) std::cout << m.dir << "/" << e.file << "  " << e.job_name << "\n";
  std::cerr << fmt::format(
      "nightjar: lava: {} job definition(s) in {}; run them with `nightjar lava run {} --device "
      "DEV.yaml` or `nightjar lava submit {} --server URL --token-file F`\n",
      m.jobs.size(), m.dir, m.dir, m.dir);
  return ExitCode::ok;
}

// Prints the per-cell summary of the runs a run or collect stored (the table
// `nightjar run` prints), and returns the exit code.
ExitCode report_collected(const LavaCollected& c, int jobs, int passed, bool interrupted,
                          const ResultsStore& store) {
  if (!c.run_ids.empty()) {
    const RunOutput output = find_run_output_format("text")->render(store, c.run_ids);
    std::cout << output.text;
    for (const auto& note : output.notes) std::cerr << "nightjar: " << note << "\n";
  }
  std::cerr << fmt::format(
      "nightjar: lava: {} job(s), {} passed; stored {} complete, {} failed, {} skipped, {} "
      "aborted run(s), {} samples{}; database {}\n",
      jobs, passed, c.complete, c.failed, c.skipped, c.aborted, c.samples,
      c.already_stored ? fmt::format(" ({} run(s) already stored)", c.already_stored) : "",
      store.path());
  if (interrupted) return ExitCode::interrupted;
  return c.failed || c.aborted ? ExitCode::environment : ExitCode::ok;
}

ExitCode cmd_lava_run(const LavaArgs& a) {
  install_interrupt_handlers();                  // SIGINT/SIGTERM stop lava-run, exit 130
  const LavaManifest m = check_lava_run(a.run);  // bad input before the database is opened
  ResultsStore store = open_store(a.db);
  const LavaRunSummary s = run_lava_jobs_locally(store, a.run, m);
  return report_collected(s.totals, s.jobs, s.passed, s.interrupted, store);
}

ExitCode cmd_lava_submit(const LavaArgs& a) {
  const LavaServer server = lava_server(a.server, a.token_file);
  (void)read_lava_manifest(a.run.dir);  // bad input before the database is opened
  ResultsStore store = open_store(a.db);
  submit_lava_jobs(store, server, a.run.dir, std::cout);
  std::cerr << fmt::format(
      "nightjar: lava: submitted; bring the results home with `nightjar lava collect --wait`\n");
  return ExitCode::ok;
}

ExitCode cmd_lava_collect(const LavaArgs& a) {
  const LavaServer server = a.server.empty()
                                ? LavaServer{"", lava_server("http://x", a.token_file).token}
                                : lava_server(a.server, a.token_file);
  install_interrupt_handlers();  // SIGINT/SIGTERM end the waiting, exit 130
  ResultsStore store = open_store(a.db);
  const LavaCollectSummary s =
      collect_lava_jobs(store, server, a.wait_flag ? a.wait : 0, a.poll, a.again);
  if (s.pending)
    std::cerr << fmt::format(
        "nightjar: lava: {} job(s) not finished; collect again later (or "
        "with --wait)\n",
        s.pending);
  const ExitCode code = report_collected(s.totals, s.finished, s.passed, s.interrupted, store);
  return code == ExitCode::ok && s.pending ? ExitCode::inconclusive : code;
}

void add_jobs_options(CLI::App* cmd, LavaArgs& a) {
  LavaJobsOptions& j = a.jobs;
  cmd->add_option("jobs", j.job_paths, "nightjar job files (YAML; docs/jobs.md)");
  cmd->add_option("--kernel", j.kernels,
                  "URL_OR_PATH: a kernel image (bzImage path, or an http(s):// or file:// URL "
                  "LAVA downloads); repeatable: the kernel axis");
  cmd->add_option("--device-type", j.device_types,
                  "TYPE: a LAVA device type (qemu built in; others with --template); repeatable: "
                  "the testbox axis");
  cmd->add_option("--testbox-tags", j.tags,
                  "TAG: LAVA device tags every job requires (repeatable)");
  cmd->add_option("--variant", j.variants,
                  "NAME[,NAME...]: one LAVA job per variant, each running `nightjar run "
                  "--variant NAME` (default: one job running the job files' own variants)");
  cmd->add_option("--runs", j.runs, "N: runs of each cell in the guest (`nightjar run --runs`)")
      ->check(in_range(1, 1000));
  cmd->add_option("--set,-s", j.sets, "key=value[,value...]: override or add a matrix axis");
  cmd->add_option("--iterations,-i", j.iterations, "measured iterations per cell")
      ->check(at_least(1));
  cmd->add_option("--warmup,-w", j.warmup, "untimed warm-up iterations per cell")
      ->check(at_least(0));
  cmd->add_option("--build", j.build, "build label of the runs")
      ->check(not_empty("write a build label (e.g. --build v6.18) or leave --build out"));
  cmd->add_option("--context", a.context, "k=v: extra context recorded with every run");
  cmd->add_option("-o,--output", j.out_dir,
                  "DIR: where the job definitions, ramdisks and manifest go");
  cmd->add_option("--modules", j.modules,
                  "DIR: kernel modules for the ramdisk (as `run --modules`; with a kernel URL "
                  "the lib/modules/<release> directory itself)");
  cmd->add_option("--guest-binary", j.guest_binary,
                  "statically linked nightjar for the ramdisk (default: nightjar-static next to "
                  "this binary)");
  cmd->add_option("--template", a.templates,
                  "TYPE=FILE: deploy and boot actions of device type TYPE (YAML with "
                  "@KERNEL_URL@, @RAMDISK_URL@, @KERNEL_ARGS@, @PROMPT@; docs/lava.md)");
  cmd->add_option("--url-base", j.url_base,
                  "URL: where DIR will be served (http://host/dir/) for a LAVA lab; default "
                  "file:// URLs of this machine");
  cmd->add_option("--priority", j.priority, "LAVA priority: high, medium, low or 0..100")
      ->capture_default_str();
  cmd->add_option("--lava-context", a.lava_context,
                  "k=v: the jobs' LAVA `context:` (e.g. no_kvm=true for a qemu worker without "
                  "KVM)");
  cmd->add_option("--timeout", j.timeout_minutes,
                  "minutes of the test action (default: 3 x the estimate + 5, at least 10)")
      ->check(at_least(1));
}

}  // namespace

Subcommand add_lava_command(CLI::App& app) {
  auto a = std::make_shared<LavaArgs>();
  CLI::App* lava = app.add_subcommand(
      "lava", "Run a job's kernel x testbox matrix on a LAVA lab (docs/lava.md)");
  lava->require_subcommand(1);
  CLI::App* jobs = lava->add_subcommand(
      "jobs",
      "Write one LAVA job definition per kernel x device type x variant, with nightjar's ramdisk");
  add_jobs_options(jobs, *a);
  CLI::App* run = lava->add_subcommand(
      "run", "Run the jobs of DIR through a local lava-run and store their runs (no server)");
  run->add_option("dir", a->run.dir, "DIR of `nightjar lava jobs`")->required();
  run->add_option("--device", a->run.device,
                  "DEV.yaml: a rendered LAVA device configuration (docs/lava.md)")
      ->required();
  run->add_option("--dispatcher", a->run.dispatcher,
                  "lava-run's dispatcher configuration (default: one with prefix nightjar-)");
  run->add_option("--testbox", a->run.testbox,
                  "testbox name of the runs (default: DEV's file stem, the device's name)");
  run->add_option("--job", a->run.only, "FILE: only this job definition of DIR (repeatable)");
  run->add_option("--db", a->db, "results database path");
  run->add_option("--lava-run", a->run.lava_run, "test hook: the lava-run program")->group("");
  CLI::App* submit = lava->add_subcommand(
      "submit", "Submit the jobs of DIR to a LAVA server and record their ids in the database");
  submit->add_option("dir", a->run.dir, "DIR of `nightjar lava jobs`")->required();
  submit->add_option("--server", a->server, "URL of the LAVA server (http(s)://host[:port])")
      ->required();
  submit
      ->add_option("--token-file", a->token_file,
                   "file holding an API token of the server (lava-server manage tokens add)")
      ->required();
  submit->add_option("--db", a->db, "results database path");
  CLI::App* collect = lava->add_subcommand(
      "collect",
      "Bring the submitted jobs' results home: samples, failed jobs as failed runs, job URLs");
  collect->add_option("--server", a->server,
                      "only the jobs of this server (default: every recorded one)");
  collect->add_option("--token-file", a->token_file,
                      "file holding an API token (public jobs need none)");
  collect->add_flag("--wait", a->wait_flag,
                    "wait until every job finished (asking every --poll seconds), at most "
                    "--max-wait");
  collect->add_option("--max-wait", a->wait, "seconds --wait waits at most")
      ->check(at_least(0))
      ->capture_default_str();
  collect->add_option("--poll", a->poll, "seconds between two questions to the server")
      ->check(at_least(1))
      ->capture_default_str();
  collect->add_flag("--all", a->again,
                    "fetch the jobs collected before too (adds nothing that is stored)");
  collect->add_option("--db", a->db, "results database path");
  CLI::App* report = lava->add_subcommand(
      "report", "inside a LAVA guest: test cases and the samples for the host");
  report->group("");
  report->add_option("--db", a->db, "the guest's database")->required();
  report->add_option("--cases", a->cases, "file for the test cases")->required();

  Subcommand s;
  s.cmd = lava;
  s.run = [=]() -> ExitCode {
    if (*jobs) return cmd_lava_jobs(*a);
    if (*run) return cmd_lava_run(*a);
    if (*submit) return cmd_lava_submit(*a);
    if (*collect) return cmd_lava_collect(*a);
    lava_report(a->db, a->cases);
    return ExitCode::ok;
  };
  return s;
}

}  // namespace nightjar

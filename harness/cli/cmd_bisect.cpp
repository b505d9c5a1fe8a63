// `nightjar bisect run|step|log|resume|branch` (harness/bisect/bisect.h).
//
// git bisect run reads 0 as good, 1-127 except 125 as bad, 125 as skip and
// 128 or more as abort (docs/reference.md "git bisect run"). `bisect step` runs
// under git bisect, so every other outcome of it -- usage error (2, also a
// bad option), inconclusive (3), environment error (4) -- becomes 128
// (abort): a misconfiguration must never blame a commit. Whether the command
// was `bisect step` is decided from what the parser saw, whatever the order
// of options and words (`nightjar bisect --db X step --bogus` -> 128).
#include <iostream>
#include <memory>

#include "harness/bisect/bisect.h"
#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

struct BisectArgs {
  std::string db, repo = ".", good, bad, base, bad_base;
  std::optional<std::int64_t> session;
  std::vector<std::string> sets;
  bool test_merge_branch = false;
  bool no_pair_good = false;
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
      ->check(at_least(0));
  cmd->add_option("--iterations,-i", a.job.iterations,
                  "first batch of iterations per commit (default: the job's)")
      ->check(at_least(1));
  cmd->add_option("--warmup,-w", a.job.warmup, "warm-up iterations per run (default: the job's)")
      ->check(at_least(0));
  cmd->add_option("--max-iterations", a.job.max_iterations,
                  "when unsure, add iterations up to this many samples per commit, then skip it "
                  "(default 30)")
      ->check(at_least(1));
  cmd->add_option("--set,-s", a.sets, "key=value: override a job parameter");
  cmd->add_option("--variant", a.job.variant, "variant label of the runs (one variant)");
  cmd->add_option("--alpha", a.job.alpha, "false discovery rate of the comparison (default 0.05)")
      ->check(in_range(1e-9, 0.999999));
  cmd->add_option(
         "--min-effect", a.job.min_effect_pct,
         "smallest |%change| that counts as different (default: half the endpoints' change, "
         "at least 1%)")
      ->check(at_least(0));
  cmd->add_option("--db", a.db, "results database path");
}

// The options of `bisect run --kernel-build` (harness/bisect/kernel_build.h).
void add_kernel_build_options(CLI::App* cmd, BisectArgs& a) {
  KernelBuildOptions& k = a.job.kernel;
  cmd->add_flag("--kernel-build", k.enabled,
                "the repository is a Linux tree: build each commit's kernel out of tree (make O=, "
                "ccache when installed), boot it in qemu and run the job inside; a build failure, "
                "boot panic or hang skips the commit (docs/bisect.md \"Bisecting kernels\")");
  cmd->add_option("--kernel-config", k.config, "FILE: the full .config of every kernel built");
  cmd->add_option("--defconfig", k.defconfig,
                  "TARGET: the base config (tinyconfig, x86_64_defconfig, ...), merged with "
                  "--config-fragment at the first commit built");
  cmd->add_option("--config-fragment", k.fragments,
                  "FILE: a config fragment merged onto --defconfig (repeatable; "
                  "ci/kernel/nightjar-guest.config makes a kernel nightjar's guests can use)");
  cmd->add_option("--kernel-dir", k.dir,
                  "DIR: build tree and image cache (default "
                  "~/.cache/nightjar/kernel-bisect/REPO-CONFIG)");
  cmd->add_option("--kernel-jobs", k.jobs, "make -j N (default: the CPUs)")->check(at_least(1));
  cmd->add_option("--vm-memory", k.vm_memory_mb, "MiB of guest memory (default 2048)")
      ->check(at_least(64));
  cmd->add_option("--vm-cpus", k.vm_cpus, "guest CPUs (default min(2, CPUs))")->check(at_least(1));
  cmd->add_option("--vm-timeout", k.vm_timeout_sec,
                  "seconds for one boot and job before qemu is killed (default 600)")
      ->check(at_least(10));
  cmd->add_flag("--vm-hugepages", k.vm_hugepages,
                "back each guest's memory with the host's 2 MiB huge pages, reserved for the "
                "boots and given back after (root; docs/qemu.md \"Guest memory on huge "
                "pages\")");
  cmd->add_flag("--no-pair-good", a.no_pair_good,
                "decide each commit against the good endpoint's first runs on pooled iterations, "
                "instead of boots of it beside boots of the good image, runs as the unit "
                "(docs/bisect.md \"Paired with the good endpoint\")");
}

BisectJobOptions bisect_job(const BisectArgs& a) {
  BisectJobOptions j = a.job;
  j.kernel.pair_good = !a.no_pair_good;
  for (const auto& s : a.sets) j.overrides.push_back(parse_set(s));
  return j;
}

// git bisect run reads 0 as good, 1-127 except 125 as bad, 125 as skip and
// 128 or more as abort (docs/reference.md "git bisect run"). Inside a bisect
// step every other outcome -- usage error (2), inconclusive (3), environment
// error (4) -- becomes 128 (abort): a misconfiguration must never blame a
// commit. 130 (interrupted) already aborts.
int bisect_step_exit_code(int rc) {
  if (rc == to_int(ExitCode::ok) || rc == to_int(ExitCode::regression) ||
      rc == to_int(ExitCode::bisect_skip) || rc >= to_int(ExitCode::bisect_abort))
    return rc;
  return to_int(ExitCode::bisect_abort);
}

}  // namespace

Subcommand add_bisect_command(CLI::App& app) {
  auto a = std::make_shared<BisectArgs>();
  auto* bisect_cmd =
      app.add_subcommand("bisect", "Find the commit that regressed a metric (git bisect)");
  bisect_cmd->require_subcommand(1);
  // --db before the sub-subcommand (`bisect --db X step`) as well as after it.
  bisect_cmd->add_option("--db", a->db, "results database path");
  auto* bisect_run_cmd =
      bisect_cmd->add_subcommand("run",
                                 "Check the endpoints, then drive git bisect: build, run the job, "
                                 "compare with good at each commit");
  bisect_run_cmd->add_option("--good", a->good, "a commit without the regression")->required();
  bisect_run_cmd->add_option("--bad", a->bad, "a later commit with it")->required();
  add_bisect_job_options(bisect_run_cmd, *a);
  add_kernel_build_options(bisect_run_cmd, *a);
  bisect_run_cmd->add_flag(
      "--test-merge-branch", a->test_merge_branch,
      "after the bisect, when the first bad commit is a merge of two good parents: build and "
      "measure the commits of its branch on top of the first parent one at a time (in a "
      "temporary worktree under $TMPDIR) and name the first that turns it bad (`bisect branch`)");
  auto* bisect_step_cmd =
      bisect_cmd->add_subcommand("step",
                                 "Decide the checked-out commit, for `git bisect run`: exit 0 "
                                 "good, 1 bad, 125 skip, 128 abort");
  bisect_step_cmd->add_option("--base", a->base, "build label of stored runs of the good commit")
      ->required();
  bisect_step_cmd->add_option(
      "--bad-base", a->bad_base,
      "build label of stored runs of the bad commit (sets the minimum effect)");
  add_bisect_job_options(bisect_step_cmd, *a);
  auto* bisect_log_cmd = bisect_cmd->add_subcommand("log", "Show the steps of a bisect session");
  bisect_log_cmd->add_option("--session", a->session, "session id (default: the newest)");
  bisect_log_cmd->add_option("--db", a->db, "results database path");
  auto* bisect_resume_cmd =
      bisect_cmd->add_subcommand("resume", "Continue an interrupted `bisect run`");
  bisect_resume_cmd->add_option("--session", a->session,
                                "session id (default: the newest unfinished)");
  bisect_resume_cmd->add_option("--db", a->db, "results database path");
  auto* bisect_branch_cmd = bisect_cmd->add_subcommand(
      "branch",
      "When a bisect's first bad commit is a merge of two good parents: build and measure the "
      "commits of its branch on top of the first parent one at a time (in a temporary worktree "
      "under $TMPDIR) and name the first that turns it bad");
  bisect_branch_cmd->add_option("--session", a->session,
                                "session id (default: the newest that found a first bad commit)");
  bisect_branch_cmd->add_option("--db", a->db, "results database path");
  Subcommand s;
  s.cmd = bisect_cmd;
  s.run = [=]() -> ExitCode {
    if (*bisect_run_cmd) {
      BisectRunOptions o;
      o.repo = a->repo;
      o.good = a->good;
      o.bad = a->bad;
      o.job = bisect_job(*a);
      o.test_merge_branch = a->test_merge_branch;
      return bisect_run(a->db, o, std::cout);
    }
    if (*bisect_step_cmd) {
      BisectStepOptions o;
      o.repo = a->repo;
      o.base = a->base;
      o.bad_base = a->bad_base;
      o.job = bisect_job(*a);
      return bisect_step(a->db, o, std::cout);
    }
    if (*bisect_log_cmd) {
      ResultsStore store = open_existing_store(a->db);  // read-only: a log changes nothing
      std::cout << render_bisect_log(store, a->session);
      return ExitCode::ok;
    }
    if (*bisect_branch_cmd) return bisect_branch(a->db, a->session, std::cout);
    return bisect_resume(a->db, a->session, std::cout);
  };
  s.map_exit = [bisect_step_cmd](int rc) {
    return bisect_step_cmd->parsed() ? bisect_step_exit_code(rc) : rc;
  };
  return s;
}

}  // namespace nightjar

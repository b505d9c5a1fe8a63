// `nightjar bisect`: find the commit that regressed a metric (docs/bisect.md).
//
//   bisect run    checks the endpoints, then drives `git bisect` itself: at
//                 each commit it builds (failure -> skip), runs the job with
//                 the build label = commit id, and compares the samples with
//                 the good endpoint's (the comparison statistics of `nightjar
//                 compare`): regression -> bad, same -> good, unknown -> more
//                 iterations up to a cap, then skip (Chromium Pinpoint's
//                 three-way decision).
//   bisect step   the same decision for the commit checked out, for
//                 `git bisect run nightjar bisect step ...`: exit 0 good,
//                 1 bad, 125 skip, 128 abort (usage/environment errors).
//   bisect log    every step of a session: commit, build, samples, decision.
//   bisect resume continues an interrupted `bisect run` from the database.
//   bisect branch when the first bad commit is a merge of two good parents,
//                 builds and measures the commits of its branch on top of
//                 the first parent one at a time in a temporary worktree,
//                 and names the first that turns it bad (also
//                 `bisect run --test-merge-branch`).
//
// Every step is stored in the results database as a bisect session
// (tables bisect_session, bisect_step, bisect_run; results/store/bisect_log.h).
//
// This header and bisect.cpp are the drivers: the commands above, each
// calling the rooms of harness/bisect/ (docs/architecture.md
// "harness/bisect"): git.h (git driving), options.h and session.h (session
// options and records), measurer.h and measure.h (how a commit is built and
// measured), decide.h (deciding a commit), print.h (printing), drive.h (the
// bisection of run/resume) and branch.h (the branch test).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/options.h"
#include "results/model/exit_codes.h"
#include "results/store/store.h"

namespace nightjar {

/// `nightjar bisect run`.
struct BisectRunOptions {
  std::string repo = ".";  ///< the git work tree
  std::string good, bad;   ///< revisions (anything git rev-parse accepts)
  BisectJobOptions job;
  /// When the first bad commit is a merge, test its branch on top of the
  /// first parent after the bisect (what `bisect branch` does).
  bool test_merge_branch = false;
};

/// `nightjar bisect step`.
struct BisectStepOptions {
  std::string repo = ".";
  std::string base;      ///< build label of the stored runs of the good commit (required)
  std::string bad_base;  ///< build label of stored runs of the bad commit ("" = none)
  BisectJobOptions job;
};

/// The bisect commands take the --db flag ("" = the default path) and open
/// the results database only after the options, the job file and the
/// repository have been checked, so bad input never writes to it.
///
/// Runs a whole bisection. Returns ok (first bad commit found), inconclusive
/// (the endpoints do not show a regression, the good endpoint is unstable,
/// or only skipped commits are left), interrupted; throws UsageError /
/// EnvironmentError before or outside the bisection. Prints the steps, the
/// first bad commit, its comparison table and effect with CI on `out`.
ExitCode bisect_run(const std::string& db, const BisectRunOptions& options, std::ostream& out);

/// Continues session `session` (default: the newest unfinished `bisect run`
/// session): replays its decisions into `git bisect` and goes on.
ExitCode bisect_resume(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out);

/// The branch test of session `session` (default: the newest `bisect run`
/// session that found its first bad commit), whose first bad commit must be
/// a merge of two parents: applies the commits of the second parent's branch
/// (`git rev-list --reverse --no-merges --right-only --cherry-pick P1...P2`,
/// what `git rebase P1 P2` applies) on top of the first parent one at a time
/// in a temporary detached worktree under TMPDIR, builds and measures each
/// state with the session's build command and job, decides it against the
/// good endpoint with the bisect's rule, and stores each as a `branch` step.
/// A commit whose cherry-pick conflicts is skipped with the reason. Decided
/// steps of an earlier, interrupted test are not measured again. The
/// worktree is removed on every path; the repository's work tree and
/// branches are never touched. Returns ok when it names the first branch
/// commit that turns the first parent bad, or finds the merge's own changes
/// to blame (every commit applied and measured good); inconclusive when a
/// skipped commit leaves the answer open; interrupted. Throws UsageError
/// (no such session, not a merge) and EnvironmentError (git, TMPDIR).
ExitCode bisect_branch(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out);

/// Decides the commit checked out in options.repo. Returns ok (good),
/// regression (bad), bisect_skip, or interrupted; throws UsageError /
/// EnvironmentError for misconfiguration, which the CLI turns into 128.
ExitCode bisect_step(const std::string& db, const BisectStepOptions& options, std::ostream& out);

/// `bisect log`: the steps of session `session` (default: the newest) as a
/// table (render_session_log). Throws UsageError when there is no such session.
std::string render_bisect_log(const ResultsStore& store, std::optional<std::int64_t> session);

}  // namespace nightjar

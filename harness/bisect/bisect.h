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
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/job/job.h"
#include "results/model/exit_codes.h"
#include "results/stats/significance.h"
#include "results/store/store.h"

namespace nightjar {

struct Comparison;

/// What is measured at each commit and how it is judged (shared by run and step).
struct BisectJobOptions {
  std::string job_path;  ///< job file (made absolute before the repository is entered)
  std::string metric;    ///< "" = the first metric the job's first cell declares
  std::vector<SetOverride> overrides;  ///< --set
  std::string variant;                 ///< --variant label ("" = the job's)
  std::optional<int> iterations;       ///< first batch per commit (default: the job's)
  std::optional<int> warmup;           ///< default: the job's
  int max_iterations = 30;             ///< cap of samples per cell per commit
  double alpha = 0.05;                 ///< FDR level of the comparison (decide_significance)
  /// Minimum |%change| that counts as "different". nullopt: `run` uses half
  /// the change measured between the endpoints (at least 1%); `step` uses half
  /// the change between --base and --bad-base when given, else 1%.
  std::optional<double> min_effect_pct;
  std::string build_command;  ///< shell command run at the repository top (""= none)
  double build_timeout = 0;   ///< seconds; 0 = none
};

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

/// The steps of session `session` (default: the newest) as a table.
std::string render_bisect_log(const ResultsStore& store, std::optional<std::int64_t> session);

// ---------------------------------------------------------------------------
// The decision (swappable: one function over stored runs)
// ---------------------------------------------------------------------------

/// Pinpoint's three answers.
enum class CommitDecision { good, bad, unknown };
/// "good", "bad", "unknown".
const char* to_string(CommitDecision d);

/// The decision on one commit and the figures behind it.
struct DecisionResult {
  CommitDecision decision = CommitDecision::unknown;
  /// The decisive row: the worst regression, else the first inconclusive or
  /// undefined row, else the first row.
  stats::Significance row;
  std::string cell;         ///< the decisive row's cell
  std::size_t n_base = 0;   ///< samples of the decisive row's base side
  std::size_t n_now = 0;    ///< and of its new side (smallest over cells: `min_now`)
  std::size_t min_now = 0;  ///< fewest samples of the new side over the cells
  bool more_helps = false;  ///< unknown because of too few/noisy samples (not undefined)
  std::string summary;      ///< "-9.8% regression (q=0.0002)"
};

/// Compares the samples of `metric` in the runs `now_runs` against
/// `base_runs`, cell by cell, with the comparison statistics (results/
/// comparison.h build_comparison -> stats::decide_significance over the
/// family of the metric's rows): any regression -> bad; else any
/// inconclusive or undefined row -> unknown; else good (unchanged or
/// improvement). When `comparison` is given it receives the comparison
/// record (for printing). Throws UsageError when the two sides share no cell.
DecisionResult decide_commit(const ResultsStore& store, const std::vector<std::int64_t>& base_runs,
                             const std::vector<std::int64_t>& now_runs, const std::string& metric,
                             const stats::SignificanceOptions& options,
                             const std::string& base_name, const std::string& now_name,
                             Comparison* comparison = nullptr);

}  // namespace nightjar

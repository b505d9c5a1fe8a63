// The git driving room of `nightjar bisect` (docs/architecture.md
// "harness/bisect"): every git command bisect runs goes through `Git` here
// (commits, `git bisect` marks and what git concluded from them, parents and
// the commits of a merged branch, cherry-picks). Deciding and measuring never
// run git; this file never measures or decides.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "results/store/bisect_log.h"
#include "workloads/sys/process.h"

namespace nightjar {

/// git in one directory: `git -C DIR ...` through the process toolkit with
/// LC_ALL=C (git's messages are parsed), no terminal prompt and no editor.
class Git {
 public:
  /// `env`: more environment for every git command (the committer of the
  /// commits a branch test makes).
  explicit Git(std::string dir, std::map<std::string, std::string> env = {})
      : dir_(std::move(dir)), env_(std::move(env)) {}

  /// Runs `git -C DIR args` to completion (even when nightjar is
  /// interrupted: a half-written bisect state would be worse than a second's
  /// delay; timeout 600 s). Throws EnvironmentError when git cannot be
  /// started, or with git's message when it fails, unless `allow_fail`.
  CommandResult run(const std::vector<std::string>& args, bool allow_fail = false) const;
  /// run(args)'s standard output, trimmed (one line: a commit id, a path).
  std::string line(const std::vector<std::string>& args) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::map<std::string, std::string> env_;
};

/// The commit id of revision `rev` (anything `git rev-parse` accepts) given
/// as option `flag`. Throws UsageError when `rev` is empty or not a commit.
std::string resolve_commit(const Git& git, const std::string& rev, const char* flag);

/// The subject line of `sha` ("" when git cannot say).
std::string subject_of(const Git& git, const std::string& sha);

/// A `git bisect` is in progress in the repository (BISECT_START exists).
bool bisect_in_progress(const Git& git);

/// The repository has uncommitted changes to tracked files (`git status
/// --porcelain --untracked-files=no` says something).
bool has_tracked_changes(const Git& git);

/// What `git bisect good|bad|skip` said.
struct BisectState {
  std::string first_bad;                ///< set when git named the first bad commit
  bool only_skipped = false;            ///< only skipped commits are left
  std::vector<std::string> candidates;  ///< then: the commits it could be
};

/// Reads git bisect's output (standard output and error together): "X is
/// the first bad commit", "only 'skip'ped commits left to test" and the
/// "could be any of:" list that follows it.
BisectState parse_bisect_output(const std::string& output);

/// `git bisect good|bad|skip SHA` (`decision` must not be pending): what git
/// concluded. git exits 2 when only skipped commits are left; any other
/// failure throws EnvironmentError.
BisectState mark_commit(const Git& git, BisectDecision decision, const std::string& sha);

/// Ends the git bisection (`git bisect reset`, which also checks out what was
/// checked out before it began) on every path once started() was called:
/// found, error, interruption. A failing reset is a warning on stderr.
class BisectGuard {
 public:
  explicit BisectGuard(const Git& git) : git_(git) {}
  ~BisectGuard();
  BisectGuard(const BisectGuard&) = delete;
  BisectGuard& operator=(const BisectGuard&) = delete;
  void started() { started_ = true; }

 private:
  const Git& git_;
  bool started_ = false;
};

/// The parents of `commit`, first parent first (none for a root commit).
std::vector<std::string> parents_of(const Git& git, const std::string& commit);

/// The git arguments that list the commits of a merge's branch that a test
/// on top of the first parent `p1` applies, oldest first: the commits `git
/// rebase P1 P2` would apply (merges and commits whose change P1 already has,
/// by patch id, left out): `rev-list --reverse --no-merges --right-only
/// --cherry-pick P1...P2`.
std::vector<std::string> branch_list_args(const std::string& p1, const std::string& p2);
/// Those commits (git run with branch_list_args).
std::vector<std::string> branch_commits(const Git& git, const std::string& p1,
                                        const std::string& p2);

/// `git cherry-pick COMMIT` in work tree `wt`, never signed (the commits are
/// throw-away; a user's commit.gpgsign would ask for a key). On failure the
/// pick is undone (`git cherry-pick --abort`, `git reset --hard HEAD`) and
/// the reason returned: the files in conflict, or that the change is already
/// there; "" when it applied.
std::string cherry_pick(const Git& wt, const std::string& commit);

/// The functions a diff changes, function name -> the file (the new path;
/// the old one for a deleted file), from `git show`/`git diff` text with
/// any context: each hunk header's function context ("@@ -1,2 +1,3 @@
/// static vm_fault_t do_anonymous_page(struct vm_fault *vmf)": git's
/// funcname, the nearest definition above the hunk) and each added or
/// removed line that defines a function (a line at column 0 that names
/// `identifier(` and does not end with ';'). The name is the identifier
/// before the first '('. A function named in several files keeps the first.
std::map<std::string, std::string> parse_changed_functions(const std::string& diff);

/// The functions commit `sha` changes against its first parent:
/// parse_changed_functions of `git show --format= -U0 --no-color
/// --no-ext-diff SHA` (rename detection on). Throws EnvironmentError with
/// git's message when git fails.
std::map<std::string, std::string> changed_functions(const Git& git, const std::string& sha);

}  // namespace nightjar

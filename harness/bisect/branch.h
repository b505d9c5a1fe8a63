// The branch test room of `nightjar bisect` (docs/bisect.md, docs/
// architecture.md "harness/bisect"): when the first bad commit is a merge of
// two good parents, the commits of its branch are applied on top of the
// first parent one at a time in a temporary worktree, each built, measured
// and decided against the good endpoint, to name the first that turns the
// first parent bad (`bisect branch`, `bisect run --test-merge-branch`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/bisect/decide.h"
#include "harness/bisect/git.h"
#include "harness/bisect/session.h"
#include "results/model/exit_codes.h"
#include "results/store/bisect_log.h"

namespace nightjar {

/// When the first bad commit `first` is a merge, git names it only because
/// every parent is good: the regression comes from the branches together,
/// not from one commit (issue 19). The lines that say so, with why each
/// parent counts as good (a measured step, or an ancestor of a good commit,
/// which git bisect takes as good without measuring), and how the branch
/// commits are tested on top of the first parent (`bisect branch`, or with
/// `testing` the --test-merge-branch test that follows). "" for an ordinary
/// commit.
std::string merge_note(Session& s, const Git& git, const std::string& first, bool testing);

/// One branch commit's outcome on top of the first parent.
struct BranchPick {
  std::string commit, subject;
  bool applied = false;  ///< the cherry-pick applied it (else: why, in `reason`)
  BisectDecision decision = BisectDecision::pending;  ///< good, bad or skip once tested
  std::string reason;                                 ///< why it was skipped
  DecisionResult measured;  ///< the decision's figures (when measured now)
};

/// The answer of a branch test of merge `merge` (first parent `p1`) whose
/// picks are `picks` (in order; the last is bad, or none is), `applied` of
/// which applied: a headline and the lines that explain it, and whether it
/// names one commit (or the merge's own changes: ok) or leaves the answer
/// open (inconclusive). `show_merge` is the command that shows the merge;
/// `differ` lists the files in which the merge's tree differs from P1 + the
/// whole branch, called only when every commit applied and measured good.
struct BranchAnswer {
  std::vector<std::string> lines;  ///< [0] the headline
  ExitCode code = ExitCode::ok;
};
BranchAnswer branch_answer(const std::vector<BranchPick>& picks, const std::string& p1,
                           std::size_t applied, const std::string& show_merge,
                           const std::function<std::vector<std::string>()>& differ);

/// Builds and measures the commits of the first bad commit's (s.first_bad)
/// branch on top of its first parent, one at a time and cumulatively, as
/// `git rebase P1 P2` would apply them, in a temporary worktree removed on
/// every path: P1 + C1, P1 + C1 + C2, ... Each is decided against the good
/// endpoint (s.endpoints) and stored as a branch step; the first that is bad
/// is the answer. A commit that does not apply is skipped with the reason
/// and left out. Decisions stored by an earlier, interrupted test are taken
/// as they are. The answer goes into the session's result. Returns ok when
/// the answer is one commit, or the merge's own changes (every commit
/// applied and measured good); inconclusive otherwise.
ExitCode test_merge_branch(Session& s);

/// The branch test after a bisect that named a merge (bisect run/resume
/// with --test-merge-branch, s.test_branch), when `bisect_code` is ok: on
/// Ctrl-C the bisect's result stands and the test goes on with `bisect
/// branch`. Returns `bisect_code`.
ExitCode branch_test_after(Session& s, ExitCode bisect_code);

}  // namespace nightjar

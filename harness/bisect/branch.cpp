// The branch test room of `nightjar bisect`: see harness/bisect/branch.h.
#include "harness/bisect/branch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "harness/bisect/drive.h"
#include "harness/bisect/print.h"
#include "results/model/text.h"
#include "workloads/sys/signals.h"

namespace nightjar {

namespace fs = std::filesystem;

std::string merge_note(Session& s, const Git& git, const std::string& first, bool testing) {
  std::vector<std::string> parents = parents_of(git, first);
  if (parents.size() < 2) return "";
  const std::vector<BisectStep> steps = s.store.bisect_steps(s.id);
  // Why each parent is good: the step that measured it (the good endpoint,
  // or a commit git picked), else a measured commit it is an ancestor of.
  auto measured = [](const BisectStep& st) {
    return st.role == BisectRole::good
               ? std::string("the good endpoint")
               : "measured good" +
                     (st.pct_change ? " (" + pct_text(*st.pct_change) + ")" : std::string());
  };
  auto measured_good = [](const BisectStep& st) {
    return st.decision == BisectDecision::good && st.role != BisectRole::branch;
  };
  std::vector<std::string> why;
  for (const std::string& p : parents) {
    std::string reason;
    for (const auto& st : steps)
      if (st.commit == p && measured_good(st)) {
        reason = measured(st);
        break;
      }
    if (reason.empty())
      for (const auto& st : steps)
        if (measured_good(st) && st.commit != p &&
            git.run({"merge-base", "--is-ancestor", p, st.commit}, true).ok()) {
          reason = fmt::format("an ancestor of {}, {}", short_sha(st.commit), measured(st));
          break;
        }
    why.push_back(short_sha(p) + " " + (reason.empty() ? "good for git bisect" : reason));
  }
  std::string note = fmt::format(
      "  merge {}: {} parents measure good ({}): an interaction of the merged branches, not one "
      "commit\n",
      short_sha(first), parents.size() == 2 ? "both" : "all", join(why, "; "));
  if (parents.size() > 2)
    return note +
           "  an octopus merge: test each branch on top of the first parent by hand (`nightjar "
           "bisect step` on each commit)\n";
  const std::size_t count = branch_commits(git, parents[0], parents[1]).size();
  const std::string list =
      fmt::format("`git -C {} {}`", git.dir(),
                  join(branch_list_args(short_sha(parents[0]), short_sha(parents[1])), " "));
  if (testing)
    return note + fmt::format(
                      "  testing the {} commit(s) of the branch on top of the first parent {} "
                      "(--test-merge-branch; {} lists them) follows the comparison\n",
                      count, short_sha(parents[0]), list);
  return note + fmt::format(
                    "  to find the branch commit that interacts, test the {} commit(s) of the "
                    "branch on top of the first parent {}: `nightjar bisect branch --session {}` "
                    "builds and measures them one at a time ({} lists them)\n",
                    count, short_sha(parents[0]), s.id, list);
}

namespace {

// A temporary detached worktree of the repository at `commit` (`git worktree
// add --detach`) in a new directory under TMPDIR, which is the process's
// working directory while it lives. The destructor, which runs on every path
// (a result, an error, Ctrl-C), goes back to the repository top, removes the
// worktree with git's record of it (`git worktree remove --force`, `git
// worktree prune`) and the directory. The repository's own work tree, branch
// and index are never touched.
class BranchTree {
 public:
  BranchTree(const Git& repo, const std::string& commit, std::string home)
      : repo_(repo), home_(std::move(home)) {
    std::string tmpl = (fs::temp_directory_path() / "nightjar-branch-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw EnvironmentError(
          fmt::format("cannot make a directory for the branch test in {}: {}; "
                      "set TMPDIR to a writable directory",
                      fs::temp_directory_path().string(), std::strerror(errno)));
    dir_ = tmpl;
    try {
      repo_.run({"worktree", "add", "--detach", "--quiet", dir_, commit});
      added_ = true;
      if (::chdir(dir_.c_str()) != 0)
        throw EnvironmentError(fmt::format("cannot change to {}: {}", dir_, std::strerror(errno)));
    } catch (...) {
      remove();
      throw;
    }
  }
  ~BranchTree() { remove(); }
  BranchTree(const BranchTree&) = delete;
  BranchTree& operator=(const BranchTree&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  void remove() noexcept {
    try {
      if (::chdir(home_.c_str()) != 0)
        std::cerr << "nightjar: warning: cannot change back to " << home_ << ": "
                  << std::strerror(errno) << "\n";
      if (added_) {
        CommandResult r = repo_.run({"worktree", "remove", "--force", dir_}, true);
        if (!r.ok())
          std::cerr << "nightjar: warning: `git worktree remove --force " << dir_
                    << "` failed: " << output_tail(r.err, 3) << "\n";
      }
      std::error_code ec;
      fs::remove_all(dir_, ec);
      if (added_) repo_.run({"worktree", "prune"}, true);
      if (fs::exists(dir_, ec))
        std::cerr << "nightjar: warning: could not remove the branch test's worktree " << dir_
                  << "; remove it and run `git -C " << repo_.dir() << " worktree prune`\n";
      added_ = false;
    } catch (const std::exception& e) {
      std::cerr << "nightjar: warning: " << e.what() << "\n";
    }
  }
  const Git& repo_;
  std::string home_, dir_;
  bool added_ = false;
};

// Makes the session build and run in `tree` (with facts naming the branch
// test on every run) until it goes out of scope.
class InTree {
 public:
  InTree(Session& s, const std::string& tree, std::map<std::string, std::string> context) : s_(s) {
    s_.tree = tree;
    s_.context = std::move(context);
  }
  ~InTree() {
    s_.tree.clear();
    s_.context.clear();
  }
  InTree(const InTree&) = delete;
  InTree& operator=(const InTree&) = delete;

 private:
  Session& s_;
};

// Replaces the branch test's part of the session's result with `text`.
void store_branch_result(Session& s, const std::string& merge, const std::string& text) {
  std::optional<BisectSession> row = s.store.bisect_session(s.id);
  std::string result = row ? row->result : "";
  if (auto at = result.find("; branch test: "); at != std::string::npos) result.resize(at);
  s.store.finish_bisect_session(s.id, row ? row->status : BisectStatus::found,
                                result + "; branch test: " + text, merge);
}

// The branch test's state across its commits.
struct BranchRun {
  std::string p1;                           // the first parent
  std::map<std::string, BisectStep> steps;  // branch steps by branch commit (stored earlier too)
  std::size_t applied = 0;                  // commits applied so far
};

BisectStep& branch_step(Session& s, BranchRun& run, const BranchPick& pick) {
  auto found = run.steps.find(pick.commit);
  if (found != run.steps.end()) return found->second;
  BisectStep row;
  row.step = s.store.add_bisect_step(s.id, pick.commit, pick.subject, BisectRole::branch);
  row.commit = pick.commit;
  row.role = BisectRole::branch;
  return run.steps[pick.commit] = row;
}

// A commit that does not apply: skipped with the reason (stored unless an
// earlier test decided it).
void skip_unapplied(Session& s, BranchRun& run, BranchPick& pick, const std::string& failed,
                    bool decided) {
  pick.decision = BisectDecision::skip;
  pick.reason = failed;
  const int step = branch_step(s, run, pick).step;
  if (!decided) {
    s.store.set_bisect_build(s.id, step, BisectBuild::none, std::nullopt, "");
    const std::string before =
        run.applied ? fmt::format(" + the {} branch commit(s) applied before it", run.applied) : "";
    s.store.set_bisect_decision(s.id, step,
                                verdict_record(BisectDecision::skip, nullptr,
                                               fmt::format("does not apply on top of {}{}: {}",
                                                           short_sha(run.p1), before, failed)));
  }
}

// Applies branch commit `commit` (the k-th of `count`) in the worktree `wt`
// and tests the result, or takes the decision an earlier test stored.
BranchPick test_pick(Session& s, const Git& git, const Git& wt, BranchRun& run,
                     const std::string& commit, std::size_t k, std::size_t count) {
  BranchPick pick;
  pick.commit = commit;
  pick.subject = subject_of(git, commit);
  const std::string title = fmt::format("branch {}/{}: {} + {} {}", k + 1, count, short_sha(run.p1),
                                        short_sha(commit), pick.subject);
  auto earlier = run.steps.find(commit);
  const bool decided =
      earlier != run.steps.end() && earlier->second.decision != BisectDecision::pending;
  const std::string failed = cherry_pick(wt, commit);
  if (!failed.empty()) {
    skip_unapplied(s, run, pick, failed, decided);
    s.out << fmt::format("{}: {} -> skip\n", title, failed) << std::flush;
    return pick;
  }
  pick.applied = true;
  ++run.applied;
  const std::string sha = wt.line({"rev-parse", "HEAD"});
  BisectStep& step = branch_step(s, run, pick);
  if (decided) {
    pick.decision = step.decision;
    pick.reason = step.reason;
    s.out << fmt::format("{}: {} (step {}, stored) -> {}\n", title, step.reason, step.step,
                         to_string(step.decision))
          << std::flush;
    return pick;
  }
  s.context["bisect.branch_commit"] = commit;
  try {
    pick.decision =
        test_commit(s, step, sha, title,
                    fmt::format("{} + {} branch commit(s), applied as {}: ", short_sha(run.p1),
                                run.applied, short_sha(sha)),
                    *s.endpoints, pick.measured);
  } catch (const Interrupted&) {
    s.store.set_bisect_decision(s.id, step.step,
                                verdict_record(BisectDecision::pending, nullptr, "interrupted"));
    throw;
  }
  pick.reason = pick.measured.summary;
  return pick;
}

std::string picks_text(const std::vector<const BranchPick*>& v) {
  std::vector<std::string> out;
  for (const auto* p : v) out.push_back(short_sha(p->commit) + " " + p->subject);
  return join(out, ", ");
}

}  // namespace

BranchAnswer branch_answer(const std::vector<BranchPick>& picks, const std::string& p1,
                           std::size_t applied, const std::string& show_merge,
                           const std::function<std::vector<std::string>()>& differ) {
  BranchAnswer a;
  std::vector<const BranchPick*> not_applied, unmeasured;
  for (const auto& p : picks) {
    if (!p.applied)
      not_applied.push_back(&p);
    else if (p.decision == BisectDecision::skip)
      unmeasured.push_back(&p);
    else if (p.decision == BisectDecision::good)
      unmeasured.clear();  // P1 + everything up to here is good
  }
  const std::string left_out = fmt::format("left out, as it does not apply on top of {}: {}",
                                           short_sha(p1), picks_text(not_applied));
  if (!picks.empty() && picks.back().decision == BisectDecision::bad) {
    const BranchPick& bad = picks.back();
    if (unmeasured.empty()) {
      a.lines.push_back(
          fmt::format("interaction: {} + {} is bad", short_sha(p1), short_sha(bad.commit)));
      a.lines.push_back(fmt::format(
          "{} {} is the first branch commit that turns the first parent {} bad{}",
          short_sha(bad.commit), bad.subject, short_sha(p1),
          applied > 1
              ? fmt::format(" (with the {} branch commit(s) before it applied)", applied - 1)
              : ""));
    } else {
      std::vector<const BranchPick*> candidates = unmeasured;
      candidates.push_back(&bad);
      a.lines.push_back(
          fmt::format("{} + the branch is bad from {} on, but {} before it could not "
                      "be measured",
                      short_sha(p1), short_sha(bad.commit), picks_text(unmeasured)));
      a.lines.push_back("the first bad branch commit is one of " + picks_text(candidates));
      a.code = ExitCode::inconclusive;
    }
    if (!not_applied.empty()) a.lines.push_back(left_out);
    return a;
  }
  if (!not_applied.empty() || !unmeasured.empty()) {
    a.lines.push_back(
        fmt::format("no branch commit measured turns {} bad, but not all could be", short_sha(p1)));
    if (!not_applied.empty()) a.lines.push_back(left_out);
    if (!unmeasured.empty()) a.lines.push_back("not measured: " + picks_text(unmeasured));
    a.lines.push_back("the regression is in those commits or in the merge's resolution of them (" +
                      show_merge + ")");
    a.code = ExitCode::inconclusive;
    return a;
  }
  const std::vector<std::string> files = differ();
  if (files.empty()) {
    a.lines.push_back(fmt::format("no branch commit turns {} bad", short_sha(p1)));
    a.lines.push_back(fmt::format(
        "yet {} + the whole branch has the merge's tree, which measured bad: noise or the build "
        "differ between the two; measure both again",
        short_sha(p1)));
    a.code = ExitCode::inconclusive;
    return a;
  }
  a.lines.push_back(
      fmt::format("no branch commit turns {} bad: the merge's own changes do", short_sha(p1)));
  a.lines.push_back(
      fmt::format("{} + all {} branch commit(s) measures good", short_sha(p1), applied));
  a.lines.push_back(
      fmt::format("the merge's tree differs from {} + the branch in {}: its resolution carries the "
                  "regression ({})",
                  short_sha(p1), join(files, ", "), show_merge));
  return a;
}

ExitCode test_merge_branch(Session& s) {
  const Git git(s.prep.top);
  const std::string merge = s.first_bad;
  const std::vector<std::string> parents = parents_of(git, merge);
  BranchRun run;
  run.p1 = parents.at(0);
  const std::string& p1 = run.p1;
  const std::string& p2 = parents.at(1);
  const std::vector<std::string> commits = branch_commits(git, p1, p2);
  if (commits.empty()) {
    const std::string why =
        fmt::format("the branch {}..{} has no commit that {} lacks: nothing to test", short_sha(p1),
                    short_sha(p2), short_sha(p1));
    s.out << "\nbranch test: " << why << "\n";
    store_branch_result(s, merge, why);
    return ExitCode::inconclusive;
  }
  for (const auto& st : s.store.bisect_steps(s.id))
    if (st.role == BisectRole::branch) run.steps[st.commit] = st;

  // The branch commits' committer: git needs one, the user's configuration
  // may have none, and the commits exist only in the temporary worktree. The
  // date is the merge's, so that applying the same commits again (after an
  // interruption) makes the same commit ids: the build labels of the runs.
  const std::map<std::string, std::string> committer = {
      {"GIT_COMMITTER_NAME", "nightjar"},
      {"GIT_COMMITTER_EMAIL", "nightjar@localhost"},
      {"GIT_COMMITTER_DATE", git.line({"log", "-1", "--format=%cI", merge})}};
  BranchTree tree(git, p1, s.prep.top);
  const Git wt(tree.dir(), committer);
  InTree in_tree(s, tree.dir(), {{"bisect.merge", merge}, {"bisect.onto", p1}});
  s.out << fmt::format(
               "\nbranch test: the {} commit(s) of {}..{} applied one at a time on top of the "
               "first parent {} (as `git rebase` would), in the temporary worktree {}\n",
               commits.size(), short_sha(p1), short_sha(p2), short_sha(p1), tree.dir())
        << std::flush;

  std::vector<BranchPick> picks;
  for (std::size_t k = 0; k < commits.size(); ++k) {
    throw_if_interrupted();
    picks.push_back(test_pick(s, git, wt, run, commits[k], k, commits.size()));
    if (picks.back().decision == BisectDecision::bad) break;
  }
  const BranchAnswer answer =
      branch_answer(picks, p1, run.applied,
                    fmt::format("`git -C {} show --cc {}`", git.dir(), short_sha(merge)), [&] {
                      return split_blanks(wt.run({"diff", "--name-only", "HEAD", merge}).out);
                    });
  store_branch_result(s, merge, join(answer.lines, "; "));
  s.out << "\n" << answer.lines.front() << "\n";
  for (std::size_t i = 1; i < answer.lines.size(); ++i) s.out << "  " << answer.lines[i] << "\n";
  if (!picks.empty() && picks.back().decision == BisectDecision::bad &&
      picks.back().measured.min_now)
    s.out << "  effect: " << effect_with_ci(picks.back().measured, s.prep.metric, s.job.alpha)
          << "\n";
  return answer.code;
}

ExitCode branch_test_after(Session& s, ExitCode bisect_code) {
  if (!s.test_branch || bisect_code != ExitCode::ok || s.first_bad.empty()) return bisect_code;
  const Git git(s.prep.top);
  const std::size_t parents = parents_of(git, s.first_bad).size();
  if (parents < 2) {
    s.out << "\nbranch test: the first bad commit is not a merge; no branch to test\n";
    return bisect_code;
  }
  if (parents > 2) return bisect_code;  // the note says how
  try {
    test_merge_branch(s);
  } catch (const Interrupted&) {
    s.out << fmt::format(
        "branch test interrupted; the bisect's result stands; go on with: nightjar bisect "
        "branch --session {}\n",
        s.id);
    throw;
  }
  return bisect_code;
}

}  // namespace nightjar

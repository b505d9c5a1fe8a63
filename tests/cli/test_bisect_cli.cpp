// Unit under test: `nightjar bisect run|step|log|resume` end to end on
// synthetic git repositories (tests/bisect_repo.h): the planted commit is
// found and printed with its comparison, broken commits are skipped, the
// endpoints are checked, misconfiguration never reaches git as "bad", the
// repository is left as found, and an interrupted bisect resumes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "bisect_repo.h"
#include "test_support.h"

using namespace nightjar::test;
namespace fs = std::filesystem;

namespace {

int count(const std::string& db, const std::string& sql) {
  std::string v = query_one(db, sql);
  return v.empty() ? -1 : std::stoi(v);
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The commit git bisect looks at first in a linear history of n commits
// (good = 0, bad = n-1), found on a scratch repository of the same shape.
int first_look(int n) {
  TempDir d;
  SyntheticRepoSpec spec;
  spec.commits = n;
  SyntheticRepo r = make_synthetic_repo(d.path(), spec);
  std::string sha =
      git_out(d.path(), {"rev-list", "--bisect", r.commits.back(), "^" + r.commits.front()})
          .substr(0, 40);
  for (int i = 0; i < n; ++i)
    if (r.commits[static_cast<std::size_t>(i)] == sha) return i;
  return -1;
}

struct Fixture {
  TempDir dir;
  std::string work, job, db, counter;
  SyntheticRepo repo;
  Fixture(const SyntheticRepoSpec& spec, std::uint64_t seed = 7, int iterations = 5) {
    work = dir.path() + "/repo";
    fs::create_directories(work);
    repo = make_synthetic_repo(work, spec);
    counter = dir.path() + "/counter";
    job = dir.write("job.yaml", synthetic_job(counter, seed, iterations));
    db = dir.path() + "/r.db";
  }
  const std::string& sha(int i) const { return repo.commits[static_cast<std::size_t>(i)]; }
  std::vector<std::string> run_args() const {
    return {"bisect",  "run",
            "--repo",  work,
            "--good",  repo.commits.front(),
            "--bad",   repo.commits.back(),
            "--build", kSyntheticBuild,
            "--job",   job,
            "--db",    db};
  }
  bool repo_as_found() const {
    return git_out(work, {"rev-parse", "--abbrev-ref", "HEAD"}) == "main\n" &&
           !fs::exists(work + "/.git/BISECT_START") &&
           git_out(work, {"status", "--porcelain", "--untracked-files=no"}).empty();
  }
};

// ---- bisect run -------------------------------------------------------------

TEST(BisectRunCli, FindsThePlantedCommitSkipsTheBrokenOneAndPrintsTheComparison) {
  SyntheticRepoSpec spec;
  spec.commits = 24;
  spec.regress_at = 17;
  spec.broken = first_look(24);
  ASSERT_GT(spec.broken, 0);
  ASSERT_NE(spec.broken, 17);
  Fixture f(spec);
  auto args = f.run_args();
  args.push_back("--test-merge-branch");  // says there is nothing to test
  auto r = run_nightjar(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "first bad commit: " + f.sha(17) + " commit 17: slower")) << r.out;
  EXPECT_TRUE(contains(r.out, "branch test: the first bad commit is not a merge")) << r.out;
  EXPECT_TRUE(contains(r.out, "build failed -> skip")) << r.out;
  // The comparison table (mmtests layout) and the effect with its CI.
  EXPECT_TRUE(contains(r.out, "Amean     runtime")) << r.out;
  EXPECT_TRUE(contains(r.out, "effect: -")) << r.out;
  EXPECT_TRUE(contains(r.out, "95% CI")) << r.out;
  // Stored: the session, every step with its decision, runs labelled with the commit.
  EXPECT_EQ(query_one(f.db, "SELECT status || ' ' || first_bad FROM bisect_session"),
            "found " + f.sha(17));
  EXPECT_EQ(
      query_one(f.db, "SELECT build_status || ' ' || decision FROM bisect_step WHERE commit_id='" +
                          f.sha(spec.broken) + "'"),
      "failed skip");
  EXPECT_TRUE(contains(query_one(f.db, "SELECT build_output FROM bisect_step WHERE commit_id='" +
                                           f.sha(spec.broken) + "'"),
                       "does not compile"));
  EXPECT_EQ(query_one(f.db, "SELECT decision FROM bisect_step WHERE commit_id='" + f.sha(17) + "'"),
            "bad");
  EXPECT_EQ(query_one(f.db, "SELECT role || ' ' || decision FROM bisect_step WHERE step=1"),
            "good good");
  EXPECT_EQ(query_one(f.db, "SELECT role || ' ' || decision FROM bisect_step WHERE step=2"),
            "bad bad");
  EXPECT_EQ(count(f.db,
                  "SELECT count(*) FROM bisect_run br JOIN bisect_step s USING(session_id, step) "
                  "JOIN run r ON r.id=br.run_id WHERE r.build != s.commit_id"),
            0);
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM bisect_step WHERE decision='pending'"), 0);
  EXPECT_LE(count(f.db, "SELECT count(*) FROM bisect_step WHERE role='test'"), 7);
  EXPECT_TRUE(f.repo_as_found());
  // The exec metrics were registered for the comparison.
  EXPECT_EQ(
      query_one(
          f.db,
          "SELECT direction || ' ' || mean FROM metric WHERE workload='exec' AND name='runtime'"),
      "lower amean");

  auto log = run_nightjar({"bisect", "log", "--db", f.db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_TRUE(contains(log.out, "bisect session 1 (run): found")) << log.out;
  EXPECT_TRUE(contains(log.out, f.sha(17).substr(0, 12))) << log.out;
  EXPECT_TRUE(contains(log.out, "build failed")) << log.out;
  auto missing = run_nightjar({"bisect", "log", "--db", f.db, "--session", "9"});
  EXPECT_EQ(missing.exit_code, 2);
}

TEST(BisectRunCli, RegressionNextToABrokenCommitIsInconclusiveWithBothCandidates) {
  SyntheticRepoSpec spec;
  spec.commits = 12;
  spec.broken = 6;
  spec.regress_at = 7;  // commit 6 cannot be built: 6 or 7 is the culprit
  Fixture f(spec);
  auto r = run_nightjar(f.run_args());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "only skipped commits are left")) << r.out;
  EXPECT_TRUE(contains(r.out, f.sha(6).substr(0, 12))) << r.out;
  EXPECT_TRUE(contains(r.out, f.sha(7).substr(0, 12))) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "inconclusive");
  EXPECT_TRUE(f.repo_as_found());
}

// What a branch test must leave behind: the repository at `branch` with a
// clean work tree, no worktree but its own, no git bisect, and nothing in
// the test's TMPDIR.
void expect_repo_as_found(const std::string& work, const std::string& tmp,
                          const std::string& branch = "main") {
  EXPECT_EQ(git_out(work, {"rev-parse", "--abbrev-ref", "HEAD"}), branch + "\n");
  EXPECT_EQ(git_out(work, {"status", "--porcelain", "--untracked-files=no"}), "");
  EXPECT_FALSE(fs::exists(work + "/.git/BISECT_START"));
  EXPECT_EQ(git_out(work, {"worktree", "list", "--porcelain"}).find("worktree ", 1),
            std::string::npos)
      << git_out(work, {"worktree", "list"});
  EXPECT_FALSE(fs::exists(work + "/.git/worktrees"));
  EXPECT_TRUE(fs::is_empty(tmp)) << fs::directory_iterator(tmp)->path();
}

// An "evil merge" (tests/bisect_repo.h make_merge_repo): both parents of M
// run as fast as c0, and M's own resolution makes prog.c 10% slower. git
// names M as the first bad commit; nightjar says that both parents measure
// good, and with --test-merge-branch applies the side commits on top of the
// first parent, finds none bad and blames the merge's own changes.
TEST(BisectRunCli, AMergeOfTwoGoodParentsIsNamedAsAnInteraction) {
  TempDir dir;
  const std::string work = dir.path() + "/repo", tmp = dir.path() + "/tmp";
  fs::create_directories(work);
  fs::create_directories(tmp);
  const MergeRepo repo = make_merge_repo(work, true);
  const std::string counter = dir.path() + "/counter", db = dir.path() + "/r.db";
  const std::string job = dir.write("job.yaml", synthetic_job(counter, 11));
  auto r =
      run_nightjar({"bisect", "run", "--repo", work, "--good", repo.c0, "--bad", repo.c3, "--build",
                    kSyntheticBuild, "--job", job, "--db", db, "--test-merge-branch"},
                   {{"TMPDIR", tmp}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "first bad commit: " + repo.merge + " merge side")) << r.out;
  EXPECT_TRUE(
      contains(r.out, "merge " + repo.merge.substr(0, 12) + ": both parents measure good ("))
      << r.out;
  EXPECT_TRUE(contains(r.out, "an interaction of the merged branches, not one commit")) << r.out;
  EXPECT_TRUE(contains(r.out, "testing the 2 commit(s) of the branch on top of the first parent " +
                                  repo.c1.substr(0, 12)))
      << r.out;
  // The branch test: s1 and s2 on top of c1 are good; the merge's resolution is to blame.
  EXPECT_TRUE(contains(
      r.out, "branch 1/2: " + repo.c1.substr(0, 12) + " + " + repo.side[0].substr(0, 12) + " s1: "))
      << r.out;
  const std::string p1 = repo.c1.substr(0, 12);
  EXPECT_TRUE(contains(r.out, "\nno branch commit turns " + p1 +
                                  " bad: the merge's own changes do\n  " + p1 +
                                  " + all 2 branch commit(s) measures good\n  the merge's tree "
                                  "differs from " +
                                  p1 +
                                  " + the branch in main_knob.h, side_knob.h: its resolution "
                                  "carries the regression"))
      << r.out;
  // Why each parent is good: both were measured.
  EXPECT_TRUE(contains(r.out, "both parents measure good (" + p1 + " measured good (")) << r.out;
  EXPECT_EQ(query_one(db,
                      "SELECT group_concat(decision, ',') FROM (SELECT decision FROM "
                      "bisect_step WHERE role='branch' ORDER BY step)"),
            "good,good");
  EXPECT_TRUE(contains(query_one(db, "SELECT result FROM bisect_session"),
                       "; branch test: no branch commit turns"));
  EXPECT_EQ(query_one(db, "SELECT status || ' ' || first_bad FROM bisect_session"),
            "found " + repo.merge);
  std::cout << r.out;  // the message, for the ctest log
  // The work tree is back at c3, its build products are another commit's
  // (the branch test built in its own worktree, not there).
  EXPECT_TRUE(contains(r.err, "is back at " + repo.c3.substr(0, 12) + " (git bisect reset)"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "the last commit built; rebuild (")) << r.err;
  expect_repo_as_found(work, tmp);
}

// A real interaction (make_merge_repo): c1 and s2 each turn on one knob,
// the program is slower only with both. `bisect branch` names s2: c1 + s2
// is bad; s1, whose cherry-pick conflicts on top of c1, is skipped with the
// reason. Interrupted in the middle, the branch test leaves the repository
// and TMPDIR as found and the bisect's result standing, and goes on where it
// stopped.
TEST(BisectBranchCli, NamesTheBranchCommitThatTurnsTheFirstParentBad) {
  TempDir dir;
  const std::string work = dir.path() + "/repo", tmp = dir.path() + "/tmp";
  fs::create_directories(work);
  fs::create_directories(tmp);
  const MergeRepo repo = make_merge_repo(work, false);
  const std::string counter = dir.path() + "/counter", db = dir.path() + "/r.db";
  const std::string job = dir.write("job.yaml", synthetic_job(counter, 5));
  // The build sleeps while `slow` exists: a moment in which to interrupt.
  const std::string slow = dir.path() + "/slow";
  const std::string build =
      std::string(kSyntheticBuild) + " && { test ! -e " + slow + " || sleep 30; }";
  auto r = run_nightjar({"bisect", "run", "--repo", work, "--good", repo.c0, "--bad", repo.c3,
                         "--build", build, "--job", job, "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "first bad commit: " + repo.merge)) << r.out;
  EXPECT_TRUE(contains(r.out, "both parents measure good")) << r.out;
  EXPECT_TRUE(contains(r.out, "test the 3 commit(s) of the branch on top of the first parent " +
                                  repo.c1.substr(0, 12) +
                                  ": `nightjar bisect branch --session 1` builds and measures "
                                  "them one at a time"))
      << r.out;
  EXPECT_FALSE(contains(r.out, "branch test")) << r.out;

  // Interrupted while P1 + s2 builds.
  std::ofstream(slow) << "";
  pid_t pid =
      spawn_nightjar({"bisect", "branch", "--db", db}, dir.path(), "first", {{"TMPDIR", tmp}});
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         count(db, "SELECT count(*) FROM bisect_step WHERE role='branch' AND commit_id='" +
                       repo.side[1] + "'") < 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into the build's sleep
  ::kill(pid, SIGINT);
  ASSERT_EQ(wait_exit_code(pid), 130)
      << read_file(dir.path() + "/first.out") << read_file(dir.path() + "/first.err");
  const std::string first = read_file(dir.path() + "/first.out");
  EXPECT_TRUE(contains(first, "go on with: nightjar bisect branch --session 1")) << first;
  EXPECT_EQ(query_one(db,
                      "SELECT decision || ' ' || reason FROM bisect_step WHERE role='branch' "
                      "AND commit_id='" +
                          repo.side[1] + "'"),
            "pending interrupted");
  EXPECT_EQ(query_one(db, "SELECT status FROM bisect_session"), "found");
  expect_repo_as_found(work, tmp);

  fs::remove(slow);
  auto b = run_nightjar({"bisect", "branch", "--db", db}, {{"TMPDIR", tmp}});
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  const std::string p1 = repo.c1.substr(0, 12), s1 = repo.side[0].substr(0, 12),
                    s2 = repo.side[1].substr(0, 12);
  EXPECT_TRUE(contains(b.out, "branch 1/3: " + p1 + " + " + s1 +
                                  " s1: notes: cherry-pick conflicts in notes.txt -> skip"))
      << b.out;
  EXPECT_TRUE(contains(b.out, "branch 2/3: " + p1 + " + " + s2 + " s2: side knob on: ")) << b.out;
  EXPECT_TRUE(contains(b.out, "\ninteraction: " + p1 + " + " + s2 + " is bad\n  " + s2 +
                                  " s2: side knob on is the first branch commit that turns the "
                                  "first parent " +
                                  p1 + " bad\n  left out, as it does not apply on top of " + p1 +
                                  ": " + s1 + " s1: notes\n  effect: -"))
      << b.out;
  EXPECT_FALSE(contains(b.out, "branch 3/3")) << b.out;
  // Stored: s1 skipped with the reason, s2 bad; its runs name the branch commit.
  EXPECT_TRUE(contains(
      query_one(db,
                "SELECT decision || ' ' || reason FROM bisect_step WHERE role='branch' AND "
                "commit_id='" +
                    repo.side[0] + "'"),
      "skip does not apply on top of " + p1 + ": cherry-pick conflicts in notes.txt"));
  EXPECT_EQ(query_one(db, "SELECT decision FROM bisect_step WHERE role='branch' AND commit_id='" +
                              repo.side[1] + "'"),
            "bad");
  EXPECT_EQ(count(db, "SELECT count(*) FROM bisect_step WHERE role='branch'"), 2);
  EXPECT_GE(count(db,
                  "SELECT count(*) FROM run_context WHERE key='bisect.branch_commit' AND "
                  "value='" +
                      repo.side[1] + "'"),
            1);
  EXPECT_TRUE(contains(query_one(db, "SELECT result FROM bisect_session"),
                       "; branch test: interaction: " + p1 + " + " + s2 + " is bad"));
  expect_repo_as_found(work, tmp);
  auto log = run_nightjar({"bisect", "log", "--db", db});
  EXPECT_TRUE(contains(log.out, "branch")) << log.out;
  EXPECT_TRUE(contains(log.out, "interaction: ")) << log.out;

  // No such session, no first bad commit, not a merge: usage errors.
  auto none = run_nightjar({"bisect", "branch", "--db", db, "--session", "7"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err, "no session 7")) << none.err;
  exec_sql(db, "UPDATE bisect_session SET status='interrupted'");
  auto open = run_nightjar({"bisect", "branch", "--db", db, "--session", "1"});
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_TRUE(contains(open.err, "has no first bad commit")) << open.err;
  EXPECT_TRUE(contains(open.err, "nightjar bisect resume --session 1")) << open.err;
  exec_sql(db, "UPDATE bisect_session SET status='found', first_bad='" + repo.c3 + "'");
  auto linear = run_nightjar({"bisect", "branch", "--db", db});
  EXPECT_EQ(linear.exit_code, 2);
  EXPECT_TRUE(contains(linear.err, repo.c3.substr(0, 12) + " of session 1 is not a merge"))
      << linear.err;
  expect_repo_as_found(work, tmp);
}

TEST(BisectRunCli, EndpointsWithoutARegressionStop) {
  SyntheticRepoSpec spec;
  spec.commits = 8;  // no regression anywhere
  Fixture f(spec);
  auto r = run_nightjar(f.run_args());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "does not show a regression")) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "inconclusive");
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM bisect_step WHERE role='test'"), 0);
  EXPECT_TRUE(f.repo_as_found());
}

TEST(BisectRunCli, GoodEndpointThatImprovesAgainstItselfIsUnstable) {
  // The good commit's first run (invocations 0-4) is 30% slower than its
  // itself-run (5-9): noise of that size would call an unrelated commit bad
  // against the pooled good side, so the bisect must not start.
  SyntheticRepoSpec spec;
  spec.commits = 8;
  spec.regress_at = 4;
  spec.step_pct = 40;
  spec.good_work = "(n < 5 ? 1300 : 1000)";
  Fixture f(spec);
  auto r = run_nightjar(f.run_args());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "is unstable")) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "improvement")) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "inconclusive");
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM bisect_step WHERE role='test'"), 0);
  EXPECT_TRUE(f.repo_as_found());
}

TEST(BisectRunCli, GoodEndpointThatDoesNotBuildIsAnEnvironmentError) {
  SyntheticRepoSpec spec;
  spec.commits = 6;
  spec.regress_at = 3;
  spec.broken = 0;
  Fixture f(spec);
  auto r = run_nightjar(f.run_args());
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "does not build")) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "failed");
  EXPECT_TRUE(f.repo_as_found());
}

TEST(BisectRunCli, ASessionStoppedByAnErrorResumesOnceTheCauseIsFixed) {
  SyntheticRepoSpec spec;
  spec.commits = 8;
  spec.regress_at = 5;
  Fixture f(spec);
  // The build needs a file outside the repository: missing at first (the
  // good endpoint does not build: exit 4, session failed), then created.
  const std::string flag = f.dir.path() + "/toolchain-ready";
  auto args = f.run_args();
  const auto build = std::find(args.begin(), args.end(), std::string(kSyntheticBuild));
  ASSERT_NE(build, args.end());
  *build = "test -f " + flag + " && " + kSyntheticBuild;
  auto r = run_nightjar(args);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "resume with: nightjar bisect resume --session 1")) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "failed");
  EXPECT_TRUE(contains(query_one(f.db, "SELECT result FROM bisect_session"),
                       "`nightjar bisect resume --session 1` goes on"));
  std::ofstream(flag) << "ok\n";
  auto resumed = run_nightjar({"bisect", "resume", "--db", f.db});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_TRUE(contains(resumed.out, "first bad commit: " + f.sha(5))) << resumed.out;
  EXPECT_EQ(query_one(f.db, "SELECT count(*) FROM bisect_session"), "1");
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "found");
  EXPECT_TRUE(f.repo_as_found());
}

TEST(BisectRunCli, UsageErrorsStopBeforeTheDatabaseOrGitIsTouched) {
  SyntheticRepoSpec spec;
  spec.commits = 4;
  spec.regress_at = 2;
  Fixture f(spec);
  auto args = f.run_args();
  // good after bad
  auto swapped = args;
  swapped[5] = f.sha(3);
  swapped[7] = f.sha(0);
  auto r = run_nightjar(swapped);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "is not an ancestor")) << r.err;
  // unknown revision, metric, repository, job
  auto bad_rev = args;
  bad_rev[5] = "no-such-rev";
  r = run_nightjar(bad_rev);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "--good no-such-rev: not a commit")) << r.err;
  auto metric = args;
  metric.insert(metric.end(), {"--metric", "speed"});
  r = run_nightjar(metric);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "its metrics are runtime")) << r.err;
  auto not_repo = args;
  not_repo[3] = f.dir.path();
  r = run_nightjar(not_repo);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "not a git work tree")) << r.err;
  // uncommitted changes to tracked files
  std::ofstream(f.work + "/prog.c", std::ios::app) << "/* edit */\n";
  r = run_nightjar(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "uncommitted changes")) << r.err;
  git_out(f.work, {"checkout", "--", "prog.c"});
  EXPECT_FALSE(fs::exists(f.db)) << "bad input wrote the database";
  EXPECT_TRUE(f.repo_as_found());
}

TEST(BisectRunCli, InterruptedBisectResumesWhereItStopped) {
  SyntheticRepoSpec spec;
  spec.commits = 40;
  spec.regress_at = 29;
  Fixture f(spec);
  pid_t pid = spawn_nightjar(f.run_args(), f.dir.path(), "first");
  // Interrupt once two commits between the endpoints have been decided.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline &&
         count(f.db,
               "SELECT count(*) FROM bisect_step WHERE role='test' AND decision != 'pending'") < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(pid, SIGINT);
  int rc = wait_exit_code(pid);
  std::string out = read_file(f.dir.path() + "/first.out");
  if (rc == 0) GTEST_SKIP() << "the bisect finished before it could be interrupted";
  ASSERT_EQ(rc, 130) << out << read_file(f.dir.path() + "/first.err");
  EXPECT_TRUE(contains(out, "nightjar bisect resume --session 1")) << out;
  EXPECT_EQ(query_one(f.db, "SELECT status FROM bisect_session"), "interrupted");
  EXPECT_TRUE(f.repo_as_found());
  const int decided =
      count(f.db, "SELECT count(*) FROM bisect_step WHERE role='test' AND decision != 'pending'");
  const int runs_before = count(f.db, "SELECT count(*) FROM run");
  const std::string decided_runs = query_one(
      f.db,
      "SELECT group_concat(run_id) FROM bisect_run br JOIN bisect_step s USING(session_id, step) "
      "WHERE s.decision != 'pending'");

  auto r = run_nightjar({"bisect", "resume", "--db", f.db});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "first bad commit: " + f.sha(29))) << r.out;
  EXPECT_TRUE(contains(r.out, "replayed from the database")) << r.out;
  EXPECT_EQ(query_one(f.db, "SELECT status || ' ' || first_bad FROM bisect_session"),
            "found " + f.sha(29));
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM bisect_session"), 1);
  // The steps decided before the interruption were not measured again.
  EXPECT_EQ(query_one(f.db,
                      "SELECT group_concat(run_id) FROM bisect_run br JOIN bisect_step s "
                      "USING(session_id, step) WHERE s.step <= " +
                          std::to_string(decided + 2) + " AND s.decision != 'pending'"),
            decided_runs);
  EXPECT_GT(count(f.db, "SELECT count(*) FROM run"), runs_before);
  EXPECT_TRUE(f.repo_as_found());
  auto again = run_nightjar({"bisect", "resume", "--db", f.db, "--session", "1"});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(contains(again.err, "is finished")) << again.err;
}

// ---- bisect step ------------------------------------------------------------

struct StepFixture : Fixture {
  std::string abs_job;
  explicit StepFixture(const SyntheticRepoSpec& spec) : Fixture(spec) {
    // A job whose command works from any directory (for `nightjar run`).
    abs_job = dir.write("abs.yaml",
                        "workload: exec\nparams:\n  command: \"" + work + "/prog " + counter +
                            " 11\"\n  metrics: \"runtime:s:lower\"\niterations: 5\nwarmup: 0\n");
  }
  void checkout_and_build(int i) {
    git_out(work, {"checkout", "-q", "--detach", sha(i)});
    nightjar::CommandSpec s;
    s.argv = {"/bin/sh", "-c", kSyntheticBuild};
    s.cwd = work;
    ASSERT_TRUE(nightjar::run_command(s).ok());
  }
  std::vector<std::string> step_args(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> a = {"bisect",  "step",          "--repo", work,
                                  "--job",   abs_job,         "--base", "good0",
                                  "--build", kSyntheticBuild, "--db",   db};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

TEST(BisectStepCli, ExitCodesForGoodBadSkipAndMisconfiguration) {
  SyntheticRepoSpec spec;
  spec.commits = 8;
  spec.regress_at = 5;
  spec.broken = 3;
  StepFixture f(spec);
  f.checkout_and_build(0);
  ASSERT_EQ(run_nightjar({"run", f.abs_job, "--build", "good0", "--iterations", "10", "--db", f.db})
                .exit_code,
            0);
  f.checkout_and_build(7);
  ASSERT_EQ(run_nightjar({"run", f.abs_job, "--build", "bad7", "--db", f.db}).exit_code, 0);

  git_out(f.work, {"checkout", "-q", "--detach", f.sha(1)});
  auto good = run_nightjar(f.step_args({"--bad-base", "bad7"}));
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_TRUE(contains(good.out, "-> good (exit 0)")) << good.out;

  git_out(f.work, {"checkout", "-q", "--detach", f.sha(6)});
  auto bad = run_nightjar(f.step_args({"--bad-base", "bad7"}));
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_TRUE(contains(bad.out, "regression")) << bad.out;

  git_out(f.work, {"checkout", "-q", "--detach", f.sha(3)});
  auto broken = run_nightjar(f.step_args());
  EXPECT_EQ(broken.exit_code, 125) << broken.out << broken.err;
  EXPECT_TRUE(contains(broken.out, "build failed")) << broken.out;

  // Unsure: a 0.5% minimum effect cannot be vouched for at CoeffVar 3% with
  // at most 5 samples -> skip, never a guess.
  git_out(f.work, {"checkout", "-q", "--detach", f.sha(2)});
  auto unsure = run_nightjar(f.step_args({"--min-effect", "0.5", "--max-iterations", "5"}));
  EXPECT_EQ(unsure.exit_code, 125) << unsure.out << unsure.err;
  EXPECT_TRUE(contains(unsure.out, "still unsure after 5 samples")) << unsure.out;

  // Misconfiguration aborts the bisection (128), never "bad".
  const std::vector<std::vector<std::string>> misconfigured = {
      f.step_args({"--no-such-flag"}),
      {"bisect", "step", "--repo", f.work, "--job", f.abs_job, "--db", f.db},  // --base missing
      {"bisect", "step", "--repo", f.work, "--job", f.abs_job, "--base", "nope", "--db", f.db},
      {"bisect", "step", "--repo", f.work, "--job", f.dir.path() + "/missing.yaml", "--base",
       "good0", "--db", f.db},
      {"bisect", "step", "--repo", f.dir.path(), "--job", f.abs_job, "--base", "good0", "--db",
       f.db},
      {"bisect", "step", "--repo", f.work, "--job", f.abs_job, "--base", "good0", "--db",
       f.dir.path() + "/none.db"},
      f.step_args({"--metric", "speed"}),
      f.step_args({"--bad-base", "good0"}),  // "bad" that does not regress
      f.step_args({"--iterations", "0"}),
      // Options before the word `step` (once a bug: argv was sniffed for two
      // plain words, so --db X made this a usage error, exit 2 = "bad").
      {"bisect", "--db", f.db, "step", "--bogus"},
      {"bisect", "--db", f.db, "step", "--repo", f.work, "--job", f.abs_job, "--base", "nope"},
  };
  for (const auto& args : misconfigured) {
    auto r = run_nightjar(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 128) << joined << "\n" << r.out << r.err;
  }
  EXPECT_FALSE(fs::exists(f.dir.path() + "/none.db"));

  // Every step is in one `step` session.
  EXPECT_EQ(count(f.db, "SELECT count(*) FROM bisect_session WHERE kind='step'"), 1);
  EXPECT_EQ(query_one(f.db,
                      "SELECT group_concat(decision, ',') FROM (SELECT decision FROM bisect_step "
                      "ORDER BY step)"),
            "good,bad,skip,skip");
  auto log = run_nightjar({"bisect", "log", "--db", f.db});
  EXPECT_EQ(log.exit_code, 0);
  EXPECT_TRUE(contains(log.out, "bisect session 1 (step)")) << log.out;
}

TEST(BisectStepCli, DrivesGitBisectRun) {
  SyntheticRepoSpec spec;
  spec.commits = 16;
  spec.regress_at = 11;
  spec.broken = 8;
  StepFixture f(spec);
  f.checkout_and_build(0);
  ASSERT_EQ(run_nightjar({"run", f.abs_job, "--build", "good0", "--iterations", "10", "--db", f.db})
                .exit_code,
            0);
  f.checkout_and_build(15);
  ASSERT_EQ(run_nightjar({"run", f.abs_job, "--build", "bad15", "--db", f.db}).exit_code, 0);
  git_out(f.work, {"checkout", "-q", "main"});
  git_out(f.work, {"bisect", "start", f.sha(15), f.sha(0)});
  std::string cmd = std::string(NIGHTJAR_BINARY) + " bisect step --job " + f.abs_job +
                    " --base good0 --bad-base bad15 --build '" + kSyntheticBuild + "' --db " + f.db;
  nightjar::CommandSpec s;
  s.argv = {"/bin/sh", "-c", "git bisect run " + cmd};
  s.cwd = f.work;
  s.env["LC_ALL"] = "C";
  nightjar::CommandResult r = nightjar::run_command(s);
  EXPECT_TRUE(contains(r.out, f.sha(11) + " is the first bad commit")) << r.out << r.err;
  git_out(f.work, {"bisect", "reset"});
  EXPECT_EQ(query_one(f.db, "SELECT decision FROM bisect_step WHERE commit_id='" + f.sha(11) + "'"),
            "bad");
}

// ---- storage -------------------------------------------------------------------

TEST(BisectStorage, VersionOneDatabaseGainsTheBisectTables) {
  TempDir dir;
  std::string db = dir.path() + "/r.db";
  std::string job = dir.write("f.yaml", "workload: fake\niterations: 1\nwarmup: 0\n");
  ASSERT_EQ(run_nightjar({"run", job, "--db", db}).exit_code, 0);
  // Make it a version-1 database, as nightjar before bisect wrote it: drop
  // what the later migrations added (the bisect tables, indexes beyond the
  // initial two, sample.invalid of version 4).
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  std::vector<std::string> drops;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(
                h,
                "SELECT type, name FROM sqlite_master WHERE (type='table' AND name LIKE "
                "'bisect%') OR (type='index' AND name NOT LIKE 'sqlite_autoindex%' AND "
                "name NOT IN ('run_by_cell', 'run_by_status')) ORDER BY type DESC, name DESC",
                -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    drops.push_back(std::string("DROP ") +
                    reinterpret_cast<const char*>(sqlite3_column_text(st, 0)) + " " +
                    reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  for (const auto& sql : drops)
    ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  ASSERT_EQ(sqlite3_exec(h, "ALTER TABLE sample DROP COLUMN invalid", nullptr, nullptr, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "PRAGMA user_version=1", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  // `bisect log` only reads (it refuses an old schema); `bisect resume`
  // writes, so it migrates first.
  auto log = run_nightjar({"bisect", "log", "--db", db});
  EXPECT_EQ(log.exit_code, 4);
  EXPECT_TRUE(contains(log.err, "database schema version 1 is older")) << log.err;
  EXPECT_EQ(query_one(db, "PRAGMA user_version"), "1");
  auto resume = run_nightjar({"bisect", "resume", "--db", db});
  EXPECT_EQ(resume.exit_code, 2);
  EXPECT_TRUE(contains(resume.err, "no unfinished `bisect run` session")) << resume.err;
  EXPECT_GE(std::stoi(query_one(db, "PRAGMA user_version")), 2);
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'bisect_%'"), "3");
  EXPECT_EQ(query_one(db, "SELECT count(*) FROM run"), "1");
}

// ---- the nightly flow (ci/nightly.sh) -----------------------------------------

TEST(NightlyScript, BaselineCheckTrendReportAndBisect) {
  SyntheticRepoSpec spec;
  spec.commits = 16;
  spec.regress_at = 11;
  spec.cv_pct = 0.3;  // quiet enough for `check` to call an unchanged night unchanged
  StepFixture f(spec);
  const std::string state = f.dir.path() + "/state";
  auto night = [&](int commit, std::vector<std::string> extra = {}) {
    f.checkout_and_build(commit);
    nightjar::CommandSpec s;
    s.argv = {"bash",       source_path("ci/nightly.sh"),
              "--nightjar", NIGHTJAR_BINARY,
              "--db",       f.db,
              "--state",    state,
              "--job",      f.abs_job,
              "--repo",     f.work};
    s.argv.insert(s.argv.end(), extra.begin(), extra.end());
    s.timeout_sec = 300;
    return nightjar::run_command(s);
  };
  auto r1 = night(2);
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_EQ(read_file(state + "/last-good"), f.sha(2) + "\n");
  std::string report1 = read_file(state + "/reports/nightly-" + f.sha(2) + ".md");
  EXPECT_TRUE(contains(report1, "becomes the baseline")) << report1;
  // The testbox calibrated once (issue 35): with one run a night and only two
  // nights stored there is no history of alike runs yet, and the
  // conservative prior would leave every night open.
  auto cal = run_nightjar({"calibrate", f.abs_job, "--db", f.db, "--pairs", "2"});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;

  auto r2 = night(5);
  EXPECT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(read_file(state + "/last-good"), f.sha(5) + "\n");
  std::string report2 = read_file(state + "/reports/nightly-" + f.sha(5) + ".md");
  EXPECT_TRUE(contains(report2, "| runtime | s | Amean |")) << report2;
  EXPECT_TRUE(contains(report2, "### Trend of `runtime`")) << report2;
  EXPECT_TRUE(contains(report2, "no significant regression (exit 0)")) << report2;
  // Later nights run until decided against the last good build (issue 14).
  EXPECT_TRUE(contains(report2, "until-decided: ")) << report2;
  EXPECT_TRUE(contains(report2, "nightjar: look 1 at ")) << report2;
  EXPECT_TRUE(contains(r2.err, "--until-decided build=" + f.sha(2))) << r2.err;

  auto r3 = night(15, {"--build-cmd", kSyntheticBuild});
  EXPECT_EQ(r3.exit_code, 1) << r3.err;
  EXPECT_EQ(read_file(state + "/last-good"),
            f.sha(5) + "\n");  // a regressed night is not a baseline
  std::string report3 = read_file(state + "/reports/nightly-" + f.sha(15) + ".md");
  EXPECT_TRUE(contains(report3, "**regression**")) << report3;
  EXPECT_TRUE(contains(report3, "## Bisect between " + f.sha(5))) << report3;
  EXPECT_TRUE(contains(report3, "first bad commit: " + f.sha(11))) << report3;
  EXPECT_TRUE(contains(report3, "significant regression (exit 1)")) << report3;
  EXPECT_EQ(query_one(f.db, "SELECT first_bad FROM bisect_session WHERE kind='run'"), f.sha(11));

  nightjar::CommandSpec bad;
  bad.argv = {"bash", source_path("ci/nightly.sh"), "--no-such-option"};
  EXPECT_EQ(nightjar::run_command(bad).exit_code, 2);
}

}  // namespace

TEST(BisectStepCli, ExitCodesAreDecidedAfterParsingWhateverTheOptionOrder) {
  // No repository, job or database needed: each is a usage error of
  // `bisect step`, which git bisect must read as "abort" (128).
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"bisect", "--db", "/nonexistent/x.db", "step", "--bogus"},
           {"bisect", "step", "--bogus"},
           {"bisect", "step", "--db", "X", "--bogus"},
           {"bisect", "step"}}) {
    auto r = run_nightjar(args);
    EXPECT_EQ(r.exit_code, 128) << args[1] << " " << args[2] << "\n" << r.err;
  }
  // Other bisect subcommands keep the usage code.
  EXPECT_EQ(run_nightjar({"bisect", "--db", "X", "log", "--bogus"}).exit_code, 2);
  EXPECT_EQ(run_nightjar({"bisect", "--bogus"}).exit_code, 2);
}

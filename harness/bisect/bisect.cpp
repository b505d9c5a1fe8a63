// The drivers of `nightjar bisect` (run, resume, step, branch, log): see
// harness/bisect/bisect.h and docs/bisect.md. Each command checks its input,
// opens the database, makes the Session and hands it to the rooms.
#include "harness/bisect/bisect.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "harness/bisect/branch.h"
#include "harness/bisect/decide.h"
#include "harness/bisect/drive.h"
#include "harness/bisect/git.h"
#include "harness/bisect/measure.h"
#include "harness/bisect/print.h"
#include "harness/bisect/session.h"
#include "results/model/text.h"
#include "workloads/sys/signals.h"

namespace nightjar {

namespace fs = std::filesystem;

namespace {

// The commits --good and --bad name, checked for a bisection in `git`.
std::pair<std::string, std::string> run_endpoints(const Git& git, const BisectRunOptions& options,
                                                  const std::string& top) {
  std::string good = resolve_commit(git, options.good, "--good");
  std::string bad = resolve_commit(git, options.bad, "--bad");
  if (good == bad) throw UsageError("--good and --bad name the same commit " + short_sha(good));
  if (!git.run({"merge-base", "--is-ancestor", good, bad}, true).ok())
    throw UsageError(
        fmt::format("--good {} is not an ancestor of --bad {}; bisect needs good before bad "
                    "in history (swap them?)",
                    options.good, options.bad));
  if (bisect_in_progress(git))
    throw UsageError(
        fmt::format("a git bisect is already in progress in {}; end it with `git -C {} bisect "
                    "reset`, or continue a nightjar session with `nightjar bisect resume`",
                    top, top));
  if (has_tracked_changes(git))
    throw UsageError(
        fmt::format("{} has uncommitted changes to tracked files; commit or stash them "
                    "first (bisect checks out other commits)",
                    top));
  return {good, bad};
}

}  // namespace

ExitCode bisect_run(const std::string& db, const BisectRunOptions& options, std::ostream& out) {
  install_interrupt_handlers();
  BisectJobOptions job = options.job;
  Prepared prep = prepare(options.repo, job);
  const auto [good, bad] = run_endpoints(Git(prep.top), options, prep.top);
  const std::string dbp = db_path(db);
  enter(prep);
  ResultsStore store = open_db(dbp);
  BisectSession row;
  row.kind = "run";
  row.repo = prep.top;
  row.good_rev = options.good;
  row.bad_rev = options.bad;
  row.good = good;
  row.bad = bad;
  row.job_path = job.job_path;
  row.job = prep.job_name;
  row.metric = job.metric;
  row.options = session_options_json(job, options.test_merge_branch);
  Session s(store, out, job, prep);
  s.test_branch = options.test_merge_branch;
  s.id = store.create_bisect_session(row);
  row.id = s.id;
  return branch_test_after(s, drive_recorded(s, row));
}

ExitCode bisect_resume(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out) {
  install_interrupt_handlers();
  ResultsStore store = open_sessions(db, "resume");
  // A session stopped by an error (a missing tool, a full disk, an endpoint
  // that no longer builds) goes on once the cause is fixed, as an
  // interrupted one does: its decided commits are kept either way.
  const BisectSession row =
      find_session(store, session, "resume", "unfinished",
                   {BisectStatus::running, BisectStatus::interrupted, BisectStatus::failed});
  if (row.kind != "run")
    throw UsageError(
        fmt::format("bisect resume: session {} holds `bisect step` decisions; resume those "
                    "with `git bisect run` itself",
                    row.id));
  if (row.status == BisectStatus::found)
    throw UsageError(fmt::format("bisect resume: session {} is finished: {}", row.id, row.result));
  SessionOptions so = session_options(row);
  Prepared prep = prepare(row.repo, so.job);
  Git git(prep.top);
  if (bisect_in_progress(git)) {
    out << "resetting the git bisect left in " << prep.top << "\n";
    git.run({"bisect", "reset"});
  }
  if (has_tracked_changes(git))
    throw UsageError(prep.top +
                     " has uncommitted changes to tracked files; commit or stash them first");
  enter(prep);
  store.finish_bisect_session(row.id, BisectStatus::running, "", "");
  Session s(store, out, so.job, prep);
  s.id = row.id;
  s.test_branch = so.test_merge_branch;
  return branch_test_after(s, drive_recorded(s, row));
}

namespace {

// The usable runs of job `prep.job_name` stored with build label `build`
// (given as option `flag`). UsageError when there are none.
std::vector<std::int64_t> stored_runs(const ResultsStore& store, const BisectJobOptions& job,
                                      const Prepared& prep, const std::string& build,
                                      const char* flag) {
  RunFilter f;
  f.job = prep.job_name;
  f.build = build;
  f.variant = job.variant;
  std::vector<std::int64_t> ids;
  for (const auto& r : store.runs(f)) ids.push_back(r.id);
  auto ok = usable(store, ids, job.metric);
  if (ok.empty())
    throw UsageError(fmt::format(
        "{} {}: no stored run of job {}{} with samples of {}; run `nightjar run {} "
        "--build {}` at that commit first",
        flag, build, prep.job_name, job.variant.empty() ? "" : " variant " + job.variant,
        job.metric, job.job_path, build));
  return ok;
}

// The minimum effect of `bisect step`: --min-effect, else half the change
// between --base and --bad-base (which must regress), else 1%.
double step_min_effect(const ResultsStore& store, const BisectStepOptions& options,
                       const BisectJobOptions& job, const Prepared& prep,
                       const std::vector<std::int64_t>& base) {
  if (job.min_effect_pct || options.bad_base.empty()) return job.min_effect_pct.value_or(1.0);
  std::vector<std::int64_t> bad = stored_runs(store, job, prep, options.bad_base, "--bad-base");
  DecisionResult e =
      decide_commit(store, base, bad, job.metric, bisect_significance(job.alpha, 1.0), options.base,
                    options.bad_base);
  if (e.decision != CommitDecision::bad)
    throw UsageError(
        fmt::format("--bad-base {} does not regress against --base {} ({}); nothing to bisect",
                    options.bad_base, options.base, e.summary));
  return endpoints_min_effect(std::nullopt, e.row.pct_change);
}

// The `bisect step` session of (repository, base, job, metric), running,
// else a new one: steps are appended to it.
std::int64_t step_session(ResultsStore& store, const BisectStepOptions& options,
                          const BisectJobOptions& job, const Prepared& prep) {
  const BisectSessionFilter same{.kind = "step",
                                 .repo = prep.top,
                                 .good_rev = options.base,
                                 .job = prep.job_name,
                                 .metric = job.metric,
                                 .statuses = {BisectStatus::running}};
  if (auto row = store.newest_bisect_session(same)) return row->id;
  BisectSession r;
  r.kind = "step";
  r.repo = prep.top;
  r.good_rev = options.base;
  r.bad_rev = options.bad_base;
  r.job_path = job.job_path;
  r.job = prep.job_name;
  r.metric = job.metric;
  r.options = session_options_json(job, std::nullopt);
  return store.create_bisect_session(r);
}

// git bisect run's reading of a step's decision: 0 good, 1 bad, 125 skip.
ExitCode step_exit_code(BisectDecision d) {
  return d == BisectDecision::good  ? ExitCode::ok
         : d == BisectDecision::bad ? ExitCode::regression
                                    : ExitCode::bisect_skip;
}

}  // namespace

ExitCode bisect_step(const std::string& db, const BisectStepOptions& options, std::ostream& out) {
  install_interrupt_handlers();
  if (options.base.empty())
    throw UsageError(
        "bisect step: --base is required: the build label of stored runs of the good commit "
        "(`nightjar run JOB --build LABEL` at the good commit first)");
  BisectJobOptions job = options.job;
  Prepared prep = prepare(options.repo, job);
  Git git(prep.top);
  const std::string sha = git.line({"rev-parse", "HEAD"});
  const std::string path = db_path(db);
  if (!fs::exists(path))
    throw UsageError("bisect step: no database at " + path + " holds the runs of --base " +
                     options.base + "; pass --db PATH");
  enter(prep);
  ResultsStore store = open_db(path);
  const std::vector<std::int64_t> base = stored_runs(store, job, prep, options.base, "--base");
  const double min_effect = step_min_effect(store, options, job, prep, base);
  Session s(store, out, job, prep);
  s.id = step_session(store, options, job, prep);
  const int step = store.add_bisect_step(s.id, sha, subject_of(git, sha), BisectRole::test);
  auto finish = [&](const StepOutcome& o, const DecisionResult* d) {
    const ExitCode code = step_exit_code(o.decision);
    store.set_bisect_decision(s.id, step, verdict_record(o.decision, d, o.reason));
    out << fmt::format("{} {}: {} -> {} (exit {})\n", short_sha(sha), subject_of(git, sha),
                       o.reason, to_string(o.decision), to_int(code));
    return code;
  };
  try {
    BuildResult b = build_step(s, step, sha);
    if (!b.ok) return finish({BisectDecision::skip, "build failed: " + b.tail}, nullptr);
    std::vector<std::int64_t> runs = measure_step(s, step, sha, prep.iterations);
    DecisionResult d = decide_with_more(s, step, sha, runs, base, min_effect, options.base);
    return finish(step_outcome(d), d.min_now ? &d : nullptr);
  } catch (const Interrupted&) {
    store.set_bisect_decision(s.id, step,
                              verdict_record(BisectDecision::pending, nullptr, "interrupted"));
    throw;
  }
}

namespace {

// The endpoints of a finished `bisect run` session as the bisect had them:
// the good endpoint's runs, the bad one's, its change and the minimum effect.
Endpoints stored_endpoints(const ResultsStore& store, const BisectSession& row,
                           const BisectJobOptions& job) {
  Endpoints e;
  e.good = row.good;
  std::optional<double> change;
  for (const auto& st : store.bisect_steps(row.id)) {
    if (st.role == BisectRole::good)
      for (auto r : usable(store, st.runs, job.metric)) e.base.push_back(r);
    if (st.role == BisectRole::bad) {
      // Paired, the bad endpoint's step also holds the good runs beside it.
      const auto [own, beside] = split_by_build(store, st.runs, st.commit);
      e.bad = usable(store, own, job.metric);
      for (auto r : usable(store, beside, job.metric)) e.base.push_back(r);
      change = st.pct_change;
    }
  }
  if (e.base.empty() || !change)
    throw EnvironmentError(fmt::format(
        "bisect branch: session {} lacks the runs of its endpoints in {}; run the bisect again",
        row.id, store.path()));
  e.change = *change;
  e.min_effect = endpoints_min_effect(job.min_effect_pct, e.change);
  return e;
}

// The two parents of session `row`'s first bad commit; UsageError when it is
// not a merge of two.
std::vector<std::string> merge_parents(const Git& git, const BisectSession& row) {
  std::vector<std::string> parents = parents_of(git, row.first_bad);
  if (parents.size() != 2)
    throw UsageError(fmt::format(
        "bisect branch: the first bad commit {} of session {} {}; nothing to test on top of a "
        "first parent",
        short_sha(row.first_bad), row.id,
        parents.size() < 2 ? "is not a merge"
                           : "is an octopus merge: test each branch by hand (`nightjar bisect "
                             "step` on each commit)"));
  return parents;
}

}  // namespace

ExitCode bisect_branch(const std::string& db, std::optional<std::int64_t> session,
                       std::ostream& out) {
  install_interrupt_handlers();
  ResultsStore store = open_sessions(db, "branch");
  const BisectSession row =
      find_session(store, session, "branch", "finished", {BisectStatus::found});
  if (row.kind != "run" || row.status != BisectStatus::found || row.first_bad.empty())
    throw UsageError(fmt::format(
        "bisect branch: session {} ({}, {}) has no first bad commit; the branch test needs a "
        "`bisect run` that found one{}",
        row.id, row.kind, to_string(row.status),
        row.status == BisectStatus::interrupted || row.status == BisectStatus::running
            ? fmt::format(" (`nightjar bisect resume --session {}` finishes it)", row.id)
            : ""));
  SessionOptions so = session_options(row);
  Prepared prep = prepare(row.repo, so.job);
  Git git(prep.top);
  const std::vector<std::string> parents = merge_parents(git, row);
  const Endpoints e = stored_endpoints(store, row, so.job);
  enter(prep);
  Session s(store, out, so.job, prep);
  s.id = row.id;
  s.first_bad = row.first_bad;
  s.endpoints = e;
  out << fmt::format(
      "bisect session {}: first bad commit {} {} is a merge of {} and {}; each branch state is "
      "judged against the good endpoint {} with a minimum effect of {:.2f}%\n",
      s.id, short_sha(s.first_bad), subject_of(git, s.first_bad), short_sha(parents[0]),
      short_sha(parents[1]), short_sha(row.good), e.min_effect);
  try {
    return test_merge_branch(s);
  } catch (const Interrupted&) {
    out << fmt::format("branch test interrupted; go on with: nightjar bisect branch --session {}\n",
                       s.id);
    throw;
  }
}

std::string render_bisect_log(const ResultsStore& store, std::optional<std::int64_t> session) {
  std::optional<BisectSession> row =
      session ? store.bisect_session(*session) : store.newest_bisect_session({});
  if (!row)
    throw UsageError(session
                         ? fmt::format("bisect log: no session {} in {}", *session, store.path())
                         : "bisect log: no bisect session in " + store.path());
  const std::vector<BisectStep> steps = store.bisect_steps(row->id);
  std::string out = render_session_log(*row, steps);
  // Kernel sessions (--kernel-build): each measured commit's kernel identity,
  // from the facts its runs store (harness/bisect/kernel_build.h).
  std::string kernels;
  for (const auto& st : steps) {
    // A paired step also holds the good endpoint's runs: its own come first
    // in its kernel identity.
    const std::vector<std::int64_t> own = split_by_build(store, st.runs, st.commit).first;
    if (own.empty() && st.runs.empty()) continue;
    auto c = store.run_context(own.empty() ? st.runs.front() : own.front());
    if (!c.count("kbuild.release")) continue;
    kernels +=
        fmt::format("  step {:>2} {}: kernel {}, config hash {}, config key {}, built in {} s\n",
                    st.step, short_sha(st.commit), c["kbuild.release"], c["kbuild.config_hash"],
                    c["kbuild.config_key"], c["kbuild.build_seconds"]);
  }
  if (!kernels.empty()) out += "\nkernels (commit, release, config):\n" + kernels;
  return out;
}

}  // namespace nightjar

// The bisection of `nightjar bisect run|resume`: see harness/bisect/drive.h.
#include "harness/bisect/drive.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "harness/bisect/branch.h"
#include "harness/bisect/git.h"
#include "harness/bisect/measure.h"
#include "harness/bisect/print.h"
#include "results/model/text.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

// The names of the endpoints' sides in the comparisons printed: their roles.
const char* const kGoodSide = to_string(BisectRole::good);
const char* const kBadSide = to_string(BisectRole::bad);

void record(Session& s, int step, BisectDecision decision, const DecisionResult* d,
            const std::string& reason) {
  s.store.set_bisect_decision(s.id, step, verdict_record(decision, d, reason));
}

// Builds and measures one endpoint step until it has `batches` batches of runs
// with samples. Returns false (after recording why) when it does not build or
// gives no samples.
bool measure_endpoint(Session& s, Git& git, BisectStep& step, const std::string& sha, int batches) {
  std::vector<std::int64_t> ok = usable(s.store, step.runs, s.job.metric);
  const std::size_t runs_wanted = static_cast<std::size_t>(batches) * s.prep.cells;
  if (ok.size() >= runs_wanted) return true;
  const char* role = to_string(step.role);
  git.run({"checkout", "--quiet", "--detach", sha});
  BuildResult b = build_step(s, step.step, sha);
  if (!b.ok) {
    record(s, step.step, BisectDecision::skip, nullptr, "build failed: " + b.tail);
    s.out << fmt::format("{} endpoint {} does not build: {}\n", role, short_sha(sha), b.tail);
    return false;
  }
  while (ok.size() < runs_wanted) {
    auto runs = measure_step(s, step.step, sha, s.prep.iterations);
    step.runs.insert(step.runs.end(), runs.begin(), runs.end());
    auto now_ok = usable(s.store, runs, s.job.metric);
    if (now_ok.empty()) {
      std::string why = "the job gave no samples: " + why_no_samples(s.store, runs);
      record(s, step.step, BisectDecision::skip, nullptr, why);
      s.out << fmt::format("{} endpoint {}: {}\n", role, short_sha(sha), why);
      return false;
    }
    ok.insert(ok.end(), now_ok.begin(), now_ok.end());
  }
  return true;
}

BisectStep& find_or_add(Session& s, std::vector<BisectStep>& steps, BisectRole role,
                        const std::string& sha, const Git& git) {
  for (auto& st : steps)
    if (st.role == role && st.commit == sha) return st;
  BisectStep row;
  row.step = s.store.add_bisect_step(s.id, sha, subject_of(git, sha), role);
  row.commit = sha;
  row.role = role;
  steps.push_back(row);
  return steps.back();
}

// The bad endpoint against the good one (e.base): must be a regression; more
// iterations of bad when unsure. Sets e.bad, and returns the decision, or
// nullopt after ending the session (`code`) when bad is not a regression or
// no longer builds.
std::optional<DecisionResult> judge_bad(Session& s, Git& git, BisectStep& g, BisectStep& b,
                                        Endpoints& e, ExitCode& code) {
  const std::string& bad = b.commit;
  const double first_min_effect = s.job.min_effect_pct.value_or(1.0);
  std::vector<std::int64_t> bad_runs = b.runs;
  DecisionResult db;
  if (paired_with_good(s)) {
    // Boots as the unit: the bad endpoint beside the good one booted again
    // (their runs linked to the bad endpoint's step), as every commit between.
    db = decide_with_more(s, b.step, bad, bad_runs, e.base, first_min_effect, kGoodSide, g.commit);
    const auto [own, beside] = split_by_build(s.store, bad_runs, bad);
    for (auto r : usable(s.store, beside, s.job.metric)) e.base.push_back(r);
    bad_runs = own;
  } else {
    db = decide_commit(s.store, e.base, usable(s.store, bad_runs, s.job.metric), s.job.metric,
                       bisect_significance(s.job.alpha, first_min_effect), kGoodSide, kBadSide);
  }
  if (!paired_with_good(s) && more_iterations(db, s.job.max_iterations, s.prep.iterations) > 0) {
    if (s.built != bad) {
      git.run({"checkout", "--quiet", "--detach", bad});
      BuildResult br = build_step(s, b.step, bad);
      if (!br.ok) {
        code = stop(s, BisectStatus::failed,
                    "the bad endpoint " + short_sha(bad) + " no longer builds: " + br.tail,
                    ExitCode::environment);
        return std::nullopt;
      }
    }
    db = decide_with_more(s, b.step, bad, bad_runs, e.base, first_min_effect, kGoodSide);
  }
  e.bad = usable(s.store, bad_runs, s.job.metric);
  s.out << fmt::format("bad  {} vs good {}: {}\n", short_sha(bad), short_sha(g.commit), db.summary);
  if (db.decision == CommitDecision::bad) return db;
  record(s, b.step, BisectDecision::skip, &db, "not a regression against good: " + db.summary);
  record(s, g.step, BisectDecision::good, nullptr, "");
  code = stop(s, BisectStatus::inconclusive,
              fmt::format("the bad endpoint {} does not show a regression of {} against the good "
                          "endpoint {} ({}); nothing to bisect: check the endpoints, the metric "
                          "(--metric), or give more iterations",
                          short_sha(bad), s.prep.metric.name, short_sha(g.commit),
                          db.row.reason.empty() ? db.summary : db.row.reason),
              ExitCode::inconclusive);
  return std::nullopt;
}

// The good endpoint against itself (its first batch A against the rest A'):
// an itself-run that moved either way by the minimum effect ends the session
// (`code`) and returns true.
bool check_itself(Session& s, BisectStep& g, BisectStep& b, const Endpoints& e,
                  const DecisionResult& bad_decision, const std::string& good, ExitCode& code) {
  auto [a, a2] = first_and_rest(e.base, s.prep.cells);
  Comparison itself;
  DecisionResult dg =
      decide_commit(s.store, a, a2, s.job.metric, bisect_significance(s.job.alpha, e.min_effect),
                    kGoodSide, std::string(kGoodSide) + " (again)", &itself);
  s.out << fmt::format("good {} vs itself: {}\n", short_sha(good), dg.summary);
  record(s, b.step, BisectDecision::bad, &bad_decision,
         "regression against good: " + bad_decision.summary);
  // An itself-run that moved either way by the minimum effect is noise as
  // large as the half-change being bisected: a commit measured afterwards
  // could read "bad" from that noise alone (seen in the kernel demo: good
  // vs itself +4.72%, q=0.0007, then a comment-only commit read -40%).
  const DecisionResult* moved = dg.decision == CommitDecision::bad ? &dg : nullptr;
  DecisionResult improved;
  if (!moved) {
    if (const ComparisonRow* row =
            first_row_with(itself, s.job.metric, stats::Verdict::improvement)) {
      improved = dg;
      improved.row = *row->significance[1];
      improved.cell = row->cell;
      improved.summary =
          row_summary(improved.row, row->sides[1].summary.n, row->sides[0].summary.n);
      moved = &improved;
    }
  }
  if (moved) {
    record(s, g.step, BisectDecision::skip, moved,
           "unstable: its second run differs: " + moved->summary);
    code = stop(s, BisectStatus::inconclusive,
                fmt::format("the good endpoint {} is unstable: its second run differs from its "
                            "first ({}), as much as half the change being bisected ({}); reduce "
                            "noise (see `nightjar env`) or raise --iterations",
                            short_sha(good), moved->summary, pct_text(e.change)),
                ExitCode::inconclusive);
    return true;
  }
  record(s, g.step, BisectDecision::good, &dg, "itself-run: " + dg.summary);
  return false;
}

// Measures the endpoints (the good one twice: A, then its itself-run A'; then
// the bad one) and checks them: bad must regress against good, and good must
// not look regressed against itself at the bisect's minimum effect. The
// Endpoints, or nullopt after ending the session (`code`).
std::optional<Endpoints> check_endpoints(Session& s, Git& git, std::vector<BisectStep>& steps,
                                         const std::string& good, const std::string& bad,
                                         ExitCode& code) {
  const int good_step = find_or_add(s, steps, BisectRole::good, good, git).step;
  const int bad_step = find_or_add(s, steps, BisectRole::bad, bad, git).step;
  auto by_step = [&](int n) -> BisectStep& {
    return *std::find_if(steps.begin(), steps.end(),
                         [&](const BisectStep& r) { return r.step == n; });
  };
  auto measured = [&](int n, const std::string& sha, int batches) {
    BisectStep& st = by_step(n);
    if (measure_endpoint(s, git, st, sha, batches)) return true;
    code = stop(s, BisectStatus::failed,
                fmt::format("the {} endpoint {} cannot be measured; see `nightjar bisect log`",
                            to_string(st.role), short_sha(sha)),
                ExitCode::environment);
    return false;
  };
  // Paired, the good endpoint's second look is its boots beside the bad one.
  const int good_batches = paired_with_good(s) ? 1 : 2;
  if (!measured(good_step, good, good_batches) || !measured(bad_step, bad, 1)) return std::nullopt;
  BisectStep& g = by_step(good_step);
  BisectStep& b = by_step(bad_step);
  Endpoints e;
  e.good = good;
  e.base = usable(s.store, g.runs, s.job.metric);
  const std::optional<DecisionResult> db = judge_bad(s, git, g, b, e, code);
  if (!db) return std::nullopt;
  e.change = db->row.pct_change;
  e.min_effect = endpoints_min_effect(s.job.min_effect_pct, e.change);
  if (paired_with_good(s)) {
    // Boots are the unit and the good endpoint was booted beside the bad one:
    // the variation between its boots is in the test itself, so no
    // itself-run is needed.
    record(s, b.step, BisectDecision::bad, &*db, "regression against good: " + db->summary);
    record(s, g.step, BisectDecision::good, nullptr,
           fmt::format("{} boot(s), runs as the unit", e.base.size()));
    s.out << fmt::format(
                 "commits between are judged against the good endpoint booted again beside each "
                 "(boots as the unit, at least {} of each) with a minimum effect of {:.2f}%\n",
                 kPairedRuns, e.min_effect)
          << std::flush;
  } else {
    if (check_itself(s, g, b, e, *db, good, code)) return std::nullopt;
    s.out << fmt::format(
                 "commits between are judged against good ({} samples) with a minimum effect of "
                 "{:.2f}%\n",
                 e.base.empty() ? 0 : db->n_base, e.min_effect)
          << std::flush;
  }
  return e;
}

// The counts of a bisection's steps between the endpoints.
struct StepCounts {
  int decided = 0, skipped = 0, tested = 0;
  void add(BisectDecision d) {
    ++tested;
    (d == BisectDecision::skip ? skipped : decided)++;
  }
};

// Hands the endpoints to git, then replays the decisions already stored.
BisectState replay_steps(Session& s, Git& git, const BisectSession& row,
                         const std::vector<BisectStep>& steps, StepCounts& counts) {
  mark_commit(git, BisectDecision::bad, row.bad);
  BisectState state = mark_commit(git, BisectDecision::good, row.good);
  for (const auto& st : steps) {
    if (st.role != BisectRole::test || st.decision == BisectDecision::pending) continue;
    state = mark_commit(git, st.decision, st.commit);
    counts.add(st.decision);
  }
  if (counts.tested)
    s.out << fmt::format("resumed: {} step(s) replayed from the database\n", counts.tested);
  return state;
}

// The step of commit `sha`: one left pending by an interrupted run (it goes
// on with its samples), else a new one.
BisectStep& step_for(Session& s, Git& git, std::vector<BisectStep>& steps, const std::string& sha) {
  for (auto& r : steps)
    if (r.role == BisectRole::test && r.commit == sha && r.decision == BisectDecision::pending)
      return r;
  BisectStep r;
  r.step = s.store.add_bisect_step(s.id, sha, subject_of(git, sha), BisectRole::test);
  r.commit = sha;
  r.role = BisectRole::test;
  steps.push_back(r);
  return steps.back();
}

}  // namespace

BisectDecision test_commit(Session& s, BisectStep& step, const std::string& sha,
                           const std::string& title, const std::string& note,
                           const Endpoints& endpoints, DecisionResult& d) {
  d = DecisionResult();
  StepOutcome outcome;
  BuildResult b = build_step(s, step.step, sha);
  if (!b.ok) {
    outcome = {BisectDecision::skip, "build failed: " + b.tail};
    s.out << fmt::format("{}: build failed -> skip\n", title);
  } else {
    std::vector<std::int64_t> runs = step.runs;
    if (usable(s.store, runs, s.job.metric).empty()) {
      auto r = measure_step(s, step.step, sha, s.prep.iterations);
      runs.insert(runs.end(), r.begin(), r.end());
    }
    d = decide_with_more(s, step.step, sha, runs, endpoints.base, endpoints.min_effect, kGoodSide,
                         paired_with_good(s) ? endpoints.good : "");
    outcome = step_outcome(d);
    s.out << fmt::format(
                 "{}: {}{} -> {}\n", title,
                 b.seconds > 0 ? fmt::format("built in {:.1f} s; ", b.seconds) : "",
                 d.min_now ? fmt::format("{} samples: {}", d.min_now, d.summary) : d.summary,
                 to_string(outcome.decision))
          << std::flush;
  }
  record(s, step.step, outcome.decision, d.min_now ? &d : nullptr, note + outcome.reason);
  step.decision = outcome.decision;
  return outcome.decision;
}

namespace {

ExitCode report_only_skipped(Session& s, const BisectState& state) {
  std::vector<std::string> shorts;
  for (const auto& c : state.candidates) shorts.push_back(short_sha(c));
  return stop(s, BisectStatus::inconclusive,
              fmt::format("only skipped commits are left: the first bad commit is one of {}",
                          join(shorts, ", ")),
              ExitCode::inconclusive);
}

ExitCode report_first_bad(Session& s, Git& git, const BisectSession& row, const BisectState& state,
                          const Endpoints& endpoints, const StepCounts& counts) {
  const std::string first = state.first_bad;
  s.first_bad = first;
  const std::string subject = subject_of(git, first);
  // The first bad commit's runs, and the good runs it was decided against:
  // the endpoint's, or those measured beside it when paired.
  std::vector<std::int64_t> first_runs, base = endpoints.base, beside;
  for (const auto& st : s.store.bisect_steps(s.id))
    if (st.commit == first && (st.role == BisectRole::test || st.role == BisectRole::bad)) {
      auto [own, other] = split_by_build(s.store, st.runs, first);
      for (auto r : usable(s.store, own, s.job.metric)) first_runs.push_back(r);
      if (st.role == BisectRole::test)
        for (auto r : usable(s.store, other, s.job.metric)) beside.push_back(r);
    }
  if (first == row.bad)
    first_runs = endpoints.bad;
  else if (!beside.empty())
    base = beside;
  const int between = counts.decided + counts.skipped;
  std::string result = fmt::format("first bad commit {} {} ({} tested, {} skipped)", first, subject,
                                   between, counts.skipped);
  s.store.finish_bisect_session(s.id, BisectStatus::found, result, first);
  s.out << fmt::format(
      "\nfirst bad commit: {} {}\n  after {} step(s) between the endpoints ({} skipped)\n", first,
      subject, between, counts.skipped);
  s.out << merge_note(s, git, first, s.test_branch);
  if (!first_runs.empty()) {
    print_comparison(s, base, first_runs, "good-" + short_sha(row.good), "bad-" + short_sha(first),
                     endpoints.min_effect);
    // Why it is slower: the monitors and profile symbols that moved, each
    // symbol the first bad commit changed marked (docs/bisect.md "What else
    // changed").
    print_why(s, git, base, first_runs, "good-" + short_sha(row.good), "bad-" + short_sha(first),
              endpoints.min_effect, first);
  }
  return ExitCode::ok;
}

// Checks the endpoints, then lets git pick commits until it names the first
// bad one (or only skipped commits are left).
ExitCode drive(Session& s, const BisectSession& row) {
  Git git(s.prep.top);
  const int range = std::stoi(git.line({"rev-list", "--count", row.good + ".." + row.bad}));
  print_session_header(s, git, row, range);

  std::vector<BisectStep> steps = s.store.bisect_steps(s.id);
  BisectGuard guard(git);
  git.run({"bisect", "start"});
  guard.started();

  ExitCode code = ExitCode::ok;
  auto endpoints = check_endpoints(s, git, steps, row.good, row.bad, code);
  if (!endpoints) return code;
  s.endpoints = endpoints;

  StepCounts counts;
  BisectState state = replay_steps(s, git, row, steps, counts);
  for (int guard_steps = 0; state.first_bad.empty() && !state.only_skipped; ++guard_steps) {
    if (guard_steps > range + 5)
      throw EnvironmentError("git bisect did not converge; see `git bisect log`");
    throw_if_interrupted();
    BisectStep& step = step_for(s, git, steps, git.line({"rev-parse", "HEAD"}));
    DecisionResult d;
    const BisectDecision decision =
        test_commit(s, step, step.commit,
                    fmt::format("step {}: {} {}", counts.tested + 1, short_sha(step.commit),
                                subject_of(git, step.commit)),
                    "", *endpoints, d);
    counts.add(decision);
    state = mark_commit(git, decision, step.commit);
  }
  if (state.only_skipped) return report_only_skipped(s, state);
  return report_first_bad(s, git, row, state, *endpoints, counts);
}

// After `git bisect reset` the work tree is back at the commit it was at,
// but the build products in it are the last tested commit's: says so when
// they differ, so nobody installs the wrong kernel (issue 19).
void warn_build_tree(const Session& s) {
  if (s.job.build_command.empty() || s.built.empty()) return;
  const Git git(s.prep.top);
  CommandResult head = git.run({"rev-parse", "HEAD"}, true);
  const std::string now(trim(head.out));
  if (!head.ok() || now == s.built) return;
  std::cerr << fmt::format(
      "nightjar: warning: {} is back at {} (git bisect reset), but its build products are of {}, "
      "the last commit built; rebuild ({}) before using them\n",
      s.prep.top, short_sha(now), short_sha(s.built), s.job.build_command);
}

}  // namespace

ExitCode drive_recorded(Session& s, const BisectSession& row) {
  try {
    const ExitCode code = drive(s, row);
    warn_build_tree(s);
    return code;
  } catch (const Interrupted&) {
    s.store.finish_bisect_session(s.id, BisectStatus::interrupted,
                                  "interrupted by a signal; `nightjar bisect resume --session " +
                                      std::to_string(s.id) + "` goes on",
                                  "");
    s.out << fmt::format("bisect interrupted; resume with: nightjar bisect resume --session {}\n",
                         s.id);
    throw;
  } catch (const std::exception& e) {
    s.store.finish_bisect_session(s.id, BisectStatus::failed,
                                  std::string(e.what()) + "; " + resume_hint(s.id), "");
    s.out << fmt::format(
        "bisect stopped by an error; once it is fixed, resume with: nightjar bisect resume "
        "--session {}\n",
        s.id);
    throw;
  }
}

}  // namespace nightjar

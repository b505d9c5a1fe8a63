// The bisection of `nightjar bisect run|resume` (docs/architecture.md
// "harness/bisect"): the endpoints checked (the bad one must regress against
// the good one, the good one must be stable against itself), then git bisect
// picks commits and each is built, measured and decided against the good
// endpoint until git names the first bad commit or only skipped commits are
// left. It calls the rooms: git (git.h), measuring (measure.h), deciding
// (decide.h), printing (print.h) and, for a merge, the branch test's note
// (branch.h).
#pragma once

#include <string>

#include "harness/bisect/decide.h"
#include "harness/bisect/session.h"
#include "results/model/exit_codes.h"
#include "results/store/bisect_log.h"

namespace nightjar {

/// Builds, measures and decides one commit of step `step` against the good
/// endpoint (`endpoints`); stores the decision and returns it (good, bad or
/// skip: a failed build, no samples, or still unknown at the samples' cap).
/// `sha` is the commit checked out and built, the build label of its runs:
/// step.commit for a commit git bisect picked, the commit made by applying
/// step.commit for a branch step. `title` starts the line printed, `note` the
/// stored reason; `d` receives the decision's figures.
BisectDecision test_commit(Session& s, BisectStep& step, const std::string& sha,
                           const std::string& title, const std::string& note,
                           const Endpoints& endpoints, DecisionResult& d);

/// Runs the bisection of session `row` (s.id) in git: checks the endpoints,
/// replays the decisions already stored (resume), then lets git pick commits
/// until it names the first bad one, which it reports with its comparison.
/// The session's end is recorded on every path: found, inconclusive, failed
/// (an error, rethrown) or interrupted (Interrupted rethrown, with the
/// command that resumes it). Returns ok, inconclusive or environment.
ExitCode drive_recorded(Session& s, const BisectSession& row);

}  // namespace nightjar

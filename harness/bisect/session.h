// The session records room of `nightjar bisect` (docs/architecture.md
// "harness/bisect"), with harness/bisect/options.h: the state of one
// bisection while it runs (Session: the store's session id, the options, the
// measurer, the endpoints once checked), and opening and finding the stored
// sessions (records of results/store/bisect_log.h, used as they are).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/measurer.h"
#include "harness/bisect/options.h"
#include "results/model/exit_codes.h"
#include "results/store/bisect_log.h"
#include "results/store/store.h"

namespace nightjar {

/// What the endpoints' measurements fixed for every commit between.
struct Endpoints {
  std::vector<std::int64_t> base;  ///< good runs (A and A')
  std::vector<std::int64_t> bad;   ///< bad runs
  double change = 0;               ///< %change bad vs good
  double min_effect = 1;           ///< used for every commit between, percent
  /// The good endpoint's commit: with KernelBuildOptions::pair_good each
  /// commit between is decided against runs of it booted again beside the
  /// commit (decide_with_more), not against `base`.
  std::string good;
};

/// One bisection while it runs.
struct Session {
  /// The measurer is make_measurer's for `job` and `prepared`.
  Session(ResultsStore& st, std::ostream& o, BisectJobOptions j, Prepared p);
  ResultsStore& store;
  std::ostream& out;
  BisectJobOptions job;
  Prepared prep;
  std::unique_ptr<CommitMeasurer> measurer;  ///< how each commit is built and measured
  std::int64_t id = 0;                       ///< the stored session
  std::string built;  ///< the commit whose build is in the work tree ("" = unknown)
  /// Where builds and runs happen: "" = the repository top; a branch test's
  /// temporary worktree while it runs (the process's working directory too).
  std::string tree;
  /// More facts recorded with every run measured (run_context).
  std::map<std::string, std::string> context;
  std::optional<Endpoints> endpoints;  ///< once checked
  std::string first_bad;               ///< once git named it
  bool test_branch = false;            ///< --test-merge-branch: test a merge's branch after
};

/// Whether commits are measured beside the good endpoint booted again, with
/// runs (boots) as the unit (KernelBuildOptions::pair_good with
/// --kernel-build; docs/bisect.md "Paired with the good endpoint").
bool paired_with_good(const Session& s);

/// The runs (boots) each side needs, paired, before a decision: fewer leave
/// Welch on run means with too few degrees of freedom to decide anything.
constexpr std::size_t kPairedRuns = 3;

/// Opens the results database at `path` (saying which on stderr).
ResultsStore open_db(const std::string& path);

/// The results database of `bisect resume|branch` (`db` as db_path takes
/// it), which must exist: UsageError naming `command` otherwise.
ResultsStore open_sessions(const std::string& db, const char* command);

/// Session `session`, else the newest `bisect run` session with one of
/// `statuses` (described as `which` in the error); UsageError naming
/// `command` when there is none.
BisectSession find_session(const ResultsStore& store, std::optional<std::int64_t> session,
                           const char* command, const char* which,
                           std::vector<BisectStatus> statuses);

/// Ends the session with `status` and `why` (printed as "bisect STATUS:
/// WHY"); returns `code`. A failed session (an error that stops the bisect:
/// an endpoint that cannot be built or measured) stores and prints how to
/// resume it once the cause is fixed (resume_hint).
ExitCode stop(Session& s, BisectStatus status, const std::string& why, ExitCode code);

/// "once fixed, `nightjar bisect resume --session N` goes on": the words a
/// failed session's result ends with (`bisect resume` takes failed sessions).
std::string resume_hint(std::int64_t session);

}  // namespace nightjar

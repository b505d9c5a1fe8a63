// Records of bisect sessions as the results store keeps them (tables
// bisect_session, bisect_step, bisect_run; docs/bisect.md "Every step is
// stored"). Plain data: results/store/store.h declares the functions
// (ResultsStore::create_bisect_session, bisect_steps, ...); harness/bisect/
// decides what goes in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nightjar {

/// One bisection (a row of bisect_session).
struct BisectSession {
  std::int64_t id = 0;
  std::string kind;               ///< "run" or "step"
  std::string repo;               ///< the git work tree's top directory
  std::string good_rev, bad_rev;  ///< revisions as given (bad_rev may be "")
  std::string good, bad;          ///< their commit ids ("" when unknown)
  std::string job_path, job, metric;
  std::string options;  ///< JSON text: everything needed to resume
  /// "running", "found", "inconclusive", "failed" or "interrupted".
  std::string status;
  std::string result, first_bad;
  std::string started_at;  ///< ISO 8601 UTC
  std::string ended_at;    ///< ISO 8601 UTC; "" while running
};

/// Which session ResultsStore::newest_bisect_session finds. Empty fields
/// match everything.
struct BisectSessionFilter {
  std::string kind, repo, good_rev, job, metric;
  std::vector<std::string> statuses;  ///< any of these; empty: any status
};

/// The outcome of one step's measurement (the columns set_bisect_decision
/// writes). An optional that is empty, or a non-finite number, is stored as NULL.
struct BisectVerdict {
  std::string decision;  ///< "pending", "good", "bad" or "skip"
  std::string verdict;   ///< the decisive row's stats verdict ("" when none)
  std::string reason;
  std::optional<double> pct_change, p, q, ratio_lo, ratio_hi;
  std::optional<std::int64_t> n_base, n_now;
};

/// One commit measured (a row of bisect_step and its bisect_run rows).
struct BisectStep {
  int step = 0;  ///< 1-based, in the order the steps were added
  std::string commit, subject;
  /// "good", "bad", "test" (a commit git bisect picked) or "branch" (a
  /// commit of a merged branch measured on top of the merge's first parent;
  /// `commit` is the branch commit, the runs' build label the commit made by
  /// applying it; schema version 6)
  std::string role;
  std::string build_status;  ///< "pending", "ok", "failed" or "none"
  std::string build_output;  ///< tail of a failed build
  std::string decision, verdict, reason;
  std::string started_at;
  std::string ended_at;  ///< "" while pending
  std::optional<double> build_seconds, pct_change, p, q, ratio_lo, ratio_hi;
  std::optional<std::int64_t> n_base, n_now;
  std::vector<std::int64_t> runs;  ///< runs measured for it, ascending
};

}  // namespace nightjar

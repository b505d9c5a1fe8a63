// Records of bisect sessions as the results store keeps them (tables
// bisect_session, bisect_step, bisect_run; docs/bisect.md "Every step is
// stored"). Plain data: results/store/store.h declares the functions
// (ResultsStore::create_bisect_session, bisect_steps, ...); harness/bisect/
// decides what goes in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// A step's decision as git bisect takes it (column bisect_step.decision):
/// pending (not decided yet: measuring, or interrupted), good, bad, skip.
enum class BisectDecision { pending, good, bad, skip };
/// Why a commit is in a session (column bisect_step.role): the good or bad
/// endpoint, a commit git bisect picked (test), or a commit of a merged
/// branch measured on top of the merge's first parent (branch; schema 6).
enum class BisectRole { good, bad, test, branch };
/// A step's build (column bisect_step.build_status): pending (not built
/// yet), ok, failed, none (no build command).
enum class BisectBuild { pending, ok, failed, none };
/// A session's state (column bisect_session.status).
enum class BisectStatus { running, found, inconclusive, failed, interrupted };

/// The words the database, git bisect (`git bisect good|bad|skip`), the JSON
/// and the printed tables use: "pending", "good", "bad", "skip"; "good",
/// "bad", "test", "branch"; "pending", "ok", "failed", "none"; "running",
/// "found", "inconclusive", "failed", "interrupted".
const char* to_string(BisectDecision d);
const char* to_string(BisectRole r);
const char* to_string(BisectBuild b);
const char* to_string(BisectStatus s);

/// The inverse of to_string: nullopt for any other text (the schema's CHECK
/// constraints keep other text out of the database).
std::optional<BisectDecision> parse_bisect_decision(std::string_view text);
std::optional<BisectRole> parse_bisect_role(std::string_view text);
std::optional<BisectBuild> parse_bisect_build(std::string_view text);
std::optional<BisectStatus> parse_bisect_status(std::string_view text);

/// One bisection (a row of bisect_session).
struct BisectSession {
  std::int64_t id = 0;
  std::string kind;               ///< "run" or "step"
  std::string repo;               ///< the git work tree's top directory
  std::string good_rev, bad_rev;  ///< revisions as given (bad_rev may be "")
  std::string good, bad;          ///< their commit ids ("" when unknown)
  std::string job_path, job, metric;
  std::string options;  ///< JSON text: everything needed to resume
  BisectStatus status = BisectStatus::running;
  std::string result, first_bad;
  std::string started_at;  ///< ISO 8601 UTC
  std::string ended_at;    ///< ISO 8601 UTC; "" while running
};

/// Which session ResultsStore::newest_bisect_session finds. Empty fields
/// match everything.
struct BisectSessionFilter {
  std::string kind, repo, good_rev, job, metric;
  std::vector<BisectStatus> statuses;  ///< any of these; empty: any status
};

/// The outcome of one step's measurement (the columns set_bisect_decision
/// writes). An optional that is empty, or a non-finite number, is stored as NULL.
struct BisectVerdict {
  BisectDecision decision = BisectDecision::pending;
  std::string verdict;  ///< the decisive row's stats verdict ("" when none)
  std::string reason;
  std::optional<double> pct_change, p, q, ratio_lo, ratio_hi;
  std::optional<std::int64_t> n_base, n_now;
};

/// One commit measured (a row of bisect_step and its bisect_run rows).
struct BisectStep {
  int step = 0;  ///< 1-based, in the order the steps were added
  std::string commit, subject;
  /// For BisectRole::branch `commit` is the branch commit, the runs' build
  /// label the commit made by applying it.
  BisectRole role = BisectRole::test;
  BisectBuild build_status = BisectBuild::pending;
  std::string build_output;  ///< tail of a failed build
  BisectDecision decision = BisectDecision::pending;
  std::string verdict, reason;
  std::string started_at;
  std::string ended_at;  ///< "" while pending
  std::optional<double> build_seconds, pct_change, p, q, ratio_lo, ratio_hi;
  std::optional<std::int64_t> n_base, n_now;
  std::vector<std::int64_t> runs;  ///< runs measured for it, ascending
};

}  // namespace nightjar

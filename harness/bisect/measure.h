// The measuring room of `nightjar bisect` (docs/architecture.md
// "harness/bisect"): one commit of a session built and measured through the
// session's CommitMeasurer (harness/bisect/measurer.h), with the build and
// the runs recorded in the session's step, and measured again in batches
// while the decision is unknown and more samples help.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/bisect/decide.h"
#include "harness/bisect/measurer.h"
#include "harness/bisect/session.h"

namespace nightjar {

/// The measurer of a session with `job` and `prepared`: the one place that
/// chooses how commits are built and measured (today work_tree_measurer).
std::unique_ptr<CommitMeasurer> make_measurer(ResultsStore& store, const BisectJobOptions& job,
                                              const Prepared& prepared);

/// Builds `sha`, checked out in the session's tree (the repository top, or a
/// branch test's worktree), and records the build in step `step` (ok,
/// failed, or none). Only a build in the repository's own work tree changes
/// what its build products are (Session::built). Throws Interrupted.
BuildResult build_step(Session& s, int step, const std::string& sha);

/// Runs the job once (every cell, `iterations` each) with build label `sha`
/// and the facts bisect.session, bisect.step and Session::context; links the
/// runs to step `step` and returns them. Throws Interrupted (the runs linked).
std::vector<std::int64_t> measure_step(Session& s, int step, const std::string& sha,
                                       int iterations);

/// The runs of `ids` that hold valid samples of `metric` (complete or
/// aborted: a run whose samples are all invalid measured nothing to decide on).
std::vector<std::int64_t> usable(const ResultsStore& store, const std::vector<std::int64_t>& ids,
                                 const std::string& metric);

/// Why runs `ids` hold no samples: "run 7 failed: REASON; ...", or "no run
/// was stored".
std::string why_no_samples(const ResultsStore& store, const std::vector<std::int64_t>& ids);

/// The runs of `ids` whose build label is `sha` (first) and the others
/// (second): a paired step's own runs and the good endpoint's runs measured
/// beside them (docs/bisect.md "Paired with the good endpoint"). Runs not in
/// the store are left out.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> split_by_build(
    const ResultsStore& store, const std::vector<std::int64_t>& ids, const std::string& sha);

/// Decides `sha` (step `step`) against the runs `base` (named `base_name`)
/// with minimum effect `min_effect` percent, measuring more batches
/// (more_iterations) until the decision is not unknown or the cap is
/// reached. `runs` holds the step's runs so far (resume) and grows. No
/// usable run: an unknown decision whose summary says why.
///
/// Paired (`pair_with` = the good endpoint's commit, not empty): `base` is
/// not used. Once the commit has samples, the commit and the good endpoint
/// are measured alternately, one run (a boot) of the first batch's
/// iterations each, until both have kPairedRuns runs; while the decision is
/// unknown one more run of each is added (commit, then good), up to
/// `max_iterations` samples of the commit. The good runs (build label
/// `pair_with`, linked to step `step` and kept in `runs`) are the base side,
/// and the rows are tested with runs as the unit (bisect_significance with
/// runs_as_unit). They are measured through the session's measurer, so the
/// good endpoint's build must be available without a rebuild (the kernel
/// measurer's image cache). A run of either side without samples ends it:
/// the decision is unknown, saying which.
DecisionResult decide_with_more(Session& s, int step, const std::string& sha,
                                std::vector<std::int64_t>& runs,
                                const std::vector<std::int64_t>& base, double min_effect,
                                const std::string& base_name, const std::string& pair_with = "");

}  // namespace nightjar

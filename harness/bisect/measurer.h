// How a commit is built and measured (docs/architecture.md
// "harness/bisect"): the interface the bisect drivers call for every commit
// they test, and the one place that chooses its implementation
// (make_measurer). The implementation of today, work_tree_measurer()
// (measurer_work_tree.cpp), runs the build command in the work tree and the
// job on this machine. Another way -- such as building a kernel and booting
// it in qemu -- is another implementation in a file of its own beside
// measurer_work_tree.cpp and a line in make_measurer (measure.cpp); the
// drivers, the decisions and the session records stay as they are.
//
// A measurer only does the work: recording the build and the runs in the
// session (bisect_step, bisect_run) is measure.h's, the same for every
// measurer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/bisect/options.h"
#include "results/store/store.h"

namespace nightjar {

/// A build's outcome.
struct BuildResult {
  bool ran = false;    ///< a build ran (false: nothing to build, BisectBuild::none)
  bool ok = true;      ///< it succeeded (or nothing ran)
  double seconds = 0;  ///< its wall time
  std::string tail;    ///< when it failed: why and the tail of its output
};

/// One run of the job at one commit: every cell once.
struct MeasuredRuns {
  std::vector<std::int64_t> run_ids;  ///< the runs stored, ascending
  bool interrupted = false;           ///< SIGINT/SIGTERM ended it (the runs are stored)
};

/// How a commit is built and measured.
class CommitMeasurer {
 public:
  virtual ~CommitMeasurer() = default;
  /// Builds commit `sha`, checked out in directory `tree` (the repository
  /// top, or a branch test's temporary worktree). Throws Interrupted when a
  /// signal ended the build.
  virtual BuildResult build(const std::string& sha, const std::string& tree) = 0;
  /// Measures the build of `sha`: the job once, `iterations` per cell, runs
  /// labelled with build `sha` and the facts `context` (run_context), stored
  /// in the results store.
  virtual MeasuredRuns run_job(const std::string& sha, int iterations,
                               const std::map<std::string, std::string>& context) = 0;
};

/// The build command (`job.build_command`, `/bin/sh -c` in the tree, with
/// NIGHTJAR_COMMIT and NIGHTJAR_REPO set, killed after `job.build_timeout`
/// seconds) and the job run on this machine into `store`
/// (measurer_work_tree.cpp). Holds `store` by reference.
std::unique_ptr<CommitMeasurer> work_tree_measurer(ResultsStore& store, const BisectJobOptions& job,
                                                   const Prepared& prepared);

/// `bisect run --kernel-build` (job.kernel): each commit's kernel built out
/// of tree in one persistent build directory, cached by commit and config key,
/// and booted in qemu with the job inside, runs stored into `store`
/// (measurer_kernel.cpp; harness/bisect/kernel_build.h). Holds `store` by
/// reference.
std::unique_ptr<CommitMeasurer> kernel_measurer(ResultsStore& store, const BisectJobOptions& job,
                                                const Prepared& prepared);

}  // namespace nightjar

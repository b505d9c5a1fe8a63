// Building a commit with the build command in its work tree and measuring it
// by running the job on this machine: the CommitMeasurer of today
// (harness/bisect/measurer.h).
#include <fmt/format.h>

#include "harness/bisect/measurer.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

class WorkTreeMeasurer final : public CommitMeasurer {
 public:
  WorkTreeMeasurer(ResultsStore& store, BisectJobOptions job, Prepared prepared)
      : store_(store), job_(std::move(job)), prep_(std::move(prepared)) {}

  BuildResult build(const std::string& sha, const std::string& tree) override {
    BuildResult b;
    if (job_.build_command.empty()) return b;
    CommandSpec spec;
    spec.argv = {"/bin/sh", "-c", job_.build_command};
    spec.cwd = tree;
    spec.merge_stderr = true;
    spec.timeout_sec = job_.build_timeout;
    spec.env["NIGHTJAR_COMMIT"] = sha;
    spec.env["NIGHTJAR_REPO"] = prep_.top;
    CommandResult r = run_command(spec);
    if (r.interrupted || interrupted()) throw Interrupted();
    b.ran = true;
    b.ok = r.ok();
    b.seconds = r.wall_sec;
    b.tail = b.ok ? "" : r.describe(job_.build_timeout) + ": " + output_tail(r.out, 12, 1500);
    return b;
  }

  MeasuredRuns run_job(const std::string& sha, int iterations,
                       const std::map<std::string, std::string>& context) override {
    RunOptions o = run_options(job_, sha, iterations);
    o.context = context;
    auto plan = plan_runs(o, prep_.machine);
    RunOutcome r = execute_runs(plan, o, store_);
    return {r.run_ids, r.interrupted};
  }

 private:
  ResultsStore& store_;
  const BisectJobOptions job_;
  const Prepared prep_;
};

}  // namespace

std::unique_ptr<CommitMeasurer> work_tree_measurer(ResultsStore& store, const BisectJobOptions& job,
                                                   const Prepared& prepared) {
  return std::make_unique<WorkTreeMeasurer>(store, job, prepared);
}

}  // namespace nightjar

// The skeleton workload: a commented example of the workload contract
// (workloads/workload.h). Copy this file to add a workload, then add one line
// to workloads/registry.cpp. It is compiled and tested but not registered.
//
// What it measures: how fast this CPU sums `loops` integers (loops/sec).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "results/model/exit_codes.h"
#include "workloads/builtin.h"

namespace nightjar {
namespace {

// A CellSession holds whatever start() set up, for the life of one cell on one
// kernel+variant. Its destructor is the single place that tears it down: it
// runs on normal ends, on errors and when SIGINT unwinds the stack, so
// cleanup written here cannot be skipped. It must not throw.
class SkeletonSession : public CellSession {
 public:
  SkeletonSession(const Cell& cell, RunContext& ctx)
      : ctx_(ctx), loops_(static_cast<std::uint64_t>(cell.count("loops"))) {
    // Example of a resource created at start: a scratch file. Setup failures
    // throw EnvironmentError with a message that says what to do; the runner
    // stores the run as failed with that reason.
    char tmpl[] = "/tmp/nightjar-skeleton-XXXXXX";
    fd_ = mkstemp(tmpl);
    if (fd_ < 0)
      throw EnvironmentError("skeleton: cannot create a file in /tmp; check /tmp is writable");
    unlink(tmpl);  // unlinked at once: nothing to remove even after SIGKILL
  }

  ~SkeletonSession() override {
    if (fd_ >= 0) close(fd_);
  }

  // Untimed. Warms caches, page tables, CPU frequency. The default calls
  // measure() and discards the result.
  void warmup() override { (void)measure(); }

  // One measured iteration: do the work, time only the work, return every
  // declared metric in its declared unit. Long loops poll ctx_.interrupted()
  // and throw Interrupted so SIGINT is honoured within a fraction of a second.
  IterationResult measure() override {
    auto start = std::chrono::steady_clock::now();
    volatile std::uint64_t sum = 0;
    for (std::uint64_t i = 0; i < loops_; ++i) {
      sum = sum + i;
      if ((i & 0xfffff) == 0 && ctx_.interrupted()) throw Interrupted();
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    IterationResult r;
    if (elapsed <= 0) {
      // A failed sample: stored with its reason, the run goes on.
      r.failure = "the loop took no measurable time; raise loops";
      return r;
    }
    r.metrics["loops_per_sec"] = static_cast<double>(loops_) / elapsed;
    r.metrics["elapsed"] = elapsed;
    return r;
  }

 private:
  RunContext& ctx_;
  std::uint64_t loops_;
  int fd_ = -1;
};

class SkeletonWorkload : public Workload {
 public:
  // The name used in job files (`workload: skeleton`) and the one line shown
  // by `nightjar list`.
  std::string_view name() const override { return "skeleton"; }
  std::string_view summary() const override { return "example workload: sums integers"; }

  // Typed parameters with units, defaults and bounds. The job loader parses
  // and range-checks them before anything runs, so measure() can trust them.
  std::vector<ParamDescriptor> params() const override {
    return {{"loops",
             ParamType::count,
             "loops",
             "1000000",
             "integers summed per iteration",
             {},
             1.0,
             1e12}};
  }

  // One descriptor per metric: unit, direction (decides %change's sign) and
  // the summary mean (Hmean for rates over fixed work, Amean for times).
  std::vector<MetricDescriptor> metrics() const override {
    return {
        {"loops_per_sec", "loops/s", Direction::higher_is_better, MeanKind::harmonic,
         "loops / elapsed"},
        {"elapsed", "s", Direction::lower_is_better, MeanKind::arithmetic, "time of the loop"},
    };
  }

  // What the machine must offer, in words, for `nightjar list`.
  std::vector<std::string> requirements() const override { return {"a writable /tmp"}; }

  // Checks across parameters or against the machine; throw ParamError naming
  // the field and what to write instead. Runs before anything is stored.
  void validate(const Cell&, const MachineFacts&) const override {}

  // Checked per cell just before it runs: return the reason to skip (e.g.
  // "needs root", "no IPv6 loopback"); the run is recorded as skipped.
  std::optional<std::string> unmet_requirement(const Cell&) const override {
    if (access("/tmp", W_OK) != 0) return std::string("/tmp is not writable");
    return std::nullopt;
  }

  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<SkeletonSession>(cell, ctx);
  }
};

}  // namespace

std::unique_ptr<Workload> make_skeleton_workload() {
  return std::make_unique<SkeletonWorkload>();
}

}  // namespace nightjar

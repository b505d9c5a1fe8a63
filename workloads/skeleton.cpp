// The skeleton workload: a commented example of the workload contract
// (workloads/workload.h), and the proof that a workload is one file. It is
// compiled like every workloads/*.cpp (CMakeLists.txt globs them), registered
// as `skeleton` by the NIGHTJAR_WORKLOAD line at the end of this file, listed
// by `nightjar list`, and run by tests/cli/test_skeleton_cli.cpp.
//
// To add a workload: copy this file to workloads/NAME.cpp, rename the
// classes, return NAME from name(), and write the declarations and the
// measurement. Nothing else is edited: no header, no registry line.
//
// What it measures: how fast this CPU sums `loops` integers (loops/s).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/model/exit_codes.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

// A CellSession holds whatever start() set up, for the life of one cell on one
// kernel+variant. Its destructor is the single place that tears it down: it
// runs on normal ends, on errors and when SIGINT unwinds the stack, so
// cleanup written here cannot be skipped. It must not throw.
class SkeletonSession : public CellSession {
 public:
  SkeletonSession(const Cell& cell, RunContext& ctx)
      : ctx_(ctx), loops_(static_cast<std::uint64_t>(cell.integer("loops"))) {
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
  // declared metric in its declared unit (a missing one is not stored).
  // Counters (IterationResult::counters) explain a sample; flags warn about
  // it. A sample that ran to the end but did not measure what the workload
  // measures (nothing moved, the setup was not in force) sets
  // IterationResult::invalid with the reason: its values are kept, marked,
  // and left out of every statistic (docs/workloads.md "Invalid samples");
  // the runner itself marks values that cannot be measurements (a rate or a
  // time <= 0). Long loops poll ctx_.interrupted() and throw Interrupted so SIGINT is
  // honoured within a fraction of a second; an error that makes further
  // iterations pointless throws EnvironmentError.
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
    r.counters["skeleton.loops"] = static_cast<double>(loops_);
    return r;
  }

 private:
  RunContext& ctx_;
  std::uint64_t loops_;
  int fd_ = -1;
};

class SkeletonWorkload : public Workload {
 public:
  // The name used in job files (`workload: skeleton`); unique among the
  // registered workloads. The one line shown by `nightjar list`.
  std::string_view name() const override { return "skeleton"; }
  std::string_view summary() const override {
    return "the example workload (workloads/skeleton.cpp; copy it to add one): sums integers";
  }

  // Typed parameters with units, defaults and bounds (base units: bytes,
  // seconds, counts). The job loader parses and range-checks them before
  // anything runs, so the session can trust them. An empty default_value
  // makes a parameter required (except for ParamType::text).
  std::vector<ParamDescriptor> params() const override {
    return {{.name = "loops",
             .type = ParamType::count,
             .unit = "loops",
             .default_value = "1000000",
             .doc = "integers summed per iteration",
             .min = 1.0,
             .max = 1e12}};
  }

  // One descriptor per metric: unit, direction (decides %change's sign) and
  // the summary mean (Hmean for rates over fixed work, Amean for times).
  std::vector<MetricDescriptor> metrics() const override {
    return {
        {.name = "loops_per_sec",
         .unit = "loops/s",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "loops / elapsed"},
        {.name = "elapsed",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "time of the loop"},
    };
  }

  // (cell_metrics(cell) is left at its default, metrics(): override it only
  // when the metrics depend on the cell's parameters, as exec's do.)

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

  // How many leaves the job's `cgroup:` tree needs (asked only when the job
  // has a `cgroup:` section). A workload that starts N client processes and
  // moves client i into ctx.cgroups->leaf(i) returns N (tcp_sendfile returns
  // its `clients`). This one starts no process and attaches nothing, so one
  // leaf: the default, written out here to show the hook.
  int cgroup_clients(const Cell&) const override { return 1; }

  // Optional outputs in other tools' formats: netperf_output() returns the
  // `run --format netperf` blocks of one stored iteration, read from the
  // counters measure() stores (tcp_sendfile's reads client<i>.throughput,
  // ...). This workload has none: the default, written out here to show the
  // hook; `run --format netperf` notes its runs as having no blocks.
  NetperfOutput netperf_output() const override { return {}; }

  // lkp_mapping() names the LKP testcase (and `test`) that measures what
  // this workload measures, and which LKP job keys and stats.json metrics are
  // its parameters and metrics (results/model/lkp_mapping.h; tcp_sendfile's
  // maps netperf TCP_SENDFILE), for `import --format lkp --as-nightjar`. LKP
  // has no such test: the default, written out here to show the hook.
  std::optional<LkpMapping> lkp_mapping() const override { return std::nullopt; }

  // Sets the cell up and returns its session (above). Throws
  // EnvironmentError when setup fails: the run is stored as failed.
  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<SkeletonSession>(cell, ctx);
  }
};

// The registration: this line is what makes `workload: skeleton` known to
// job files, `nightjar list` and the results catalog (workloads/workload.h).
NIGHTJAR_WORKLOAD(SkeletonWorkload);

}  // namespace
}  // namespace nightjar

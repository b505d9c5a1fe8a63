// The `null` workload: does no work, and reports the wall time between the
// end of one measure() and the start of the next, which is the harness's own
// per-iteration cost (monitor snapshots, the SQLite commit, progress output).
#include <chrono>

#include "workloads/workload.h"

namespace nightjar {
namespace {

class NullSession : public CellSession {
 public:
  void warmup() override { last_ = std::chrono::steady_clock::now(); }
  IterationResult measure() override {
    auto now = std::chrono::steady_clock::now();
    IterationResult r;
    if (last_) r.metrics["harness_overhead"] = std::chrono::duration<double>(now - *last_).count();
    last_ = std::chrono::steady_clock::now();
    return r;
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> last_;
};

class NullWorkload : public Workload {
 public:
  std::string_view name() const override { return "null"; }
  std::string_view summary() const override {
    return "no work; measures the harness's overhead between iterations";
  }
  std::vector<ParamDescriptor> params() const override { return {}; }
  std::vector<MetricDescriptor> metrics() const override {
    return {{.name = "harness_overhead",
             .unit = "s",
             .direction = Direction::lower_is_better,
             .mean = MeanKind::arithmetic,
             .doc = "wall time from the end of one iteration to the start of the next "
                    "(the first measured iteration after no warm-up has none)"}};
  }
  std::unique_ptr<CellSession> start(const Cell&, RunContext&) const override {
    return std::make_unique<NullSession>();
  }
};

NIGHTJAR_WORKLOAD(NullWorkload);

}  // namespace

}  // namespace nightjar

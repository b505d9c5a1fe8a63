// The workload contract. A workload is one .cpp file in workloads/ plus one
// line in workloads/registry.cpp; workloads/skeleton.cpp is a commented
// example that states each hook's contract.
//
// Life of a cell (harness/runner.cpp):
//   validate(cell)            -> ParamError: usage error, nothing stored
//   unmet_requirement(cell)   -> reason: run stored as skipped(reason)
//   session = start(cell, ctx) -> sets up (cgroups, files, servers);
//                                 EnvironmentError: run stored as failed
//   session->warmup()  x W    -> untimed
//   session->measure() x N    -> one IterationResult per iteration, each
//                                committed to the database at once
//   ~session                  -> tears down what start() created, always
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/iteration.h"
#include "results/model/metric.h"
#include "results/model/params.h"

namespace nightjar {

class CgroupTree;

/// What the runner gives a workload while a cell runs.
struct RunContext {
  MachineFacts machine;
  /// True once SIGINT/SIGTERM arrived; long loops poll it and stop early
  /// (the runner then discards the iteration and throws Interrupted).
  std::function<bool()> interrupted = [] { return false; };
  /// Prints a warning on stderr and records it with the run.
  std::function<void(const std::string&)> warn = [](const std::string&) {};
  /// Records a fact with the run (e.g. "cgroup.client0" -> path).
  std::function<void(const std::string&, const std::string&)> record = [](const std::string&,
                                                                          const std::string&) {};
  /// The cgroup tree the job's `cgroup:` section asked for, created by the
  /// runner for this run (one leaf per client, or one shared leaf), or
  /// nullptr when the job has none. Workloads that start client processes
  /// attach client i to cgroups->leaf(i) before the timed window.
  const CgroupTree* cgroups = nullptr;
};

/// The state of one cell between start() and destruction.
class CellSession {
 public:
  /// Tears down everything start() created (processes, cgroups, files). Must
  /// not throw and must be safe after an interrupted measure().
  virtual ~CellSession() = default;
  /// One untimed warm-up iteration. Default: measure() and discard.
  virtual void warmup() { (void)measure(); }
  /// One measured iteration. Throws Interrupted if ctx.interrupted() became
  /// true mid-way, EnvironmentError for a failure that makes further
  /// iterations pointless; returns a result with `failure` set for a failed
  /// sample that the next iteration may not repeat.
  virtual IterationResult measure() = 0;
};

/// One workload: its declaration and its factory of cell sessions.
class Workload {
 public:
  virtual ~Workload() = default;
  /// Registry name used in job files ("pft").
  virtual std::string_view name() const = 0;
  /// One line for `nightjar list`.
  virtual std::string_view summary() const = 0;
  /// Declared parameters, with types, units and defaults.
  virtual std::vector<ParamDescriptor> params() const = 0;
  /// Declared metrics, with units and directions.
  virtual std::vector<MetricDescriptor> metrics() const = 0;
  /// The metrics one cell reports, when they depend on its parameters (the
  /// `exec` workload's are declared by the job). Default: metrics(). The
  /// runner records these in the store's metric table for every cell.
  virtual std::vector<MetricDescriptor> cell_metrics(const Cell& cell) const {
    (void)cell;
    return metrics();
  }
  /// Human-readable requirements for `nightjar list` ("root", "cgroup memory controller").
  virtual std::vector<std::string> requirements() const { return {}; }
  /// Cross-parameter and machine checks beyond ParamDescriptor bounds
  /// (e.g. pft size larger than memory). Throws ParamError naming the field.
  virtual void validate(const Cell& cell, const MachineFacts& machine) const {
    (void)cell;
    (void)machine;
  }
  /// The reason this cell cannot run here (not root, no IPv6 loopback), or
  /// nullopt. The runner records the run as skipped with this reason.
  virtual std::optional<std::string> unmet_requirement(const Cell& cell) const {
    (void)cell;
    return std::nullopt;
  }
  /// Sets the cell up. Throws EnvironmentError when setup fails.
  virtual std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const = 0;
};

/// Every registered workload, in registry order (workloads/registry.cpp).
const std::vector<std::unique_ptr<Workload>>& workload_registry();
/// The workload named `name`, or nullptr.
const Workload* find_workload(std::string_view name);
/// The declarations (parameters, metrics) of every registered workload, as
/// the results layer takes them (results/model/declarations.h).
const WorkloadCatalog& workload_catalog();

}  // namespace nightjar

// The workload contract. A workload is one .cpp file in workloads/: the
// class, and a `NIGHTJAR_WORKLOAD(Class);` line after it that registers it.
// workloads/skeleton.cpp is a commented example that states each hook's
// contract (it is compiled, registered as `skeleton` and run by
// tests/cli/test_skeleton_cli.cpp).
//
// Life of a cell (harness/run/runner.cpp):
//   validate(cell)            -> ParamError: usage error, nothing stored
//   unmet_requirement(cell)   -> reason: run stored as skipped(reason)
//   cgroup_clients(cell)      -> leaves of the job's cgroup: tree (when it has one)
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
#include <utility>
#include <vector>

#include "results/model/declarations.h"
#include "results/model/iteration.h"
#include "results/model/lkp_mapping.h"
#include "results/model/metric.h"
#include "results/model/netperf.h"
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
  /// runner for this run (one leaf per client, Workload::cgroup_clients() of
  /// them, or one shared leaf), or nullptr when the job has none. Workloads
  /// that start client processes attach client i to cgroups->leaf(i) before
  /// the timed window.
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
  /// Facts of the system (SystemContext keys, workloads/sys/probe.h) whose
  /// setting changes this workload's figures, such as "thp.enabled" for a
  /// page-fault workload: the warning about such a fact (FactWarning with
  /// workload_specific) is stored only with the runs of workloads that
  /// declare it.
  virtual std::vector<std::string> sensitive_facts() const { return {}; }
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
  /// How many clients the job's `cgroup:` tree has a leaf for (per_client
  /// placement makes leaves c0..c<n-1>; a shared leaf is one leaf whatever
  /// n is). Called by the runner after validate(), only when the job has a
  /// `cgroup:` section, before start(). A workload that attaches client i to
  /// ctx.cgroups->leaf(i) returns its number of clients (tcp_sendfile: its
  /// `clients`); must be at least 1. Default: 1 (one leaf, leaf(0)).
  virtual int cgroup_clients(const Cell& cell) const {
    (void)cell;
    return 1;
  }
  /// The workload's netperf-compatible output (`nightjar run --format
  /// netperf`): the blocks of one stored iteration, read from the counters
  /// and parameters the workload itself stores (results/model/netperf.h).
  /// Default: none (runs of the workload have no netperf blocks).
  virtual NetperfOutput netperf_output() const { return {}; }
  /// The workload's LKP table (results/model/lkp_mapping.h): the LKP
  /// testcase and test that measure what it measures, and which LKP job keys
  /// and stats.json metrics are its parameters and metrics, for `nightjar
  /// import --format lkp --as-nightjar`. Default: none (an LKP tree is never
  /// stored as a run of this workload).
  virtual std::optional<LkpMapping> lkp_mapping() const { return std::nullopt; }
  /// Sets the cell up. Throws EnvironmentError when setup fails.
  virtual std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const = 0;
};

/// Adds `workload` to the registry. Called before main() by the object that
/// NIGHTJAR_WORKLOAD defines; not meant to be called by hand. Two workloads
/// with the same name are a programming error: it prints both on stderr and
/// aborts, so every binary (and so every test) fails at once.
void register_workload(std::unique_ptr<Workload> workload);

/// The static registrar behind NIGHTJAR_WORKLOAD: constructing one registers
/// the workload it is given.
struct WorkloadRegistrar {
  explicit WorkloadRegistrar(std::unique_ptr<Workload> workload) {
    register_workload(std::move(workload));
  }
};

/// Every registered workload, sorted by name() (byte order), whatever order
/// the files' registrars ran in: the order of `nightjar list` and of
/// workload_catalog().
const std::vector<std::unique_ptr<Workload>>& workload_registry();
/// The workload named `name`, or nullptr.
const Workload* find_workload(std::string_view name);
/// The declarations (parameters, metrics) of every registered workload, in
/// registry order, as the results layer takes them
/// (results/model/declarations.h).
const WorkloadCatalog& workload_catalog();

}  // namespace nightjar

#define NIGHTJAR_WORKLOAD_JOIN2(a, b) a##b
#define NIGHTJAR_WORKLOAD_JOIN(a, b) NIGHTJAR_WORKLOAD_JOIN2(a, b)

/// Registers one instance of `Class` (a Workload), constructed with the
/// optional constructor arguments: `NIGHTJAR_WORKLOAD(PftWorkload);`,
/// `NIGHTJAR_WORKLOAD(TcpWorkload, false);`. Write it in the workload's own
/// file, after the class, in the namespace that declares it (usually the
/// file's anonymous namespace); a file may register several workloads, one
/// line each. It defines a static WorkloadRegistrar that registers the
/// workload during static initialisation, before main().
///
/// This relies on the registrar's object file being linked: the core
/// (workloads/*.cpp and the rest) is a CMake OBJECT library whose objects are
/// linked directly into every executable (CMakeLists.txt, nightjar_core), so
/// the linker never drops a file that nothing references. Do not turn the
/// core into a static archive (.a): objects of an archive are only pulled in
/// when referenced, and a workload file is referenced by nothing but its own
/// registrar.
#define NIGHTJAR_WORKLOAD(Class, ...)                                                      \
  const ::nightjar::WorkloadRegistrar NIGHTJAR_WORKLOAD_JOIN(nightjar_workload_registrar_, \
                                                             __LINE__) {                   \
    std::make_unique<Class>(__VA_ARGS__)                                                   \
  }

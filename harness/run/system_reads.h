// What the runner reads from the system while it runs a plan, behind one
// interface: the identity and facts stored with every run, the cgroup
// layout, the per-iteration monitor snapshots and cgroup event counters,
// and whether SIGINT/SIGTERM arrived. execute_runs() (runner.h) reads the
// live system through LiveSystemReads; a test gives it scripted readings
// instead (tests/unit/test_runner.cpp), as hyperfine's Executor has a mock.
//
// What the runner changes on the system is not behind it: variant knobs
// (workloads/sys/knobs.h) and the cgroup tree (workloads/sys/cgroup.h) are
// written as before, so a job that asks for them still needs the machine;
// the one exception is the sweep of what ended nightjar processes left,
// which runs once before anything else and is here so that a test does not
// sweep the machine's journals.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "results/model/identity.h"
#include "results/model/params.h"
#include "workloads/sys/monitor_set.h"
#include "workloads/sys/monitors.h"
#include "workloads/sys/probe.h"

namespace nightjar {

class CgroupTree;

/// The runner's system reads. Every function is called on the runner's
/// thread, in the order execute_runs() needs the values; none may throw
/// except where said.
class SystemReads {
 public:
  virtual ~SystemReads() = default;

  /// Once, before anything runs: arranges for interrupted() to become true
  /// on SIGINT/SIGTERM (the live system installs the handlers of
  /// workloads/sys/signals.h).
  virtual void watch_interrupts() = 0;
  /// Once, before anything runs: undoes what ended nightjar processes left
  /// behind (sweep_journals, workloads/sys/sweep.h) and returns one line per
  /// fact for stderr (SweepReport::lines; none when nothing was found).
  virtual std::vector<std::string> sweep_leftovers() = 0;

  /// The running kernel's identity (probe_kernel_identity), once per plan.
  virtual KernelIdentity kernel() = 0;
  /// The testbox (probe_testbox), once per plan.
  virtual Testbox testbox() = 0;
  /// The system facts stored as run context (SystemContext::probe): once per
  /// plan, and again for each variant with knobs once they are in force.
  virtual SystemContext context() = 0;
  /// The cgroup layout (CgroupLayout::detect): once per plan for
  /// check_cgroup_plans(), and per run of a job with a `cgroup:` section.
  virtual CgroupLayout cgroup_layout() = 0;
  /// Why memory cgroups cannot be used with `layout` (memcg_unavailable_reason,
  /// workloads/sys/cgroup.h), "" when they can; per run of a job with a
  /// `cgroup:` section.
  virtual std::string memcg_unavailable(const CgroupLayout& layout) = 0;
  /// The machine facts given to the workload (probe_machine_facts), per run.
  virtual MachineFacts machine() = 0;

  /// A monitor snapshot (take_snapshot, workloads/sys/monitors.h): right
  /// before and right after each measured iteration; the runner stores
  /// monitor_deltas() of the two.
  virtual MonitorSnapshot snapshot() = 0;
  /// The extra monitors of one run (MonitorSet, workloads/sys/monitor_set.h)
  /// of the job's selection `selected` (job_monitors), `tree` the run's
  /// cgroup tree or nullptr: once per run, on the runner's thread, before
  /// the workload's session starts; read before and after each measured
  /// iteration. nullptr: no extra monitor rows.
  virtual std::unique_ptr<MonitorSet> open_monitors(const std::vector<std::string>& selected,
                                                    const CgroupTree* tree) = 0;
  /// The event counters of a run's cgroup tree (CgroupTree::event_counters),
  /// before and after each measured iteration of a run that has one.
  virtual std::map<std::string, std::uint64_t> cgroup_events(const CgroupTree& tree) = 0;

  /// True once SIGINT or SIGTERM arrived (polled between steps and by the
  /// workload through RunContext::interrupted).
  virtual bool interrupted() = 0;
  /// The signal that interrupted (SIGINT or SIGTERM), 0 if none: named in
  /// the reason of an aborted run.
  virtual int interrupt_signal() = 0;
};

/// The live system: /proc, /sys and cgroupfs as the functions named above
/// read them, and the process's signal flag.
class LiveSystemReads : public SystemReads {
 public:
  void watch_interrupts() override;
  std::vector<std::string> sweep_leftovers() override;
  KernelIdentity kernel() override;
  Testbox testbox() override;
  SystemContext context() override;
  CgroupLayout cgroup_layout() override;
  std::string memcg_unavailable(const CgroupLayout& layout) override;
  MachineFacts machine() override;
  MonitorSnapshot snapshot() override;
  std::unique_ptr<MonitorSet> open_monitors(const std::vector<std::string>& selected,
                                            const CgroupTree* tree) override;
  std::map<std::string, std::uint64_t> cgroup_events(const CgroupTree& tree) override;
  bool interrupted() override;
  int interrupt_signal() override;
};

}  // namespace nightjar

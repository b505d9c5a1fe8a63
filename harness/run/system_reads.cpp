// The live system behind the runner's SystemReads: each function forwards to
// the workloads/sys module that reads it.
#include "harness/run/system_reads.h"

#include "workloads/sys/cgroup.h"
#include "workloads/sys/signals.h"
#include "workloads/sys/sweep.h"

namespace nightjar {

void LiveSystemReads::watch_interrupts() {
  install_interrupt_handlers();
}

std::vector<std::string> LiveSystemReads::sweep_leftovers() {
  return sweep_journals(SweepOptions{}).lines();
}

KernelIdentity LiveSystemReads::kernel() {
  return probe_kernel_identity();
}

Testbox LiveSystemReads::testbox() {
  return probe_testbox();
}

SystemContext LiveSystemReads::context() {
  return SystemContext::probe();
}

CgroupLayout LiveSystemReads::cgroup_layout() {
  return CgroupLayout::detect();
}

std::string LiveSystemReads::memcg_unavailable(const CgroupLayout& layout) {
  return memcg_unavailable_reason(layout);
}

MachineFacts LiveSystemReads::machine() {
  return probe_machine_facts();
}

MonitorSnapshot LiveSystemReads::snapshot() {
  return take_snapshot();
}

std::unique_ptr<MonitorSet> LiveSystemReads::open_monitors(const std::vector<std::string>& selected,
                                                           const CgroupTree* tree) {
  return std::make_unique<MonitorSet>(selected, "/proc", tree);
}

std::map<std::string, std::uint64_t> LiveSystemReads::cgroup_events(const CgroupTree& tree) {
  return tree.event_counters();
}

bool LiveSystemReads::interrupted() {
  return nightjar::interrupted();
}

int LiveSystemReads::interrupt_signal() {
  return nightjar::interrupt_signal();
}

}  // namespace nightjar

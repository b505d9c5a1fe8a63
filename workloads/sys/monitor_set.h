// The monitors a job can select (`monitors:`, docs/monitors.md): the
// catalog of names with what each records, its unit, source, availability
// and cost, the default selection, and MonitorSet, the selected extra
// monitors of one run (perf-stat, /proc files, the cell's memcg), read right
// before and right after each measured iteration. The vmstat and cpu
// monitors are the runner's MonitorSnapshot (workloads/sys/monitors.h);
// their selection filters its deltas (monitor_selected_row).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/profile.h"
#include "workloads/sys/perf_profile.h"
#include "workloads/sys/perf_stat.h"
#include "workloads/sys/proc_counters.h"

namespace nightjar {

class CgroupTree;

/// One selectable monitor.
struct MonitorInfo {
  std::string_view name;          ///< as written in `monitors:` ("perf-stat")
  std::string_view rows;          ///< its rows' name prefix(es) ("perf.")
  std::string_view what;          ///< what it records, and the unit
  std::string_view source;        ///< the kernel interface read
  std::string_view availability;  ///< when it has rows
  std::string_view cost;          ///< what reading it costs per iteration
  bool on_by_default = false;     ///< in the selection of a job without `monitors:`
};

/// Every monitor, in the order of docs/monitors.md: vmstat, cpu, perf-stat,
/// memcg, meminfo, softirqs, schedstat, interrupts, net, perf-profile (which
/// has no rows: its folded stacks are stored in tables of their own).
const std::vector<MonitorInfo>& monitor_catalog();

/// The monitor named `name`, or nullptr.
const MonitorInfo* find_monitor(std::string_view name);

/// The selection of a job without `monitors:`: the names whose
/// MonitorInfo::on_by_default is true.
std::vector<std::string> default_monitors();

/// True when monitor row `row` ("vmstat.pgfault", "memcg.top.oom") belongs
/// to a monitor in `selected`; rows of no known monitor are kept.
bool monitor_selected_row(const std::vector<std::string>& selected, std::string_view row);

/// The selected extra monitors of one run. Construct it on the thread that
/// starts the workload's session, before the session starts (perf-stat
/// counts what that thread creates afterwards).
class MonitorSet {
 public:
  /// One reading of every selected monitor.
  struct Reading {
    ProcValues proc;
    PerfReading perf;
  };

  /// `selected`: monitor names (known ones; vmstat and cpu are not read
  /// here). `proc_root`: "/proc" (tests: a directory of fake files).
  /// `memcg`: the run's cgroup tree (nullptr: none, and the memcg monitor
  /// has no rows). Never throws: what cannot be read is in unavailable().
  MonitorSet(const std::vector<std::string>& selected, std::string proc_root,
             const CgroupTree* memcg);
  ~MonitorSet();
  MonitorSet(const MonitorSet&) = delete;
  MonitorSet& operator=(const MonitorSet&) = delete;

  /// Reads every selected monitor (each file with one read).
  Reading read() const;
  /// Per-iteration rows: counters as after − before (a counter that went
  /// backwards or is absent on a side is omitted), levels as after,
  /// perf_deltas() for perf-stat.
  std::map<std::string, double> deltas(const Reading& before, const Reading& after) const;
  /// What is selected but cannot be recorded, "monitor: reason" (a file
  /// absent on this kernel, perf events without a PMU): stored with the run
  /// and printed once per run.
  const std::vector<std::string>& unavailable() const { return unavailable_; }

  /// perf-profile (PerfProfiler, workloads/sys/perf_profile.h): enables
  /// sampling; call right before the measured iteration. No-op when
  /// perf-profile is not selected or could not be opened.
  void start_profile();
  /// Disables sampling; call right after the measured iteration, before the
  /// other monitors are read.
  void stop_profile();
  /// The folded stacks sampled between start_profile() and stop_profile();
  /// std::nullopt when perf-profile is not selected or not open.
  std::optional<IterationProfile> take_profile();

 private:
  bool has(std::string_view name) const;
  std::vector<std::string> selected_;
  std::string proc_;
  const CgroupTree* memcg_;
  std::unique_ptr<PerfProfiler> profile_;
  std::unique_ptr<PerfStat> perf_;
  std::vector<std::string> unavailable_;
};

}  // namespace nightjar

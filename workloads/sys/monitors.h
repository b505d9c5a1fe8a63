// Iteration monitors: system counters sampled right before and right after each
// iteration, and the per-iteration deltas stored with the samples ("monitor" in
// docs/reference.md "Vocabulary"). Taking a snapshot only reads /proc; it is cheap enough to
// run twice per iteration (each file is read once, with one read(2)).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// A snapshot of system counters taken right before and right after an iteration.
struct MonitorSnapshot {
  /// Every counter of <proc>/vmstat, name -> value (pages or events, as the
  /// kernel counts them). Empty when the file is unreadable.
  std::map<std::string, std::uint64_t> vmstat;
  /// The aggregate "cpu" line of <proc>/stat, in clock ticks (sysconf(_SC_CLK_TCK),
  /// USER_HZ): user nice system idle iowait irq softirq steal (the first up to
  /// 8 fields; guest time is already inside user/nice). Empty when unreadable.
  std::vector<std::uint64_t> cpu_ticks;
  /// CPU clock ticks consumed by nightjar's process tree: utime+stime+cutime+cstime
  /// of <proc>/self/stat (cutime/cstime: reaped children), plus
  /// utime+stime+cutime+cstime of every live descendant (a process's stat
  /// covers all its threads). Descendants are found through
  /// <proc>/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN: a few reads however
  /// busy the machine), else by scanning every <proc>/[pid]/stat for ppid
  /// chains leading to getpid(). Counting the descendants' cutime/cstime keeps
  /// the sum continuous when a child is reaped: its total moves into our cutime.
  std::uint64_t own_cpu_ticks = 0;
  /// CLOCK_MONOTONIC at the time of the snapshot, in seconds.
  double wall_seconds = 0;
};

/// Takes a snapshot of the real system (/proc).
MonitorSnapshot take_snapshot();
/// Same, reading `proc_root` in place of "/proc" (e.g. "/tmp/x/proc" holding
/// vmstat, stat, self/stat and <pid>/stat, for tests with fake files).
MonitorSnapshot take_snapshot(const std::string& proc_root);

/// The /proc/vmstat counters whose deltas monitor_deltas() stores, without the
/// "vmstat." prefix: pgfault, pgmajfault, pswpin, pswpout,
/// workingset_refault_anon, workingset_refault_file, pgpgin, swpin_zero.
const std::vector<std::string_view>& monitored_vmstat_counters();

/// Per-iteration deltas between two snapshots (`before` taken first):
///  - "vmstat.<counter>" for each of monitored_vmstat_counters(): after − before,
///    in the counter's own unit (events; pgpgin in KiB). A counter absent from
///    either snapshot (not on this kernel) is omitted, not 0.
///  - "cpu.util_pct": 100 − idle% of all CPUs over the interval, in percent
///    (0..100): busy = all 8 fields except idle, so iowait and steal count as
///    busy, as netperf's -c does.
///  - "cpu.foreign_sec": busy CPU seconds of the whole machine minus cpu.own_sec,
///    clamped at 0: CPU time someone else used during the iteration (the
///    noisy-neighbour signal).
///  - "cpu.own_sec": CPU seconds of nightjar's process tree (own_cpu_ticks delta).
/// Ticks are converted with sysconf(_SC_CLK_TCK). A counter that decreased
/// (wrap-around, reset, a descendant reparented away) omits the deltas computed
/// from it; an interval in which no CPU tick elapsed omits cpu.util_pct.
std::map<std::string, double> monitor_deltas(const MonitorSnapshot& before,
                                             const MonitorSnapshot& after);

}  // namespace nightjar

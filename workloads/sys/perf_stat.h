// The perf-stat monitor: hardware and software event counts of the
// workload's processes over each measured iteration, read with
// perf_event_open(2) directly (no libpfm, no perf binary). The counters are
// opened on the calling thread with `inherit` set before the workload's
// session starts, so every thread and process the workload creates from that
// thread afterwards (pft's threads, Workers' forked processes, servers and
// clients) is counted too; read(2) of an inherited counter sums the live
// children's counts, and an exited child's count is folded into it
// (perf_event_open(2), "inherit"). Each counter is opened on its own (no
// group: the kernel refuses group reads of inherited counters), and a
// multiplexed counter is scaled by time_enabled/time_running of the
// interval.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nightjar {

/// One event perf-stat counts: its monitor name ("perf.<name>") and the
/// perf_event_attr type and config (PERF_TYPE_SOFTWARE/HARDWARE, linux/perf_event.h).
struct PerfEventSpec {
  std::string name;  ///< "task-clock", "page-faults", "cycles", ... (perf-stat's names)
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  bool hardware = false;  ///< needs a CPU PMU
};

/// The events of the perf-stat monitor, software first: task-clock (ns),
/// context-switches, cpu-migrations, page-faults, then cycles, instructions,
/// cache-misses, branch-misses (hardware).
const std::vector<PerfEventSpec>& perf_stat_events();

/// One read of every open counter: name -> (raw count, time_enabled ns,
/// time_running ns).
struct PerfReading {
  struct Value {
    std::uint64_t count = 0, enabled = 0, running = 0;
  };
  std::map<std::string, Value> values;
};

/// The open counters of one run. Opening never throws: an event the kernel
/// refuses is listed in unavailable() with the reason (ENOENT/EOPNOTSUPP:
/// no PMU offers it, as on a VM without a virtual PMU; EACCES: perf_event_paranoid),
/// and is recorded as unavailable, never as 0.
class PerfStat {
 public:
  /// Opens every event of perf_stat_events() on the calling thread
  /// (pid 0, cpu -1, inherit). With perf_event_paranoid >= 2 and without
  /// CAP_PERFMON an event counting the kernel is refused (EACCES); it is
  /// then opened again with exclude_kernel (user space only), and note()
  /// says so.
  PerfStat();
  ~PerfStat();
  PerfStat(const PerfStat&) = delete;
  PerfStat& operator=(const PerfStat&) = delete;

  /// Reads every open counter (one read(2) each).
  PerfReading read() const;
  /// The events that could not be opened: name -> reason ("cycles: no
  /// hardware counter on this CPU/VM (ENOENT)").
  const std::map<std::string, std::string>& unavailable() const { return unavailable_; }
  /// "" or what limits the counts ("user space only: perf_event_paranoid=2").
  const std::string& note() const { return note_; }

 private:
  struct Open {
    std::string name;
    int fd;
  };
  std::vector<Open> open_;
  std::map<std::string, std::string> unavailable_;
  std::string note_;
};

/// Why perf_event_open(2) refused an event, from its errno: no PMU offers it
/// (ENOENT, EOPNOTSUPP, ENODEV), not permitted (EACCES, EPERM:
/// perf_event_paranoid), no perf events in the kernel (ENOSYS), else the
/// errno's text. Shared by perf-stat and perf-profile
/// (workloads/sys/perf_profile.h).
std::string perf_event_refusal(int err);

/// Per-iteration deltas of two readings (`before` first): "perf.<event>" =
/// (count delta) · (enabled delta)/(running delta) (the scaling perf stat
/// applies to a multiplexed counter), omitted when the counter never ran in
/// the interval or went backwards; task-clock is converted to seconds
/// ("perf.task-clock_sec"); "perf.ipc" = instructions/cycles when both are
/// present and cycles > 0.
std::map<std::string, double> perf_deltas(const PerfReading& before, const PerfReading& after);

}  // namespace nightjar

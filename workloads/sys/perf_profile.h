// The perf-profile monitor (docs/monitors.md "perf-profile"): call stacks
// of the workload's threads and processes sampled with perf_event_open(2)
// during each measured iteration only, symbolized and folded into an
// IterationProfile (results/model/profile.h) that the runner stores with the
// iteration's samples.
//
// The event is PERF_COUNT_HW_CPU_CYCLES where a CPU PMU offers it, else the
// software clock PERF_COUNT_SW_CPU_CLOCK (VMs without a virtual PMU), at
// ProfileOptions::frequency_hz samples per second of a running thread, with
// PERF_SAMPLE_CALLCHAIN (kernel and user frames). Sampling events are opened
// once per CPU on the calling thread with `inherit`, disabled: the kernel
// refuses to mmap an inherited event that is not bound to a CPU, and the
// threads and processes the workload creates afterwards inherit the events,
// their samples going to the opener's per-CPU ring buffers. start() enables
// them right before the iteration and stop() disables them right after. A
// thread of the profiler's own, started before the events are opened (so
// never sampled), drains the ring buffers while they fill.
//
// Kernel frames are named from /proc/kallsyms, user frames of nightjar's
// program (and of the workers it forks) from its ELF symbols
// (workloads/sys/symbols.h); a process that exec'd another program has its
// user frames named from the ELF files the kernel reported it mapping
// after the exec (PERF_RECORD_MMAP: the program and its libraries), or
// folded into one "[program]" frame, its name as the kernel reported it,
// where those files have no symbol for the address.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "results/model/profile.h"

namespace nightjar {

/// How the profiler samples.
struct ProfileOptions {
  int frequency_hz = 499;                   ///< samples per second of a running thread
  std::string kallsyms = "/proc/kallsyms";  ///< kernel symbols (tests: a fake file)
  std::size_t ring_pages = 64;              ///< data pages of each CPU's ring buffer (power of 2)
};

/// The profiler of one run. Opening never throws: what cannot be had is in
/// unavailable() (no perf events, not permitted, kernel symbols hidden) and
/// the profiles are then absent, or partial as said there.
class PerfProfiler {
 public:
  /// Opens the sampling events on the calling thread, one per online CPU,
  /// disabled; cycles where a PMU offers them, else cpu-clock. Without root
  /// or CAP_PERFMON and perf_event_paranoid >= 2 the kernel is excluded
  /// (user frames only), and unavailable() says so. Loads the symbols.
  explicit PerfProfiler(const ProfileOptions& options = {});
  ~PerfProfiler();
  PerfProfiler(const PerfProfiler&) = delete;
  PerfProfiler& operator=(const PerfProfiler&) = delete;

  /// True when sampling events are open (profiles will be produced).
  bool open() const;
  /// Forgets what was sampled before and enables the events: call right
  /// before the measured iteration.
  void start();
  /// Disables the events: call right after the measured iteration.
  void stop();
  /// The samples taken between start() and stop(), symbolized and folded
  /// (the event name, the frequency, lost samples). Call after stop().
  IterationProfile take();
  /// The event sampled: "cycles" or "cpu-clock" ("" when none is open).
  const std::string& event() const;
  /// What limits the profiles, one reason each ("cycles: no PMU ...; sampling
  /// cpu-clock", "kernel symbols: ..."): stored as the run's
  /// monitor.unavailable fact.
  const std::vector<std::string>& unavailable() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nightjar

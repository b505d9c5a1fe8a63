// What each monitor adds to one measured iteration of anonymous page
// faults, measured in one process where the run-level noise of a shared
// machine (bench/monitor_overhead.sh: +-10% intervals over 10 rounds of
// whole runs) does not reach (issue 34's goal: <= 2% on the headline metric
// at the default sampling rate; docs/monitors.md "Overhead, measured").
//
// The anchor is one iteration of pft's work for one client with no monitor:
// mmap SIZE of anonymous memory, write one byte to each 4 KiB page, munmap.
// Each configuration wraps the same work the way the runner wraps a
// measured iteration (harness/run/runner.cpp): MonitorSet::read() before,
// start_profile(), the faults, stop_profile(), read() after, deltas(),
// take_profile() (symbolizing and folding the iteration's stacks); vmstat
// and cpu are the runner's MonitorSnapshot (take_snapshot() before and
// after, monitor_deltas()). The MonitorSet is opened on this thread before
// the round's iterations, as the runner opens it before the workload, so
// perf-stat counts and perf-profile samples the faults themselves: the
// kernel-side cost of counting and sampling is inside the timing.
//
// Rounds interleave every configuration (order rotated per round) so a slow
// second of the machine falls on all of them. Per configuration the table
// gives, for wall time and for the process's CPU time (every thread, the
// profiler's drain thread included), the Amean per iteration, the overhead
// (mean / anchor's mean - 1, in %) with its 95% BCa bootstrap interval
// (stats::bca_ratio_ci, the statistics module's), and the goal: "met" when
// the interval's upper end is <= +2%, "missed" when its lower end is above
// +2%, "unsure" otherwise.
//
//   monitor_cost_bench [--rounds N (40)] [--size MiB (128)]
// Root gives perf-profile its kernel frames and perf-stat its kernel counts
// (without root they count user space only, and the table says so).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "results/stats/bootstrap.h"
#include "workloads/sys/monitor_set.h"
#include "workloads/sys/monitors.h"

namespace {

using namespace nightjar;

// One iteration of pft's fault loop for one client: `bytes` of anonymous
// memory, one write per 4 KiB page, unmapped again. Exits on mmap failure.
void fault_region(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("monitor_cost_bench: mmap");
    std::exit(1);
  }
  auto* c = static_cast<volatile char*>(p);
  for (std::size_t off = 0; off < bytes; off += 4096) c[off] = 1;
  munmap(p, bytes);
}

struct Config {
  std::string name;              // "none" (the anchor), a monitor, "default", "all"
  std::vector<std::string> sel;  // the selection given to MonitorSet
  bool snapshot = false;         // vmstat/cpu: the runner's MonitorSnapshot
  std::vector<double> seconds;   // wall time, one per iteration
  std::vector<double> cpu;       // the process's CPU time (every thread), one per iteration
  std::string unavailable;       // what MonitorSet could not open
};

// The CPU time of every thread of this process (the profiler's drain
// thread included), in seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void timed_iteration(Config& c, MonitorSet* set, std::size_t bytes) {
  const double cpu0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  MonitorSnapshot s0, s1;
  MonitorSet::Reading r0, r1;
  if (c.snapshot) s0 = take_snapshot();
  if (set) {
    r0 = set->read();
    set->start_profile();
  }
  fault_region(bytes);
  if (set) {
    set->stop_profile();
    r1 = set->read();
  }
  if (c.snapshot) s1 = take_snapshot();
  std::size_t rows = 0;
  if (c.snapshot) rows += monitor_deltas(s0, s1).size();
  if (set) {
    rows += set->deltas(r0, r1).size();
    if (auto prof = set->take_profile()) rows += prof->stacks.size();
  }
  const auto t1 = std::chrono::steady_clock::now();
  c.cpu.push_back(process_cpu_seconds() - cpu0);
  if (rows == static_cast<std::size_t>(-1)) std::puts("");  // keep the work
  c.seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 40;
  std::size_t mib = 128;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::max(3, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc)
      mib = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else {
      std::fprintf(stderr, "usage: %s [--rounds N] [--size MiB]\n", argv[0]);
      return 2;
    }
  }
  const std::size_t bytes = mib << 20;

  std::vector<Config> configs;
  configs.push_back({"none", {}, false, {}, {}, {}});
  for (const MonitorInfo& m : monitor_catalog()) {
    const std::string name(m.name);
    if (name == "memcg") continue;  // needs a cell's cgroup tree: bench/monitor_overhead.sh
    if (name == "cpu") continue;    // one MonitorSnapshot holds vmstat and cpu
    if (name == "vmstat") {
      configs.push_back({"vmstat+cpu", {}, true, {}, {}, {}});
      continue;
    }
    configs.push_back({name, {name}, false, {}, {}, {}});
  }
  {
    std::vector<std::string> sel;
    for (const std::string& n : default_monitors())
      if (n != "vmstat" && n != "cpu" && n != "memcg") sel.push_back(n);
    configs.push_back({"default", sel, true, {}, {}, {}});
    std::vector<std::string> all;
    for (const MonitorInfo& m : monitor_catalog())
      if (m.name != "vmstat" && m.name != "cpu" && m.name != "memcg") all.emplace_back(m.name);
    configs.push_back({"all", all, true, {}, {}, {}});
  }

  fault_region(bytes);  // warm: the first mmap of a process pays for its page tables
  const int per_round = 3;
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < configs.size(); ++k) {
      Config& c = configs[(k + static_cast<std::size_t>(r)) % configs.size()];
      std::unique_ptr<MonitorSet> set;
      if (!c.sel.empty()) {
        set = std::make_unique<MonitorSet>(c.sel, "/proc", nullptr);
        if (c.unavailable.empty()) {
          for (const std::string& u : set->unavailable())
            c.unavailable += (c.unavailable.empty() ? "" : "; ") + u;
        }
      }
      for (int i = 0; i < per_round; ++i) timed_iteration(c, set.get(), bytes);
    }
  }

  const Config& anchor = configs.front();
  std::printf(
      "monitor_cost_bench: %d rounds x %d iterations, %zu MiB of anonymous faults per iteration "
      "(one pft client), euid %d\n",
      rounds, per_round, mib, static_cast<int>(geteuid()));
  std::printf("%-13s %9s %9s  %-18s %-7s %9s %9s  %-18s %s\n", "monitors", "wall ms", "wall %",
              "95% interval", "goal", "CPU ms", "CPU %", "95% interval", "goal (<= +2%)");
  // Mean in ms, then %change against the anchor with its interval and goal.
  auto column = [&](const std::vector<double>& base, const std::vector<double>& now,
                    std::uint64_t seed) {
    double sum = 0;
    for (double s : now) sum += s;
    char out[96];
    const double ms = 1e3 * sum / static_cast<double>(now.size());
    if (&base == &now) {
      std::snprintf(out, sizeof out, "%9.2f %9s  %-18s %-7s", ms, "anchor", "", "");
      return std::string(out);
    }
    const auto ci = stats::bca_ratio_ci(base, now, MeanKind::arithmetic, seed, 0.05, 4000);
    if (!ci) {
      std::snprintf(out, sizeof out, "%9.2f %9s  %-18s %-7s", ms, "n/a", "", "");
      return std::string(out);
    }
    const double lo = 100 * (ci->lo - 1), hi = 100 * (ci->hi - 1);
    const char* goal = hi <= 2.0 ? "met" : lo > 2.0 ? "missed" : "unsure";
    char interval[48];
    std::snprintf(interval, sizeof interval, "[%+.2f, %+.2f]", lo, hi);
    std::snprintf(out, sizeof out, "%9.2f %+9.2f  %-18s %-7s", ms, 100 * (ci->ratio - 1), interval,
                  goal);
    return std::string(out);
  };
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const Config& c = configs[k];
    std::printf("%-13s %s %s\n", c.name.c_str(), column(anchor.seconds, c.seconds, 2 * k).c_str(),
                column(anchor.cpu, c.cpu, 2 * k + 1).c_str());
  }
  std::vector<std::string> seen;
  for (const Config& c : configs) {
    std::size_t from = 0;
    while (from < c.unavailable.size()) {
      std::size_t to = c.unavailable.find("; ", from);
      if (to == std::string::npos) to = c.unavailable.size();
      std::string u = c.unavailable.substr(from, to - from);
      if (std::find(seen.begin(), seen.end(), u) == seen.end()) {
        std::printf("  unavailable: %s\n", u.c_str());
        seen.push_back(u);
      }
      from = to + 2;
    }
  }
  return 0;
}

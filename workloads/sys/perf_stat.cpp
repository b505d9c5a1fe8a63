// The perf-stat monitor: counters opened with perf_event_open(2), read per
// iteration.
#include "workloads/sys/perf_stat.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "results/model/text.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

int perf_event_open(perf_event_attr* attr) {
  return static_cast<int>(::syscall(SYS_perf_event_open, attr, 0 /* this thread */,
                                    -1 /* any CPU */, -1 /* no group */, PERF_FLAG_FD_CLOEXEC));
}

int open_counter(const PerfEventSpec& e, bool exclude_kernel) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = e.type;
  attr.config = e.config;
  attr.inherit = 1;
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return perf_event_open(&attr);
}

}  // namespace

std::string perf_event_refusal(int err) {
  switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return "no PMU offers this event here (no hardware counters on this CPU or VM): " +
             errno_text(err);
    case EACCES:
    case EPERM:
      return "not permitted (perf_event_paranoid; run as root or with CAP_PERFMON): " +
             errno_text(err);
    case ENOSYS:
      return "the kernel has no perf events (CONFIG_PERF_EVENTS): " + errno_text(err);
    default:
      return "perf_event_open failed: " + errno_text(err);
  }
}

const std::vector<PerfEventSpec>& perf_stat_events() {
  static const std::vector<PerfEventSpec> events = {
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true},
  };
  return events;
}

PerfStat::PerfStat() {
  for (const auto& e : perf_stat_events()) {
    int fd = open_counter(e, false);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
      fd = open_counter(e, true);
      if (fd >= 0) {
        const std::string paranoid = std::string(
            trim(read_small_file("/proc/sys/kernel/perf_event_paranoid").value_or("?")));
        note_ = "user space only (kernel excluded): perf_event_paranoid=" + paranoid;
      }
    }
    if (fd < 0) {
      unavailable_[e.name] = perf_event_refusal(errno);
      continue;
    }
    open_.push_back({e.name, fd});
  }
}

PerfStat::~PerfStat() {
  for (const auto& o : open_) ::close(o.fd);
}

PerfReading PerfStat::read() const {
  PerfReading r;
  for (const auto& o : open_) {
    std::uint64_t v[3];
    ssize_t n;
    do {
      n = ::read(o.fd, v, sizeof v);
    } while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof v)) continue;  // unreadable: no value, never 0
    r.values[o.name] = {v[0], v[1], v[2]};
  }
  return r;
}

std::map<std::string, double> perf_deltas(const PerfReading& before, const PerfReading& after) {
  std::map<std::string, double> out;
  for (const auto& [name, a] : after.values) {
    auto it = before.values.find(name);
    if (it == before.values.end()) continue;
    const auto& b = it->second;
    if (a.count < b.count || a.running <= b.running || a.enabled < b.enabled) continue;
    const double scale =
        static_cast<double>(a.enabled - b.enabled) / static_cast<double>(a.running - b.running);
    const double delta = static_cast<double>(a.count - b.count) * scale;
    if (name == "task-clock")
      out["perf.task-clock_sec"] = delta / 1e9;
    else
      out["perf." + name] = delta;
  }
  auto cycles = out.find("perf.cycles"), instructions = out.find("perf.instructions");
  if (cycles != out.end() && instructions != out.end() && cycles->second > 0)
    out["perf.ipc"] = instructions->second / cycles->second;
  return out;
}

}  // namespace nightjar

// The monitor catalog and the selected extra monitors of one run.
#include "workloads/sys/monitor_set.h"

#include <algorithm>
#include <cerrno>

#include "results/model/text.h"
#include "workloads/sys/cgroup.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

// The /proc files of the file monitors: monitor name, file under the proc root.
struct ProcFile {
  std::string_view monitor, file;
};
constexpr ProcFile kProcFiles[] = {
    {"meminfo", "meminfo"},       {"softirqs", "softirqs"}, {"schedstat", "schedstat"},
    {"interrupts", "interrupts"}, {"net", "net/snmp"},      {"net", "net/netstat"},
};

void parse_file(std::string_view file, std::string_view text, ProcValues& out) {
  if (file == "meminfo") return parse_meminfo(text, out);
  if (file == "softirqs") return parse_per_cpu_table(text, "softirqs", out);
  if (file == "interrupts") return parse_per_cpu_table(text, "interrupts", out);
  if (file == "schedstat") return parse_schedstat(text, out);
  if (file == "net/snmp") return parse_snmp(text, {"Tcp"}, out);
  if (file == "net/netstat") return parse_snmp(text, {"TcpExt"}, out);
}

}  // namespace

const std::vector<MonitorInfo>& monitor_catalog() {
  static const std::vector<MonitorInfo> catalog = {
      {"vmstat", "vmstat.",
       "pgfault, pgmajfault, pswpin, pswpout, workingset_refault_anon/file, pgpgin (KiB), "
       "swpin_zero: events during the iteration, whole machine",
       "/proc/vmstat", "always", "one read of /proc/vmstat", true},
      {"cpu", "cpu.",
       "cpu.util_pct (percent busy, all CPUs), cpu.own_sec (CPU seconds of nightjar's process "
       "tree), cpu.foreign_sec (CPU seconds of everything else)",
       "/proc/stat, /proc/<pid>/stat", "always",
       "one read of /proc/stat and of each descendant's stat", true},
      {"perf-stat", "perf.",
       "perf.task-clock_sec (CPU seconds), perf.context-switches, perf.cpu-migrations, "
       "perf.page-faults (events); with a CPU PMU also perf.cycles, perf.instructions, "
       "perf.ipc, perf.cache-misses, perf.branch-misses: of the workload's processes only",
       "perf_event_open(2), inherited by the threads and processes the workload starts",
       "software events on any kernel with CONFIG_PERF_EVENTS; hardware events only with a "
       "CPU PMU (none in most VMs: recorded as unavailable, not 0); without root or "
       "CAP_PERFMON and perf_event_paranoid >= 2, user space only",
       "8 counters; 16 read(2) per iteration; a software event costs a few ns per event "
       "(bench: docs/monitors.md)",
       true},
      {"memcg", "memcg.",
       "the cell's memory cgroups: memory.events (v2: low, high, max, oom, oom_kill; v1: "
       "failcnt, oom_kill) per level as events, and the top level's memory.stat "
       "(memcg.top.stat.<key>: event keys as deltas, sizes as the level at the end)",
       "cgroupfs memory.events, memory.failcnt, memory.oom_control, memory.stat (v1 or v2, as "
       "the run's tree: workloads/sys/cgroup.h)",
       "jobs with a `cgroup:` section", "two small reads per cgroup level", true},
      {"meminfo", "meminfo.",
       "every /proc/meminfo line at the end of the iteration (kB; HugePages_* in pages)",
       "/proc/meminfo", "always", "one read (about 1.5 KiB)", true},
      {"softirqs", "softirqs.", "softirqs per type, summed over CPUs: events", "/proc/softirqs",
       "always", "one read, 10 lines", true},
      {"schedstat", "schedstat.",
       "scheduler counters summed over CPUs: sched_count, sched_goidle, ttwu_count, "
       "ttwu_local, yld_count (events), run_ns and wait_ns (ns on CPU / runnable waiting), "
       "timeslices",
       "/proc/schedstat", "CONFIG_SCHEDSTATS (absent on kernels without it: unavailable)",
       "one read, one line per CPU", true},
      {"interrupts", "interrupts.",
       "each interrupt line summed over CPUs: events (numeric IRQs named with their device)",
       "/proc/interrupts", "always",
       "one read of CPUs x IRQs columns (tens of KiB on large machines): off by default", false},
      {"net", "tcp.,tcpext.",
       "TCP counters: tcp.* of /proc/net/snmp (events; tcp.CurrEstab a level) and tcpext.* "
       "of /proc/net/netstat (events)",
       "/proc/net/snmp, /proc/net/netstat",
       "always; meaningful for the network workloads (tcp_sendfile)",
       "two reads; about 130 rows: off by default, select it in network jobs", false},
      {"perf-profile", "profile.",
       "call stacks sampled during each measured iteration (kernel and user frames), folded "
       "(\"root;...;leaf\" -> samples) and stored in tables profile and profile_stack, no "
       "rows; compare --why tests each symbol's self and children share of samples",
       "perf_event_open(2) sampling: cycles with a CPU PMU, else cpu-clock, 499 Hz per running "
       "thread, PERF_SAMPLE_CALLCHAIN, per-CPU ring buffers, inherited by the workload's "
       "threads and processes; /proc/kallsyms and nightjar's ELF symbols",
       "CONFIG_PERF_EVENTS; kernel frames need root or CAP_PERFMON (perf_event_paranoid) and "
       "kernel symbols root or CAP_SYSLOG (kptr_restrict): else user frames or [kernel]",
       "one sample (a stack walk of a few us) per 2 ms of a running thread; a drain thread; "
       "symbolizing after each iteration: off by default",
       false},
  };
  return catalog;
}

const MonitorInfo* find_monitor(std::string_view name) {
  for (const auto& m : monitor_catalog())
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> default_monitors() {
  std::vector<std::string> out;
  for (const auto& m : monitor_catalog())
    if (m.on_by_default) out.emplace_back(m.name);
  return out;
}

bool monitor_selected_row(const std::vector<std::string>& selected, std::string_view row) {
  for (const auto& m : monitor_catalog())
    for (const auto& prefix : split(m.rows, ','))
      if (row.starts_with(prefix))
        return std::find(selected.begin(), selected.end(), m.name) != selected.end();
  return true;
}

MonitorSet::MonitorSet(const std::vector<std::string>& selected, std::string proc_root,
                       const CgroupTree* memcg)
    : selected_(selected), proc_(std::move(proc_root)), memcg_(memcg) {
  // The profiler before perf-stat: its drain thread then exists before
  // perf-stat's inherited counters and is not counted by them.
  if (has("perf-profile")) {
    profile_ = std::make_unique<PerfProfiler>();
    for (const auto& why : profile_->unavailable()) unavailable_.push_back("perf-profile: " + why);
    if (!profile_->open()) profile_.reset();
  }
  if (has("perf-stat")) {
    perf_ = std::make_unique<PerfStat>();
    for (const auto& [event, why] : perf_->unavailable())
      unavailable_.push_back("perf-stat: " + event + ": " + why);
    if (!perf_->note().empty()) unavailable_.push_back("perf-stat: " + perf_->note());
  }
  for (const auto& f : kProcFiles) {
    if (!has(f.monitor)) continue;
    int err = 0;
    if (!read_small_file(proc_ + "/" + std::string(f.file), &err, 1))
      unavailable_.push_back(std::string(f.monitor) + ": cannot read " + proc_ + "/" +
                             std::string(f.file) + ": " + errno_text(err));
  }
}

MonitorSet::~MonitorSet() = default;

void MonitorSet::start_profile() {
  if (profile_) profile_->start();
}

void MonitorSet::stop_profile() {
  if (profile_) profile_->stop();
}

std::optional<IterationProfile> MonitorSet::take_profile() {
  if (!profile_) return std::nullopt;
  return profile_->take();
}

bool MonitorSet::has(std::string_view name) const {
  return std::find(selected_.begin(), selected_.end(), name) != selected_.end();
}

MonitorSet::Reading MonitorSet::read() const {
  Reading r;
  for (const auto& f : kProcFiles) {
    if (!has(f.monitor)) continue;
    if (auto text = read_small_file(proc_ + "/" + std::string(f.file)))
      parse_file(f.file, *text, r.proc);
  }
  if (memcg_ && has("memcg"))
    parse_memory_stat(memcg_->memory_stat(memcg_->top()), "memcg.top.stat.", r.proc);
  if (perf_) r.perf = perf_->read();
  return r;
}

std::map<std::string, double> MonitorSet::deltas(const Reading& before,
                                                 const Reading& after) const {
  std::map<std::string, double> out = perf_deltas(before.perf, after.perf);
  for (const auto& [name, v] : after.proc.counters) {
    auto it = before.proc.counters.find(name);
    if (it == before.proc.counters.end() || v < it->second) continue;
    out[name] = static_cast<double>(v - it->second);
  }
  for (const auto& [name, v] : after.proc.levels) out[name] = v;
  return out;
}

}  // namespace nightjar

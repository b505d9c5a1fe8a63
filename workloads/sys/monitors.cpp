// Iteration monitors: /proc/vmstat, /proc/stat and process-tree CPU snapshots
// and their per-iteration deltas.
#include "workloads/sys/monitors.h"

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace nightjar {
namespace {

/// Reads a whole procfs file into `out` with one read(2) into a buffer large
/// enough for it (procfs seq_files fill the whole buffer unless at EOF, so a
/// short read means done); the buffer only grows, and re-reads, when full.
bool read_once(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  if (out.size() < 16384) out.resize(16384);
  std::size_t used = 0;
  for (;;) {
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return false;
    }
    used += static_cast<std::size_t>(n);
    if (n == 0 || used < out.size()) break;
    out.resize(out.size() * 2);
  }
  ::close(fd);
  out.resize(used);
  return true;
}

/// Small-file variant for /proc/<pid>/stat: a stack buffer, one read(2).
/// Returns the number of bytes read, or -1.
ssize_t read_small(const std::string& path, char* buf, std::size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n;
  do {
    n = ::read(fd, buf, size);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  return n;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

/// Splits `s` on blanks into at most `max` fields.
std::size_t split_fields(std::string_view s, std::string_view* out, std::size_t max) {
  std::size_t n = 0, i = 0;
  while (i < s.size() && n < max) {
    while (i < s.size() && is_space(s[i])) ++i;
    std::size_t b = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > b) out[n++] = s.substr(b, i - b);
  }
  return n;
}

template <typename T>
bool parse_num(std::string_view s, T& v) {
  return std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc();
}

void parse_vmstat(std::string_view text, std::map<std::string, std::uint64_t>& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    auto line = text.substr(pos, eol - pos);
    pos = eol + 1;
    std::string_view f[2];
    std::uint64_t v = 0;
    if (split_fields(line, f, 2) == 2 && parse_num(f[1], v)) out.emplace(f[0], v);
  }
}

void parse_proc_stat(std::string_view text, std::vector<std::uint64_t>& out) {
  // The aggregate line is the first one: "cpu  user nice system idle iowait irq softirq steal ..."
  auto eol = text.find('\n');
  auto line = text.substr(0, eol);
  std::string_view f[9];
  std::size_t n = split_fields(line, f, 9);
  if (n < 5 || f[0] != "cpu") return;
  for (std::size_t i = 1; i < n; ++i) {
    std::uint64_t v = 0;
    if (!parse_num(f[i], v)) {
      out.clear();
      return;
    }
    out.push_back(v);
  }
}

/// Fields of /proc/<pid>/stat used here.
struct PidStat {
  long ppid = 0;
  std::uint64_t ticks = 0;  ///< utime + stime + cutime + cstime
};

/// Parses a /proc/<pid>/stat line (proc(5)). comm (field 2) may hold blanks
/// and parentheses, so fields are counted from the last ')'.
bool parse_pid_stat(std::string_view text, PidStat& out) {
  auto close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  // After ')': field 3 (state) is index 0; ppid (4) -> 1; utime (14) -> 11,
  // stime 12, cutime 13, cstime 14.
  std::string_view f[15];
  if (split_fields(text.substr(close + 1), f, 15) < 15) return false;
  if (!parse_num(f[1], out.ppid)) return false;
  std::uint64_t sum = 0;
  for (int i = 11; i <= 14; ++i) {
    long long v = 0;  // cutime/cstime are signed (%ld) in the kernel's format
    if (!parse_num(f[i], v)) return false;
    if (v > 0) sum += static_cast<std::uint64_t>(v);
  }
  out.ticks = sum;
  return true;
}

bool is_pid_name(std::string_view name, long& pid) {
  return !name.empty() && name[0] >= '0' && name[0] <= '9' && parse_num(name, pid);
}

/// Ticks of the live descendants of this process, walking
/// <proc>/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN; one small read per
/// thread of the tree, however many processes the machine runs). nullopt when
/// the kernel does not provide the children files.
std::optional<std::uint64_t> descendant_ticks_via_children(const std::string& proc_root) {
  std::uint64_t sum = 0;
  std::vector<std::string> todo{"self"};
  std::unordered_set<long> seen;
  std::string path, list;
  char buf[4096];
  bool first = true;
  while (!todo.empty()) {
    const std::string task_dir = proc_root + "/" + todo.back() + "/task";
    todo.pop_back();
    DIR* dir = ::opendir(task_dir.c_str());
    if (!dir) {
      if (first) return std::nullopt;
      continue;  // the process exited meanwhile
    }
    while (const dirent* e = ::readdir(dir)) {
      long tid = 0;
      if (!is_pid_name(e->d_name, tid)) continue;
      path.assign(task_dir).append("/").append(e->d_name).append("/children");
      if (!read_once(path, list)) {
        if (first) {
          ::closedir(dir);
          return std::nullopt;
        }
        continue;
      }
      std::string_view rest(list);
      while (!rest.empty()) {
        std::string_view field[1];
        if (split_fields(rest, field, 1) == 0) break;
        rest =
            rest.substr(static_cast<std::size_t>(field[0].data() - rest.data()) + field[0].size());
        long pid = 0;
        if (!parse_num(field[0], pid) || !seen.insert(pid).second) continue;
        path.assign(proc_root).append("/").append(field[0]).append("/stat");
        ssize_t n = read_small(path, buf, sizeof buf);
        PidStat st;
        if (n > 0 && parse_pid_stat(std::string_view(buf, static_cast<std::size_t>(n)), st)) {
          sum += st.ticks;
          todo.emplace_back(field[0]);
        }
      }
    }
    ::closedir(dir);
    first = false;
  }
  return sum;
}

/// Ticks of the live descendants of `self`, scanning every <proc>/[pid]/stat
/// for ppid chains (fallback without the children files; cost grows with the
/// number of processes on the machine).
std::uint64_t descendant_ticks_by_scan(const std::string& proc_root, long self) {
  DIR* dir = ::opendir(proc_root.c_str());
  if (!dir) return 0;
  std::unordered_map<long, std::vector<std::pair<long, std::uint64_t>>> children;
  std::string path;
  char buf[4096];
  while (const dirent* e = ::readdir(dir)) {
    long pid = 0;
    std::string_view name(e->d_name);
    if (!is_pid_name(name, pid) || pid == self) continue;
    path.assign(proc_root).append("/").append(name).append("/stat");
    ssize_t n = read_small(path, buf, sizeof buf);
    PidStat st;
    if (n > 0 && parse_pid_stat(std::string_view(buf, static_cast<std::size_t>(n)), st))
      children[st.ppid].emplace_back(pid, st.ticks);
  }
  ::closedir(dir);

  std::uint64_t sum = 0;
  std::vector<long> todo{self};
  std::unordered_set<long> seen{self};
  while (!todo.empty()) {
    long p = todo.back();
    todo.pop_back();
    auto it = children.find(p);
    if (it == children.end()) continue;
    for (auto [pid, ticks] : it->second) {
      if (!seen.insert(pid).second) continue;
      sum += ticks;
      todo.push_back(pid);
    }
  }
  return sum;
}

double monotonic_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

const std::vector<std::string_view>& monitored_vmstat_counters() {
  static const std::vector<std::string_view> names{"pgfault",
                                                   "pgmajfault",
                                                   "pswpin",
                                                   "pswpout",
                                                   "workingset_refault_anon",
                                                   "workingset_refault_file",
                                                   "pgpgin",
                                                   "swpin_zero"};
  return names;
}

MonitorSnapshot take_snapshot() {
  return take_snapshot("/proc");
}

MonitorSnapshot take_snapshot(const std::string& proc_root) {
  MonitorSnapshot s;
  thread_local std::string buf;
  if (read_once(proc_root + "/vmstat", buf)) parse_vmstat(buf, s.vmstat);
  if (read_once(proc_root + "/stat", buf)) parse_proc_stat(buf, s.cpu_ticks);

  // Self first, then descendants: a child reaped in between is missed once
  // rather than counted twice.
  char small[4096];
  ssize_t n = read_small(proc_root + "/self/stat", small, sizeof small);
  PidStat self;
  if (n > 0 && parse_pid_stat(std::string_view(small, static_cast<std::size_t>(n)), self))
    s.own_cpu_ticks = self.ticks;
  auto tree = descendant_ticks_via_children(proc_root);
  s.own_cpu_ticks +=
      tree ? *tree : descendant_ticks_by_scan(proc_root, static_cast<long>(::getpid()));
  s.wall_seconds = monotonic_seconds();
  return s;
}

std::map<std::string, double> monitor_deltas(const MonitorSnapshot& before,
                                             const MonitorSnapshot& after) {
  std::map<std::string, double> out;
  for (auto name : monitored_vmstat_counters()) {
    auto b = before.vmstat.find(std::string(name));
    auto a = after.vmstat.find(std::string(name));
    if (b == before.vmstat.end() || a == after.vmstat.end() || a->second < b->second) continue;
    out["vmstat." + std::string(name)] = static_cast<double>(a->second - b->second);
  }

  static const double hz = [] {
    long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();

  bool own_ok = after.own_cpu_ticks >= before.own_cpu_ticks;
  double own_sec =
      own_ok ? static_cast<double>(after.own_cpu_ticks - before.own_cpu_ticks) / hz : 0;
  if (own_ok) out["cpu.own_sec"] = own_sec;

  const auto& cb = before.cpu_ticks;
  const auto& ca = after.cpu_ticks;
  bool cpu_ok = cb.size() == ca.size() && cb.size() >= 4;
  for (std::size_t i = 0; cpu_ok && i < cb.size(); ++i) cpu_ok = ca[i] >= cb[i];
  if (cpu_ok) {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < cb.size() && i < 8; ++i) total += ca[i] - cb[i];
    std::uint64_t busy = total - (ca[3] - cb[3]);  // everything but idle (field 4)
    if (total > 0)
      out["cpu.util_pct"] = 100.0 * static_cast<double>(busy) / static_cast<double>(total);
    if (own_ok) out["cpu.foreign_sec"] = std::max(0.0, static_cast<double>(busy) / hz - own_sec);
  }
  return out;
}

}  // namespace nightjar

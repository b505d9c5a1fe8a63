// Helpers of the needs-root tests: why the memory-cgroup tests cannot run
// here, where a process sits on the memory hierarchy, and which nightjar
// cgroup directories exist.
#pragma once

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "results/model/text.h"
#include "workloads/sys/cgroup.h"
#include "workloads/sys/probe.h"
#include "workloads/sys/zram.h"

namespace nightjar::test {

/// True when this CPU is emulated by qemu TCG: /proc/cpuinfo's model name is
/// "QEMU TCG CPU version ..." (what `-cpu max` shows under TCG, as in the
/// cgroup v2 guest of tests/vm/guest-tests.sh), where the same work takes 10
/// to 50 times longer than on the host.
inline bool cpu_emulated() {
  return probe_testbox().cpu_model.rfind("QEMU TCG CPU", 0) == 0;
}

/// The size of a file a test needs only so that a phase lasts long enough
/// to be hit (SIGINT in it) or a run measures something: `native` on a real
/// CPU, `emulated` under TCG (cpu_emulated()), where the smaller file still
/// takes longer and the guest:boot fixture saves minutes (docs/qemu.md "In
/// CI"). Sizes as job files write them ("1G", "128M").
inline std::string test_file_size(const std::string& native, const std::string& emulated) {
  return cpu_emulated() ? emulated : native;
}

/// "" when perf_event_open gives this thread a cpu-clock sampling event
/// with call chains, inherited by its children (what the perf-profile
/// monitor opens, workloads/sys/perf_profile.h), else why not.
inline std::string sampling_event_refused() {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 499;
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  attr.inherit = 1;
  const int fd =
      static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, 0, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return "perf_event_open refused a cpu-clock sampling event: " + errno_text(errno);
  ::close(fd);
  return "";
}

/// "" when memory cgroups can be created here, else why not (the skip reason).
inline std::string memcg_skip_reason() {
  if (geteuid() != 0) return "needs root (cgroup creation); run the needs-root tests as root";
  std::string why = memcg_unavailable_reason(CgroupLayout::detect());
  return why.empty() ? "" : "no usable memory cgroup: " + why;
}

/// "" when the sweep's root tests can run here (root, zswap off, mkswap,
/// a zram device, a memory cgroup: what tmpfs_refault needs), else why not.
inline std::string sweep_skip_reason() {
  if (geteuid() != 0) return "needs root (zram, swapon, mount, cgroups, knobs); run as root";
  std::ifstream zswap_file("/sys/module/zswap/parameters/enabled");
  const int zswap = zswap_file.get();
  if (zswap == 'Y' || zswap == '1') return "zswap is enabled";
  if (find_mkswap().empty()) return "mkswap (util-linux) is not installed";
  if (ZramSelection z = select_zram_device(); !z.choice) return z.reason;
  return memcg_skip_reason();
}

/// The cgroup of `pid` on the memory hierarchy of cgroup `version`, as
/// /proc/PID/cgroup shows it ("/nightjar-x/l1/l2/c0"); "" when not found.
inline std::string memory_cgroup_of(pid_t pid, int version) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = "," + line.substr(a + 1, b - a - 1) + ",";
    if (version == 2 && line.compare(0, 3, "0::") == 0) return line.substr(b + 1);
    if (version == 1 && ctrls.find(",memory,") != std::string::npos) return line.substr(b + 1);
  }
  return "";
}

/// Levels of `path` below `ancestor` (both as /proc/PID/cgroup shows them),
/// or -1 when `path` is not below it.
inline int levels_below(const std::string& path, const std::string& ancestor) {
  if (path.compare(0, ancestor.size() + 1, ancestor + "/") != 0) return -1;
  int n = 0;
  for (std::size_t i = ancestor.size(); i < path.size(); ++i)
    if (path[i] == '/') ++n;
  return n;
}

/// Directories under /sys/fs/cgroup whose name starts with "nightjar" and
/// contains `fragment` (`find /sys/fs/cgroup -name 'nightjar*'`), optionally
/// only those whose name ends with `suffix`: narrowed so that tests of other
/// engineers running at the same time do not interfere.
inline std::vector<std::string> nightjar_cgroups_matching(const std::string& fragment,
                                                          const std::string& suffix = "") {
  std::vector<std::string> found;
  std::error_code ec;
  namespace fs = std::filesystem;
  for (fs::recursive_directory_iterator
           it("/sys/fs/cgroup", fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) break;
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    const std::string name = it->path().filename().string();
    if (name.rfind("nightjar", 0) != 0) continue;
    it.disable_recursion_pending();  // what lies below is part of the same tree
    if (name.find(fragment) == std::string::npos) continue;
    if (!suffix.empty() && (name.size() < suffix.size() ||
                            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0))
      continue;
    found.push_back(it->path().string());
  }
  return found;
}

/// The comm (process name) of `pid`, "" when gone.
inline std::string comm_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string c;
  std::getline(in, c);
  return c;
}

}  // namespace nightjar::test

// Probing the running system: the identity of the kernel and the testbox a
// run executes on (results/model/identity.h), the machine facts of relative
// parameters, the cgroup layout, and the system context (THP, ASLR, governor, cgroups, filesystems,
// load...) that changes the numbers. Everything here only reads the system; nothing is changed.
// Vocabulary (kernel, testbox) as in docs/reference.md "Vocabulary"; the list of
// facts follows docs/reference.md "What makes machines differ".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/identity.h"
#include "results/model/params.h"

namespace nightjar {

/// Probes the running kernel: uname(2), /proc/cmdline, /proc/config.gz or
/// /boot/config-<release>. With `root`, /proc/cmdline, /proc/config.gz and
/// /boot/config-* are read below it (a fake tree for tests); release and
/// version still come from uname(2), and config_source names the path
/// without the prefix. Never throws; unreadable parts stay "".
KernelIdentity probe_kernel_identity(const std::string& root = "");

/// Probes the machine: hostname from uname(2), CPU model, online CPUs and
/// MemTotal from /proc and /sys (below `root` for tests). Never throws.
Testbox probe_testbox(const std::string& root = "");

/// The facts relative parameter values need ("20%mem", "100%cpus"): MemTotal
/// of /proc/meminfo and sysconf(_SC_NPROCESSORS_ONLN). Never throws.
MachineFacts probe_machine_facts();

/// One line of /proc/<pid>/mountinfo (proc(5)), the fields nightjar uses;
/// octal escapes (\040 for a blank) decoded.
struct MountEntry {
  std::string root;           ///< field 4: root of the mount within its filesystem
  std::string mount_point;    ///< field 5
  std::string fstype;         ///< first field after the " - " separator
  std::string source;         ///< the field after fstype ("nightjar-refault", "/dev/sda1")
  std::string super_options;  ///< the last field ("rw,nsdelegate,memory_recursiveprot")
};

/// Parses the text of a mountinfo file; malformed lines are skipped. Never throws.
std::vector<MountEntry> parse_mountinfo(std::string_view text);

/// Where the cgroup hierarchies are mounted, from /proc/self/mountinfo. Shared
/// with the cgroup manager: it decides which memory-controller interface
/// (v1 memory.force_empty or v2 memory.reclaim) a workload can use.
struct CgroupLayout {
  /// none: no cgroup filesystem mounted; v1: only v1 hierarchies carrying a
  /// controller; v2: only cgroup2; hybrid: both (systemd's "hybrid" mode, v2 at
  /// /sys/fs/cgroup/unified). A v1 mount without any controller (only
  /// "name=systemd", as some containers add for compatibility) does not count.
  enum class Version { none, v1, v2, hybrid };

  Version version = Version::none;
  std::string v2_root;               ///< mount point of cgroup2 (e.g. "/sys/fs/cgroup"), "" if none
  std::string v1_memory_root;        ///< mount point of the v1 memory controller
                                     ///< (e.g. "/sys/fs/cgroup/memory"), "" if none
  bool v2_memory_available = false;  ///< "memory" is listed in <v2_root>/cgroup.controllers
  /// Super options of the cgroup2 mount at v2_root ("rw,nsdelegate,memory_recursiveprot");
  /// "" when none is mounted.
  std::string v2_options;

  /// True when the cgroup2 mount has the memory_recursiveprot option (Linux
  /// 5.7+): protection given to a cgroup reaches its descendants without
  /// being written into each of them (Documentation/admin-guide/cgroup-v2.rst).
  bool memory_recursiveprot() const;

  /// Parses `mountinfo_path` (fstype "cgroup2", or "cgroup" whose super options
  /// name the controllers). Where a hierarchy is mounted several times the
  /// mount of its root ("/" in field 4) is preferred, then the first one.
  /// cgroup.controllers is read at `root` + v2_root (`root` = "" for the real
  /// system). Never throws; an unreadable mountinfo gives Version::none.
  static CgroupLayout detect(const std::string& mountinfo_path = "/proc/self/mountinfo",
                             const std::string& root = "");
};

/// "none", "v1", "v2" or "hybrid": the spelling stored as fact cgroup.version.
std::string_view to_string(CgroupLayout::Version v);

/// Facts about the system that change the numbers, recorded with every run as
/// key/value pairs (keys sorted). A fact whose source file is absent is omitted
/// unless stated otherwise:
///
/// | key | source |
/// |---|---|
/// | thp.enabled, thp.defrag, thp.shmem_enabled |
/// /sys/kernel/mm/transparent_hugepage/{enabled,defrag,shmem_enabled}: the bracketed selection,
/// e.g. "madvise" | | aslr | /proc/sys/kernel/randomize_va_space: "0", "1" or "2" | |
/// cpufreq.governor | /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor (cpu0's) | |
/// cpufreq.boost | /sys/devices/system/cpu/cpufreq/boost: "0"/"1" | | cpufreq.no_turbo |
/// /sys/devices/system/cpu/intel_pstate/no_turbo: "0"/"1" (Intel's boost switch) | | cgroup.version
/// | CgroupLayout: "none", "v1", "v2", "hybrid" (always present) | | cgroup.memory | mount point of
/// the memory controller's hierarchy (v1 first, else v2 if "memory" is in its cgroup.controllers);
/// "" when none (always present) | | net.ipv4.tcp_wmem, net.ipv4.tcp_rmem |
/// /proc/sys/net/ipv4/tcp_{wmem,rmem}: "min default max" in bytes, single spaces | | zswap.enabled
/// | /sys/module/zswap/parameters/enabled: "Y"/"N" | | fs.cwd, fs.tmp | filesystem type ("ext4",
/// "tmpfs", "overlay"...) behind the working directory and /tmp: the longest matching mount point
/// of /proc/self/mountinfo; statfs(2) magic as fallback on the real system | | load.avg1 | first
/// field of /proc/loadavg, as printed ("0.15") | | swap.devices | number of active swap areas:
/// lines of /proc/swaps after its header |
/// The fingerprint facts of workloads/sys/fingerprint.h (kernel.compiler, cpu.*, numa.nodes,
/// vuln.*, sysctl.*, cgroup.options, hypervisor, zswap.compressor) are added too.
/// A warning about one fact of the system (SystemContext::fact_warnings).
struct FactWarning {
  std::string fact;  ///< the fact key it is about ("thp.enabled")
  std::string text;  ///< one line saying what is wrong and what to do
  /// True when the fact changes the figures of only the workloads that
  /// declare it (Workload::sensitive_facts: THP "always" changes pft's fault
  /// counts, not tcp_sendfile's throughput); false when it makes every
  /// workload noisy (load, governor).
  bool workload_specific = false;
};

struct SystemContext {
  std::map<std::string, std::string> facts;  ///< key -> value, see the table above

  /// Reads the real system. Never throws, never changes anything.
  static SystemContext probe();
  /// Same, with every path prefixed by `root` (a fake /proc and /sys tree in a
  /// temporary directory, for tests). fs.cwd resolves the real working
  /// directory against the fake mountinfo; fs.tmp resolves "/tmp".
  static SystemContext probe(const std::string& root);

  /// One-line warnings that say what to do, for facts that make results noisy
  /// or non-comparable. `cpus` is the testbox's CPU count (Testbox::cpus).
  /// Warned about: THP enabled "always" (fault counts change); shmem THP
  /// "always"/"within_size"/"force" (tmpfs pages become huge); load.avg1 at or
  /// above max(0.75, 0.05 * cpus), i.e. about one busy foreign process; a
  /// cpufreq governor other than "performance"; zswap enabled (swap-outs stop
  /// in RAM, so pswpin/pswpout do not count them). ASLR, THP defrag, boost and
  /// swap areas are recorded but not warned about: they are the stock setting
  /// almost everywhere and a warning on every run would be ignored.
  std::vector<std::string> warnings(unsigned cpus) const;
  /// The same warnings with the fact each is about and whether it concerns
  /// only the workloads that declare that fact (FactWarning): the runner
  /// stores a workload-specific one only with those workloads' runs.
  std::vector<FactWarning> fact_warnings(unsigned cpus) const;
};

/// The bracketed choice of a sysfs selection file: "always [madvise] never" ->
/// "madvise". Without brackets: the whole text, trimmed.
std::string bracketed_selection(std::string_view text);

}  // namespace nightjar

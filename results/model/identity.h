// Identity of the kernel and the testbox a run executed on, as stored with
// every run (docs/reference.md "Vocabulary": kernel, testbox). Plain records: they
// are probed from the running system by workloads/sys/probe.h, read back from
// the store, or taken from an imported file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nightjar {

/// Identity of the running kernel, stored with every run. The build/commit
/// label the user gives is stored next to it by the runner, not probed here.
struct KernelIdentity {
  std::string release;        ///< uname(2) release, as `uname -r` ("6.1.0-18-amd64")
  std::string version;        ///< uname(2) version, as `uname -v` ("#1 SMP PREEMPT_DYNAMIC ...")
  std::string cmdline;        ///< /proc/cmdline with the trailing newline stripped
  std::string config_hash;    ///< 16 lower-case hex digits: FNV-1a-64 of the kernel config
                              ///< text (decompressed /proc/config.gz, else
                              ///< /boot/config-<release>); "" when neither is readable
  std::string config_source;  ///< "/proc/config.gz", "/boot/config-<release>" or "" (none)
  /// The config text config_hash was computed over ("" when none): stored
  /// once per distinct hash (table kernel_config), read back by `env --diff`
  /// and compare's environment section. Not part of the kernel's identity.
  std::string config_text;
};

/// The machine a run executes on, stored with every run.
struct Testbox {
  std::string hostname;            ///< uname(2) nodename
  std::string cpu_model;           ///< first "model name" of /proc/cpuinfo (x86); else "Hardware",
                                   ///< "cpu model", "cpu" or "uarch" (other architectures); ""
  unsigned cpus = 0;               ///< online CPUs: /sys/devices/system/cpu/online, else
                                   ///< sysconf(_SC_NPROCESSORS_ONLN); at least 1
  std::uint64_t memory_bytes = 0;  ///< MemTotal of /proc/meminfo, in bytes (0 when unreadable)
};

/// Lower-case 16-digit hex of the 64-bit FNV-1a hash of `data` (offset basis
/// 0xcbf29ce484222325, prime 0x100000001b3). Used for config_hash.
std::string fnv1a64_hex(std::string_view data);

}  // namespace nightjar

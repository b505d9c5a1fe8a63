// The fingerprint facts of a run beyond SystemContext's original set
// (docs/environment.md "Facts"): the kernel's compiler, CPU microcode and
// feature flags, NUMA nodes, CPU vulnerability mitigations, a documented list
// of sysctls, the cgroup2 mount options and the hypervisor. Read-only.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// The sysctls recorded with every run as fact "sysctl.<name>" (the value of
/// /proc/sys/<name with '.' as '/'>, blanks squeezed). Sorted by name;
/// docs/environment.md lists them with the reason each changes the numbers.
const std::vector<std::string>& fingerprint_sysctls();

/// The compiler part of /proc/version: the second parenthesised group
/// ("gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40"),
/// nested parentheses kept; "" when the text has no such group.
std::string kernel_compiler(std::string_view proc_version);

/// Adds the fingerprint facts read below `root` ("" = the real system) to
/// `facts`; a fact whose source is absent is left out. Keys and sources:
///
/// | key | source |
/// |---|---|
/// | kernel.compiler | /proc/version (kernel_compiler) |
/// | cpu.microcode | first "microcode" of /proc/cpuinfo |
/// | cpu.flags_hash | fnv1a64_hex of the first "flags" (x86) or "Features" (arm64) line |
/// | numa.nodes | count of /sys/devices/system/node/online |
/// | vuln.NAME | /sys/devices/system/cpu/vulnerabilities/NAME, one per file |
/// | sysctl.NAME | fingerprint_sysctls() |
/// | cgroup.options | `cgroup2_options` when not "" (CgroupLayout::v2_options) |
/// | hypervisor | /sys/hypervisor/type, else "flagged" when the CPU flags name
/// "hypervisor" (with /sys/class/dmi/id/sys_vendor appended when readable), else "none" |
/// | zswap.compressor | /sys/module/zswap/parameters/compressor |
///
/// Never throws.
void add_fingerprint_facts(std::map<std::string, std::string>& facts, const std::string& root,
                           const std::string& cgroup2_options);

}  // namespace nightjar

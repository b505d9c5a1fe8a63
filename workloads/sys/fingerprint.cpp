// The fingerprint facts of a run: workloads/sys/fingerprint.h.
#include "workloads/sys/fingerprint.h"

#include <dirent.h>

#include <algorithm>

#include "results/model/identity.h"
#include "results/model/text.h"
#include "workloads/sys/fs.h"

namespace nightjar {
namespace {

/// The text with every run of blanks, tabs and newlines made one blank, trimmed.
std::string squeeze(std::string_view text) {
  std::string out;
  bool blank = false;
  for (char c : trim(text)) {
    if (c == ' ' || c == '\t' || c == '\n') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

/// The first value of `key` in /proc/cpuinfo's text ("key\t: value"), or "".
std::string cpuinfo_value(std::string_view info, std::string_view key) {
  for (std::string_view line : split(info, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (trim(line.substr(0, colon)) == key) return std::string(trim(line.substr(colon + 1)));
  }
  return {};
}

/// Number of entries of a kernel list such as "0-1,3" (node or CPU lists); 0 if malformed.
unsigned count_list(std::string_view list) {
  unsigned n = 0;
  for (std::string_view part : split(trim(list), ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    try {
      unsigned a = std::stoul(std::string(part.substr(0, dash)));
      unsigned b =
          dash == std::string_view::npos ? a : std::stoul(std::string(part.substr(dash + 1)));
      if (b < a) return 0;
      n += b - a + 1;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return n;
}

}  // namespace

const std::vector<std::string>& fingerprint_sysctls() {
  static const std::vector<std::string> names = {"kernel.nmi_watchdog",
                                                 "kernel.numa_balancing",
                                                 "kernel.perf_event_paranoid",
                                                 "kernel.sched_autogroup_enabled",
                                                 "kernel.timer_migration",
                                                 "net.core.default_qdisc",
                                                 "net.core.rmem_max",
                                                 "net.core.somaxconn",
                                                 "net.core.wmem_max",
                                                 "net.ipv4.tcp_congestion_control",
                                                 "vm.dirty_background_ratio",
                                                 "vm.dirty_ratio",
                                                 "vm.min_free_kbytes",
                                                 "vm.overcommit_memory",
                                                 "vm.swappiness",
                                                 "vm.watermark_scale_factor",
                                                 "vm.zone_reclaim_mode"};
  return names;
}

std::string kernel_compiler(std::string_view text) {
  // "Linux version R (builder) (compiler (..) x, ld (..) y) #1 ...": the
  // second top-level group.
  int group = 0, depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') {
      if (depth++ == 0) begin = i + 1;
    } else if (text[i] == ')' && depth > 0) {
      if (--depth == 0 && ++group == 2) return std::string(text.substr(begin, i - begin));
    }
  }
  return {};
}

void add_fingerprint_facts(std::map<std::string, std::string>& facts, const std::string& root,
                           const std::string& cgroup2_options) {
  if (auto v = read_small_file(root + "/proc/version"))
    if (auto c = kernel_compiler(*v); !c.empty()) facts["kernel.compiler"] = c;

  std::string flags;
  if (auto info = read_small_file(root + "/proc/cpuinfo")) {
    if (auto m = cpuinfo_value(*info, "microcode"); !m.empty()) facts["cpu.microcode"] = m;
    flags = cpuinfo_value(*info, "flags");
    if (flags.empty()) flags = cpuinfo_value(*info, "Features");
    if (!flags.empty()) facts["cpu.flags_hash"] = fnv1a64_hex(squeeze(flags));
  }
  if (auto v = read_small_file(root + "/sys/devices/system/node/online"))
    if (unsigned n = count_list(*v); n > 0) facts["numa.nodes"] = std::to_string(n);

  const std::string vuln = root + "/sys/devices/system/cpu/vulnerabilities";
  if (DIR* d = ::opendir(vuln.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.empty() || name[0] == '.') continue;
      if (auto v = read_small_file(vuln + "/" + name)) facts["vuln." + name] = squeeze(*v);
    }
    ::closedir(d);
  }

  for (const std::string& name : fingerprint_sysctls()) {
    std::string path = name;
    std::replace(path.begin(), path.end(), '.', '/');
    if (auto v = read_small_file(root + "/proc/sys/" + path)) facts["sysctl." + name] = squeeze(*v);
  }
  if (!cgroup2_options.empty()) facts["cgroup.options"] = cgroup2_options;

  if (auto t = read_small_file(root + "/sys/hypervisor/type"); t && !trim(*t).empty()) {
    facts["hypervisor"] = squeeze(*t);
  } else if (!flags.empty()) {
    bool flagged = false;
    for (const std::string& f : split_blanks(flags))
      if (f == "hypervisor") flagged = true;
    std::string value = flagged ? "flagged" : "none";
    if (auto vendor = read_small_file(root + "/sys/class/dmi/id/sys_vendor"); flagged && vendor)
      value += " " + squeeze(*vendor);
    facts["hypervisor"] = value;
  }
  if (auto v = read_small_file(root + "/sys/module/zswap/parameters/compressor"))
    facts["zswap.compressor"] = squeeze(*v);
}

}  // namespace nightjar

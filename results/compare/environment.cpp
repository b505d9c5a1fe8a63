// What else differed between two sides: results/compare/environment.h.
#include "results/compare/environment.h"

#include <fmt/format.h>

#include <algorithm>

#include "results/model/text.h"

namespace nightjar {
namespace {

constexpr const char* kAbsent = "(absent)";

/// The kernel facts that are the kernel's build: intended when the sides are
/// kernels. kernel.cmdline is not among them: it is the boot's, not the
/// kernel's (a `mitigations=off` on one boot is a confounder).
bool is_kernel_build_fact(std::string_view key) {
  return key == "kernel.release" || key == "kernel.version" || key == "kernel.config_hash" ||
         key == "kernel.compiler";
}

std::string joined(const SideFingerprint& side, const std::string& key) {
  auto it = side.find(key);
  if (it == side.end() || it->second.empty()) return kAbsent;
  return join(std::vector<std::string>(it->second.begin(), it->second.end()), " | ");
}

/// The side holds a value of `key` other than "" (the CSV import's unknown).
bool recorded(const SideFingerprint& side, const std::string& key) {
  auto it = side.find(key);
  if (it == side.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [](const std::string& v) { return !v.empty(); });
}

/// The one value of `key` on a side, or "" when it has none or several.
std::string single(const SideFingerprint& side, const std::string& key) {
  auto it = side.find(key);
  return it != side.end() && it->second.size() == 1 ? *it->second.begin() : std::string();
}

}  // namespace

const std::vector<std::string>& environment_fact_names() {
  static const std::vector<std::string> names = {"kernel.release",
                                                 "kernel.version",
                                                 "kernel.config_hash",
                                                 "kernel.compiler",
                                                 "kernel.cmdline",
                                                 "testbox.hostname",
                                                 "testbox.cpu_model",
                                                 "testbox.cpus",
                                                 "cpu.microcode",
                                                 "cpu.flags_hash",
                                                 "numa.nodes",
                                                 "cpufreq.governor",
                                                 "cpufreq.boost",
                                                 "cpufreq.no_turbo",
                                                 "vuln.*",
                                                 "thp.enabled",
                                                 "thp.defrag",
                                                 "thp.shmem_enabled",
                                                 "zswap.enabled",
                                                 "zswap.compressor",
                                                 "swap.devices",
                                                 "aslr",
                                                 "sysctl.*",
                                                 "net.ipv4.tcp_wmem",
                                                 "net.ipv4.tcp_rmem",
                                                 "cgroup.version",
                                                 "cgroup.memory",
                                                 "cgroup.options",
                                                 "hypervisor",
                                                 "vm.accelerator",
                                                 "vm.cpus",
                                                 "vm.memory_mb",
                                                 "fs.cwd",
                                                 "fs.tmp",
                                                 "nightjar.version",

                                                 "knob.*"};
  return names;
}

bool is_environment_fact(std::string_view key) {
  for (const std::string& name : environment_fact_names()) {
    if (name.ends_with(".*")) {
      if (key.size() > name.size() - 1 && key.starts_with(name.substr(0, name.size() - 1)))
        return true;
    } else if (key == name) {
      return true;
    }
  }
  return false;
}

std::string fact_knob_path(std::string_view key) {
  static const std::map<std::string, std::string, std::less<>> files = {
      {"thp.enabled", "/sys/kernel/mm/transparent_hugepage/enabled"},
      {"thp.defrag", "/sys/kernel/mm/transparent_hugepage/defrag"},
      {"thp.shmem_enabled", "/sys/kernel/mm/transparent_hugepage/shmem_enabled"},
      {"aslr", "/proc/sys/kernel/randomize_va_space"},
      {"cpufreq.governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"},
      {"cpufreq.boost", "/sys/devices/system/cpu/cpufreq/boost"},
      {"cpufreq.no_turbo", "/sys/devices/system/cpu/intel_pstate/no_turbo"},
      {"net.ipv4.tcp_wmem", "/proc/sys/net/ipv4/tcp_wmem"},
      {"net.ipv4.tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem"},
      {"zswap.enabled", "/sys/module/zswap/parameters/enabled"},
      {"zswap.compressor", "/sys/module/zswap/parameters/compressor"}};
  if (auto it = files.find(key); it != files.end()) return it->second;
  if (key.starts_with("sysctl.") && key.size() > 7) {
    std::string path = "/proc/sys/" + std::string(key.substr(7));
    std::replace(path.begin() + 10, path.end(), '.', '/');
    return path;
  }
  return {};
}

SideFingerprint side_fingerprint(const RunReader& store, const std::vector<std::int64_t>& run_ids) {
  SideFingerprint out;
  for (const std::int64_t id : run_ids)
    for (auto& [key, value] : store.run_fingerprint(id))
      if (is_environment_fact(key)) out[key].insert(value);
  return out;
}

std::map<std::string, std::string> parse_kconfig(std::string_view text) {
  std::map<std::string, std::string> out;
  constexpr std::string_view kNotSet = " is not set";
  for (const std::string& raw : split(text, '\n')) {
    std::string_view line = trim(raw);
    if (line.starts_with("CONFIG_")) {
      auto eq = line.find('=');
      if (eq == std::string_view::npos) continue;
      out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    } else if (line.starts_with("# CONFIG_") && line.ends_with(kNotSet)) {
      out[std::string(line.substr(2, line.size() - 2 - kNotSet.size()))] = "n";
    }
  }
  return out;
}

KconfigDiff diff_kconfig(std::string_view before, std::string_view after) {
  const auto a = parse_kconfig(before), b = parse_kconfig(after);
  KconfigDiff d;
  for (const auto& [option, value] : a) {
    auto it = b.find(option);
    if (it == b.end())
      d.removed.push_back({option, value, ""});
    else if (it->second != value)
      d.changed.push_back({option, value, it->second});
  }
  for (const auto& [option, value] : b)
    if (!a.count(option)) d.added.push_back({option, "", value});
  return d;
}

std::vector<std::string> EnvironmentDiff::confounders() const {
  std::vector<std::string> out;
  for (const auto& f : facts)
    if (f.confounder()) out.push_back(f.key);
  return out;
}

EnvironmentDiff diff_fingerprints(const SideFingerprint& base, const SideFingerprint& now,
                                  const EnvironmentPolicy& policy) {
  std::set<std::string> keys;
  for (const auto& [k, _] : base) keys.insert(k);
  for (const auto& [k, _] : now) keys.insert(k);
  auto knob_on_a_side = [&](const std::string& path) {
    const std::string knob = "knob." + path;
    return base.count(knob) > 0 || now.count(knob) > 0;
  };
  EnvironmentDiff d;
  for (const std::string& key : keys) {
    FactDifference f{key, joined(base, key), joined(now, key)};
    if (f.base == f.now) continue;
    // A fact one side did not record (runs of an older nightjar, or imported
    // from a CSV or a bundle without it) is unknown there, not different.
    if (!key.starts_with("knob.") && (!recorded(base, key) || !recorded(now, key))) {
      d.unrecorded.push_back(key);
      continue;
    }
    const std::string path = fact_knob_path(key);
    f.intended = key.starts_with("knob.") || (!path.empty() && knob_on_a_side(path)) ||
                 (policy.kernels_intended && is_kernel_build_fact(key));
    f.accepted = policy.accepted.count(key) > 0;
    d.facts.push_back(std::move(f));
  }
  // Facts the kernel changes itself when an intended one changes: turning THP
  // on or off recomputes vm.min_free_kbytes (mm/khugepaged.c:
  // start_stop_khugepaged() calls set_recommended_min_free_kbytes()), so a
  // THP variant moves it too (measured here: never 19832, madvise 67584);
  // and another kernel computes its own at boot (mm/page_alloc.c
  // init_per_zone_wmark_min(), raised by khugepaged only where THP is built
  // in and enabled: a Debian generic guest 45056, its PREEMPT_RT sibling,
  // which has no THP, 3925).
  static const std::multimap<std::string, std::string> implied = {
      {"sysctl.vm.min_free_kbytes", "thp.enabled"},
      {"sysctl.vm.min_free_kbytes", "kernel.config_hash"},
      {"sysctl.vm.min_free_kbytes", "kernel.release"}};
  for (auto& f : d.facts) {
    if (f.intended) continue;
    const auto [from, to] = implied.equal_range(f.key);
    for (auto it = from; it != to; ++it)
      for (const auto& cause : d.facts)
        if (cause.key == it->second && cause.intended) f.intended = true;
  }
  return d;
}

EnvironmentDiff diff_sides(const RunReader& store, const LoadedSide& base, const LoadedSide& now,
                           const std::set<std::string>& accepted) {
  const SideFingerprint a = side_fingerprint(store, base.run_ids);
  const SideFingerprint b = side_fingerprint(store, now.run_ids);
  EnvironmentPolicy policy;
  policy.kernels_intended = !base.selector.kernel.empty() || !now.selector.kernel.empty();
  policy.accepted = accepted;
  EnvironmentDiff d = diff_fingerprints(a, b, policy);
  d.base_name = base.selector.text;
  d.now_name = now.selector.text;
  const std::string ha = single(a, "kernel.config_hash"), hb = single(b, "kernel.config_hash");
  if (!ha.empty() && !hb.empty() && ha != hb) {
    auto ta = store.kernel_config(ha), tb = store.kernel_config(hb);
    if (ta && tb)
      d.kconfig = diff_kconfig(*ta, *tb);
    else
      d.kconfig_note = fmt::format(
          "the kernel config of {} is not stored (runs imported, or stored "
          "before schema version 8)",
          !ta ? base.selector.text : now.selector.text);
  }
  return d;
}

std::optional<std::string> confounder_warning(const EnvironmentDiff& diff) {
  std::vector<std::string> parts;
  for (const auto& f : diff.facts)
    if (f.confounder()) parts.push_back(fmt::format("{} ({} -> {})", f.key, f.base, f.now));
  if (parts.empty()) return std::nullopt;
  return fmt::format(
      "environment: {} differs from {} in {}, not by intent: a confounder; `--accept-env KEY` if "
      "known (docs/environment.md)",
      diff.now_name, diff.base_name, join(parts, ", "));
}

}  // namespace nightjar

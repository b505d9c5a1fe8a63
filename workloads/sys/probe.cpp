// Kernel and testbox identity, system context facts and their warnings, and
// cgroup layout detection. Read-only: nothing here changes the system.
#include "workloads/sys/probe.h"
#include "workloads/sys/fingerprint.h"
#include "workloads/sys/fs.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "results/model/text.h"

namespace nightjar {
namespace {

std::optional<std::string> read_trimmed(const std::string& path) {
  auto s = read_small_file(path);
  if (!s) return std::nullopt;
  return std::string(trim(*s));
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    std::size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::vector<std::string_view> split_char(std::string_view s, char c) {
  std::vector<std::string_view> out;
  std::size_t b = 0;
  for (;;) {
    auto e = s.find(c, b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}

/// mountinfo escapes space, tab, newline and backslash as \ooo (octal).
std::string unescape_mount_field(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto oct = [](char c) { return c >= '0' && c <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size()) {
      if (oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
        out.push_back(
            static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

/// Does this v1 super option name a controller (not a mount flag or "name=")?
bool is_v1_controller_option(std::string_view opt) {
  static constexpr std::string_view flags[] = {
      "rw", "ro", "none", "noprefix", "clone_children", "xattr", "cpuset_v2_mode", "favordynmods"};
  if (opt.empty() || opt.find('=') != std::string_view::npos) return false;
  return std::find(std::begin(flags), std::end(flags), opt) == std::end(flags);
}

/// Filesystem type of the mount holding absolute path `path`: the longest
/// mount point that is a path prefix of it; of equal ones the later (on top).
std::string fstype_for(const std::vector<MountEntry>& mounts, const std::string& path) {
  const MountEntry* best = nullptr;
  for (const auto& m : mounts) {
    const auto& mp = m.mount_point;
    bool covers =
        mp == "/" || path == mp ||
        (path.size() > mp.size() && path.compare(0, mp.size(), mp) == 0 && path[mp.size()] == '/');
    if (covers && (!best || mp.size() >= best->mount_point.size())) best = &m;
  }
  return best ? best->fstype : std::string();
}

/// Fallback when mountinfo is unreadable: statfs(2) magic of `path`.
std::string fstype_from_statfs(const std::string& path) {
  struct statfs st {};
  if (::statfs(path.c_str(), &st) != 0) return {};
  struct Magic {
    unsigned long magic;
    const char* name;
  };
  static constexpr Magic table[] = {
      {0xEF53, "ext2/3/4"},    {0x01021994, "tmpfs"}, {0x58465342, "xfs"},  {0x9123683E, "btrfs"},
      {0x794c7630, "overlay"}, {0x6969, "nfs"},       {0xF2F52010, "f2fs"}, {0x2fc12fc1, "zfs"},
      {0x858458f6, "ramfs"},   {0x65735546, "fuse"},  {0x01021997, "9p"}};
  auto magic = static_cast<unsigned long>(st.f_type) & 0xffffffffUL;
  for (const auto& m : table)
    if (m.magic == magic) return m.name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%lx", magic);
  return buf;
}

/// Decompressed content of a gzip file (zlib also passes plain files through).
std::optional<std::string> read_gzip(const std::string& path) {
  gzFile f = ::gzopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    int n = ::gzread(f, buf, sizeof buf);
    if (n < 0) {
      ::gzclose(f);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::gzclose(f);
  return out;
}

/// Number of CPUs in a kernel CPU list such as "0-3,8,10-11"; 0 if malformed.
unsigned count_cpu_list(std::string_view list) {
  unsigned count = 0;
  const std::string text(trim(list));
  for (auto part : split_char(text, ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    unsigned a = 0, b = 0;
    auto first = part.substr(0, dash);
    if (std::from_chars(first.data(), first.data() + first.size(), a).ec != std::errc()) return 0;
    b = a;
    if (dash != std::string_view::npos) {
      auto second = part.substr(dash + 1);
      if (std::from_chars(second.data(), second.data() + second.size(), b).ec != std::errc() ||
          b < a)
        return 0;
    }
    count += b - a + 1;
  }
  return count;
}

}  // namespace

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountEntry> mounts;
  for (auto line : split_char(text, '\n')) {
    auto f = split_ws(line);
    if (f.size() < 7) continue;
    // Fields 7.. are optional tags, terminated by a lone "-".
    std::size_t sep = 6;
    while (sep < f.size() && f[sep] != "-") ++sep;
    if (sep + 1 >= f.size()) continue;
    MountEntry m;
    m.root = unescape_mount_field(f[3]);
    m.mount_point = unescape_mount_field(f[4]);
    m.fstype = std::string(f[sep + 1]);
    if (sep + 2 < f.size()) m.source = unescape_mount_field(f[sep + 2]);
    if (sep + 3 < f.size()) m.super_options = std::string(f[sep + 3]);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::string bracketed_selection(std::string_view text) {
  auto open = text.find('[');
  if (open != std::string_view::npos) {
    auto close = text.find(']', open + 1);
    if (close != std::string_view::npos)
      return std::string(trim(text.substr(open + 1, close - open - 1)));
  }
  return std::string(trim(text));
}

// ---------------------------------------------------------------- kernel

KernelIdentity probe_kernel_identity(const std::string& root) {
  KernelIdentity k;
  struct utsname u {};
  if (::uname(&u) == 0) {
    k.release = u.release;
    k.version = u.version;
  }
  if (auto c = read_small_file(root + "/proc/cmdline")) {
    while (!c->empty() && (c->back() == '\n' || c->back() == '\0')) c->pop_back();
    k.cmdline = *c;
  }
  std::vector<std::string> sources{"/proc/config.gz"};
  if (!k.release.empty()) sources.push_back("/boot/config-" + k.release);
  for (const auto& src : sources) {
    auto text = read_gzip(root + src);
    if (text && !text->empty()) {
      k.config_hash = fnv1a64_hex(*text);
      k.config_source = src;
      k.config_text = std::move(*text);
      break;
    }
  }
  return k;
}

// ---------------------------------------------------------------- testbox

Testbox probe_testbox(const std::string& root) {
  Testbox t;
  struct utsname u {};
  if (::uname(&u) == 0) t.hostname = u.nodename;

  if (auto info = read_small_file(root + "/proc/cpuinfo")) {
    std::map<std::string, std::string> first;  // first value of each key
    for (auto line : split_char(*info, '\n')) {
      auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string key(trim(line.substr(0, colon)));
      if (!first.count(key)) first[key] = std::string(trim(line.substr(colon + 1)));
    }
    for (const char* key : {"model name", "Hardware", "cpu model", "cpu", "uarch"}) {
      auto it = first.find(key);
      if (it != first.end() && !it->second.empty()) {
        t.cpu_model = it->second;
        break;
      }
    }
    if (t.cpu_model.empty() && first.count("CPU implementer") && first.count("CPU part"))
      t.cpu_model = "arm64 implementer " + first["CPU implementer"] + " part " + first["CPU part"];
  }

  if (auto online = read_small_file(root + "/sys/devices/system/cpu/online"))
    t.cpus = count_cpu_list(*online);
  if (t.cpus == 0 && root.empty()) {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) t.cpus = static_cast<unsigned>(n);
  }
  if (t.cpus == 0) t.cpus = 1;

  if (auto mem = read_small_file(root + "/proc/meminfo")) {
    for (auto line : split_char(*mem, '\n')) {
      if (line.rfind("MemTotal:", 0) != 0) continue;
      auto f = split_ws(line.substr(9));
      std::uint64_t kb = 0;
      if (!f.empty() &&
          std::from_chars(f[0].data(), f[0].data() + f[0].size(), kb).ec == std::errc())
        t.memory_bytes = kb * 1024;
      break;
    }
  }
  return t;
}

MachineFacts probe_machine_facts() {
  MachineFacts facts;
  facts.mem_total_bytes = probe_testbox().memory_bytes;
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  facts.cpus = n > 0 ? static_cast<unsigned>(n) : 1;
  return facts;
}

// ---------------------------------------------------------------- cgroups

std::string_view to_string(CgroupLayout::Version v) {
  switch (v) {
    case CgroupLayout::Version::none:
      return "none";
    case CgroupLayout::Version::v1:
      return "v1";
    case CgroupLayout::Version::v2:
      return "v2";
    case CgroupLayout::Version::hybrid:
      return "hybrid";
  }
  return "none";
}

CgroupLayout CgroupLayout::detect(const std::string& mountinfo_path, const std::string& root) {
  CgroupLayout layout;
  auto text = read_small_file(mountinfo_path);
  if (!text) return layout;

  bool have_v1 = false, have_v2 = false;
  bool v2_is_root = false, memory_is_root = false;
  for (const auto& m : parse_mountinfo(*text)) {
    bool whole = m.root == "/";
    if (m.fstype == "cgroup2") {
      have_v2 = true;
      if (layout.v2_root.empty() || (whole && !v2_is_root)) {
        layout.v2_root = m.mount_point;
        layout.v2_options = m.super_options;
        v2_is_root = whole;
      }
    } else if (m.fstype == "cgroup") {
      bool controller = false, memory = false;
      for (auto opt : split_char(m.super_options, ',')) {
        if (is_v1_controller_option(opt)) controller = true;
        if (opt == "memory") memory = true;
      }
      if (controller) have_v1 = true;
      if (memory && (layout.v1_memory_root.empty() || (whole && !memory_is_root))) {
        layout.v1_memory_root = m.mount_point;
        memory_is_root = whole;
      }
    }
  }
  layout.version = have_v1 && have_v2 ? Version::hybrid
                   : have_v1          ? Version::v1
                   : have_v2          ? Version::v2
                                      : Version::none;
  if (!layout.v2_root.empty()) {
    if (auto ctl = read_small_file(root + layout.v2_root + "/cgroup.controllers")) {
      for (auto c : split_ws(*ctl))
        if (c == "memory") layout.v2_memory_available = true;
    }
  }
  return layout;
}

bool CgroupLayout::memory_recursiveprot() const {
  for (auto opt : split_char(v2_options, ','))
    if (opt == "memory_recursiveprot") return true;
  return false;
}

// ---------------------------------------------------------------- context

SystemContext SystemContext::probe() {
  return probe("");
}

SystemContext SystemContext::probe(const std::string& root) {
  SystemContext ctx;
  auto& f = ctx.facts;
  auto put = [&](const std::string& key, const std::string& path) {
    if (auto v = read_trimmed(root + path)) f[key] = *v;
  };

  const std::string thp = "/sys/kernel/mm/transparent_hugepage/";
  for (const char* knob : {"enabled", "defrag", "shmem_enabled"}) {
    if (auto v = read_small_file(root + thp + knob))
      f[std::string("thp.") + knob] = bracketed_selection(*v);
  }
  put("aslr", "/proc/sys/kernel/randomize_va_space");
  put("cpufreq.governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
  put("cpufreq.boost", "/sys/devices/system/cpu/cpufreq/boost");
  put("cpufreq.no_turbo", "/sys/devices/system/cpu/intel_pstate/no_turbo");
  if (auto it = f.find("cpufreq.governor"); it != f.end() && it->second.empty()) f.erase(it);

  const std::string mountinfo_path = root + "/proc/self/mountinfo";
  auto layout = CgroupLayout::detect(mountinfo_path, root);
  f["cgroup.version"] = std::string(to_string(layout.version));
  f["cgroup.memory"] = !layout.v1_memory_root.empty() ? layout.v1_memory_root
                       : layout.v2_memory_available   ? layout.v2_root
                                                      : std::string();
  add_fingerprint_facts(f, root, layout.v2_options);

  for (const char* knob : {"tcp_wmem", "tcp_rmem"}) {
    if (auto v = read_small_file(root + "/proc/sys/net/ipv4/" + knob)) {
      std::string joined;
      for (auto w : split_ws(*v)) joined += (joined.empty() ? "" : " ") + std::string(w);
      f[std::string("net.ipv4.") + knob] = joined;
    }
  }
  put("zswap.enabled", "/sys/module/zswap/parameters/enabled");

  std::string cwd = "/";
  if (char buf[PATH_MAX]; ::getcwd(buf, sizeof buf)) cwd = buf;
  std::string tmp = "/tmp";
  if (root.empty()) {
    if (char buf[PATH_MAX]; ::realpath("/tmp", buf)) tmp = buf;
  }
  if (auto mi = read_small_file(mountinfo_path)) {
    auto mounts = parse_mountinfo(*mi);
    if (auto t = fstype_for(mounts, cwd); !t.empty()) f["fs.cwd"] = t;
    if (auto t = fstype_for(mounts, tmp); !t.empty()) f["fs.tmp"] = t;
  } else if (root.empty()) {
    if (auto t = fstype_from_statfs(cwd); !t.empty()) f["fs.cwd"] = t;
    if (auto t = fstype_from_statfs(tmp); !t.empty()) f["fs.tmp"] = t;
  }

  if (auto v = read_small_file(root + "/proc/loadavg")) {
    auto w = split_ws(*v);
    if (!w.empty()) f["load.avg1"] = std::string(w[0]);
  }
  if (auto v = read_small_file(root + "/proc/swaps")) {
    unsigned n = 0;
    auto lines = split_char(*v, '\n');
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (!trim(lines[i]).empty()) ++n;
    f["swap.devices"] = std::to_string(n);
  }
  return ctx;
}

std::vector<FactWarning> SystemContext::fact_warnings(unsigned cpus) const {
  std::vector<FactWarning> out;
  auto get = [&](const char* key) -> std::string {
    auto it = facts.find(key);
    return it == facts.end() ? std::string() : it->second;
  };

  if (get("thp.enabled") == "always")
    out.push_back(FactWarning{
        "thp.enabled",
        "THP is 'always': page faults may map huge pages, so pft's fault counts and rates "
        "change; set /sys/kernel/mm/transparent_hugepage/enabled to never (or madvise) or "
        "record it as a variant",
        true});

  if (auto s = get("thp.shmem_enabled"); s == "always" || s == "within_size" || s == "force")
    out.push_back(
        FactWarning{"thp.shmem_enabled",
                    "shmem THP is '" + s +
                        "': tmpfs pages may be huge, which changes swap-out and refault figures "
                        "(tmpfs_refault); set /sys/kernel/mm/transparent_hugepage/shmem_enabled to "
                        "never or record it as a variant",
                    true});

  if (auto load = get("load.avg1"); !load.empty()) {
    double l = 0;
    auto r = std::from_chars(load.data(), load.data() + load.size(), l);
    double threshold = std::max(0.75, 0.05 * cpus);
    if (r.ec == std::errc() && l >= threshold)
      out.push_back(
          {"load.avg1",
           "load average " + load + " on " + std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs") +
               ": another process is busy; results will be noisy \u2014 stop it or expect "
               "high CoeffVar (cpu.foreign_sec shows it per iteration)"});
  }

  if (auto g = get("cpufreq.governor"); !g.empty() && g != "performance")
    out.push_back({"cpufreq.governor",
                   "CPU governor is '" + g +
                       "': set 'performance' for stable numbers (cpupower frequency-set -g "
                       "performance)"});

  if (auto z = get("zswap.enabled"); z == "Y" || z == "y" || z == "1")
    out.push_back(FactWarning{
        "zswap.enabled",
        "zswap is enabled: swapped-out pages stay compressed in RAM and never reach the swap "
        "device, so pswpin/pswpout miss them (tmpfs_refault); echo N > "
        "/sys/module/zswap/parameters/enabled or record it as a variant",
        true});
  return out;
}

std::vector<std::string> SystemContext::warnings(unsigned cpus) const {
  std::vector<std::string> out;
  for (auto& w : fact_warnings(cpus)) out.push_back(std::move(w.text));
  return out;
}

}  // namespace nightjar

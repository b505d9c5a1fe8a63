// The cgroup manager (workloads/sys/cgroup.h): nightjar-owned memory cgroups on v2
// or v1, created under one parent and removed on every exit path.
//
// Rules kept here (DESIGN.md "The system is left as found"):
//  - only directories this object created are written to or removed; the
//    owned parent must not exist beforehand (EEXIST is an error, never reuse);
//  - nothing outside the owned parent is changed: on v2 the hierarchy root
//    must already delegate the memory controller (cgroup.subtree_control),
//    else the reason is reported, not fixed;
//  - teardown moves leftover processes to the cgroup nightjar itself runs in,
//    kills only nightjar's own descendants that cannot be moved, and removes
//    the directories deepest first, retrying briefly on EBUSY.
//
// A non-empty fs_prefix selects a simulated cgroupfs (a plain directory tree
// in tests): knob writes create the file the kernel would have provided, and
// teardown unlinks the regular files of each created directory before rmdir.
#include "workloads/sys/cgroup.h"
#include "workloads/sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "results/model/text.h"
#include "workloads/sys/probe.h"

namespace nightjar {
namespace {

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w)
    if (w == word || w == "+" + word) return true;
  return false;
}

/// One knob known to nightjar: its name on v2 and on v1 ("" = none there),
/// and whether its value is a byte size (parsed "64M" -> bytes, "max").
struct KnobInfo {
  const char* v2;
  const char* v1;
  bool size;
};

// The equivalences are the kernel's own (Documentation/admin-guide/cgroup-v2.rst
// "Deprecated v1 Core Features" and cgroup-v1/memory.rst): memory.max is the
// hard limit of v1 memory.limit_in_bytes, memory.low the best-effort
// protection v1 approximates with memory.soft_limit_in_bytes. memory.min and
// memory.high have no v1 counterpart; memsw (memory+swap) is not memory.swap.max.
constexpr KnobInfo kKnobs[] = {
    {"memory.max", "memory.limit_in_bytes", true},
    {"memory.low", "memory.soft_limit_in_bytes", true},
    {"memory.min", "", true},
    {"memory.high", "", true},
    {"memory.swap.max", "", true},
    {"memory.swap.high", "", true},
    {"", "memory.memsw.limit_in_bytes", true},
    {"", "memory.swappiness", false},
    {"memory.oom.group", "", false},
};

const KnobInfo* find_knob(const std::string& name) {
  for (const auto& k : kKnobs)
    if (name == k.v2 || name == k.v1) return &k;
  return nullptr;
}

std::string known_knobs() {
  std::string s;
  for (const auto& k : kKnobs)
    for (const char* n : {k.v2, k.v1})
      if (*n) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// The value to write for a knob: sizes as bytes ("max" kept on v2, -1 on v1).
/// Throws std::invalid_argument with what to write instead.
std::string knob_value(const KnobInfo& k, const std::string& value, int version) {
  std::string v(trim(value));
  if (!k.size) {
    if (v.empty()) throw std::invalid_argument("empty value; write a number");
    for (char c : v)
      if (!std::isdigit(static_cast<unsigned char>(c)))
        throw std::invalid_argument("'" + v + "' is not a whole number; write for example 60");
    return v;
  }
  if (v == "max") return version == 1 ? "-1" : "max";
  ParamDescriptor desc{"value", ParamType::size, "bytes", "", "", {}, 0.0, std::nullopt};
  try {
    ParamValue p = parse_param(desc, v, probe_machine_facts());
    return std::to_string(static_cast<std::uint64_t>(p.number));
  } catch (const ParamError& e) {
    throw std::invalid_argument("'" + v + "' is not a size (" + e.message +
                                "); write for example 64M, 1G or max");
  }
}

/// The cgroup nightjar itself runs in on the hierarchy of `version`, from
/// /proc/self/cgroup ("4:memory:/a/b" on v1, "0::/a/b" on v2); "/" if unknown.
std::string own_cgroup(int version) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':');
    auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (version == 2 && line.compare(0, a, "0") == 0 && ctrls.empty()) return path;
    if (version == 1) {
      std::istringstream cs(ctrls);
      std::string c;
      while (std::getline(cs, c, ','))
        if (c == "memory") return path;
    }
  }
  return "/";
}

/// The parent pid of `pid` from /proc/PID/stat, or -1.
pid_t parent_of(pid_t pid) {
  auto text = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return -1;
  auto close = text->rfind(')');  // comm may hold blanks and parentheses
  if (close == std::string::npos) return -1;
  std::istringstream in(text->substr(close + 1));
  std::string state;
  pid_t ppid = -1;
  in >> state >> ppid;
  return ppid;
}

/// True when `pid` descends from this process (walks the ppid chain).
bool is_own_descendant(pid_t pid) {
  const pid_t self = ::getpid();
  for (int hops = 0; pid > 1 && hops < 4096; ++hops) {
    pid_t pp = parent_of(pid);
    if (pp == self) return true;
    if (pp <= 1) return false;
    pid = pp;
  }
  return false;
}

std::vector<pid_t> read_pids(const std::string& procs_file) {
  std::vector<pid_t> pids;
  std::ifstream in(procs_file);
  long p;
  while (in >> p)
    if (p > 0) pids.push_back(static_cast<pid_t>(p));
  return pids;
}

}  // namespace

std::optional<std::string> translate_knob(const std::string& knob, int version) {
  const KnobInfo* k = find_knob(knob);
  if (!k) return std::nullopt;
  const char* name = version == 1 ? k->v1 : k->v2;
  if (!*name) return std::nullopt;
  return std::string(name);
}

std::string known_cgroup_knobs() {
  return known_knobs();
}

std::optional<std::string> cgroup_knob_problem(const std::string& knob, const std::string& value) {
  const KnobInfo* info = find_knob(knob);
  if (!info) return "unknown knob; known: " + known_knobs();
  try {
    (void)knob_value(*info, value, 2);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::string memcg_unavailable_reason(const CgroupLayout& layout, const std::string& fs_prefix,
                                     bool privileged) {
  std::string root;
  if (layout.v2_memory_available && !layout.v2_root.empty()) {
    root = fs_prefix + layout.v2_root;
    auto ctl = read_small_file(root + "/cgroup.subtree_control");
    if (ctl && !has_word(*ctl, "memory"))
      return "the memory controller is not enabled in " + root +
             "/cgroup.subtree_control (nightjar never changes cgroups it did not create); "
             "enable it with `echo +memory > " +
             root + "/cgroup.subtree_control`";
  } else if (!layout.v1_memory_root.empty()) {
    root = fs_prefix + layout.v1_memory_root;
  } else if (!layout.v2_root.empty()) {
    return "no memory controller: cgroup2 at " + layout.v2_root +
           " does not list memory in cgroup.controllers and no cgroup v1 memory hierarchy is "
           "mounted; boot with the memory controller enabled (cgroup_enable=memory)";
  } else {
    return "no cgroup filesystem is mounted (neither cgroup2 nor the v1 memory hierarchy); "
           "mount one, e.g. `mount -t cgroup2 none /sys/fs/cgroup`";
  }
  if (!privileged && ::access(root.c_str(), W_OK) != 0)
    return "creating cgroups under " + root + " needs root (not writable: " + errno_text(errno) +
           "); run nightjar as root or with sudo";
  return "";
}

std::string memcg_unavailable_reason(const CgroupLayout& layout) {
  return memcg_unavailable_reason(layout, "", ::geteuid() == 0);
}

CgroupTree::CgroupTree(const CgroupLayout& layout, const std::string& tag, const CgroupSpec& spec,
                       int clients, const std::string& fs_prefix)
    : fake_(!fs_prefix.empty()) {
  if (layout.v2_memory_available && !layout.v2_root.empty()) {
    version_ = 2;
    hierarchy_root_ = fs_prefix + layout.v2_root;
  } else if (!layout.v1_memory_root.empty()) {
    version_ = 1;
    hierarchy_root_ = fs_prefix + layout.v1_memory_root;
  } else {
    throw EnvironmentError("cgroup: " + memcg_unavailable_reason(layout, fs_prefix, true));
  }
  if (!spec.enabled() || spec.depth > kMaxCgroupDepth)
    throw UsageError(fmt::format("cgroup: depth {} is outside 1..{}", spec.depth, kMaxCgroupDepth));
  if (clients < 1)
    throw UsageError(fmt::format("cgroup: {} clients; at least 1 is needed for a leaf", clients));
  if (tag.empty() || tag.find('/') != std::string::npos || tag == "." || tag == "..")
    throw UsageError("cgroup: tag '" + tag + "' cannot name a directory");

  // Everything that can be refused is refused before the first mkdir.
  std::vector<std::pair<std::string, std::string>> knobs;
  for (const auto& [knob, value] : spec.top) {
    auto name = translate_knob(knob, version_);
    if (!name)
      throw UsageError(
          fmt::format("cgroup.top.{}: {} on cgroup v{} (this machine's memory controller is at {})",
                      knob, find_knob(knob) ? "has no equivalent" : "is not a known knob", version_,
                      hierarchy_root_));
    try {
      knobs.emplace_back(*name, knob_value(*find_knob(knob), value, version_));
    } catch (const std::invalid_argument& e) {
      throw UsageError("cgroup.top." + knob + ": " + e.what());
    }
  }
  if (version_ == 2) {
    auto ctl = read_small_file(hierarchy_root_ + "/cgroup.subtree_control");
    if (!ctl || !has_word(*ctl, "memory"))
      throw EnvironmentError(
          "cgroup: the memory controller is not enabled in " + hierarchy_root_ +
          "/cgroup.subtree_control, so a cgroup created there has no memory knobs; nightjar "
          "never changes cgroups it did not create: enable it with `echo +memory > " +
          hierarchy_root_ + "/cgroup.subtree_control`");
  }

  try {
    owned_root_ = hierarchy_root_ + "/nightjar-" + tag;
    make_dir(owned_root_);
    if (version_ == 1) {
      // Old kernels default to a flat v1 hierarchy; the protections and
      // limits of the top level only reach the leaves with use_hierarchy=1.
      auto uh = read_small_file(owned_root_ + "/memory.use_hierarchy");
      if (uh && trim(*uh) == "0")
        (void)write_file(owned_root_ + "/memory.use_hierarchy", "1", false);
    }
    std::string dir = owned_root_;
    top_ = owned_root_;
    for (int level = 1; level < spec.depth; ++level) {
      if (version_ == 2) enable_memory(dir);
      dir += "/l" + std::to_string(level);
      make_dir(dir);
      if (level == 1) top_ = dir;
    }
    if (version_ == 2) enable_memory(dir);
    for (const auto& [name, value] : knobs)
      if (int err = write_file(top_ + "/" + name, value, false))
        throw EnvironmentError(fmt::format("cgroup: cannot write '{}' to {}/{}: {}", value, top_,
                                           name, errno_text(err)));
    const int nleaves = spec.per_client ? clients : 1;
    for (int i = 0; i < nleaves; ++i) {
      std::string leaf = dir + (spec.per_client ? "/c" + std::to_string(i) : "/shared");
      make_dir(leaf);
      leaves_.push_back(leaf);
    }
  } catch (...) {
    remove_all();
    throw;
  }
}

CgroupTree::~CgroupTree() {
  remove_all();
}

const std::string& CgroupTree::leaf(int client) const {
  if (leaves_.size() == 1) return leaves_.front();
  if (client < 0 || static_cast<std::size_t>(client) >= leaves_.size())
    throw std::out_of_range(fmt::format("cgroup leaf {} of {}", client, leaves_.size()));
  return leaves_[static_cast<std::size_t>(client)];
}

std::string CgroupTree::relative(const std::string& dir) const {
  if (dir == hierarchy_root_) return "/";
  if (dir.size() > hierarchy_root_.size() &&
      dir.compare(0, hierarchy_root_.size(), hierarchy_root_) == 0 &&
      dir[hierarchy_root_.size()] == '/')
    return dir.substr(hierarchy_root_.size());
  return dir;
}

void CgroupTree::enable_memory(const std::string& dir) {
  if (int err = write_file(dir + "/cgroup.subtree_control", "+memory", false))
    throw EnvironmentError("cgroup: cannot enable the memory controller in " + dir +
                           "/cgroup.subtree_control: " + errno_text(err));
}

void CgroupTree::make_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0) {
    int err = errno;
    if (err == EEXIST)
      throw EnvironmentError("cgroup: " + dir +
                             " already exists; nightjar never reuses a cgroup it did not create "
                             "(left by a killed run? remove it with rmdir after moving its "
                             "processes out)");
    throw EnvironmentError("cgroup: cannot create " + dir + ": " + errno_text(err) +
                           (err == EACCES || err == EPERM ? "; run nightjar as root" : ""));
  }
  created_.push_back(dir);
}

int CgroupTree::write_file(const std::string& path, const std::string& value,
                           bool append) const noexcept {
  // One write(2) per value: cgroupfs acts on each write. A fake tree
  // creates the file and keeps cgroup.procs appended, as the kernel shows it.
  if (!fake_) return write_attribute(path, value);
  return write_attribute(path, value + "\n", {.append = append, .create = true});
}

void CgroupTree::attach(const std::string& dir, pid_t pid) const {
  if (int err = write_file(dir + "/cgroup.procs", std::to_string(pid), true))
    throw EnvironmentError(
        fmt::format("cgroup: cannot move pid {} into {}: {}", pid, dir, errno_text(err)));
}

void CgroupTree::write_knob(const std::string& dir, const std::string& knob,
                            const std::string& value) const {
  const KnobInfo* info = find_knob(knob);
  std::string name = knob, text(trim(value));
  if (info) {
    auto translated = translate_knob(knob, version_);
    if (!translated)
      throw UsageError(
          fmt::format("cgroup knob {} has no equivalent on cgroup v{}", knob, version_));
    name = *translated;
    try {
      text = knob_value(*info, value, version_);
    } catch (const std::invalid_argument& e) {
      throw UsageError("cgroup knob " + knob + ": " + e.what());
    }
  }
  if (int err = write_file(dir + "/" + name, text, false))
    throw EnvironmentError(fmt::format("cgroup: cannot write '{}' to {}/{}: {}{}", text, dir, name,
                                       errno_text(err),
                                       err == ENOENT ? " (no such knob on this kernel)" : ""));
}

std::map<std::string, std::uint64_t> CgroupTree::memory_stat(const std::string& dir) const {
  std::map<std::string, std::uint64_t> out;
  std::ifstream in(dir + "/memory.stat");
  std::string key;
  std::uint64_t v;
  while (in >> key >> v) out[key] = v;
  return out;
}

std::uint64_t CgroupTree::memory_current(const std::string& dir) const {
  const std::string path = dir + (version_ == 2 ? "/memory.current" : "/memory.usage_in_bytes");
  auto text = read_small_file(path);
  if (!text) throw EnvironmentError("cgroup: cannot read " + path + ": " + errno_text(errno));
  try {
    return std::stoull(std::string(trim(*text)));
  } catch (const std::exception&) {
    throw EnvironmentError("cgroup: " + path + " does not hold a number: '" +
                           std::string(trim(*text)) + "'");
  }
}

void CgroupTree::force_empty(const std::string& dir) const {
  if (version_ == 2) {
    // v2 has no force_empty: reclaim what is charged, a few rounds, as far as
    // the kernel manages (what cannot be reclaimed stays charged).
    for (int round = 0; round < 5; ++round) {
      std::uint64_t cur = memory_current(dir);
      if (cur == 0 || reclaim(dir, cur)) return;
    }
    return;
  }
  if (int err = write_file(dir + "/memory.force_empty", "0", false))
    throw EnvironmentError("cgroup: memory.force_empty of " + dir + " failed: " + errno_text(err));
}

bool CgroupTree::reclaim(const std::string& dir, std::uint64_t bytes) const {
  if (version_ == 1)
    throw EnvironmentError("cgroup: memory.reclaim exists only on cgroup v2; " + dir +
                           " is on v1: use force_empty");
  int err = write_file(dir + "/memory.reclaim", std::to_string(bytes), false);
  if (err == EAGAIN) return false;
  if (err)
    throw EnvironmentError("cgroup: memory.reclaim of " + dir + " failed: " + errno_text(err) +
                           (err == ENOENT ? " (memory.reclaim needs Linux 5.19 or later)" : ""));
  return true;
}

void CgroupTree::remove_all() noexcept {
  if (created_.empty()) return;
  // Where leftover processes go: the cgroup nightjar itself is in, unless
  // that is inside this tree (then the hierarchy root).
  std::string home = hierarchy_root_ + own_cgroup(version_);
  if (home.back() == '/') home.pop_back();
  if (home == owned_root_ || home.compare(0, owned_root_.size() + 1, owned_root_ + "/") == 0)
    home = hierarchy_root_;

  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    const std::string& dir = *it;
    const std::string procs = dir + "/cgroup.procs";
    // Move out what is left; a process that cannot be moved is killed if it
    // is nightjar's own, otherwise left (and the directory stays).
    for (int round = 0; round < (fake_ ? 1 : 20); ++round) {
      auto pids = read_pids(procs);
      if (pids.empty()) break;
      for (pid_t pid : pids) {
        bool moved = write_file(home + "/cgroup.procs", std::to_string(pid), true) == 0;
        if (!moved && is_own_descendant(pid)) ::kill(pid, SIGKILL);
      }
      if (fake_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * (round + 1)));
    }
    if (fake_) {
      // A simulated cgroupfs holds regular files the kernel would drop with
      // the directory.
      if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d)) {
          std::string p = dir + "/" + e->d_name;
          struct stat st {};
          if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(p.c_str());
        }
        ::closedir(d);
      }
    }
    int err = 0;
    for (int attempt = 0; attempt < 40; ++attempt) {  // about 2 s in all on EBUSY
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) {
        err = 0;
        break;
      }
      err = errno;
      if (err != EBUSY && err != ENOTEMPTY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (err)
      std::cerr << "nightjar: warning: cannot remove cgroup " << dir << ": " << errno_text(err)
                << "; remove it by hand (rmdir) after moving its processes out\n";
  }
  created_.clear();
  leaves_.clear();
}

}  // namespace nightjar

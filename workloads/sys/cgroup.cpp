// The cgroup manager (workloads/sys/cgroup.h): nightjar-owned memory cgroups on v2
// or v1, created under one parent and removed on every exit path.
//
// Rules kept here (docs/reference.md "The system is left as found"):
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
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "results/model/text.h"
#include "workloads/sys/journal.h"
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
/// whether its value is a byte size (parsed "64M" -> bytes, "max"), and what
/// to use instead where it has no equivalent.
struct KnobInfo {
  const char* v2;
  const char* v1;
  bool size;
  const char* instead;  ///< "" = nothing
};

// The equivalences are the kernel's own (Documentation/admin-guide/cgroup-v2.rst
// "Deprecated v1 Core Features" and cgroup-v1/memory.rst): memory.max is the
// hard limit of v1 memory.limit_in_bytes, memory.low the best-effort
// protection v1 approximates with memory.soft_limit_in_bytes. memory.min and
// memory.high have no v1 counterpart; memsw (memory+swap) is not memory.swap.max.
constexpr KnobInfo kKnobs[] = {
    {"memory.max", "memory.limit_in_bytes", true, ""},
    {"memory.low", "memory.soft_limit_in_bytes", true, ""},
    {"memory.min", "", true, "use memory.low"},
    {"memory.high", "", true, "use memory.max"},
    {"memory.swap.max", "", true, "use memory.memsw.limit_in_bytes (memory and swap together)"},
    {"memory.swap.high", "", true, ""},
    {"", "memory.memsw.limit_in_bytes", true, "use memory.swap.max (swap alone)"},
    {"", "memory.swappiness", false, "remove it: cgroup v2 has no per-cgroup swappiness"},
    {"memory.oom.group", "", false, ""},
};

/// The hint of a knob without equivalent on `version`.
std::string no_equivalent_text(const KnobInfo& k, int version) {
  std::string text = fmt::format("has no equivalent on cgroup v{}", version);
  if (version == 1)
    text +=
        "; needs cgroup v2 (boot with cgroup_no_v1=memory or "
        "systemd.unified_cgroup_hierarchy=1)";
  else
    text += " (this machine's memory controller is on cgroup v2)";
  if (*k.instead) text += std::string(version == 1 ? ", or " : "; ") + k.instead;
  return text;
}

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

namespace {

/// A protection amount in bytes; kMax stands for "max".
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > kMax - b ? kMax : a + b;
}

std::string amount_text(std::uint64_t v) {
  return v == kMax ? "max" : human_bytes(v);
}

/// One knob as the plan has it on one directory.
struct Setting {
  std::string source;  // "top", "middle", "leaves", "raised", "distributed"
  std::string knob;    // as the job wrote it
  std::string file;
  std::string value;  // text written
  std::string asked;
  long seq = 0;  // the order settings were made in: writes follow it
};

long next_setting_seq() {
  static std::atomic<long> seq{0};
  return ++seq;
}

/// The explicit knobs of the tree, by directory then by file name.
using Settings = std::map<std::string, std::map<std::string, Setting>>;

std::string join_rel(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

std::string shown_level(const std::string& dir) {
  return dir.empty() ? "the owned parent" : dir;
}

/// The bytes of a planned v2 protection value ("max" -> kMax).
std::uint64_t amount_of(const Setting& s) {
  return s.value == "max" ? kMax : std::strtoull(s.value.c_str(), nullptr, 10);
}

/// Rules 1-3 of plan_cgroup_tree for one v2 protection knob (memory.min or
/// memory.low) over the chain of non-leaf directories `chain` (parents
/// first) whose last one holds `leaves`.
void plan_protection(const std::string& knob, const std::vector<std::string>& chain,
                     const std::vector<std::string>& leaves, bool recursiveprot, Settings& set) {
  auto kids_of = [&](std::size_t i) {
    return i + 1 < chain.size() ? std::vector<std::string>{chain[i + 1]} : leaves;
  };
  auto get = [&](const std::string& dir) -> Setting* {
    auto d = set.find(dir);
    if (d == set.end()) return nullptr;
    auto k = d->second.find(knob);
    return k == d->second.end() ? nullptr : &k->second;
  };
  // 1. Without memory_recursiveprot a cgroup without protection of its own
  // gets none of its parent's: split it down to the leaves.
  for (std::size_t i = 0; i < chain.size() && !recursiveprot; ++i) {
    const Setting* p = get(chain[i]);
    if (!p || amount_of(*p) == 0) continue;
    const std::vector<std::string> kids = kids_of(i);
    if (std::any_of(kids.begin(), kids.end(), [&](const std::string& k) { return get(k); }))
      continue;
    const std::uint64_t total = amount_of(*p);
    const std::uint64_t share = total == kMax ? kMax : total / kids.size();
    for (const auto& k : kids)
      set[k][knob] = Setting{"distributed",
                             knob,
                             knob,
                             share == kMax ? "max" : std::to_string(share),
                             fmt::format("a 1/{} share of {}'s {} (no memory_recursiveprot)",
                                         kids.size(), shown_level(chain[i]), amount_text(total)),
                             next_setting_seq()};
  }
  // 2 and 3. Every level covers what its children ask for in all.
  for (std::size_t i = chain.size(); i-- > 0;) {
    std::uint64_t need = 0;
    const std::vector<std::string> kids = kids_of(i);
    for (const auto& k : kids)
      if (const Setting* c = get(k)) need = saturating_add(need, amount_of(*c));
    if (need == 0) continue;
    Setting* mine = get(chain[i]);
    if (!mine) {
      set[chain[i]][knob] =
          Setting{"raised",
                  knob,
                  knob,
                  need == kMax ? "max" : std::to_string(need),
                  fmt::format("covers its children: {} in all", amount_text(need)),
                  next_setting_seq()};
      continue;
    }
    if (amount_of(*mine) >= need) continue;
    const Setting* child = get(kids.front());
    const bool added = child->source == "raised" || child->source == "distributed";
    throw UsageError(fmt::format(
        "cgroup.{}.{}: {} on level {} is less than the {} its children ask for in all ({}{} {} "
        "{}{}): on cgroup v2 a cgroup's protection is capped by its parent's, so theirs would "
        "not be in force; give {} at least {}, or leave {} out of {} and nightjar raises it to "
        "cover them",
        mine->source, mine->knob, mine->asked, shown_level(chain[i]), amount_text(need),
        kids.size() > 1 ? fmt::format("{} x ", kids.size()) : "", shown_level(kids.front()), knob,
        amount_text(amount_of(*child)),
        added ? ", " + child->source : ", " + child->source + ": " + child->asked, mine->source,
        amount_text(need), knob, mine->source));
  }
}

}  // namespace

std::string cgroup_level_name(const std::string& dir) {
  return dir.empty() ? "parent" : dir;
}

int memcg_version(const CgroupLayout& layout) {
  if (layout.v2_memory_available && !layout.v2_root.empty()) return 2;
  return layout.v1_memory_root.empty() ? 0 : 1;
}

std::optional<std::string> cgroup_version_problem(const CgroupSpec& spec, int version) {
  for (const auto& [section, knobs] : {std::pair<const char*, const CgroupKnobs*>{"top", &spec.top},
                                       {"middle", &spec.middle},
                                       {"leaves", &spec.leaves}})
    for (const auto& [knob, value] : *knobs) {
      const KnobInfo* k = find_knob(knob);
      if (!k)
        return fmt::format("cgroup.{}.{}: unknown knob; known: {}", section, knob, known_knobs());
      if (!translate_knob(knob, version))
        return fmt::format("cgroup.{}.{}: {}", section, knob, no_equivalent_text(*k, version));
    }
  return std::nullopt;
}

CgroupPlan plan_cgroup_tree(const CgroupSpec& spec, int clients, int version, bool recursiveprot) {
  if (!spec.enabled() || spec.depth > kMaxCgroupDepth)
    throw UsageError(fmt::format("cgroup: depth {} is outside 1..{}", spec.depth, kMaxCgroupDepth));
  if (clients < 1)
    throw UsageError(fmt::format("cgroup: {} clients; at least 1 is needed for a leaf", clients));
  if (!spec.middle.empty() && spec.depth < 3)
    throw UsageError(fmt::format(
        "cgroup.middle: depth {} has no middle level (top is {}, the leaves are {} below the "
        "owned parent); write depth: 3 or more, or move the knobs to top or leaves",
        spec.depth, spec.depth == 1 ? "the owned parent" : "l1", spec.depth));
  if (auto problem = cgroup_version_problem(spec, version)) throw UsageError(*problem);
  CgroupPlan plan;
  std::vector<std::string> chain{""};  // the levels above the leaves
  for (int level = 1; level < spec.depth; ++level)
    chain.push_back(join_rel(chain.back(), "l" + std::to_string(level)));
  plan.dirs = chain;
  plan.top = spec.depth == 1 ? "" : "l1";
  const int nleaves = spec.per_client ? clients : 1;
  for (int i = 0; i < nleaves; ++i)
    plan.leaves.push_back(
        join_rel(chain.back(), spec.per_client ? "c" + std::to_string(i) : "shared"));
  plan.dirs.insert(plan.dirs.end(), plan.leaves.begin(), plan.leaves.end());

  Settings set;
  auto put = [&](const char* section, const CgroupKnobs& knobs,
                 const std::vector<std::string>& dirs) {
    for (const auto& [knob, value] : knobs) {
      const KnobInfo& info = *find_knob(knob);
      Setting st{section, knob, *translate_knob(knob, version), "", value, next_setting_seq()};
      try {
        st.value = knob_value(info, value, version);
      } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("cgroup.{}.{}: {}", section, knob, e.what()));
      }
      for (const auto& d : dirs) set[d][st.file] = st;
    }
  };
  put("top", spec.top, {plan.top});
  put("middle", spec.middle,
      std::vector<std::string>(chain.begin() + std::min<std::size_t>(2, chain.size()),
                               chain.end()));
  put("leaves", spec.leaves, plan.leaves);
  if (version == 2)
    for (const char* knob : {"memory.min", "memory.low"})
      plan_protection(knob, chain, plan.leaves, recursiveprot, set);
  // Parents first; on each directory the job's knobs in its order, then
  // those the protection rule added.
  for (const auto& dir : plan.dirs) {
    auto d = set.find(dir);
    if (d == set.end()) continue;
    std::vector<const Setting*> on_dir;
    for (const auto& [file, st] : d->second) on_dir.push_back(&st);
    std::sort(on_dir.begin(), on_dir.end(),
              [](const Setting* a, const Setting* b) { return a->seq < b->seq; });
    for (const Setting* st : on_dir)
      plan.writes.push_back({dir, st->source, st->knob, st->file, st->value, st->asked, ""});
  }
  return plan;
}

std::map<std::string, double> cgroup_event_deltas(
    const std::map<std::string, std::uint64_t>& before,
    const std::map<std::string, std::uint64_t>& after) {
  std::map<std::string, double> out;
  for (const auto& [key, a] : after) {
    auto b = before.find(key);
    if (b != before.end() && a >= b->second) out[key] = static_cast<double>(a - b->second);
  }
  return out;
}

std::string remove_cgroup_dir(const std::string& dir, const std::string& home, bool fake,
                              bool kill_own) noexcept {
  try {
    const std::string procs = dir + "/cgroup.procs";
    // Move out what is left; a process that cannot be moved is killed if it
    // is nightjar's own, otherwise left (and the directory stays).
    for (int round = 0; round < (fake ? 1 : 20); ++round) {
      auto pids = read_pids(procs);
      if (pids.empty()) break;
      for (pid_t pid : pids) {
        const int err = fake ? write_attribute(home + "/cgroup.procs", std::to_string(pid) + "\n",
                                               {.append = true, .create = true})
                             : write_attribute(home + "/cgroup.procs", std::to_string(pid));
        if (err != 0 && kill_own && is_own_descendant(pid)) ::kill(pid, SIGKILL);
      }
      if (fake) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * (round + 1)));
    }
    if (fake) {
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
      if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return "";
      err = errno;
      if (err != EBUSY && err != ENOTEMPTY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "cannot remove cgroup " + dir + ": " + errno_text(err) +
           "; remove it by hand (rmdir) after moving its processes out";
  } catch (...) {
    return "cannot remove cgroup " + dir + ": out of memory";
  }
}

UndoResult undo_journaled_cgroup(const JournalEntry& entry) {
  using State = UndoResult::State;
  const std::string& dir = entry.field(0);
  const std::string& home = entry.field(1);
  // The tree's top directory is a child of the hierarchy root named
  // nightjar-*: what lies below `home` must start with it.
  if (home.empty() || dir.compare(0, home.size() + 1, home + "/") != 0 ||
      dir.compare(home.size() + 1, 9, "nightjar-") != 0)
    return {State::declined, "cgroup " + dir + " is not below a nightjar-* tree of " + home};
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {State::absent, ""};
  std::string problem = remove_cgroup_dir(dir, home, entry.field(2) == "1", false);
  if (!problem.empty()) return {State::left, problem};
  return {State::undone, "removed cgroup " + dir};
}

CgroupTree::CgroupTree(const CgroupLayout& layout, const std::string& tag, const CgroupSpec& spec,
                       int clients, const std::string& fs_prefix)
    : fake_(!fs_prefix.empty()) {
  version_ = memcg_version(layout);
  if (version_ == 0)
    throw EnvironmentError("cgroup: " + memcg_unavailable_reason(layout, fs_prefix, true));
  hierarchy_root_ = fs_prefix + (version_ == 2 ? layout.v2_root : layout.v1_memory_root);
  if (tag.empty() || tag.find('/') != std::string::npos || tag == "." || tag == "..")
    throw UsageError("cgroup: tag '" + tag + "' cannot name a directory");
  // Everything that can be refused is refused before the first mkdir.
  plan_ = plan_cgroup_tree(spec, clients, version_, layout.memory_recursiveprot());
  if (version_ == 2) {
    auto ctl = read_small_file(hierarchy_root_ + "/cgroup.subtree_control");
    if (!ctl || !has_word(*ctl, "memory"))
      throw EnvironmentError(
          "cgroup: the memory controller is not enabled in " + hierarchy_root_ +
          "/cgroup.subtree_control, so a cgroup created there has no memory knobs; nightjar "
          "never changes cgroups it did not create: enable it with `echo +memory > " +
          hierarchy_root_ + "/cgroup.subtree_control`");
  }
  owned_root_ = hierarchy_root_ + "/nightjar-" + tag;
  try {
    const std::set<std::string> leaves(plan_.leaves.begin(), plan_.leaves.end());
    for (const auto& rel : plan_.dirs) {
      const std::string dir = absolute(rel);
      make_dir(dir);
      if (rel.empty() && version_ == 1) {
        // Old kernels default to a flat v1 hierarchy; the protections and
        // limits of the top level only reach the leaves with use_hierarchy=1.
        auto uh = read_small_file(owned_root_ + "/memory.use_hierarchy");
        if (uh && trim(*uh) == "0")
          (void)write_file(owned_root_ + "/memory.use_hierarchy", "1", false);
      }
      if (version_ == 2 && !leaves.count(rel)) enable_memory(dir);
    }
    top_ = absolute(plan_.top);
    for (const auto& rel : plan_.leaves) leaves_.push_back(absolute(rel));
    for (auto& w : plan_.writes) {
      const std::string path = absolute(w.dir) + "/" + w.file;
      if (int err = write_file(path, w.value, false))
        throw EnvironmentError(fmt::format("cgroup: cannot write '{}' to {} (cgroup.{}.{}): {}{}",
                                           w.value, path, w.source, w.knob, errno_text(err),
                                           err == ENOENT ? " (no such knob on this kernel)" : ""));
      w.read_back = std::string(trim(read_small_file(path).value_or("")));
    }
  } catch (...) {
    remove_all();
    throw;
  }
}

CgroupTree::~CgroupTree() {
  remove_all();
}

std::string CgroupTree::absolute(const std::string& rel) const {
  return rel.empty() ? owned_root_ : owned_root_ + "/" + rel;
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
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0)
    throw EnvironmentError("cgroup: " + dir +
                           " already exists; nightjar never reuses a cgroup it did not create "
                           "(left by a killed run? `nightjar cleanup` removes what the journal "
                           "names; else remove it with rmdir after moving its processes out)");
  // Journaled before it exists: a sweep removes it if nightjar is killed.
  const std::uint64_t id =
      Journal::process().record(JournalKind::cgroup, {dir, hierarchy_root_, fake_ ? "1" : "0"});
  if (::mkdir(dir.c_str(), 0755) != 0) {
    int err = errno;
    Journal::process().done(id);
    if (err == EEXIST)
      throw EnvironmentError("cgroup: " + dir +
                             " already exists; nightjar never reuses a cgroup it did not create");
    throw EnvironmentError("cgroup: cannot create " + dir + ": " + errno_text(err) +
                           (err == EACCES || err == EPERM ? "; run nightjar as root" : ""));
  }
  created_.push_back({dir, id});
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

std::map<std::string, std::uint64_t> CgroupTree::event_counters() const {
  std::map<std::string, std::uint64_t> out;
  auto keyed = [](const std::string& text,
                  const std::string& want) -> std::optional<std::uint64_t> {
    std::istringstream in(text);
    std::string key;
    std::uint64_t v;
    while (in >> key >> v)
      if (key == want) return v;
    return std::nullopt;
  };
  for (const auto& rel : plan_.dirs) {
    const std::string dir = absolute(rel);
    const std::string prefix = "memcg." + cgroup_level_name(rel) + ".";
    if (version_ == 2) {
      const std::string events = read_small_file(dir + "/memory.events").value_or("");
      for (const char* e : {"low", "high", "max", "oom", "oom_kill"})
        if (auto v = keyed(events, e)) out[prefix + e] = *v;
      continue;
    }
    if (auto text = read_small_file(dir + "/memory.failcnt")) {
      const std::string t(trim(*text));
      if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos)
        out[prefix + "failcnt"] = std::strtoull(t.c_str(), nullptr, 10);
    }
    if (auto v = keyed(read_small_file(dir + "/memory.oom_control").value_or(""), "oom_kill"))
      out[prefix + "oom_kill"] = *v;
  }
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
    const std::string problem = remove_cgroup_dir(it->dir, home, fake_, true);
    if (problem.empty())
      Journal::process().done(it->journal);
    else
      std::cerr << "nightjar: warning: " << problem << "\n";
  }
  created_.clear();
  leaves_.clear();
}

}  // namespace nightjar

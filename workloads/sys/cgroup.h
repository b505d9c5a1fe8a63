// The cgroup manager: nightjar-owned memory cgroups on cgroup v2 or v1,
// created under one parent named after the run and removed on every exit
// path. Used by tcp_sendfile (clients in a 3-level hierarchy, memory.min/low
// on the top level) and tmpfs_refault (one memcg charged with a tmpfs file,
// then reclaimed).
//
// Layout created for depth D, C clients, per_client=true:
//   <memory root>/nightjar-<tag>/            the owned parent (never anything else)
//     l1/                                    "top": knobs of CgroupSpec::top written here
//       l2/ ... (D levels in all, counting l1)
//         c0/ c1/ ... c{C-1}                 leaves at depth D below the owned parent
// per_client=false: one shared leaf. On v2 the memory controller is enabled
// in cgroup.subtree_control from the owned parent down to the leaves' parents.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/sys/probe.h"

namespace nightjar {

/// The deepest cgroup tree nightjar builds (levels below the owned parent).
inline constexpr int kMaxCgroupDepth = 8;

/// The `cgroup:` section of a job file, parsed (harness/job/cgroup_spec.h).
struct CgroupSpec {
  int depth = 0;           ///< levels below the owned parent; 0 = no cgroup placement
  bool per_client = true;  ///< a leaf per client, or one shared leaf
  /// Knobs written on the top level, in order: name as written (v2
  /// "memory.min" or v1 "memory.soft_limit_in_bytes") -> value text ("64M", "max").
  std::vector<std::pair<std::string, std::string>> top;
  bool enabled() const { return depth > 0; }
};

/// The cgroup knobs nightjar knows, comma separated, for messages.
std::string known_cgroup_knobs();

/// Why `value` cannot be written to cgroup knob `knob` ("unknown knob;
/// known: ...", "'64Q' is not a size (...); write for example 64M, 1G or max",
/// "'x' is not a whole number; ..."), or nullopt when it can (on some
/// cgroup version; see translate_knob).
std::optional<std::string> cgroup_knob_problem(const std::string& knob, const std::string& value);

/// The name of `knob` on cgroup `version` (1 or 2), or nullopt when nightjar
/// does not know the knob or it has no equivalent there. Known equivalences:
/// memory.max <-> memory.limit_in_bytes, memory.low <->
/// memory.soft_limit_in_bytes. v2 only: memory.min, memory.high,
/// memory.swap.max, memory.swap.high, memory.oom.group. v1 only:
/// memory.memsw.limit_in_bytes, memory.swappiness.
std::optional<std::string> translate_knob(const std::string& knob, int version);

/// Why memory cgroups cannot be used here, or "" when they can: not root, no
/// memory controller (v1 memory hierarchy or memory in v2 cgroup.controllers),
/// or (v2) memory not enabled in the hierarchy root's cgroup.subtree_control,
/// which nightjar does not change because it did not create the root.
std::string memcg_unavailable_reason(const CgroupLayout& layout);
/// Same, reading the hierarchy below `fs_prefix` (a fake tree for tests);
/// `privileged` = running as root (else the root must be writable).
std::string memcg_unavailable_reason(const CgroupLayout& layout, const std::string& fs_prefix,
                                     bool privileged);

/// A tree of cgroups owned by nightjar. RAII: the destructor moves any process
/// still inside back to the cgroup nightjar itself runs in (or kills
/// nightjar's own children left there), then removes every directory it
/// created, deepest first. It never touches a directory it did not create.
class CgroupTree {
 public:
  /// Creates the tree for `clients` clients under the memory hierarchy of
  /// `layout` (v2 preferred when its memory controller is available, else v1
  /// memory). `tag` names the owned parent: "nightjar-<tag>" (e.g. the run id
  /// and pid). `fs_prefix` prefixes every path, for tests with a fake tree:
  /// with a non-empty prefix the tree is a simulated cgroupfs, where writes
  /// create the knob files the kernel would provide (cgroup.procs is
  /// appended to, other knobs overwritten, each value followed by '\n') and
  /// teardown unlinks the regular files of its directories before rmdir.
  /// depth 1: the leaves sit directly under the owned parent, and top() is the
  /// owned parent. Leaves are named c<i> (per_client) or "shared".
  /// Throws EnvironmentError when a directory or knob cannot be written
  /// (naming the path and errno), and UsageError when a knob of spec.top has
  /// no equivalent on this cgroup version.
  CgroupTree(const CgroupLayout& layout, const std::string& tag, const CgroupSpec& spec,
             int clients, const std::string& fs_prefix = "");
  ~CgroupTree();
  CgroupTree(const CgroupTree&) = delete;
  CgroupTree& operator=(const CgroupTree&) = delete;

  /// 1 or 2: which cgroup version the tree lives on.
  int version() const { return version_; }
  /// Absolute path of the owned parent directory.
  const std::string& owned_root() const { return owned_root_; }
  /// Absolute path of the top level (where spec.top knobs are written).
  const std::string& top() const { return top_; }
  /// Absolute path of the leaf of client `i` (0-based; the shared leaf when
  /// per_client is false). Throws std::out_of_range for a client without a leaf.
  const std::string& leaf(int client) const;
  /// Path of a leaf relative to the hierarchy root, as /proc/PID/cgroup shows it.
  std::string relative(const std::string& dir) const;

  /// Moves process `pid` into `dir` (cgroup.procs). Throws EnvironmentError.
  void attach(const std::string& dir, pid_t pid) const;
  /// Writes `value` to knob `knob` of `dir`, translating between v1 and v2
  /// names where an equivalent exists (memory.max <-> memory.limit_in_bytes,
  /// memory.low <-> memory.soft_limit_in_bytes, memory.high, memory.min has no
  /// v1 equivalent -> UsageError). Sizes such as "64M" are written as bytes.
  void write_knob(const std::string& dir, const std::string& knob, const std::string& value) const;
  /// memory.stat of `dir` as name -> value (v1 and v2 keys as the kernel writes them).
  std::map<std::string, std::uint64_t> memory_stat(const std::string& dir) const;
  /// Current memory charge of `dir` in bytes (memory.current / memory.usage_in_bytes).
  std::uint64_t memory_current(const std::string& dir) const;
  /// Reclaims everything charged to `dir`: v1 memory.force_empty. On v2
  /// (no force_empty) up to 5 rounds of memory.reclaim of memory.current.
  /// Throws EnvironmentError naming the knob and errno.
  void force_empty(const std::string& dir) const;
  /// v2 memory.reclaim of `bytes` (5.19+). Returns false when the kernel
  /// reclaimed less than asked (EAGAIN), true on success; throws
  /// EnvironmentError for other errors (ENOENT: kernel older than 5.19).
  bool reclaim(const std::string& dir, std::uint64_t bytes) const;

 private:
  void make_dir(const std::string& dir);
  void enable_memory(const std::string& dir);
  /// One write(2) of `value` to `path`; 0 or the errno. Never throws.
  int write_file(const std::string& path, const std::string& value, bool append) const noexcept;
  /// The teardown of the destructor (also used when the constructor fails).
  void remove_all() noexcept;

  bool fake_ = false;  // fs_prefix given: simulated cgroupfs
  int version_ = 2;
  std::string hierarchy_root_;
  std::string owned_root_, top_;
  std::vector<std::string> created_;  // every directory made, parents first
  std::vector<std::string> leaves_;
};

}  // namespace nightjar

// The cgroup manager: nightjar-owned memory cgroups on cgroup v2 or v1,
// created under one parent named after the run and removed on every exit
// path. Used by tcp_sendfile (clients in a 3-level hierarchy, memory knobs on
// any level) and tmpfs_refault (one memcg charged with a tmpfs file, then
// reclaimed).
//
// Layout created for depth D, C clients, per_client=true:
//   <memory root>/nightjar-<tag>/            the owned parent (never anything else)
//     l1/                                    "top": knobs of CgroupSpec::top written here
//       l2/ ... l(D-1)/                      "middle": knobs of CgroupSpec::middle on each
//         c0/ c1/ ... c{C-1}                 "leaves", D levels below the owned parent:
//                                            knobs of CgroupSpec::leaves on each
// per_client=false: one shared leaf. depth 1: the leaves sit in the owned
// parent, which is then the top level. On v2 the memory controller is
// enabled in cgroup.subtree_control of every level nightjar creates above
// the leaves, and memory.min/memory.low are planned so that they are in
// force (plan_cgroup_tree: the protection rule of docs/cgroups.md).
//
// Every directory is journaled before it is made (workloads/sys/journal.h),
// so the sweep removes the tree of a killed nightjar (undo_journaled_cgroup).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workloads/sys/journal.h"
#include "workloads/sys/probe.h"

namespace nightjar {

/// The deepest cgroup tree nightjar builds (levels below the owned parent).
inline constexpr int kMaxCgroupDepth = 8;

/// Knobs of one section of the `cgroup:` section, in the job's order: name as
/// written (v2 "memory.min" or v1 "memory.soft_limit_in_bytes") -> value
/// text ("64M", "max").
using CgroupKnobs = std::vector<std::pair<std::string, std::string>>;

/// The `cgroup:` section of a job file, parsed (harness/job/cgroup_spec.cpp).
struct CgroupSpec {
  int depth = 0;           ///< levels below the owned parent; 0 = no cgroup placement
  bool per_client = true;  ///< a leaf per client, or one shared leaf
  CgroupKnobs top;         ///< written on the top level (l1; the owned parent at depth 1)
  CgroupKnobs middle;      ///< written on every level between top and the leaves (depth >= 3)
  CgroupKnobs leaves;      ///< written on every leaf
  bool enabled() const { return depth > 0; }
};

/// One knob write of a tree: as planned (plan_cgroup_tree) and, once
/// CgroupTree wrote it, as read back.
struct CgroupKnobWrite {
  std::string dir;     ///< relative to the owned parent: "" (the owned parent), "l1", "l1/l2/c0"
  std::string source;  ///< "top", "middle", "leaves" (the job's sections), "raised" or
                       ///< "distributed" (v2 protection rule)
  std::string knob;    ///< as the job names it ("memory.low"); the v2 name for raised/distributed
  std::string file;    ///< the file written on this version ("memory.soft_limit_in_bytes")
  std::string value;   ///< the text written ("134217728", "max", "-1")
  std::string asked;   ///< the job's value ("128M"), or why it was written ("covers its children")
  std::string read_back;  ///< the file after the write, trimmed (filled by CgroupTree)
};

/// The tree CgroupTree builds, decided before anything is created.
struct CgroupPlan {
  std::vector<std::string> dirs;    ///< relative to the owned parent, parents first: "", "l1", ...
  std::vector<std::string> leaves;  ///< the leaves among them, client order
  std::string top;                  ///< the top level ("" at depth 1, else "l1")
  std::vector<CgroupKnobWrite> writes;  ///< in order: parents first, each in the job's order
};

/// The name of a tree directory in recorded keys: "parent" for the owned
/// parent (""), else the relative path ("l1", "l1/l2/c0").
std::string cgroup_level_name(const std::string& dir);

/// Plans the tree for `spec` and `clients` on cgroup `version` (1 or 2);
/// `recursiveprot` is the cgroup2 mount's memory_recursiveprot option.
/// The knobs of each section go to its levels, named and valued for the
/// version (sizes as bytes; "max", or -1 on v1). On v2, memory.min and
/// memory.low are made to be in force (docs/cgroups.md "Protection"):
///  1. without memory_recursiveprot, protection given to a level whose
///     children have none is split equally among them ("distributed"),
///     down to the leaves, as the kernel needs it to reach their processes;
///  2. a level the job gave none of a knob its children have gets their
///     sum ("raised": a child's protection is capped by its parent's);
///  3. a level the job gave less than the sum of its children's is refused.
/// Throws UsageError: depth outside 1..kMaxCgroupDepth, clients < 1,
/// `middle` at depth < 3, a knob with no equivalent on `version`
/// (cgroup_version_problem), a bad value, or rule 3, naming the section,
/// the level, its value and what its children need.
CgroupPlan plan_cgroup_tree(const CgroupSpec& spec, int clients, int version, bool recursiveprot);

/// Why `spec` cannot run on cgroup `version` (1 or 2), or nullopt: its first
/// knob with no equivalent there, e.g. "cgroup.top.memory.min: has no
/// equivalent on cgroup v1; needs cgroup v2 (boot with cgroup_no_v1=memory or
/// systemd.unified_cgroup_hierarchy=1), or use memory.low". The runner stores
/// such a cell as skipped with this reason.
std::optional<std::string> cgroup_version_problem(const CgroupSpec& spec, int version);

/// The cgroup version CgroupTree uses with `layout`: 2 when cgroup2 carries
/// the memory controller, else 1 with a v1 memory hierarchy, else 0.
int memcg_version(const CgroupLayout& layout);

/// Per-iteration deltas of CgroupTree::event_counters() snapshots (`before`
/// taken first), as monitor values: after - before for each key in both;
/// a counter that decreased is omitted.
std::map<std::string, double> cgroup_event_deltas(
    const std::map<std::string, std::uint64_t>& before,
    const std::map<std::string, std::uint64_t>& after);

/// Removes directory `dir` of a cgroup tree nightjar created: moves the
/// processes still in it to `home` (a cgroup directory: its cgroup.procs);
/// with `kill_own`, a process that cannot be moved is SIGKILLed if it
/// descends from this process (else it stays, and so does the directory);
/// then rmdir, retried for about 2 s on EBUSY. `fake`: a simulated cgroupfs
/// (its regular files are unlinked first). Returns "" once the directory is
/// gone, else why it stays (naming it and errno). Never throws.
std::string remove_cgroup_dir(const std::string& dir, const std::string& home, bool fake,
                              bool kill_own) noexcept;

/// Undoes a journaled `cgroup` record of an ended owner (the sweep): removes
/// the directory with remove_cgroup_dir(), moving leftover tasks to the
/// recorded home. `absent` when it is gone; `declined` when the recorded
/// path does not name a nightjar-* tree.
UndoResult undo_journaled_cgroup(const JournalEntry& entry);

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
  /// memory), as plan_cgroup_tree() plans it, and writes its knobs, reading
  /// each back (knob_writes()). `tag` names the owned parent:
  /// "nightjar-<tag>" (e.g. the run id and pid). `fs_prefix` prefixes every
  /// path, for tests with a fake tree: with a non-empty prefix the tree is a
  /// simulated cgroupfs, where writes create the knob files the kernel would
  /// provide (cgroup.procs is appended to, other knobs overwritten, each
  /// value followed by '\n') and teardown unlinks the regular files of its
  /// directories before rmdir. Leaves are named c<i> (per_client) or
  /// "shared". Every directory is journaled before mkdir. Throws
  /// EnvironmentError when a directory, knob or journal record cannot be
  /// written (naming the path and errno), and UsageError for what
  /// plan_cgroup_tree() refuses (a knob of the spec without equivalent on
  /// this cgroup version: "cgroup.top.memory.min: has no equivalent on cgroup
  /// v1; ..."). Whatever was created before an error is removed again.
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
  /// The knobs written when the tree was made, in order, with what each
  /// file read afterwards (CgroupKnobWrite::read_back).
  const std::vector<CgroupKnobWrite>& knob_writes() const { return plan_.writes; }
  /// The event counters of every directory of the tree, for per-iteration
  /// monitor deltas (cgroup_event_deltas): "memcg.<level>.<event>" with
  /// <level> as cgroup_level_name() gives it. v2: low, high, max, oom and
  /// oom_kill of memory.events; v1: failcnt (memory.failcnt, limit hits)
  /// and oom_kill (memory.oom_control, Linux 4.13+). A file that is absent
  /// gives no keys. Never throws.
  std::map<std::string, std::uint64_t> event_counters() const;

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

  /// The absolute path of a directory relative to the owned parent.
  std::string absolute(const std::string& rel) const;

  /// A directory made by this tree and its journal record.
  struct Made {
    std::string dir;
    std::uint64_t journal = 0;
  };

  bool fake_ = false;  // fs_prefix given: simulated cgroupfs
  int version_ = 2;
  std::string hierarchy_root_;
  std::string owned_root_, top_;
  CgroupPlan plan_;
  std::vector<Made> created_;  // every directory made, parents first
  std::vector<std::string> leaves_;
};

}  // namespace nightjar

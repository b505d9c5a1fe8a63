// tmpfs_refault: the read time of a tmpfs file that was charged to a memory
// cgroup and pushed to swap on zram (docs/reference.md "The tmpfs
// refault test", after the memcg rstat-flush patch post). Every page of the read refaults:
// swap-in from zram, memcg charge, workingset refault accounting, memcg stats
// flush: the path the measured kernel changes make cheaper.
//
// Each iteration sets up and tears down everything it uses (RefaultRig):
//   1. swap: a zram device nightjar configures itself (workloads/sys/zram.h),
//      mkswap, swapon above every other swap area;
//   2. a memory cgroup (workloads/sys/cgroup.h; or leaf 0 of the job's
//      `cgroup:` tree) and a tmpfs mount (workloads/sys/tmpfs.h) of file
//      size + margin;
//   3. a writer process inside the memcg writes the file (pattern);
//   4. eviction (force_empty | reclaim | pageout), verified: the file's pages
//      left memory (mincore, memcg shmem/swap) and reached the swap device
//      (pswpout, swpout_zero), else the sample is invalid with the reason;
//   5. a reader process inside the memcg reads the file sequentially with
//      block_size; the read is timed inside the reader (read_time); a read
//      whose pswpin is not the file's pages, or that another swap workload
//      disturbed, makes the sample invalid;
//   6. teardown in reverse order: file, tmpfs, memcg, swapoff, zram reset and
//      hot_remove; on every exit path (destructors), also SIGINT and errors.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {

class CgroupTree;
class ZramDevice;
class SwapArea;
class TmpfsMount;
struct MonitorSnapshot;

namespace refault {

/// What the writer puts in the file.
enum class Pattern {
  mixed,   ///< per 4 KiB: 1 KiB random + 3 KiB zeros (compresses about 4:1, like real data)
  random,  ///< all random: incompressible, zram stores every page whole
  /// all zeros: where the swap layer has its zero-page map (swap_has_zero_map,
  /// Linux 6.12+) they never reach zram and nothing refaults; before, zram
  /// stores them as same-filled entries and they refault without decompression
  zero,
};
/// How the file is pushed out to swap.
enum class EvictMethod {
  automatic,    ///< force_empty on cgroup v1, reclaim on v2; needs a memory controller
  force_empty,  ///< cgroup v1 memory.force_empty
  reclaim,      ///< cgroup v2 memory.reclaim (5.19+), retried on EAGAIN
  pageout,      ///< MADV_PAGEOUT on a mapping of the file; no cgroup needed
};

std::string_view to_string(Pattern p);
std::string_view to_string(EvictMethod m);
/// "mixed" -> Pattern::mixed; nullopt for anything else.
std::optional<Pattern> pattern_from_string(std::string_view s);
/// "auto" -> EvictMethod::automatic, "force_empty", "reclaim", "pageout".
std::optional<EvictMethod> evict_from_string(std::string_view s);

/// The unit the patterns repeat in: 4 KiB (one x86-64 page).
constexpr std::size_t kPatternUnit = 4096;
/// Random bytes at the start of each unit of Pattern::mixed.
constexpr std::size_t kMixedRandomBytes = 1024;

/// Fills `buf` with the bytes at file offset `offset` .. offset+len of a file
/// of `pattern`. The content depends only on the offset and `seed` (each 4 KiB
/// unit is generated from its index), not on how the file is cut into
/// buffers. Pure computation, async-signal-safe (used in forked writers).
void fill_pattern(Pattern pattern, std::uint64_t offset, char* buf, std::size_t len,
                  std::uint64_t seed = 1) noexcept;

/// Memory an iteration needs at its peak (the file in tmpfs and, compressed,
/// in zram at once, during eviction), in bytes.
struct MemoryNeed {
  std::uint64_t file = 0;   ///< the tmpfs file: size
  std::uint64_t zram = 0;   ///< estimate of the compressed copy in zram
  std::uint64_t total = 0;  ///< file + zram
  double ratio = 0;         ///< zram / file assumed for the pattern (0.3, 1.0, 0.01)
};
MemoryNeed memory_need(std::uint64_t size, Pattern pattern);
/// Share of MemTotal that validate() leaves for the kernel and everything else.
constexpr double kMemHeadroom = 0.10;
/// The largest size (a multiple of 256M, or of 1M below 256M) whose
/// memory_need() fits in (1 - kMemHeadroom) of `mem_total`; 0 when none.
std::uint64_t largest_size(std::uint64_t mem_total, Pattern pattern);

/// Which eviction method a requested one means on this machine, and whether
/// the writer/reader run in a memory cgroup.
struct EvictPlan {
  std::optional<EvictMethod> method;  ///< resolved (never automatic); nullopt: unmet
  bool memcg = false;                 ///< a memory cgroup is used
  int cgroup_version = 0;             ///< 1 or 2 when memcg
  std::string reason;                 ///< why not, when !method
};
/// Resolves `requested` with the machine's cgroup `layout` (the memory
/// controller's hierarchy: v2 preferred when its memory controller is
/// available, as CgroupTree does) and `memcg_reason` ("" when memory cgroups
/// are usable, else why not: memcg_unavailable_reason()). `root` prefixes
/// the path probed for v2 memory.reclaim (<root><v2_root>/memory.reclaim).
/// automatic needs a memory controller (v1 -> force_empty, v2 -> reclaim,
/// v2 without memory.reclaim -> pageout); pageout uses a memcg when one is
/// usable and runs without one otherwise.
EvictPlan plan_eviction(EvictMethod requested, const CgroupLayout& layout,
                        const std::string& memcg_reason, const std::string& root = "");

/// True when the kernel's swap layer keeps zero-filled pages off the swap
/// device (its zero-page map, Linux 6.12: a swap-out records the page as
/// zero, a swap-in clears a page; neither counts as pswpout/pswpin): told by
/// the swpin_zero counter in `proc_root`/vmstat, which came with it, not by
/// the version. Without it zram itself stores such pages as "same-filled"
/// entries (no compression, its mm_stat same_pages), and their swap-ins count
/// as pswpin like any other. Never throws; an unreadable vmstat gives false.
bool swap_has_zero_map(const std::string& proc_root = "/proc");

/// The warning a pattern-zero cell gets at its start, for a kernel with
/// (`zero_map`) or without the swap layer's zero-page map: with it nothing
/// refaults from zram and every sample is invalid; without it the read
/// refaults same-filled zram entries (valid samples that measure the swap-in
/// path without decompression, not comparable with mixed or random).
std::string zero_pattern_warning(bool zero_map);

/// Tolerance of the checks on page counts: 1% of the file's pages.
constexpr double kPageTolerance = 0.01;

/// What is known after an eviction, for eviction_failure().
struct EvictCheck {
  std::uint64_t pages = 0;                   ///< the file's pages
  std::uint64_t page_size = 4096;            ///< bytes per page
  std::uint64_t resident = 0;                ///< pages still in memory (mincore)
  std::optional<std::uint64_t> memcg_shmem;  ///< memcg shmem bytes after eviction
  std::optional<std::uint64_t>
      memcg_swap;  ///< memcg swap bytes (v1 stat swap, v2 memory.swap.current)
  std::optional<std::uint64_t> pswpout;  ///< /proc/vmstat pswpout delta over the eviction
  /// /proc/vmstat swpout_zero delta over the eviction (Linux 6.12+): pages the
  /// swap layer recorded as zero instead of writing them to the device
  std::optional<std::uint64_t> swpout_zero;
  Pattern pattern = Pattern::mixed;
  EvictMethod method = EvictMethod::force_empty;
};
/// Why the file did not go out to swap, or nullopt when it did: more than 1%
/// of its pages resident (mincore) or in the memcg's shmem; the memcg's swap
/// holding less than 99% of it; more than 1% of its pages recorded as zero
/// pages (swpout_zero) instead of written to the device; pswpout below 99% of
/// its pages (also for Pattern::zero: where the swap layer records zero pages
/// the check before catches them, and before it zram receives them like any
/// page). The sample is then invalid (docs/workloads.md
/// "Invalid samples"): the read measures something else than refaults.
std::optional<std::string> eviction_failure(const EvictCheck& c);

/// The sanity check of a sample: "this sample did not measure refaults: ..."
/// when the cold read's pswpin delta differs from the file's pages by more
/// than 1%, with the likely cause (zero pages: swpin_zero; extra swap-ins:
/// memory pressure or another swap workload; missing swap-ins: zswap or the
/// page cache); nullopt when it agrees. The workload makes such a sample
/// invalid. An absent pswpin (counter not on this kernel) gives this text
/// too; it cannot be checked, so it stays a flag on a valid sample.
std::optional<std::string> refault_sanity_flag(std::uint64_t pages, std::optional<double> pswpin,
                                               std::optional<double> swpin_zero, Pattern pattern);

/// Other swap workloads that nightjar can see: the processes under `proc`
/// whose name is a tmpfs_refault writer's or reader's ("tmpfs_refault-w",
/// "tmpfs_refault-r") and whose parent is not `own_pid` (another nightjar's
/// rig), each as "pid 4242 (tmpfs_refault-r of nightjar pid 4200)". Never
/// throws: an unreadable entry (a process that just exited) is skipped.
std::vector<std::string> other_refault_workers(pid_t own_pid, const std::string& proc = "/proc");

/// Why the monitors of the cold read show interference, or nullopt: another
/// swap workload's processes were live around the read (`others`,
/// other_refault_workers()), or pswpout grew during the read by more than 1%
/// of the file's `pages` (something else was pushed to swap meanwhile). The
/// other kind of interference, pswpin beyond the file's pages, is
/// refault_sanity_flag()'s.
std::optional<std::string> read_interference(std::uint64_t pages,
                                             std::optional<double> pswpout_during_read,
                                             const std::vector<std::string>& others);

/// How one iteration's rig is set up.
struct RigOptions {
  std::uint64_t size = 0;  ///< file bytes, a multiple of the page size
  Pattern pattern = Pattern::mixed;
  EvictMethod evict = EvictMethod::automatic;
  std::size_t block_size = 1 << 20;  ///< bytes per read(2) of the reader
  std::string algorithm;             ///< zram comp_algorithm; "" = the device's default
  std::string tag;                   ///< names the mount, the memcg and the swap label
  /// The runner's cgroup tree (job `cgroup:` section): the writer and reader
  /// go to its leaf 0 instead of a memcg of the rig's own. May be null.
  const CgroupTree* cgroups = nullptr;
  /// Polled in every loop and wait; true -> the phase stops, Interrupted is thrown.
  std::function<bool()> interrupted = [] { return false; };
  /// Called at the start of each phase: "setup", "write", "evict", "read",
  /// "hot_read", "teardown".
  std::function<void(std::string_view)> phase = [](std::string_view) {};
};

/// What the eviction did.
struct EvictResult {
  double seconds = 0;                      ///< the eviction call(s) only
  std::optional<std::string> failure;      ///< why the file did not go out
  std::map<std::string, double> counters;  ///< tmpfs_refault.evict.* and zram.*
};

/// What one timed read did.
struct ReadResult {
  double seconds = 0;                    ///< open .. last read(2), measured by the reader
  std::uint64_t bytes = 0;               ///< bytes read
  std::map<std::string, double> vmstat;  ///< /proc/vmstat deltas over the read, by counter name
  std::optional<std::string> failure;    ///< the reader failed
};

/// One iteration's setup: zram swap, memcg, tmpfs mount and the file. The
/// destructor tears down in reverse order (file, mount, memcg, swap area, zram
/// device); it never throws and runs on every exit path.
class RefaultRig {
 public:
  /// Sets up swap, memcg and mount. Throws EnvironmentError (a step failed,
  /// with the reason), Interrupted.
  explicit RefaultRig(RigOptions options);
  ~RefaultRig();
  RefaultRig(const RefaultRig&) = delete;
  RefaultRig& operator=(const RefaultRig&) = delete;

  /// Writes the file from a writer process inside the memcg; returns the
  /// seconds it took, or throws EnvironmentError / Interrupted. A writer that
  /// failed (ENOSPC, killed) gives EnvironmentError with the reason.
  double write_file();
  /// Pushes the file out to swap with the planned method and verifies it.
  EvictResult evict();
  /// Reads the whole file from a reader process inside the memcg; `hot`
  /// only names the phase ("hot_read": the file is resident by then).
  ReadResult read_file(bool hot = false);

  const std::string& file_path() const { return file_; }
  /// The memcg directory the writer and reader run in; "" without one.
  const std::string& memcg_dir() const { return memcg_; }
  /// 1 or 2, 0 without memcg.
  int cgroup_version() const { return plan_.cgroup_version; }
  EvictMethod method() const { return *plan_.method; }
  std::uint64_t pages() const { return pages_; }
  const ZramDevice& zram() const { return *zram_; }
  int swap_priority() const { return priority_; }
  const std::string& mount_path() const;

 private:
  struct ChildOutcome;
  ChildOutcome run_child(const char* comm, int kind, MonitorSnapshot* before,
                         MonitorSnapshot* after);
  const CgroupTree* tree() const;
  std::uint64_t resident_pages() const;
  // The timed call(s) of each eviction method; each returns its seconds.
  double evict_force_empty();
  double evict_reclaim();
  double evict_pageout();
  std::optional<std::uint64_t> memcg_value(const std::string& key) const;

  RigOptions opt_;
  EvictPlan plan_;
  std::uint64_t page_ = 4096;
  std::uint64_t pages_ = 0;
  int priority_ = 0;
  // Declared in set-up order: members are destroyed in reverse.
  std::unique_ptr<ZramDevice> zram_;
  std::unique_ptr<SwapArea> swap_;
  std::unique_ptr<CgroupTree> own_cgroups_;
  std::unique_ptr<TmpfsMount> mount_;
  std::string memcg_;
  std::string file_;
};

}  // namespace refault
}  // namespace nightjar

// tmpfs_refault: read time of a tmpfs file pushed to swap on zram
// (docs/reference.md "The tmpfs refault test"). See workloads/tmpfs_refault.h for the
// phases of an iteration, and docs/workloads.md for parameters and metrics.
//
// Where the time is taken, so that read_time holds only the refaults:
//  - the reader is a child process (a Workers group of one,
//    workloads/sys/process.h) moved into the memcg before it starts; it
//    maps and touches its buffer, opens the file, then takes CLOCK_MONOTONIC
//    before the first read(2) and after the read that returns 0 (end of file),
//    as dd times its copy; it writes both to shared memory and reports;
//  - /proc/vmstat snapshots (workloads/sys/monitors.h) are taken by nightjar right
//    before the reader is released and right after it reported, outside the
//    timed region;
//  - evict_time is the eviction call(s) only: the memory.force_empty write,
//    the memory.reclaim loop, or the MADV_PAGEOUT calls (the pass that maps
//    the pages for MADV_PAGEOUT comes before it).
#include "workloads/tmpfs_refault.h"
#include "results/model/params.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/cgroup.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/monitors.h"
#include "workloads/sys/process.h"
#include "workloads/sys/tmpfs.h"
#include "workloads/sys/zram.h"

namespace nightjar {
namespace refault {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;
/// Chunk the writer fills and writes at a time (the write is not timed).
constexpr std::size_t kWriteChunk = 1 << 20;
/// Span of the MADV_PAGEOUT calls and of the fault-in pass before them: the
/// interrupt flag is polled between spans.
constexpr std::size_t kPageoutSpan = 64 << 20;
/// Most MADV_PAGEOUT passes over the file before the residue is left to the
/// eviction check (which tolerates kPageTolerance of the pages).
constexpr std::uint64_t kPageoutPasses = 4;
/// Set by the test hook below: the file the current phase name is written to.
constexpr const char* kPhaseFileEnv = "NIGHTJAR_TMPFS_REFAULT_PHASE_FILE";
constexpr const char* kZswapEnabled = "/sys/module/zswap/parameters/enabled";

std::uint64_t page_size() {
  static const std::uint64_t page = [] {
    long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::uint64_t>(p) : std::uint64_t{4096};
  }();
  return page;
}

std::int64_t clock_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

/// First line of a small file, "" when unreadable.
std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<std::uint64_t> read_u64(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

/// MemAvailable of /proc/meminfo in bytes, 0 when unknown.
std::uint64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  while (in >> key) {
    if (key == "MemAvailable:") {
      std::uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

bool zswap_enabled() {
  std::string v = first_line(kZswapEnabled);
  return !v.empty() && (v[0] == 'Y' || v[0] == 'y' || v[0] == '1');
}

/// After - before of a /proc/vmstat counter; nullopt when absent or decreased.
std::optional<double> vm_delta(const MonitorSnapshot& before, const MonitorSnapshot& after,
                               const std::string& name) {
  auto a = before.vmstat.find(name), b = after.vmstat.find(name);
  if (a == before.vmstat.end() || b == after.vmstat.end() || b->second < a->second)
    return std::nullopt;
  return static_cast<double>(b->second - a->second);
}

/// One write(2) of `value` to a cgroup knob; 0 or errno. Unlike
/// CgroupTree's writes it does not retry EINTR: memory.force_empty and
/// memory.reclaim loop in the kernel until done and return EINTR when a
/// signal arrives, which is how Ctrl-C stops a long eviction promptly.
int write_knob_once(const std::string& path, const std::string& value) {
  return write_attribute(path, value, {.retry_eintr = false});
}

/// Swap/tmpfs capacity beyond the file: 1/64 of it plus 16 MiB.
std::uint64_t margin(std::uint64_t size) {
  return size / 64 + 16 * kMiB;
}

// --- the pattern --------------------------------------------------------

inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// The 4 KiB unit number `unit` of a file of `pattern`.
void fill_unit(Pattern pattern, std::uint64_t unit, std::uint64_t seed, char* out) noexcept {
  std::size_t random_bytes = pattern == Pattern::mixed    ? kMixedRandomBytes
                             : pattern == Pattern::random ? kPatternUnit
                                                          : 0;
  std::uint64_t state = seed * 0xd1342543de82ef95ULL ^ (unit + 1) * 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = 0; i < random_bytes; i += 8) {
    std::uint64_t v = splitmix64(state);
    std::memcpy(out + i, &v, 8);
  }
  std::memset(out + random_bytes, 0, kPatternUnit - random_bytes);
}

// --- the writer and reader processes -------------------------------------

enum ChildKind : int { kWriter = 1, kReader = 2 };

}  // namespace

/// What a writer or reader reports (SharedRecords), once its work is done.
/// Outside the anonymous namespace: RefaultRig::ChildOutcome (declared in
/// the header, so of external linkage) holds one.
struct ChildReport {
  int done = 0;   ///< 1: the fields below are complete
  int error = 0;  ///< errno of the failing call, 0 = none
  int stage = 0;  ///< 1 mmap, 2 open, 3 read/write, 4 close
  std::uint64_t bytes = 0;
  std::int64_t t0_ns = 0, t1_ns = 0;  ///< CLOCK_MONOTONIC around the work
};

namespace {

/// Everything the child needs, prepared before spawn() so it allocates
/// nothing (the worker contract of workloads/sys/process.h).
struct ChildArgs {
  int kind;
  const char* path;
  std::uint64_t size;
  std::size_t block;
  Pattern pattern;
  ChildReport* report;  ///< in shared memory
};

void write_all(int fd, const void* p, std::size_t n) noexcept {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t k = ::write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    c += k;
    n -= static_cast<std::size_t>(k);
  }
}

void writer_body(const ChildArgs& a, ChildReport& r) noexcept {
  void* buf =
      ::mmap(nullptr, kWriteChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) {
    r.error = errno, r.stage = 1;
    return;
  }
  r.t0_ns = clock_ns();
  int fd = ::open(a.path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    r.error = errno, r.stage = 2;
    return;
  }
  char* b = static_cast<char*>(buf);
  for (std::uint64_t off = 0; off < a.size;) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kWriteChunk, a.size - off));
    fill_pattern(a.pattern, off, b, n);
    for (std::size_t done = 0; done < n;) {
      ssize_t k = ::write(fd, b + done, n - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        r.error = k < 0 ? errno : ENOSPC, r.stage = 3;
        ::close(fd);
        return;
      }
      done += static_cast<std::size_t>(k);
      r.bytes += static_cast<std::uint64_t>(k);
    }
    off += n;
  }
  if (::close(fd) != 0 && errno != EINTR) {
    r.error = errno, r.stage = 4;
    return;
  }
  r.t1_ns = clock_ns();
}

void reader_body(const ChildArgs& a, ChildReport& r) noexcept {
  // The buffer is mapped and touched before the clock starts, so the timed
  // loop faults nothing but the file's pages.
  void* buf = ::mmap(nullptr, a.block, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (buf == MAP_FAILED) {
    r.error = errno, r.stage = 1;
    return;
  }
  std::memset(buf, 1, a.block);
  int fd = ::open(a.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    r.error = errno, r.stage = 2;
    return;
  }
  r.t0_ns = clock_ns();
  for (;;) {
    ssize_t k = ::read(fd, buf, a.block);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      r.error = errno, r.stage = 3;
      ::close(fd);
      return;
    }
    if (k == 0) break;
    r.bytes += static_cast<std::uint64_t>(k);
  }
  r.t1_ns = clock_ns();
  ::close(fd);
}

/// The body of a forked writer/reader (a worker of workloads/sys/process.h).
/// Async-signal-safe calls only. Its report is a local until the work is
/// done, so the timed loop touches no shared page.
int child_main(const ChildArgs& a, const WorkerLink& link) noexcept {
  // Released once nightjar has moved us into the memcg.
  link.wait_gate(0);
  ChildReport r;
  if (a.kind == kWriter)
    writer_body(a, r);
  else
    reader_body(a, r);
  r.done = 1;
  *a.report = r;
  link.report();
  return 0;
}

/// A read-only shared mapping of a file, unmapped on destruction.
struct FileMap {
  void* addr = MAP_FAILED;
  std::size_t len = 0;
  int error = 0;
  FileMap(const std::string& path, std::size_t bytes) : len(bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = errno;
      return;
    }
    addr = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) error = errno;
    ::close(fd);
  }
  ~FileMap() {
    if (addr != MAP_FAILED) ::munmap(addr, len);
  }
  FileMap(const FileMap&) = delete;
  FileMap& operator=(const FileMap&) = delete;
  char* get() const { return static_cast<char*>(addr); }
};

}  // namespace

// --- public helpers -------------------------------------------------------

std::string_view to_string(Pattern p) {
  switch (p) {
    case Pattern::mixed:
      return "mixed";
    case Pattern::random:
      return "random";
    case Pattern::zero:
      return "zero";
  }
  return "mixed";
}

std::string_view to_string(EvictMethod m) {
  switch (m) {
    case EvictMethod::automatic:
      return "auto";
    case EvictMethod::force_empty:
      return "force_empty";
    case EvictMethod::reclaim:
      return "reclaim";
    case EvictMethod::pageout:
      return "pageout";
  }
  return "auto";
}

std::optional<Pattern> pattern_from_string(std::string_view s) {
  for (Pattern p : {Pattern::mixed, Pattern::random, Pattern::zero})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

std::optional<EvictMethod> evict_from_string(std::string_view s) {
  for (EvictMethod m : {EvictMethod::automatic, EvictMethod::force_empty, EvictMethod::reclaim,
                        EvictMethod::pageout})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

void fill_pattern(Pattern pattern, std::uint64_t offset, char* buf, std::size_t len,
                  std::uint64_t seed) noexcept {
  char unit_buf[kPatternUnit];
  while (len > 0) {
    const std::uint64_t unit = offset / kPatternUnit;
    const std::size_t within = static_cast<std::size_t>(offset % kPatternUnit);
    const std::size_t n = std::min(len, kPatternUnit - within);
    if (within == 0 && n == kPatternUnit) {
      fill_unit(pattern, unit, seed, buf);
    } else {
      fill_unit(pattern, unit, seed, unit_buf);
      std::memcpy(buf, unit_buf + within, n);
    }
    buf += n;
    offset += n;
    len -= n;
  }
}

MemoryNeed memory_need(std::uint64_t size, Pattern pattern) {
  MemoryNeed m;
  // zram's share: 1 KiB of random bytes per 4 KiB compresses to a little more
  // than 1 KiB (lzo-rle, lz4, zstd alike); random pages are stored whole;
  // zero pages are not stored at all (only zram's table entry, 8-16 bytes).
  m.ratio = pattern == Pattern::mixed ? 0.30 : pattern == Pattern::random ? 1.0 : 0.01;
  m.file = size;
  m.zram = static_cast<std::uint64_t>(static_cast<double>(size) * m.ratio);
  m.total = m.file + m.zram;
  return m;
}

std::uint64_t largest_size(std::uint64_t mem_total, Pattern pattern) {
  const double usable = static_cast<double>(mem_total) * (1 - kMemHeadroom);
  const double ratio = memory_need(kMiB, pattern).ratio;
  auto fit = static_cast<std::uint64_t>(usable / (1 + ratio));
  const std::uint64_t step = fit >= 256 * kMiB ? 256 * kMiB : kMiB;
  return fit / step * step;
}

EvictPlan plan_eviction(EvictMethod requested, const CgroupLayout& layout,
                        const std::string& memcg_reason, const std::string& root) {
  EvictPlan plan;
  const bool usable = memcg_reason.empty();
  // The memory controller's hierarchy as CgroupTree picks it.
  int version = 0;
  if (usable) version = layout.v2_memory_available ? 2 : !layout.v1_memory_root.empty() ? 1 : 0;
  const bool has_reclaim =
      version == 2 && ::access((root + layout.v2_root + "/memory.reclaim").c_str(), F_OK) == 0;
  const std::string where =
      version == 1   ? "this machine's memory controller is on cgroup v1"
      : version == 2 ? "this machine's memory controller is on cgroup v2"
                     : "no memory cgroup is usable here (" +
                           (usable ? std::string("no memory controller") : memcg_reason) + ")";
  auto unmet = [&](const std::string& why) {
    plan.reason = why;
    return plan;
  };
  auto use = [&](EvictMethod m, bool memcg) {
    plan.method = m;
    plan.memcg = memcg;
    plan.cgroup_version = memcg ? version : 0;
    return plan;
  };
  switch (requested) {
    case EvictMethod::automatic:
      if (version == 1) return use(EvictMethod::force_empty, true);
      if (version == 2) return use(has_reclaim ? EvictMethod::reclaim : EvictMethod::pageout, true);
      return unmet("evict=auto needs a memory cgroup to charge the file to, and " + where +
                   "; write evict: pageout to measure without a memcg (refaults then are not "
                   "charged to one), or enable the memory controller");
    case EvictMethod::force_empty:
      if (version == 1) return use(EvictMethod::force_empty, true);
      return unmet(
          "evict=force_empty needs the cgroup v1 memory controller (memory.force_empty), "
          "and " +
          where + "; write evict: auto");
    case EvictMethod::reclaim:
      if (has_reclaim) return use(EvictMethod::reclaim, true);
      if (version == 2)
        return unmet(
            "evict=reclaim needs cgroup v2 memory.reclaim (Linux 5.19+), which this "
            "kernel lacks (" +
            root + layout.v2_root +
            "/memory.reclaim); write evict: "
            "pageout");
      return unmet("evict=reclaim needs the cgroup v2 memory controller (memory.reclaim), and " +
                   where + "; write evict: auto");
    case EvictMethod::pageout:
      return use(EvictMethod::pageout, version != 0);
  }
  return plan;
}

std::optional<std::string> eviction_failure(const EvictCheck& c) {
  if (c.pages == 0) return std::nullopt;
  const double pages = static_cast<double>(c.pages);
  const double file_bytes = pages * static_cast<double>(c.page_size);
  const std::string how = "evict=" + std::string(to_string(c.method));
  const std::string hint =
      "; is the swap device full (/proc/swaps), is memory.swappiness 0 for this memcg, "
      "or is zswap enabled?";
  if (static_cast<double>(c.resident) > pages * kPageTolerance)
    return how + " left " + std::to_string(c.resident) + " of the file's " +
           std::to_string(c.pages) + " pages (" + percent(static_cast<double>(c.resident) / pages) +
           ") in memory (mincore): the file did not go out to swap" + hint;
  if (c.memcg_shmem && static_cast<double>(*c.memcg_shmem) > file_bytes * kPageTolerance)
    return how + " left " + human_bytes(*c.memcg_shmem) + " of shmem in the memcg (" +
           percent(static_cast<double>(*c.memcg_shmem) / file_bytes) +
           " of the file): the file did not go out to swap" + hint;
  if (c.memcg_swap && static_cast<double>(*c.memcg_swap) < file_bytes * (1 - kPageTolerance))
    return how + ": the memcg's swap holds " + human_bytes(*c.memcg_swap) + ", " +
           percent(static_cast<double>(*c.memcg_swap) / file_bytes) + " of the " +
           human_bytes(static_cast<std::uint64_t>(file_bytes)) +
           " file: its pages left memory but not to swap (were they freed or charged "
           "elsewhere?)";
  if (c.swpout_zero && static_cast<double>(*c.swpout_zero) > pages * kPageTolerance)
    return how + ": swpout_zero grew by " + std::to_string(*c.swpout_zero) + " for a file of " +
           std::to_string(c.pages) + " pages (" +
           percent(static_cast<double>(*c.swpout_zero) / pages) +
           "): the pages were zero-filled, and since about Linux 6.12 the swap layer records "
           "zero pages instead of writing them to zram, so nothing will refault from zram" +
           (c.pattern == Pattern::zero ? std::string("; write pattern: mixed")
                                       : std::string("; check the pattern"));
  // Every page must reach the device, zero-filled ones too: where the swap
  // layer has a zero-page map they are caught above (swpout_zero), and
  // before it zram receives them like any page (as same-filled entries).
  if (c.pswpout && *c.pswpout < pages * (1 - kPageTolerance))
    return how + ": pswpout grew by " + num(*c.pswpout) + " for a file of " +
           std::to_string(c.pages) + " pages (" + percent(*c.pswpout / pages) +
           "): the pages did not reach the swap device (zswap enabled? "
           "/sys/module/zswap/parameters/enabled)";
  return std::nullopt;
}

bool swap_has_zero_map(const std::string& proc_root) {
  return take_snapshot(proc_root).vmstat.count("swpin_zero") > 0;
}

std::string zero_pattern_warning(bool zero_map) {
  if (zero_map)
    return "tmpfs_refault: pattern zero: this kernel's swap layer keeps zero-filled pages off "
           "the swap device (its zero-page map, Linux 6.12+: /proc/vmstat has swpin_zero), so "
           "zero-filled pages never reach zram and nothing refaults from zram: pswpin stays 0 "
           "and every sample is invalid; write pattern: mixed to measure refaults";
  return "tmpfs_refault: pattern zero: this kernel has no zero-page map in its swap layer "
         "(/proc/vmstat has no swpin_zero, before Linux 6.12), so zram stores the zero-filled "
         "pages as same-filled entries: the read refaults every page (pswpin = pages) but "
         "decompresses nothing, so its times are not comparable with pattern mixed or random";
}

std::optional<std::string> refault_sanity_flag(std::uint64_t pages, std::optional<double> pswpin,
                                               std::optional<double> swpin_zero, Pattern pattern) {
  const std::string head = "this sample did not measure refaults: ";
  if (!pswpin)
    return head +
           "/proc/vmstat has no pswpin counter on this kernel, so the swap-ins of the read "
           "could not be checked against the file's " +
           std::to_string(pages) + " pages";
  if (pages == 0) return std::nullopt;
  const double n = static_cast<double>(pages);
  const double diff = (*pswpin - n) / n;
  if (std::fabs(diff) <= kPageTolerance) return std::nullopt;
  std::string flag = head + "pswpin grew by " + num(*pswpin) + " during the read of a file of " +
                     std::to_string(pages) + " pages (" + (diff > 0 ? "+" : "") + percent(diff) +
                     ", more than 1% off): ";
  if (swpin_zero && *swpin_zero > n * kPageTolerance)
    flag += "swpin_zero grew by " + num(*swpin_zero) +
            ": the pages were zero-filled, and since about Linux 6.12 zero pages never reach "
            "zram (the swap layer records them as zero and a swap-in just clears a page)" +
            (pattern == Pattern::zero ? std::string("; write pattern: mixed")
                                      : std::string("; check the pattern"));
  else if (diff > 0)
    flag +=
        "more swap-ins than pages: other processes swapped in during the read (memory "
        "pressure?); look at the machine's load and swap use";
  else
    flag +=
        "fewer swap-ins than pages: the pages came back from somewhere else than the swap "
        "device (zswap? the page cache of a previous read?)";
  return flag;
}

std::vector<std::string> other_refault_workers(pid_t own_pid, const std::string& proc) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // pid (comm) state ppid ...: comm may hold blanks and parentheses.
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    const std::string comm = stat.substr(open + 1, close - open - 1);
    if (comm != "tmpfs_refault-w" && comm != "tmpfs_refault-r") continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (!(rest >> state >> ppid) || ppid == own_pid) continue;
    out.push_back("pid " + name + " (" + comm + " of nightjar pid " + std::to_string(ppid) + ")");
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> read_interference(std::uint64_t pages,
                                             std::optional<double> pswpout_during_read,
                                             const std::vector<std::string>& others) {
  std::vector<std::string> why;
  if (!others.empty())
    why.push_back("another swap workload ran around the read (" + join(others) +
                  "): its swap-ins and swap-outs are in this sample's counters; run one "
                  "tmpfs_refault at a time");
  if (pages > 0 && pswpout_during_read &&
      *pswpout_during_read > static_cast<double>(pages) * kPageTolerance)
    why.push_back("pswpout grew by " + num(*pswpout_during_read) +
                  " during the read (more than 1% of the file's " + std::to_string(pages) +
                  " pages): something was pushed to swap meanwhile (memory pressure or another "
                  "swap workload)");
  if (why.empty()) return std::nullopt;
  return join(why, "; ");
}

// --- RefaultRig -------------------------------------------------------------

struct RefaultRig::ChildOutcome {
  ChildReport report;
  std::optional<std::string> failure;
};

RefaultRig::RefaultRig(RigOptions options) : opt_(std::move(options)) {
  page_ = page_size();
  pages_ = opt_.size / page_;
  opt_.phase("setup");
  const CgroupLayout layout = CgroupLayout::detect();
  plan_ = plan_eviction(opt_.evict, layout,
                        opt_.cgroups ? std::string() : memcg_unavailable_reason(layout));
  if (!plan_.method) throw EnvironmentError("tmpfs_refault: " + plan_.reason);
  if (opt_.cgroups && plan_.memcg) plan_.cgroup_version = opt_.cgroups->version();

  // 1. Swap: a zram device of our own, above every other swap area.
  const auto priority = swap_priority_above(read_proc_swaps());
  if (!priority)
    throw EnvironmentError(
        "tmpfs_refault: a swap area already has the highest priority (32767), so nightjar's "
        "zram swap cannot be placed above it; lower that area's priority");
  priority_ = *priority;
  zram_ = std::make_unique<ZramDevice>(opt_.size + margin(opt_.size), opt_.algorithm);
  if (opt_.interrupted()) throw Interrupted();
  swap_ = std::make_unique<SwapArea>(zram_->device_path(), priority_,
                                     "nightjar-" + std::to_string(::getpid()));
  if (opt_.interrupted()) throw Interrupted();

  // 2. The memory cgroup the file is charged to.
  if (plan_.memcg) {
    if (opt_.cgroups) {
      memcg_ = opt_.cgroups->leaf(0);
    } else {
      CgroupSpec spec;
      spec.depth = 1;
      spec.per_client = false;
      own_cgroups_ = std::make_unique<CgroupTree>(layout, opt_.tag, spec, 1);
      memcg_ = own_cgroups_->leaf(0);
    }
  }
  if (opt_.interrupted()) throw Interrupted();

  // 3. The tmpfs holding the file.
  mount_ = std::make_unique<TmpfsMount>(opt_.size + margin(opt_.size), opt_.tag);
  file_ = mount_->path() + "/file";
}

RefaultRig::~RefaultRig() {
  try {
    opt_.phase("teardown");
  } catch (...) {
  }
  // Reverse order of set-up. The file first: unlinking frees its pages and
  // its swap slots, so the swapoff below has nothing to swap back in.
  if (!file_.empty()) ::unlink(file_.c_str());
  mount_.reset();
  own_cgroups_.reset();
  swap_.reset();
  zram_.reset();
}

const std::string& RefaultRig::mount_path() const {
  return mount_->path();
}

const CgroupTree* RefaultRig::tree() const {
  return opt_.cgroups ? opt_.cgroups : own_cgroups_.get();
}

RefaultRig::ChildOutcome RefaultRig::run_child(const char* comm, int kind, MonitorSnapshot* before,
                                               MonitorSnapshot* after) {
  SharedRecords<ChildReport> report(1, "tmpfs_refault: the report of " + std::string(comm));
  const ChildArgs args{kind, file_.c_str(), opt_.size, opt_.block_size, opt_.pattern, &report[0]};
  // The group kills and reaps the child on every path out of here.
  Workers child(WorkersSpec{.name = "tmpfs_refault",
                            .noun = comm,
                            .numbered = false,
                            .comm = comm,
                            .gates = 1,
                            .interrupted = opt_.interrupted});
  child.spawn([&args](const WorkerLink& link) noexcept { return child_main(args, link); });
  if (!memcg_.empty()) tree()->attach(memcg_, child.pid(0));
  if (before) *before = take_snapshot();
  child.open_gate(0);
  const bool reported = child.await(1);  // Interrupted when opt_.interrupted()
  if (after) *after = take_snapshot();
  child.wait_all();

  ChildOutcome out;
  out.report = report[0];
  if (!reported || !out.report.done) {
    if (opt_.interrupted()) throw Interrupted();
    out.failure = child.failure().value_or(child.label(0) + " ended without reporting");
    return out;
  }
  if (out.report.error) {
    const char* const kStage[] = {"?", "mmap of its buffer", "open of the file",
                                  kind == kWriter ? "write" : "read", "close"};
    const int s = out.report.stage >= 1 && out.report.stage <= 4 ? out.report.stage : 0;
    out.failure = child.label(0) + ": " + kStage[s] + " failed after " +
                  std::to_string(out.report.bytes) + " bytes of " + file_ + ": " +
                  errno_text(out.report.error);
  }
  return out;
}

double RefaultRig::write_file() {
  opt_.phase("write");
  ChildOutcome w = run_child("tmpfs_refault-w", kWriter, nullptr, nullptr);
  if (w.failure) throw EnvironmentError("tmpfs_refault: the writer failed: " + *w.failure);
  if (w.report.bytes != opt_.size)
    throw EnvironmentError("tmpfs_refault: the writer wrote " + std::to_string(w.report.bytes) +
                           " of " + std::to_string(opt_.size) + " bytes");
  return static_cast<double>(w.report.t1_ns - w.report.t0_ns) / 1e9;
}

std::uint64_t RefaultRig::resident_pages() const {
  FileMap map(file_, opt_.size);
  if (map.addr == MAP_FAILED)
    throw EnvironmentError("tmpfs_refault: cannot map " + file_ +
                           " to check residency: " + errno_text(map.error));
  std::vector<unsigned char> vec(pages_);
  if (::mincore(map.addr, opt_.size, vec.data()) != 0)
    throw EnvironmentError("tmpfs_refault: mincore on " + file_ + " failed: " + errno_text(errno));
  std::uint64_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

std::optional<std::uint64_t> RefaultRig::memcg_value(const std::string& key) const {
  if (memcg_.empty()) return std::nullopt;
  if (key == "swap" && plan_.cgroup_version == 2) return read_u64(memcg_ + "/memory.swap.current");
  auto stat = tree()->memory_stat(memcg_);
  auto it = stat.find(key);
  if (it == stat.end()) return std::nullopt;
  return it->second;
}

double RefaultRig::evict_force_empty() {
  // One write: the kernel reclaims the whole memcg (swapping shmem out) and
  // returns early with EINTR when a signal arrives.
  const std::string knob = memcg_ + "/memory.force_empty";
  const std::int64_t t0 = clock_ns();
  for (;;) {
    int err = write_knob_once(knob, "0");
    if (err == EINTR && !opt_.interrupted()) continue;
    if (err == EINTR) throw Interrupted();
    if (err)
      throw EnvironmentError("tmpfs_refault: writing " + knob + " failed: " + errno_text(err));
    break;
  }
  return static_cast<double>(clock_ns() - t0) / 1e9;
}

double RefaultRig::evict_reclaim() {
  // memory.reclaim fails with EAGAIN when it reclaimed less than asked: ask
  // again until the memcg's shmem is out or three rounds in a row made no
  // progress.
  const std::int64_t t0 = clock_ns();
  int stalled = 0;
  std::uint64_t shmem = memcg_value("shmem").value_or(pages_ * page_);
  for (int round = 0; round < 1000 && shmem > 0 && stalled < 3; ++round) {
    if (opt_.interrupted()) throw Interrupted();
    const std::uint64_t want = std::max<std::uint64_t>(tree()->memory_current(memcg_), page_);
    const int err = write_knob_once(memcg_ + "/memory.reclaim", std::to_string(want));
    if (err == EINTR) continue;  // the loop head checks the interrupt flag
    if (err && err != EAGAIN)    // EAGAIN: reclaimed less than asked
      throw EnvironmentError("tmpfs_refault: writing " + memcg_ +
                             "/memory.reclaim failed: " + errno_text(err));
    const std::uint64_t now = memcg_value("shmem").value_or(0);
    stalled = now < shmem ? 0 : stalled + 1;
    shmem = now;
  }
  return static_cast<double>(clock_ns() - t0) / 1e9;
}

double RefaultRig::evict_pageout() {
  FileMap map(file_, opt_.size);
  if (map.addr == MAP_FAILED)
    throw EnvironmentError("tmpfs_refault: cannot map " + file_ + ": " + errno_text(map.error));
  // MADV_PAGEOUT reclaims only pages mapped in this process: map them all
  // first (one read per page), untimed.
  volatile char sink = 0;
  for (std::size_t off = 0; off < opt_.size; off += page_) {
    if (off % kPageoutSpan == 0 && opt_.interrupted()) throw Interrupted();
    sink = sink + map.get()[off];
  }
  auto pageout_pass = [&] {
    for (std::size_t off = 0; off < opt_.size; off += kPageoutSpan) {
      if (opt_.interrupted()) throw Interrupted();
      const std::size_t len = std::min<std::size_t>(kPageoutSpan, opt_.size - off);
      if (::madvise(map.get() + off, len, MADV_PAGEOUT) != 0) {
        int e = errno;
        throw EnvironmentError("tmpfs_refault: madvise(MADV_PAGEOUT) failed: " + errno_text(e) +
                               (e == EINVAL ? " (needs Linux 5.4+); write evict: auto" : ""));
      }
    }
  };
  const std::int64_t t0 = clock_ns();
  pageout_pass();
  // The kernel skips pages it cannot isolate at that moment (still in a
  // per-CPU LRU batch, or held by another reclaimer): repeat, like the
  // memory.reclaim loop, while passes still make progress.
  for (std::uint64_t left = resident_pages(), pass = 1; left > 0 && pass < kPageoutPasses; ++pass) {
    pageout_pass();
    const std::uint64_t now = resident_pages();
    if (now >= left) break;
    left = now;
  }
  return static_cast<double>(clock_ns() - t0) / 1e9;
}

EvictResult RefaultRig::evict() {
  opt_.phase("evict");
  EvictResult r;
  const MonitorSnapshot before = take_snapshot();
  try {
    switch (*plan_.method) {
      case EvictMethod::force_empty:
        r.seconds = evict_force_empty();
        break;
      case EvictMethod::reclaim:
        r.seconds = evict_reclaim();
        break;
      case EvictMethod::pageout:
        r.seconds = evict_pageout();
        break;
      case EvictMethod::automatic:
        break;
    }
  } catch (const Interrupted&) {
    throw;
  } catch (const Error&) {
    if (opt_.interrupted()) throw Interrupted();  // EINTR from the kernel's reclaim loop
    throw;
  }
  if (opt_.interrupted()) throw Interrupted();
  const MonitorSnapshot after = take_snapshot();

  EvictCheck check;
  check.pages = pages_;
  check.page_size = page_;
  check.resident = resident_pages();
  check.memcg_shmem = memcg_value("shmem");
  check.memcg_swap = memcg_value("swap");
  check.pswpout = vm_delta(before, after, "pswpout");
  if (auto z = vm_delta(before, after, "swpout_zero"))
    check.swpout_zero = static_cast<std::uint64_t>(*z);
  check.pattern = opt_.pattern;
  check.method = *plan_.method;
  r.counters["tmpfs_refault.evict.resident_pages"] = static_cast<double>(check.resident);
  if (check.pswpout) r.counters["tmpfs_refault.evict.pswpout"] = *check.pswpout;
  if (auto z = vm_delta(before, after, "swpout_zero"))
    r.counters["tmpfs_refault.evict.swpout_zero"] = *z;
  if (check.memcg_shmem)
    r.counters["tmpfs_refault.evict.memcg_shmem_bytes"] = static_cast<double>(*check.memcg_shmem);
  if (check.memcg_swap)
    r.counters["tmpfs_refault.evict.memcg_swap_bytes"] = static_cast<double>(*check.memcg_swap);
  const auto mm = zram_->mm_stat();
  if (auto it = mm.find("orig_data_size"); it != mm.end())
    r.counters["tmpfs_refault.zram.orig_bytes"] = static_cast<double>(it->second);
  if (auto it = mm.find("compr_data_size"); it != mm.end())
    r.counters["tmpfs_refault.zram.compr_bytes"] = static_cast<double>(it->second);
  if (auto it = mm.find("same_pages"); it != mm.end())  // same-filled pages zram holds
    r.counters["tmpfs_refault.zram.same_pages"] = static_cast<double>(it->second);
  r.failure = eviction_failure(check);
  return r;
}

ReadResult RefaultRig::read_file(bool hot) {
  opt_.phase(hot ? "hot_read" : "read");
  ReadResult r;
  MonitorSnapshot before, after;
  ChildOutcome c = run_child("tmpfs_refault-r", kReader, &before, &after);
  if (c.failure) {
    r.failure = "the reader failed: " + *c.failure;
    return r;
  }
  r.bytes = c.report.bytes;
  r.seconds = static_cast<double>(c.report.t1_ns - c.report.t0_ns) / 1e9;
  for (const char* k :
       {"pswpin", "workingset_refault_anon", "swpin_zero", "pgmajfault", "pgpgin", "pswpout"})
    if (auto d = vm_delta(before, after, k)) r.vmstat[k] = *d;
  if (r.bytes != opt_.size)
    r.failure = "the reader read " + std::to_string(r.bytes) + " of the file's " +
                std::to_string(opt_.size) + " bytes";
  return r;
}

}  // namespace refault

namespace {

using refault::EvictMethod;
using refault::Pattern;

/// The test hook: with NIGHTJAR_TMPFS_REFAULT_PHASE_FILE set, the name of
/// each phase is written to that file as it starts (tests send SIGINT in a
/// given phase with it).
std::function<void(std::string_view)> phase_hook() {
  const char* path = std::getenv(refault::kPhaseFileEnv);
  if (!path || !*path) return [](std::string_view) {};
  std::string p = path;
  return [p](std::string_view phase) {
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    std::string line = std::string(phase) + "\n";
    refault::write_all(fd, line.data(), line.size());
    ::close(fd);
  };
}

class TmpfsRefaultSession : public CellSession {
 public:
  TmpfsRefaultSession(refault::RigOptions options, bool hot_reread, RunContext& ctx)
      : ctx_(ctx), base_(std::move(options)), hot_reread_(hot_reread) {}

  IterationResult measure() override {
    if (ctx_.interrupted()) throw Interrupted();
    try {
      return run_iteration();
    } catch (const Interrupted&) {
      throw;
    } catch (const Error&) {
      // A cgroup or sysfs write cut short by the signal (EINTR).
      if (ctx_.interrupted()) throw Interrupted();
      throw;
    }
  }

 private:
  IterationResult run_iteration() {
    refault::RigOptions o = base_;
    o.tag = "tmpfs_refault-" + std::to_string(::getpid()) + "-" + std::to_string(++iteration_);
    IterationResult r;
    refault::RefaultRig rig(o);
    const std::uint64_t pages = rig.pages();
    ctx_.record("tmpfs_refault.zram_device", rig.zram().device_path());
    ctx_.record("tmpfs_refault.zram_algorithm", rig.zram().algorithm());
    ctx_.record("tmpfs_refault.zram_hot_added", rig.zram().created() ? "yes" : "no");
    ctx_.record("tmpfs_refault.swap_priority", std::to_string(rig.swap_priority()));
    ctx_.record("tmpfs_refault.memcg", rig.memcg_dir().empty() ? "none" : rig.memcg_dir());
    ctx_.record("tmpfs_refault.evict_method", std::string(refault::to_string(rig.method())));

    r.counters["tmpfs_refault.pages"] = static_cast<double>(pages);
    r.counters["tmpfs_refault.write_time"] = rig.write_file();

    // Why the sample is not a measurement of refaults (docs/workloads.md
    // "Invalid samples"); the read is still measured and stored, marked.
    std::vector<std::string> invalid;
    refault::EvictResult e = rig.evict();
    r.counters.insert(e.counters.begin(), e.counters.end());
    if (e.failure) invalid.push_back(*e.failure);
    r.metrics["evict_time"] = e.seconds;

    std::vector<std::string> others = refault::other_refault_workers(::getpid());
    refault::ReadResult cold = rig.read_file();
    for (const auto& w : refault::other_refault_workers(::getpid()))
      if (std::find(others.begin(), others.end(), w) == others.end()) others.push_back(w);
    for (const auto& [k, v] : cold.vmstat) r.counters["tmpfs_refault.read." + k] = v;
    if (cold.failure) {
      r.failure = *cold.failure;
      return r;
    }
    if (!(cold.seconds > 0)) {
      r.failure = "the read took no measurable time";
      return r;
    }
    r.metrics["read_time"] = cold.seconds;
    r.metrics["read_throughput"] =
        static_cast<double>(cold.bytes) / static_cast<double>(refault::kMiB) / cold.seconds;
    auto find = [&](const char* k) -> std::optional<double> {
      auto it = cold.vmstat.find(k);
      return it == cold.vmstat.end() ? std::nullopt : std::optional<double>(it->second);
    };
    if (auto why = refault::refault_sanity_flag(pages, find("pswpin"), find("swpin_zero"),
                                                base_.pattern)) {
      if (find("pswpin"))
        invalid.push_back(*why);
      else
        r.flags.push_back(*why);  // no pswpin counter: nothing to check against
    }
    if (auto why = refault::read_interference(pages, find("pswpout"), others))
      invalid.push_back(*why);
    if (!invalid.empty()) r.invalid = join(invalid, "; ");

    if (hot_reread_) {
      refault::ReadResult hot = rig.read_file(true);
      if (hot.failure) {
        r.flags.push_back("the hot re-read failed: " + *hot.failure);
      } else {
        r.metrics["hot_read_time"] = hot.seconds;
        if (auto it = hot.vmstat.find("pswpin"); it != hot.vmstat.end())
          r.counters["tmpfs_refault.hot_read.pswpin"] = it->second;
      }
    }
    return r;
  }

  RunContext& ctx_;
  refault::RigOptions base_;
  bool hot_reread_;
  int iteration_ = 0;
};

/// The `tmpfs_refault` workload.
///
/// Parameters: `size` (file bytes, default 8G as in the post; refused with the
/// numbers when memory does not allow it), `pattern` (mixed|random|zero),
/// `evict` (auto|force_empty|reclaim|pageout), `block_size` (read size, 1M),
/// `hot_reread` (also time a second, resident read), `algorithm` (zram
/// compression algorithm; "" keeps the kernel's default).
///
/// Metrics per iteration: `read_time` s (lower, Amean): the cold sequential
/// read; `read_throughput` MiB/s (higher, Hmean): size / read_time;
/// `evict_time` s (lower, Amean): the eviction; `hot_read_time` s (lower,
/// Amean, only with hot_reread). Counters (no direction: they explain a
/// sample, they are not a figure of merit): `tmpfs_refault.pages`,
/// `tmpfs_refault.read.{pswpin,workingset_refault_anon,swpin_zero,pgmajfault,
/// pgpgin,pswpout}` (/proc/vmstat deltas over the cold read),
/// `tmpfs_refault.evict.{pswpout,swpout_zero,resident_pages,memcg_shmem_bytes,
/// memcg_swap_bytes}`, `tmpfs_refault.zram.{orig_bytes,compr_bytes,same_pages}` and
/// `tmpfs_refault.write_time`. A sample is invalid (docs/workloads.md "Invalid
/// samples") when the eviction did not put the file in swap
/// (eviction_failure()), when the read's pswpin differs from the file's pages
/// by more than 1% ("this sample did not measure refaults: ...") or when
/// another swap workload disturbed the read (read_interference()). With a
/// job `cgroup:` tree the file is charged to its leaf 0
/// (cgroup_clients: the default, 1).
class TmpfsRefaultWorkload : public Workload {
 public:
  std::string_view name() const override { return "tmpfs_refault"; }
  std::string_view summary() const override {
    return "read time of a memcg-charged tmpfs file pushed to swap on zram: every page refaults";
  }

  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "size",
         .type = ParamType::size,
         .unit = "bytes",
         .default_value = "8G",
         .doc = "file size, a multiple of the page size (the seed: 8G); refused with the numbers "
                "when the file and its zram copy do not fit in 90% of memory",
         .min = 1048576.0},
        {.name = "pattern",
         .type = ParamType::choice,
         .default_value = "mixed",
         .doc = "file content: mixed = per 4 KiB 1 KiB random + 3 KiB zeros (~4:1 in zram); "
                "random (incompressible); zero (warned: its samples are invalid where the swap "
                "layer keeps zero pages off zram, 6.12+, and refault without decompression "
                "before)",
         .choices = {"mixed", "random", "zero"}},
        {.name = "evict",
         .type = ParamType::choice,
         .default_value = "auto",
         .doc = "how the file goes to swap: auto (force_empty on cgroup v1, reclaim on v2), "
                "force_empty (v1 memory.force_empty), reclaim (v2 memory.reclaim), pageout "
                "(MADV_PAGEOUT; no memcg needed)",
         .choices = {"auto", "force_empty", "reclaim", "pageout"}},
        {.name = "block_size",
         .type = ParamType::size,
         .unit = "bytes",
         .default_value = "1M",
         .doc = "bytes per read(2) of the timed read",
         .min = 512.0,
         .max = 1073741824.0},
        {.name = "hot_reread",
         .type = ParamType::flag,
         .default_value = "off",
         .doc = "also time a second read of the file once it is resident (hot_read_time)"},
        {.name = "algorithm",
         .type = ParamType::text,
         .default_value = "",
         .doc = "zram compression algorithm (lzo-rle, lz4, zstd...); empty: the kernel's "
                "default"},
    };
  }

  std::vector<MetricDescriptor> metrics() const override {
    return {
        {.name = "read_time",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "cold sequential read of the whole file, every page refaulting from zram: first "
                "read(2) to end of file, timed in the reader"},
        {.name = "read_throughput",
         .unit = "MiB/s",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "file size / read_time"},
        {.name = "evict_time",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "time of the eviction: the force_empty write, the memory.reclaim loop or the "
                "MADV_PAGEOUT calls"},
        {.name = "hot_read_time",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "second read of the resident file (hot_reread: on only)"},
    };
  }

  std::vector<std::string> requirements() const override {
    return {"root", "a memory cgroup controller, v1 or v2 (except evict=pageout)",
            "zram: /sys/class/zram-control/hot_add or an unused zram device", "mkswap (util-linux)",
            "zswap disabled"};
  }
  std::vector<std::string> sensitive_facts() const override {
    return {"thp.shmem_enabled", "zswap.enabled"};  // huge tmpfs pages; swap-outs kept in RAM
  }

  void validate(const Cell& cell, const MachineFacts& machine) const override {
    const std::uint64_t size = cell.bytes("size");
    const std::uint64_t page = refault::page_size();
    if (size % page != 0 || size % refault::kPatternUnit != 0)
      throw ParamError{"size", "size " + size_text(cell, size) +
                                   " is not a multiple of the page "
                                   "size (" +
                                   std::to_string(page) +
                                   " bytes); write a size such as "
                                   "256M or 8G"};
    auto pattern = refault::pattern_from_string(cell.text("pattern"));
    if (!pattern)
      throw ParamError{"pattern", "'" + cell.text("pattern") +
                                      "' is not a pattern; write mixed, "
                                      "random or zero"};
    if (!refault::evict_from_string(cell.text("evict")))
      throw ParamError{"evict", "'" + cell.text("evict") +
                                    "' is not an eviction method; write "
                                    "auto, force_empty, reclaim or pageout"};
    if (machine.mem_total_bytes > 0) {
      const refault::MemoryNeed need = refault::memory_need(size, *pattern);
      const double usable =
          static_cast<double>(machine.mem_total_bytes) * (1 - refault::kMemHeadroom);
      if (static_cast<double>(need.total) > usable) {
        const std::uint64_t fit = refault::largest_size(machine.mem_total_bytes, *pattern);
        char ratio[16];
        std::snprintf(ratio, sizeof ratio, "%.2f", need.ratio);
        throw ParamError{
            "size",
            "size " + size_text(cell, size) + " with pattern " + cell.text("pattern") +
                " needs about " + human_bytes(need.total) + " of memory (the " +
                human_bytes(need.file) + " file in tmpfs plus about " + human_bytes(need.zram) +
                " for its copy in zram, " + ratio +
                " of it), more than 90% of this machine's MemTotal " +
                human_bytes(machine.mem_total_bytes) + " (" +
                human_bytes(static_cast<std::uint64_t>(usable)) + "); " +
                (fit > 0 ? "write size: " + format_size(fit) + " or less"
                         : std::string("this machine has too little memory for the workload"))};
      }
    }
    const std::string& algorithm = cell.text("algorithm");
    if (!algorithm.empty()) {
      const std::vector<std::string> available = zram_algorithms();
      if (!available.empty() &&
          std::find(available.begin(), available.end(), algorithm) == available.end()) {
        std::string list;
        for (const auto& a : available) list += (list.empty() ? "" : " ") + a;
        throw ParamError{"algorithm", "'" + algorithm +
                                          "' is not a zram compression algorithm "
                                          "of this kernel (available: " +
                                          list +
                                          "); write one of "
                                          "them, or leave algorithm out for the default"};
      }
    }
  }

  std::optional<std::string> unmet_requirement(const Cell& cell) const override {
    if (::geteuid() != 0)
      return std::string(
          "needs root: it sets up a zram swap device, mounts a tmpfs and creates "
          "a memory cgroup; run nightjar as root (sudo)");
    if (refault::zswap_enabled())
      return std::string("zswap is enabled (") + refault::kZswapEnabled +
             " = Y): swapped-out pages stop in zswap and never reach zram, so the read would "
             "not measure zram refaults; disable it for the run: echo N > " +
             refault::kZswapEnabled;
    if (find_mkswap().empty())
      return std::string("mkswap not found (PATH, /usr/sbin, /sbin); install util-linux");
    ZramSelection zram = select_zram_device();
    if (!zram.choice) return zram.reason;
    auto method = refault::evict_from_string(cell.text("evict"));
    if (!method) return std::string("unknown evict method '") + cell.text("evict") + "'";
    const CgroupLayout layout = CgroupLayout::detect();
    refault::EvictPlan plan =
        refault::plan_eviction(*method, layout, memcg_unavailable_reason(layout));
    if (!plan.method) return plan.reason;
    return std::nullopt;
  }

  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    refault::RigOptions o;
    o.size = cell.bytes("size");
    o.pattern = refault::pattern_from_string(cell.text("pattern")).value_or(Pattern::mixed);
    o.evict = refault::evict_from_string(cell.text("evict")).value_or(EvictMethod::automatic);
    o.block_size = static_cast<std::size_t>(cell.bytes("block_size"));
    o.algorithm = cell.text("algorithm");
    o.cgroups = ctx.cgroups;
    o.interrupted = ctx.interrupted;
    o.phase = phase_hook();

    const CgroupLayout layout = CgroupLayout::detect();
    refault::EvictPlan plan = refault::plan_eviction(
        o.evict, layout, ctx.cgroups ? std::string() : memcg_unavailable_reason(layout));
    if (!plan.method) throw EnvironmentError("tmpfs_refault: " + plan.reason);
    ctx.record("tmpfs_refault.evict_method", std::string(refault::to_string(*plan.method)));
    if (!plan.memcg)
      ctx.warn("tmpfs_refault: no memory cgroup is used (" + memcg_unavailable_reason(layout) +
               "): the file's pages and their refaults are not charged to a memcg, so the memcg "
               "part of the refault path is not measured");
    if (o.pattern == Pattern::zero)
      ctx.warn(refault::zero_pattern_warning(refault::swap_has_zero_map()));
    const refault::MemoryNeed need = refault::memory_need(o.size, o.pattern);
    const std::uint64_t available = refault::mem_available_bytes();
    if (available && need.total > available)
      ctx.warn("tmpfs_refault: size " + size_text(cell, o.size) + " needs about " +
               human_bytes(need.total) + " but only " + human_bytes(available) +
               " is available (MemAvailable): writing the file will push other memory out; write "
               "a smaller size");
    return std::make_unique<TmpfsRefaultSession>(std::move(o), cell.flag("hot_reread"), ctx);
  }
};

NIGHTJAR_WORKLOAD(TmpfsRefaultWorkload);

}  // namespace

}  // namespace nightjar

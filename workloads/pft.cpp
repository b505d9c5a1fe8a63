// pft: the page fault test (docs/reference.md "pft, the page fault test"): one anonymous
// private mapping split into equal page-aligned slices, one per worker; the
// workers are released together by a start barrier, each writes one byte per
// page of its slice (one zero-fill minor fault per page) between two reads of
// its wall clock and CPU clock. The passes are laid out as the original pft
// (gormanm/pft, pft.c launch()/start_workers()/test_main()) lays out its run;
// docs/workloads.md lists what its timed window holds, fault for fault:
//  - worker 0 is the session's own thread, as pft's launch task runs test 0
//    itself: with clients=1 nothing is created or forked, so `threads` and
//    `processes` make the same pass, in a single-threaded mm, as pft -t 1
//    and pft -n 1 do. (A new thread per pass, a two-threaded mm, or a
//    child forked from the runner made the pass before: issue 18; the
//    before/after measurements are in docs/workloads.md.)
//  - threads mode: the session maps the whole size, creates workers
//    1..N-1, waits until each has reached the barrier, opens it and runs
//    worker 0's pass; munmap follows the join.
//  - processes mode: workers 1..N-1 are forked per iteration (a fresh mm
//    each, as pft -n) as a Workers group (workloads/sys/process.h); each maps
//    its own slice (pft's children inherit the launch task's untouched
//    mapping: the same faults), reports ready and waits at the barrier.
//    The session maps slice 0 and opens the barrier once all are ready.
//    Children send their clocks back through a MAP_SHARED anonymous region
//    (SharedRecords) and munmap after the pass.
//  - the barrier: while every worker has a CPU of its own the waiting
//    workers spin on the start word, as pft's spin on comm->go, so each is on
//    its CPU when the gate opens; with more workers than CPUs they sleep on
//    a futex (threads) or the group's pipe gate (processes) instead.
// A worker's timed region is: CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, the
// touch loop, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC; getrusage(RUSAGE_THREAD)
// is read just outside it for minflt and system time (pft reads
// CLOCK_REALTIME and getrusage inside its window: two system calls as well).
#include "results/model/params.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

/// MemTotal fraction left free by validate(): pft faults in every byte of
/// `size`, so the kernel, page tables and nightjar itself need the rest.
constexpr double kMemHeadroom = 0.10;
/// |minflt − pages| / pages above which a sample is flagged (as pft warns).
constexpr double kMinfltTolerance = 0.10;
constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The base page size in bytes (4096 on x86-64): one fault per page.
std::size_t page_size() {
  static const std::size_t page = [] {
    long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return page;
}

std::int64_t clock_ns(clockid_t clock) noexcept {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t timeval_ns(const timeval& tv) noexcept {
  return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000 +
         static_cast<std::int64_t>(tv.tv_usec) * 1000;
}

/// The first line of a small sysfs/procfs file, "" when unreadable.
std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// The selected value of a sysfs choice line: "always [madvise] never" -> "madvise".
std::string selected_choice(const std::string& line) {
  auto open = line.find('[');
  auto close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(open + 1, close - open - 1);
}

/// MemAvailable from /proc/meminfo in bytes, 0 when unknown.
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

/// What one worker measured. Written once, after the worker's timed region;
/// 128-byte aligned so neighbouring workers never share a cache line pair.
struct alignas(128) WorkerRecord {
  std::int64_t wall_start_ns;  ///< CLOCK_MONOTONIC before the first touch
  std::int64_t wall_end_ns;    ///< CLOCK_MONOTONIC after the last touch
  std::int64_t cpu_ns;         ///< CLOCK_THREAD_CPUTIME_ID delta: user+sys ns
  std::int64_t stime_ns;       ///< getrusage(RUSAGE_THREAD) ru_stime delta, ns
  std::int64_t minflt;         ///< getrusage(RUSAGE_THREAD) ru_minflt delta
  std::int64_t pages;          ///< pages touched
  int error;                   ///< errno of a failed setup call (child mmap), 0 = none
  int done;                    ///< 1 once the fields above are complete
};

/// The touch loop: one byte per page, one zero-fill minor fault per page.
/// volatile so every store is issued, in order. Inlined into the timed code as
/// a bare loop would be: an out-of-line (noinline) copy of this very loop
/// measured ~9% fewer faults/sec with 2 threads on the reference machine (AMD
/// EPYC KVM guest) against bench/pft_vs_bare, for reasons not understood.
/// Not instrumented by AddressSanitizer: its shadow-memory checks would fault
/// in one shadow page per 8 pages touched and count them as the kernel's.
[[gnu::always_inline, gnu::no_sanitize_address]] inline void touch_pages(
    char* base, std::size_t pages, std::size_t page) noexcept {
  volatile char* p = base;
  for (std::size_t i = 0; i < pages; ++i) p[i * page] = 1;
}

/// One worker's timed pass over its slice. Async-signal-safe (runs in forked
/// children): system calls and plain stores only.
[[gnu::no_sanitize_address]] void fault_slice(char* base, std::size_t pages, std::size_t page,
                                              WorkerRecord* out) noexcept {
  rusage ru0{}, ru1{};
  ::getrusage(RUSAGE_THREAD, &ru0);
  const std::int64_t w0 = clock_ns(CLOCK_MONOTONIC);
  const std::int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  touch_pages(base, pages, page);
  const std::int64_t c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  const std::int64_t w1 = clock_ns(CLOCK_MONOTONIC);
  ::getrusage(RUSAGE_THREAD, &ru1);
  out->wall_start_ns = w0;
  out->wall_end_ns = w1;
  out->cpu_ns = c1 - c0;
  out->stime_ns = timeval_ns(ru1.ru_stime) - timeval_ns(ru0.ru_stime);
  out->minflt = ru1.ru_minflt - ru0.ru_minflt;
  out->pages = static_cast<std::int64_t>(pages);
  out->done = 1;
}

/// Blocks the signals the runner handles, so a worker is never interrupted
/// mid-pass: the runner's thread gets SIGINT/SIGTERM and the session checks
/// ctx.interrupted() once the pass is over (a pass is short: about a second
/// per GiB at 0.25-0.5 M faults/sec per worker).
void block_interrupts() noexcept {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

/// An mmap'ed region, unmapped on destruction.
class Mapping {
 public:
  Mapping(std::size_t bytes, int flags) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) {
      error_ = errno;
      bytes_ = 0;
    } else {
      addr_ = static_cast<char*>(p);
    }
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }
  void reset() noexcept {
    if (addr_) ::munmap(addr_, bytes_);
    addr_ = nullptr;
    bytes_ = 0;
  }
  char* get() const { return addr_; }
  int error() const { return error_; }

 private:
  char* addr_ = nullptr;
  std::size_t bytes_ = 0;
  int error_ = 0;
};

/// One turn of a busy wait: the CPU's spin-loop hint where it has one.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// The values of a start word (pft's comm->go).
constexpr std::uint32_t kClosed = 0, kGo = 1, kAbort = 2;

/// Spins until `word` leaves kClosed and returns what it became, as pft's
/// workers spin on comm->go: a spinning worker is on its CPU when the gate
/// opens, so its timed region starts without a wake-up. Plain loads only
/// (async-signal-safe: forked workers spin on a word in shared memory).
inline std::uint32_t spin_until_open(std::uint32_t& word) noexcept {
  std::atomic_ref<std::uint32_t> open(word);
  std::uint32_t v = open.load(std::memory_order_acquire);
  for (; v == kClosed; v = open.load(std::memory_order_acquire)) cpu_relax();
  return v;
}

/// The threads-mode start barrier: workers 1..N-1 count themselves in and
/// wait on `open` (spinning, or on a futex when `spin` is false); the
/// session waits for all arrivals, opens it and runs worker 0 itself.
struct StartGate {
  explicit StartGate(bool spin_wait) : spin(spin_wait) {}
  const bool spin;
  std::atomic<std::uint32_t> arrived{0};
  std::uint32_t open = kClosed;  ///< accessed through std::atomic_ref only

  /// Returns true when the gate opened with kGo (false: abort).
  bool arrive_and_wait() {
    arrived.fetch_add(1, std::memory_order_acq_rel);
    arrived.notify_all();
    if (spin) return spin_until_open(open) == kGo;
    std::atomic_ref<std::uint32_t> word(open);
    word.wait(kClosed, std::memory_order_acquire);
    return word.load(std::memory_order_acquire) == kGo;
  }
  void wait_for(std::uint32_t n) {
    for (std::uint32_t a = arrived.load(std::memory_order_acquire); a < n;
         a = arrived.load(std::memory_order_acquire))
      arrived.wait(a, std::memory_order_acquire);
  }
  void release(std::uint32_t how) {
    std::atomic_ref<std::uint32_t> word(open);
    word.store(how, std::memory_order_release);
    if (!spin) word.notify_all();
  }
};

/// The number of CPUs this process may run on (sched_getaffinity), 0 when
/// unknown. pft clips its tasks to this count; nightjar spins at the start
/// barrier only when every worker has a CPU of its own.
unsigned allowed_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return static_cast<unsigned>(CPU_COUNT(&set));
}

/// The exit status of a forked worker whose mmap failed (the record says why).
constexpr int kChildSetupFailed = 2;

/// The state of one pft cell: its slices and the shared result records.
class PftSession : public CellSession {
 public:
  PftSession(const Cell& cell, RunContext& ctx)
      : ctx_(ctx),
        processes_(cell.text("mode") == "processes"),
        workers_(static_cast<std::size_t>(std::max<std::int64_t>(cell.integer("clients"), 1))),
        page_(page_size()),
        pages_(cell.bytes("size") / page_),
        spin_(workers_ <= std::max(allowed_cpus(), 1u)),
        records_(workers_, "pft: the workers' results"),
        go_(1, "pft: the start barrier") {
    if (pages_ < workers_)
      throw EnvironmentError("pft: size " + size_text(cell, cell.bytes("size")) +
                             " is fewer pages than clients=" + std::to_string(workers_) +
                             "; write a larger size or fewer clients");
    // Equal page-aligned slices; the first (pages % workers) get one more
    // page, so the pages of all slices add up to size / page exactly.
    slices_.reserve(workers_);
    std::size_t offset = 0;
    for (std::size_t i = 0; i < workers_; ++i) {
      std::size_t n = pages_ / workers_ + (i < pages_ % workers_ ? 1 : 0);
      slices_.push_back({offset, n});
      offset += n;
    }

    if (workers_ > ctx.machine.cpus)
      ctx.warn("pft: clients=" + std::to_string(workers_) + " is more than the " +
               std::to_string(ctx.machine.cpus) +
               " online CPUs: workers time-share CPUs, so faults/sec stops scaling and "
               "faults/cpu includes scheduling (pft itself clips workers to the CPU count)");
    std::uint64_t available = mem_available_bytes();
    if (available && pages_ * page_ > available)
      ctx.warn("pft: size " + size_text(cell, pages_ * page_) + " is more than MemAvailable (" +
               human_bytes(available) +
               "): the passes will reclaim or swap and measure that as well as zero-fill faults");
    std::string thp = first_line(kThpPath);
    if (!thp.empty()) ctx.record("pft.thp_enabled", selected_choice(thp));
  }

  /// An untimed pass over the same size: first-touch memory of a fresh VM
  /// faults several times slower (the host backs the guest's memory).
  void warmup() override {
    if (ctx_.interrupted()) throw Interrupted();
    std::optional<std::string> failure = run_pass();
    if (ctx_.interrupted()) throw Interrupted();
    if (failure) ctx_.warn("pft: the warm-up pass failed: " + *failure);
  }

  IterationResult measure() override {
    if (ctx_.interrupted()) throw Interrupted();
    IterationResult result;
    result.failure = run_pass();
    if (ctx_.interrupted()) throw Interrupted();
    if (result.failure) return result;
    summarize(result);
    return result;
  }

 private:
  struct Slice {
    std::size_t first_page;
    std::size_t pages;
  };

  /// One pass of every worker; the records hold the results afterwards.
  /// Returns the reason of a failed sample; throws EnvironmentError when the
  /// pass cannot be set up and Interrupted when a worker died of an interrupt.
  std::optional<std::string> run_pass() {
    records_.clear();
    go_.clear();
    return processes_ ? run_processes_pass() : run_threads_pass();
  }

  /// "worker I did not finish its pass" for the first record not done.
  std::optional<std::string> unfinished_worker() const {
    for (std::size_t i = 0; i < workers_; ++i)
      if (!records_[i].done) return "worker " + std::to_string(i) + " did not finish its pass";
    return std::nullopt;
  }

  /// Threads mode, as pft -t N: the session maps the whole size, creates
  /// workers 1..N-1, waits until each has reached the barrier, opens it and
  /// runs worker 0's pass itself; it joins the others and unmaps the region.
  /// With N = 1 no thread is created (pft -t 1 faults in its launch thread).
  std::optional<std::string> run_threads_pass() {
    Mapping map(pages_ * page_, MAP_PRIVATE | MAP_ANONYMOUS);
    if (!map.get())
      throw EnvironmentError("pft: mmap of " + human_bytes(pages_ * page_) +
                             " failed: " + errno_text(map.error()) +
                             "; free memory or write a smaller size such as 20%mem");
    StartGate gate(spin_);
    std::vector<std::thread> threads;
    threads.reserve(workers_ - 1);
    auto join_all = [&] {
      for (auto& t : threads)
        if (t.joinable()) t.join();
    };
    try {
      for (std::size_t i = 1; i < workers_; ++i) {
        char* base = map.get() + slices_[i].first_page * page_;
        WorkerRecord* rec = &records_[i];
        std::size_t pages = slices_[i].pages;
        std::size_t page = page_;
        threads.emplace_back([&gate, base, rec, pages, page] {
          block_interrupts();
          ::pthread_setname_np(::pthread_self(), "pft-worker");
          if (gate.arrive_and_wait()) fault_slice(base, pages, page, rec);
        });
      }
    } catch (const std::system_error& e) {
      gate.release(kAbort);
      join_all();
      throw EnvironmentError("pft: cannot create worker thread " +
                             std::to_string(threads.size() + 2) + " of " +
                             std::to_string(workers_) + ": " + e.what() +
                             "; lower clients or raise the thread limit (ulimit -u)");
    }
    gate.wait_for(static_cast<std::uint32_t>(workers_ - 1));
    gate.release(kGo);
    fault_slice(map.get(), slices_[0].pages, page_, &records_[0]);
    join_all();
    map.reset();
    return unfinished_worker();
  }

  /// Processes mode, as pft -n N: workers 1..N-1 are forked for this pass
  /// (a fresh mm each) as a Workers group (workloads/sys/process.h); each
  /// maps its own slice, reports ready and waits at the start barrier. The
  /// session, worker 0 in its own mm as pft's launch process is, maps slice
  /// 0, waits for every report, opens the barrier and makes its pass. With
  /// N = 1 nothing is forked (pft -n 1 faults in its launch process).
  std::optional<std::string> run_processes_pass() {
    std::optional<Workers> group;
    if (workers_ > 1) {
      // The group kills and reaps every worker on every path out of here.
      group.emplace(WorkersSpec{.name = "pft",
                                .noun = "worker",
                                .numbered = true,
                                .comm = "pft-worker",
                                .gates = 1,
                                .interrupted = ctx_.interrupted});
      auto body = [this](const WorkerLink& link) noexcept { return forked_pass(link); };
      for (std::size_t i = 1; i < workers_; ++i) group->spawn(body, workers_ - 1);
    }
    Mapping map(slices_[0].pages * page_, MAP_PRIVATE | MAP_ANONYMOUS);
    if (!map.get())
      throw EnvironmentError("pft: worker 0 could not mmap its " +
                             human_bytes(slices_[0].pages * page_) +
                             " slice: " + errno_text(map.error()) +
                             "; free memory or write a smaller size such as 20%mem");
    if (group) {
      // Every worker reports ready (its slice mapped, or the mmap failed) or
      // dies; only then is the start barrier opened.
      const bool ready = group->await(1);
      for (std::size_t i = 1; i < workers_; ++i)
        if (records_[i].error)
          throw EnvironmentError("pft: worker " + std::to_string(i) + " could not mmap its " +
                                 human_bytes(slices_[i].pages * page_) +
                                 " slice: " + errno_text(records_[i].error) +
                                 "; free memory or write a smaller size such as 20%mem");
      if (!ready) {
        // Judge the workers that died on their own before the rest is killed.
        std::optional<std::string> why = group->failure();
        return why ? why : std::optional<std::string>("a worker exited before the start barrier");
      }
      if (spin_)
        std::atomic_ref<std::uint32_t>(go_[0]).store(kGo, std::memory_order_release);
      else
        group->open_gate(0);
    }
    fault_slice(map.get(), slices_[0].pages, page_, &records_[0]);
    map.reset();
    if (group) {
      group->wait_all();
      if (auto why = group->failure()) return why;
    }
    return unfinished_worker();
  }

  /// A forked worker (processes mode, a fresh mm per pass): maps its slice,
  /// reports ready, waits at the start barrier (spinning on the shared start
  /// word as pft's workers do, or at the group's gate), makes its timed pass.
  /// Keeps the worker contract of workloads/sys/process.h: system calls and
  /// plain stores only.
  int forked_pass(const WorkerLink& link) const noexcept {
    const std::size_t index = link.index() + 1;  // worker 0 is the session
    const std::size_t pages = slices_[index].pages;
    WorkerRecord* record = &records_[index];
    const std::size_t bytes = pages * page_;
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) record->error = errno;
    link.report();
    if (record->error) return kChildSetupFailed;
    if (spin_) {
      if (spin_until_open(go_[0]) != kGo) return 0;
    } else {
      link.wait_gate(0);
    }
    fault_slice(static_cast<char*>(p), pages, page_, record);
    ::munmap(p, bytes);
    return 0;
  }

  /// Turns the records of a completed pass into metrics, counters and flags.
  void summarize(IterationResult& result) const {
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    std::int64_t cpu_ns = 0, stime_ns = 0, minflt = 0, pages = 0;
    for (std::size_t i = 0; i < workers_; ++i) {
      const WorkerRecord& r = records_[i];
      start = std::min(start, r.wall_start_ns);
      end = std::max(end, r.wall_end_ns);
      cpu_ns += r.cpu_ns;
      stime_ns += r.stime_ns;
      minflt += r.minflt;
      pages += r.pages;
    }
    const double elapsed = static_cast<double>(end - start) / 1e9;
    const double cpu = static_cast<double>(cpu_ns) / 1e9;
    const double npages = static_cast<double>(pages);
    if (!(elapsed > 0) || !(cpu > 0)) {
      result.failure = "the pass took no measurable time; write a larger size";
      return;
    }
    result.metrics["faults_per_sec"] = npages / elapsed;
    result.metrics["faults_per_cpu"] = npages / cpu;
    result.metrics["system_time"] = static_cast<double>(stime_ns) / 1e9;
    result.metrics["elapsed"] = elapsed;
    result.counters["pft.pages"] = npages;
    result.counters["pft.minflt"] = static_cast<double>(minflt);

    const double diff = std::fabs(static_cast<double>(minflt) - npages) / npages;
    if (diff > kMinfltTolerance) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f%%", diff * 100);
      std::string flag = "minor faults (" + std::to_string(minflt) +
                         ") differ from pages touched (" + std::to_string(pages) + ") by " + pct +
                         ": ";
      std::string thp = first_line(kThpPath);
      if (selected_choice(thp) == "always")
        flag += "transparent huge pages are probably on (" + std::string(kThpPath) + " = " + thp +
                "); run with THP disabled or record it as a variant";
      else
        flag += "THP is not the cause (" + std::string(kThpPath) + " = " +
                (thp.empty() ? std::string("unreadable") : thp) +
                "); check for memory pressure (reclaim, swap) during the pass";
      result.flags.push_back(std::move(flag));
    }
  }

  RunContext& ctx_;
  bool processes_;
  std::size_t workers_;
  std::size_t page_;
  std::size_t pages_;  ///< total pages touched per pass: size / page
  /// Workers wait at the start barrier spinning (pft's busy wait) when each
  /// has a CPU of its own; with more workers than CPUs a spinner would take
  /// the CPU of a worker in its pass, so they sleep (futex, pipe) instead.
  bool spin_;
  std::vector<Slice> slices_;
  SharedRecords<WorkerRecord> records_;  ///< written by the workers (threads or processes)
  SharedRecords<std::uint32_t> go_;      ///< processes mode: the start word (kClosed, kGo)
};

/// The `pft` workload (page fault test).
///
/// Parameters: `clients` (workers faulting concurrently), `mode`
/// (threads|processes: pft -t / -n), `size` (bytes faulted per iteration,
/// split evenly over the workers; mmtests uses 20% of MemTotal: `20%mem`).
///
/// Metrics per iteration:
///  - `faults_per_sec` faults/sec (higher, Hmean): pages / (latest worker end −
///    earliest worker start), pft's "fault/wsec";
///  - `faults_per_cpu` faults/cpu-sec (higher, Hmean): pages / Σ worker CPU
///    seconds (user+sys), pft's "flt/cpu/s";
///  - `system_time` s (lower, Amean): Σ worker system CPU seconds;
///  - `elapsed` s (lower, Amean): latest worker end − earliest worker start.
/// Counters: `pft.pages` (pages touched), `pft.minflt` (minor faults of the
/// workers over their timed regions). A sample whose minflt differs from the
/// pages by more than 10% carries a flag (THP is the usual cause).
class PftWorkload : public Workload {
 public:
  std::string_view name() const override { return "pft"; }
  std::string_view summary() const override {
    return "page fault test: zero-fill minor faults/sec of N threads or processes (pft, mmtests)";
  }

  std::vector<ParamDescriptor> params() const override {
    return {
        {.name = "clients",
         .type = ParamType::count,
         .unit = "workers",
         .default_value = "1",
         .doc = "workers faulting concurrently (pft -t/-n N); more than the CPUs is allowed and "
                "warned",
         .min = 1.0},
        {.name = "mode",
         .type = ParamType::choice,
         .default_value = "threads",
         .doc = "threads share one mm and contend on its locks (pft -t); processes each fault "
                "their slice into their own mm (pft -n)",
         .choices = {"threads", "processes"}},
        {.name = "size",
         .type = ParamType::size,
         .unit = "bytes",
         .default_value = "256M",
         .doc = "total bytes faulted per iteration, split evenly over the workers, in whole "
                "pages (mmtests: 20%mem)",
         .min = static_cast<double>(page_size())},
    };
  }

  std::vector<std::string> sensitive_facts() const override {
    return {"thp.enabled"};  // huge pages: one fault maps 512 pages
  }
  std::vector<MetricDescriptor> metrics() const override {
    return {
        {.name = "faults_per_sec",
         .unit = "faults/sec",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "pages / (latest worker end - earliest worker start); pft's fault/wsec"},
        {.name = "faults_per_cpu",
         .unit = "faults/cpu-sec",
         .direction = Direction::higher_is_better,
         .mean = MeanKind::harmonic,
         .doc = "pages / sum of worker CPU seconds (user+sys); pft's flt/cpu/s"},
        {.name = "system_time",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "sum of worker system CPU seconds over the pass (mmtests system-N)",
         .zero_is_measured = true},
        {.name = "elapsed",
         .unit = "s",
         .direction = Direction::lower_is_better,
         .mean = MeanKind::arithmetic,
         .doc = "latest worker end - earliest worker start (mmtests elapsed-N)"},
    };
  }

  /// Checks the size against memory and the worker count. The size must
  /// leave kMemHeadroom (10%) of MemTotal free: every byte of it is faulted
  /// in, and the kernel, the page tables and nightjar need the rest.
  void validate(const Cell& cell, const MachineFacts& machine) const override {
    const std::string& mode = cell.text("mode");
    if (mode != "threads" && mode != "processes")
      throw ParamError{"mode", "'" + mode + "' is not a pft mode; write threads or processes"};
    const std::int64_t clients = cell.integer("clients");
    if (clients < 1)
      throw ParamError{"clients", "clients must be at least 1; write clients: 1 or more"};
    const std::uint64_t size = cell.bytes("size");
    const std::uint64_t page = page_size();
    if (size < page)
      throw ParamError{"size", "size " + size_text(cell, size) + " is less than one page (" +
                                   std::to_string(page) +
                                   " bytes); write a size such as 256M or 20%mem"};
    if (machine.mem_total_bytes > 0) {
      const double limit = static_cast<double>(machine.mem_total_bytes) * (1 - kMemHeadroom);
      if (static_cast<double>(size) > limit)
        throw ParamError{"size", "size " + size_text(cell, size) +
                                     " is more than 90% of this machine's memory (MemTotal " +
                                     human_bytes(machine.mem_total_bytes) +
                                     "); pft faults in every byte of it; write a smaller size "
                                     "such as 20%mem"};
    }
    if (size / page < static_cast<std::uint64_t>(clients))
      throw ParamError{"size",
                       "size " + size_text(cell, size) + " is " + std::to_string(size / page) +
                           " pages, fewer than one per worker (clients=" + std::to_string(clients) +
                           "); write a size of at least " + std::to_string(clients) +
                           " pages or fewer clients"};
  }

  /// LKP's pft testcase (lkp-tests' pft job file and its pft run script):
  /// `pft -m SIZE -n nr_task -F`, processes faulting 20% of memory (or
  /// test_memory_size), repeated for runtime seconds or `iterations` times
  /// (docs/data.md "LKP trees as nightjar runs").
  std::optional<LkpMapping> lkp_mapping() const override {
    return LkpMapping{
        .testcase = "pft",
        .params =
            {
                {.lkp = "nr_task", .param = "clients", .rule = LkpParamRule::percent_cpus},
                {.lkp = "test_memory_size", .param = "size"},
                {.lkp = "runtime",
                 .rule = LkpParamRule::ignored,
                 .why = "how long LKP repeats pft; each pass is one sample"},
                {.lkp = "iterations",
                 .rule = LkpParamRule::ignored,
                 .why = "how many times LKP repeats pft; each pass is one sample"},
            },
        .metrics = {{.lkp = "pft.faults_per_sec_per_cpu", .metric = "faults_per_cpu"}},
        .fixed = {{"mode", "processes"}, {"size", "20%mem"}},
    };
  }

  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<PftSession>(cell, ctx);
  }
};

NIGHTJAR_WORKLOAD(PftWorkload);

}  // namespace

}  // namespace nightjar

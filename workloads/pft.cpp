// pft: the page fault test (shared/reference/workloads.md §2), reimplemented
// from its description: one anonymous private mapping split into equal
// page-aligned slices, one per worker; the workers are released together by a
// start barrier, each writes one byte per page of its slice (one zero-fill
// minor fault per page) between two reads of its wall clock and CPU clock.
//
// Where the work happens, so that the timed region holds only the faults:
//  - threads mode: the session maps the whole size before the workers start,
//    creates the threads, waits until every one has reached the barrier and
//    opens it; munmap follows the join.
//  - processes mode: the children are forked per iteration (a fresh mm each,
//    as pft -n); each child maps its own slice, reports ready over a pipe and
//    blocks reading a second pipe, which the parent closes once all are ready
//    (end-of-file releases every reader at once). Children send their clocks
//    back through a MAP_SHARED anonymous region and munmap after the pass.
// A worker's timed region is: CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, the
// touch loop, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC; getrusage(RUSAGE_THREAD)
// is read just outside it for minflt and system time.
#include "results/model/params.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

/// The size as the job wrote it plus its byte count: "20%mem (4.7 GiB)".
std::string size_text(const Cell& cell, std::uint64_t bytes) {
  auto it = cell.params.find("size");
  std::string text = it != cell.params.end() ? it->second.text : std::to_string(bytes);
  return text + " (" + human_bytes(bytes) + ")";
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

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  return s;
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
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
  Mapping() = default;
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
  Mapping(Mapping&& o) noexcept { *this = std::move(o); }
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      std::swap(addr_, o.addr_);
      std::swap(bytes_, o.bytes_);
      std::swap(error_, o.error_);
    }
    return *this;
  }
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

/// A file descriptor, closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

/// The threads-mode start barrier: workers count themselves in and wait on
/// `open`; the session waits for all arrivals and opens it (futex wake-all).
struct StartGate {
  static constexpr std::uint32_t kClosed = 0, kGo = 1, kAbort = 2;
  std::atomic<std::uint32_t> arrived{0};
  std::atomic<std::uint32_t> open{kClosed};

  void arrive_and_wait() {
    arrived.fetch_add(1, std::memory_order_acq_rel);
    arrived.notify_all();
    open.wait(kClosed, std::memory_order_acquire);
  }
  void wait_for(std::uint32_t n) {
    for (std::uint32_t a = arrived.load(std::memory_order_acquire); a < n;
         a = arrived.load(std::memory_order_acquire))
      arrived.wait(a, std::memory_order_acquire);
  }
  void release(std::uint32_t how) {
    open.store(how, std::memory_order_release);
    open.notify_all();
  }
};

/// What a forked worker needs; prepared before fork() so the child allocates
/// nothing.
struct ChildArgs {
  std::size_t pages;
  std::size_t page;
  WorkerRecord* record;  ///< in the MAP_SHARED region
  int ready_r;
  int ready_w;
  int go_r;
  int go_w;
  pid_t parent;
};

enum ChildExit : int {
  kChildOk = 0,
  kChildSetupFailed = 2,
  kChildOrphaned = 3,
  kChildGateFailed = 4
};

/// The body of a forked worker. Only async-signal-safe calls: the parent may
/// have other threads.
[[noreturn]] void child_main(const ChildArgs& a) noexcept {
  // Never outlive nightjar: SIGKILL when the forking thread goes away; if it
  // already went before prctl took effect, leave now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != a.parent) ::_exit(kChildOrphaned);
  block_interrupts();
  ::prctl(PR_SET_NAME, "pft-worker");
  ::close(a.ready_r);
  ::close(a.go_w);

  const std::size_t bytes = a.pages * a.page;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const int map_errno = p == MAP_FAILED ? errno : 0;
  if (map_errno) a.record->error = map_errno;
  char c = 'r';
  while (::write(a.ready_w, &c, 1) < 0 && errno == EINTR) {
  }
  ::close(a.ready_w);
  if (map_errno) ::_exit(kChildSetupFailed);

  // The start barrier: the parent closes the write end once every child is
  // ready; end-of-file wakes all readers together.
  ssize_t r;
  while ((r = ::read(a.go_r, &c, 1)) < 0 && errno == EINTR) {
  }
  if (r != 0) ::_exit(kChildGateFailed);

  fault_slice(static_cast<char*>(p), a.pages, a.page, a.record);
  ::munmap(p, bytes);
  ::_exit(kChildOk);
}

/// waitpid() that retries on EINTR (the runner's handlers omit SA_RESTART).
pid_t wait_child(pid_t pid, int* status, int flags) {
  pid_t r;
  while ((r = ::waitpid(pid, status, flags)) < 0 && errno == EINTR) {
  }
  return r;
}

struct Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;
};

/// The state of one pft cell: its slices, the shared result records and,
/// during a processes-mode pass, the children.
class PftSession : public CellSession {
 public:
  PftSession(const Cell& cell, RunContext& ctx)
      : ctx_(ctx),
        processes_(cell.text("mode") == "processes"),
        workers_(static_cast<std::size_t>(std::max<std::int64_t>(cell.count("clients"), 1))),
        page_(page_size()),
        pages_(cell.bytes("size") / page_) {
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
    std::size_t record_bytes = (workers_ * sizeof(WorkerRecord) + page_ - 1) / page_ * page_;
    records_ = Mapping(record_bytes, MAP_SHARED | MAP_ANONYMOUS);
    if (!records_.get())
      throw EnvironmentError(
          "pft: cannot map " + human_bytes(record_bytes) +
          " of shared memory for worker results: " + errno_text(records_.error()));
    children_.reserve(workers_);

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

  ~PftSession() override { kill_and_reap_children(); }

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

  WorkerRecord* records() const { return reinterpret_cast<WorkerRecord*>(records_.get()); }

  /// One pass of every worker; the records hold the results afterwards.
  /// Returns the reason of a failed sample; throws EnvironmentError when the
  /// pass cannot be set up and Interrupted when a worker died of an interrupt.
  std::optional<std::string> run_pass() {
    std::memset(records_.get(), 0, workers_ * sizeof(WorkerRecord));
    return processes_ ? run_processes_pass() : run_threads_pass();
  }

  std::optional<std::string> run_threads_pass() {
    // Mapped before the workers start and unmapped after the join: neither is
    // in any worker's timed region.
    Mapping map(pages_ * page_, MAP_PRIVATE | MAP_ANONYMOUS);
    if (!map.get())
      throw EnvironmentError("pft: mmap of " + human_bytes(pages_ * page_) +
                             " failed: " + errno_text(map.error()) +
                             "; free memory or write a smaller size such as 20%mem");
    StartGate gate;
    std::vector<std::thread> threads;
    threads.reserve(workers_);
    auto join_all = [&] {
      for (auto& t : threads)
        if (t.joinable()) t.join();
    };
    try {
      for (std::size_t i = 0; i < workers_; ++i) {
        char* base = map.get() + slices_[i].first_page * page_;
        WorkerRecord* rec = &records()[i];
        std::size_t pages = slices_[i].pages;
        std::size_t page = page_;
        threads.emplace_back([&gate, base, rec, pages, page] {
          block_interrupts();
          ::pthread_setname_np(::pthread_self(), "pft-worker");
          gate.arrive_and_wait();
          if (gate.open.load(std::memory_order_acquire) != StartGate::kGo) return;
          fault_slice(base, pages, page, rec);
        });
      }
    } catch (const std::system_error& e) {
      gate.release(StartGate::kAbort);
      join_all();
      throw EnvironmentError("pft: cannot create worker thread " +
                             std::to_string(threads.size() + 1) + " of " +
                             std::to_string(workers_) + ": " + e.what() +
                             "; lower clients or raise the thread limit (ulimit -u)");
    }
    gate.wait_for(static_cast<std::uint32_t>(workers_));
    gate.release(StartGate::kGo);
    join_all();
    map.reset();
    for (std::size_t i = 0; i < workers_; ++i)
      if (!records()[i].done) return "worker " + std::to_string(i) + " did not finish its pass";
    return std::nullopt;
  }

  std::optional<std::string> run_processes_pass() {
    int ready[2], go[2];
    if (::pipe2(ready, O_CLOEXEC) != 0)
      throw EnvironmentError("pft: pipe2 failed: " + errno_text(errno));
    Fd ready_r(ready[0]), ready_w(ready[1]);
    if (::pipe2(go, O_CLOEXEC) != 0)
      throw EnvironmentError("pft: pipe2 failed: " + errno_text(errno));
    Fd go_r(go[0]), go_w(go[1]);

    // From here on every child is killed and reaped whatever happens.
    struct ReapGuard {
      PftSession& s;
      ~ReapGuard() { s.kill_and_reap_children(); }
    } guard{*this};
    children_.clear();

    const pid_t self = ::getpid();
    for (std::size_t i = 0; i < workers_; ++i) {
      const ChildArgs args{.pages = slices_[i].pages,
                           .page = page_,
                           .record = &records()[i],
                           .ready_r = ready_r.get(),
                           .ready_w = ready_w.get(),
                           .go_r = go_r.get(),
                           .go_w = go_w.get(),
                           .parent = self};
      pid_t pid = ::fork();
      if (pid == 0) child_main(args);
      if (pid < 0)
        throw EnvironmentError("pft: fork of worker " + std::to_string(i + 1) + " of " +
                               std::to_string(workers_) + " failed: " + errno_text(errno) +
                               "; lower clients or raise the process limit (ulimit -u)");
      children_.push_back({pid, false, 0});
    }
    ready_w.reset();
    go_r.reset();

    // Every child reports ready (its slice mapped) or dies; a child that died
    // before writing is noticed by polling its status.
    std::size_t ready_count = 0;
    bool died = false;
    while (ready_count < workers_ && !died) {
      pollfd pfd{ready_r.get(), POLLIN, 0};
      int r = ::poll(&pfd, 1, 100);
      if (r < 0 && errno != EINTR)
        throw EnvironmentError("pft: poll on the workers' ready pipe failed: " + errno_text(errno));
      if (r > 0) {
        char buf[64];
        ssize_t k = ::read(ready_r.get(), buf, sizeof buf);
        if (k > 0) ready_count += static_cast<std::size_t>(k);
        if (k == 0) died = true;  // every write end closed before all were ready
        if (k < 0 && errno != EINTR && errno != EAGAIN)
          throw EnvironmentError("pft: reading the workers' ready pipe failed: " +
                                 errno_text(errno));
        continue;
      }
      for (auto& c : children_)
        if (!c.reaped && wait_child(c.pid, &c.status, WNOHANG) == c.pid) {
          c.reaped = true;
          died = true;
        }
      if (ctx_.interrupted()) throw Interrupted();  // the guard kills the children
    }
    for (std::size_t i = 0; i < workers_; ++i)
      if (records()[i].error)
        throw EnvironmentError("pft: worker " + std::to_string(i) + " could not mmap its " +
                               human_bytes(slices_[i].pages * page_) +
                               " slice: " + errno_text(records()[i].error) +
                               "; free memory or write a smaller size such as 20%mem");
    if (died) {
      // Judge the children that died on their own before SIGKILLing the rest.
      std::optional<std::string> why = children_failure();
      kill_and_reap_children();
      return why ? why : std::optional<std::string>("a worker exited before the start barrier");
    }

    go_w.reset();  // opens the barrier
    for (auto& c : children_) {
      if (c.reaped) continue;
      if (wait_child(c.pid, &c.status, 0) == c.pid) c.reaped = true;
    }
    if (auto why = children_failure()) return why;
    for (std::size_t i = 0; i < workers_; ++i)
      if (!records()[i].done) return "worker " + std::to_string(i) + " did not finish its pass";
    return std::nullopt;
  }

  /// The reason of the first child that did not exit cleanly, or nullopt.
  /// A child killed by SIGINT/SIGTERM/SIGHUP while nightjar was interrupted
  /// means the user stopped the run: Interrupted.
  std::optional<std::string> children_failure() {
    for (std::size_t i = 0; i < children_.size(); ++i) {
      const Child& c = children_[i];
      if (!c.reaped) continue;
      std::string who = "worker " + std::to_string(i) + " (pid " + std::to_string(c.pid) + ")";
      if (WIFSIGNALED(c.status)) {
        int sig = WTERMSIG(c.status);
        if (ctx_.interrupted()) throw Interrupted();
        std::string why = who + " was killed by " + signal_text(sig);
        if (sig == SIGKILL) why += " (the OOM killer? see dmesg)";
        return why;
      }
      if (WIFEXITED(c.status) && WEXITSTATUS(c.status) != kChildOk) {
        int code = WEXITSTATUS(c.status);
        if (code == kChildOrphaned) return who + " found nightjar gone before it started";
        if (code == kChildGateFailed) return who + " could not read the start barrier pipe";
        return who + " exited with status " + std::to_string(code);
      }
    }
    return std::nullopt;
  }

  /// SIGKILLs and reaps every child not reaped yet. Never throws; waits only
  /// for our own pids (other parts of nightjar may have children).
  void kill_and_reap_children() noexcept {
    for (auto& c : children_) {
      if (c.reaped || c.pid <= 0) continue;
      ::kill(c.pid, SIGKILL);
      if (wait_child(c.pid, &c.status, 0) == c.pid || errno == ECHILD) c.reaped = true;
    }
  }

  /// Turns the records of a completed pass into metrics, counters and flags.
  void summarize(IterationResult& result) const {
    std::int64_t start = std::numeric_limits<std::int64_t>::max();
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    std::int64_t cpu_ns = 0, stime_ns = 0, minflt = 0, pages = 0;
    for (std::size_t i = 0; i < workers_; ++i) {
      const WorkerRecord& r = records()[i];
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
  std::vector<Slice> slices_;
  Mapping records_;  ///< MAP_SHARED: workers_ WorkerRecords
  std::vector<Child> children_;
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
         .doc = "sum of worker system CPU seconds over the pass (mmtests system-N)"},
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
    const std::int64_t clients = cell.count("clients");
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

  std::unique_ptr<CellSession> start(const Cell& cell, RunContext& ctx) const override {
    return std::make_unique<PftSession>(cell, ctx);
  }
};

NIGHTJAR_WORKLOAD(PftWorkload);

}  // namespace

}  // namespace nightjar

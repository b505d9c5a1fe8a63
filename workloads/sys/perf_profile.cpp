// The perf-profile monitor: sampling events per CPU, their ring buffers, a
// drain thread, and the folding of what they sampled.
#include "workloads/sys/perf_profile.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "results/model/text.h"
#include "workloads/sys/fs.h"
#include "workloads/sys/perf_stat.h"
#include "workloads/sys/symbols.h"

namespace nightjar {
namespace {

struct EventChoice {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};
constexpr EventChoice kCycles{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES};
constexpr EventChoice kCpuClock{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK};

int open_sampler(const EventChoice& e, int cpu, bool exclude_kernel, int frequency,
                 std::size_t watermark) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = e.type;
  attr.config = e.config;
  attr.freq = 1;
  attr.sample_freq = static_cast<std::uint64_t>(frequency);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = 1;
  attr.inherit = 1;
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.mmap = 1;  // executable mappings: where an exec'd program's code is
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<std::uint32_t>(watermark);
  return static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0 /* this thread */, cpu,
                                    -1 /* no group */, PERF_FLAG_FD_CLOEXEC));
}

// Opens `e` on every CPU that exists; returns the fds, or none and errno set
// when the kernel refuses it (a CPU that is offline is left out).
std::vector<int> open_all(const EventChoice& e, bool exclude_kernel, int frequency,
                          std::size_t watermark) {
  std::vector<int> fds;
  const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    const int fd = open_sampler(e, cpu, exclude_kernel, frequency, watermark);
    if (fd >= 0) {
      fds.push_back(fd);
      continue;
    }
    if (errno == ENODEV) continue;  // offline CPU
    const int err = errno;
    for (int f : fds) ::close(f);
    errno = err;
    return {};
  }
  if (fds.empty()) errno = ENODEV;
  return fds;
}

// Copies `n` bytes at ring offset `pos` (wrapping at `size`) into `out`.
void copy_wrapped(const char* data, std::size_t size, std::uint64_t pos, void* out, std::size_t n) {
  const std::size_t start = static_cast<std::size_t>(pos % size);
  const std::size_t first = std::min(n, size - start);
  std::memcpy(out, data + start, first);
  if (first < n) std::memcpy(static_cast<char*>(out) + first, data, n - first);
}

}  // namespace

struct PerfProfiler::State {
  struct Ring {
    int fd = -1;
    char* base = nullptr;
    std::size_t mapped = 0, data = 0;
  };

  ProfileOptions options;
  std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<Ring> rings;
  std::string event;
  std::vector<std::string> unavailable;
  KernelSymbols kernel;
  ProgramSymbols program;

  std::mutex mutex;  // guards everything below and the rings' tails
  bool collecting = false, quit = false;
  std::map<std::vector<std::uint64_t>, std::uint64_t> raw;  // {pid, callchain...} -> samples
  std::map<std::uint32_t, std::string> exec_comm;           // pid that exec'd -> its program
  /// pid that exec'd -> file -> its executable mappings since the exec
  /// (PERF_RECORD_MMAP): the program's own code and its libraries.
  std::map<std::uint32_t, std::map<std::string, std::vector<FileMapping>>> exec_maps;
  std::uint64_t lost = 0;
  int wake = -1;  // eventfd that ends the drain thread's poll
  std::thread drainer;

  void handle(const perf_event_header& h, const std::vector<char>& rec) {
    auto u64_at = [&](std::size_t off) {
      std::uint64_t v = 0;
      if (off + 8 <= rec.size()) std::memcpy(&v, rec.data() + off, 8);
      return v;
    };
    if (h.type == PERF_RECORD_LOST) {
      lost += u64_at(16);
    } else if (h.type == PERF_RECORD_COMM && (h.misc & PERF_RECORD_MISC_COMM_EXEC) &&
               rec.size() > 16) {
      std::uint32_t pid = 0;
      std::memcpy(&pid, rec.data() + 8, 4);
      exec_comm[pid] = std::string(rec.data() + 16, strnlen(rec.data() + 16, rec.size() - 16));
      exec_maps[pid].clear();  // a new program: the old one's mappings are gone
    } else if (h.type == PERF_RECORD_MMAP && rec.size() > 40) {
      // header, pid, tid, addr, len, pgoff, filename (NUL-terminated)
      std::uint32_t pid = 0;
      std::memcpy(&pid, rec.data() + 8, 4);
      const std::uint64_t addr = u64_at(16), len = u64_at(24), pgoff = u64_at(32);
      std::string file(rec.data() + 40, strnlen(rec.data() + 40, rec.size() - 40));
      if (file.starts_with('/'))
        exec_maps[pid][std::move(file)].push_back({addr, addr + len, pgoff});
    } else if (h.type == PERF_RECORD_SAMPLE && collecting && rec.size() >= 32) {
      // header, ip, pid/tid, nr, ips[nr]
      std::uint32_t pid = 0;
      std::memcpy(&pid, rec.data() + 16, 4);
      const std::uint64_t nr = u64_at(24);
      if (32 + nr * 8 > rec.size()) return;
      std::vector<std::uint64_t> key;
      key.reserve(nr + 1);
      key.push_back(pid);
      for (std::uint64_t i = 0; i < nr; ++i) key.push_back(u64_at(32 + i * 8));
      if (nr == 0) key.push_back(u64_at(8));
      ++raw[std::move(key)];
    }
  }

  // Reads every complete record of `r` (mutex held).
  void drain(Ring& r) {
    auto* meta = reinterpret_cast<perf_event_mmap_page*>(r.base);
    const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    std::uint64_t tail = meta->data_tail;
    const char* data = r.base + page;
    std::vector<char> rec;
    while (head - tail >= sizeof(perf_event_header)) {
      perf_event_header h;
      copy_wrapped(data, r.data, tail, &h, sizeof h);
      if (h.size < sizeof h || head - tail < h.size) break;
      rec.resize(h.size);
      copy_wrapped(data, r.data, tail, rec.data(), h.size);
      handle(h, rec);
      tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }

  void drain_all() {
    for (auto& r : rings) drain(r);
  }

  // The drain thread: waits for a ring to pass its watermark (or 200 ms)
  // and drains them all, until `quit`.
  void drain_loop() {
    std::vector<pollfd> fds;
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (quit) return;
        fds.assign(1, pollfd{wake, POLLIN, 0});
        for (const auto& r : rings) fds.push_back(pollfd{r.fd, POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 200);
      // A ring that cannot be polled any more must not spin this loop.
      for (const auto& f : fds)
        if (f.revents & (POLLHUP | POLLERR | POLLNVAL)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          break;
        }
      std::lock_guard lock(mutex);
      if (quit) return;
      drain_all();
    }
  }

  void open_events() {
    const std::size_t watermark = options.ring_pages * page / 2;
    std::vector<int> fds;
    for (const EventChoice* e : {&kCycles, &kCpuClock}) {
      fds = open_all(*e, false, options.frequency_hz, watermark);
      if (fds.empty() && (errno == EACCES || errno == EPERM)) {
        fds = open_all(*e, true, options.frequency_hz, watermark);
        if (!fds.empty())
          unavailable.push_back(
              "kernel frames: not permitted (perf_event_paranoid=" +
              std::string(
                  trim(read_small_file("/proc/sys/kernel/perf_event_paranoid").value_or("?"))) +
              "; run as root or with CAP_PERFMON): user frames only");
      }
      if (!fds.empty()) {
        event = e->name;
        break;
      }
      unavailable.push_back(std::string(e->name) + ": " + perf_event_refusal(errno) +
                            (e == &kCycles ? "; sampling cpu-clock instead" : ""));
    }
    for (int fd : fds) {
      Ring r;
      r.fd = fd;
      for (std::size_t pages : {options.ring_pages, std::size_t{8}}) {
        r.mapped = (pages + 1) * page;
        void* m = ::mmap(nullptr, r.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m != MAP_FAILED) {
          r.base = static_cast<char*>(m);
          r.data = pages * page;
          break;
        }
      }
      if (!r.base) {
        unavailable.push_back("ring buffer: mmap refused (" + errno_text(errno) +
                              "; perf_event_mlock_kb or RLIMIT_MEMLOCK): no profile");
        ::close(fd);
        continue;
      }
      rings.push_back(r);
    }
    if (rings.empty()) event.clear();
  }
};

PerfProfiler::PerfProfiler(const ProfileOptions& options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  // The drain thread first: it exists before the events are opened, so it
  // neither inherits nor is sampled by them.
  s.wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  {
    std::lock_guard lock(s.mutex);
    s.open_events();
  }
  if (s.rings.empty()) return;
  s.drainer = std::thread([&s] { s.drain_loop(); });
  s.kernel = KernelSymbols::load(options.kallsyms);
  if (!s.kernel.unavailable().empty())
    s.unavailable.push_back("kernel symbols: " + s.kernel.unavailable());
  s.program = ProgramSymbols::self();
  if (!s.program.unavailable().empty())
    s.unavailable.push_back("program symbols: " + s.program.unavailable());
}

PerfProfiler::~PerfProfiler() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.quit = true;
  }
  if (s.wake >= 0) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(s.wake, &one, sizeof one);
  }
  if (s.drainer.joinable()) s.drainer.join();
  for (auto& r : s.rings) {
    ::munmap(r.base, r.mapped);
    ::close(r.fd);
  }
  if (s.wake >= 0) ::close(s.wake);
}

bool PerfProfiler::open() const {
  return !state_->rings.empty();
}

const std::string& PerfProfiler::event() const {
  return state_->event;
}

const std::vector<std::string>& PerfProfiler::unavailable() const {
  return state_->unavailable;
}

void PerfProfiler::start() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.collecting = false;
    s.drain_all();  // nothing before the window counts
    s.raw.clear();
    s.lost = 0;
    s.collecting = true;
  }
  for (auto& r : s.rings) ::ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
}

void PerfProfiler::stop() {
  for (auto& r : state_->rings) ::ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
}

IterationProfile PerfProfiler::take() {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.drain_all();
  s.collecting = false;
  IterationProfile out;
  out.event = s.event;
  out.frequency_hz = s.options.frequency_hz;
  out.lost = s.lost;
  std::vector<std::string> frames;
  // The symbols of each file an exec'd process mapped, per process (the
  // addresses differ between processes): read once per take().
  std::map<std::pair<std::uint32_t, std::string>, ProgramSymbols> exec_symbols;
  auto exec_frame = [&](std::uint32_t pid, std::uint64_t ip) -> const std::string* {
    const auto files = s.exec_maps.find(pid);
    if (files == s.exec_maps.end()) return nullptr;
    for (const auto& [file, mappings] : files->second)
      for (const auto& m : mappings) {
        if (ip < m.start || ip >= m.end) continue;
        auto at = exec_symbols.find({pid, file});
        if (at == exec_symbols.end())
          at = exec_symbols.emplace(std::pair{pid, file}, ProgramSymbols::file(file, mappings))
                   .first;
        return at->second.find(ip);
      }
    return nullptr;
  };
  for (const auto& [key, count] : s.raw) {
    const std::uint32_t pid = static_cast<std::uint32_t>(key[0]);
    const auto exec = s.exec_comm.find(pid);
    std::uint64_t context = PERF_CONTEXT_USER;
    frames.clear();
    auto push = [&](std::string name) {
      // Unnamed frames in a row ([kernel], [unknown], [program]) are one.
      if (name.starts_with('[') && !frames.empty() && frames.back() == name) return;
      frames.push_back(std::move(name));
    };
    for (std::size_t i = 1; i < key.size(); ++i) {
      const std::uint64_t ip = key[i];
      if (ip >= static_cast<std::uint64_t>(PERF_CONTEXT_MAX)) {
        context = ip;
        continue;
      }
      if (context == PERF_CONTEXT_KERNEL) {
        const std::string* name = s.kernel.find(ip);
        push(name ? *name : "[kernel]");
      } else if (exec != s.exec_comm.end()) {
        const std::string* name = exec_frame(pid, ip);
        push(name ? *name : "[" + exec->second + "]");
      } else {
        const std::string* name = s.program.find(ip);
        push(name ? *name : "[unknown]");
      }
    }
    if (frames.empty()) frames.push_back("[unknown]");
    out.stacks[fold_frames(frames)] += count;
  }
  s.raw.clear();
  s.lost = 0;
  return out;
}

}  // namespace nightjar

// Benchmark of the harness's cost on pft: nightjar's pft CellSession::measure()
// against a bare mmap + touch-one-byte-per-page + munmap loop with no harness,
// on the same size, worker count and mode, interleaved A B A B ... so drift of
// the machine (host memory backing, frequency) hits both alike. Prints the
// Hmean faults/sec of each and their ratio; the goal is nightjar/bare >= 0.98.
//
//   pft_vs_bare [--size 256M] [--clients 1] [--mode threads|processes] [--rounds 10]
//
// Per-round figures go to stderr, the summary to stdout. Both sides compute
// faults/sec as pft does: pages / (latest worker end - earliest worker start),
// with mmap before and munmap after the timed region, and both lay the pass
// out as pft does (worker 0 is the calling thread; docs/workloads.md).
// With more clients than CPUs the bare side's spinning workers share CPUs
// with those in their pass; keep clients at or below the CPU count.
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "results/model/exit_codes.h"
#include "results/model/params.h"
#include "results/stats/bootstrap.h"
#include "results/stats/descriptive.h"
#include "workloads/workload.h"

namespace {

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void touch(char* base, std::size_t pages, std::size_t page) {
  volatile char* p = base;
  for (std::size_t i = 0; i < pages; ++i) p[i * page] = 1;
}

/// Worker w's slice of `pages` split over `workers`: {first page, pages}.
std::pair<std::size_t, std::size_t> slice(std::size_t pages, std::size_t workers, std::size_t w) {
  std::size_t base = pages / workers, extra = pages % workers;
  return {w * base + std::min(w, extra), base + (w < extra ? 1 : 0)};
}

/// Bare threads, laid out as pft -t N (pft.c launch()): one mapping,
/// threads 1..N-1 created and spinning on a start word, the calling thread
/// opens it and faults slice 0 itself. With N = 1 no thread is created, so
/// the pass faults in a single-threaded mm, as pft -t 1 and nightjar do.
double bare_threads(std::size_t pages, std::size_t workers, std::size_t page) {
  char* p = static_cast<char*>(
      ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) {
    std::perror("bare: mmap");
    std::exit(4);
  }
  std::int64_t start, end;
  {
    std::vector<std::int64_t> t0(workers), t1(workers);
    std::atomic<std::size_t> arrived{0};
    std::atomic<bool> go{false};
    auto pass = [&](std::size_t w) {
      auto [first, n] = slice(pages, workers, w);
      t0[w] = now_ns();
      touch(p + first * page, n, page);
      t1[w] = now_ns();
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w)
      threads.emplace_back([&, w] {
        arrived.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
        }
        pass(w);
      });
    while (arrived.load() < workers - 1) {
    }
    go.store(true, std::memory_order_release);
    pass(0);
    for (auto& t : threads) t.join();
    start = *std::min_element(t0.begin(), t0.end());
    end = *std::max_element(t1.begin(), t1.end());
  }
  ::munmap(p, pages * page);
  return static_cast<double>(pages) / (static_cast<double>(end - start) / 1e9);
}

/// Bare processes, laid out as pft -n N: children 1..N-1 forked, each
/// mapping its slice and spinning on a start word in shared memory; the
/// calling process maps slice 0, opens the word once all are ready and
/// faults its slice itself. Times come back in the same shared page.
double bare_processes(std::size_t pages, std::size_t workers, std::size_t page) {
  struct Shared {
    std::atomic<std::size_t> arrived;
    std::atomic<bool> go;
    std::int64_t t[2 * 1024];
  };
  if (workers > 1024) {
    std::fprintf(stderr, "bare: at most 1024 processes\n");
    std::exit(2);
  }
  void* m =
      ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    std::perror("bare: mmap");
    std::exit(4);
  }
  auto* sh = new (m) Shared{};
  auto map_slice = [&](std::size_t n) {
    return static_cast<char*>(
        ::mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  };
  auto pass = [&](std::size_t w, char* p, std::size_t n) {
    std::int64_t t0 = now_ns();
    touch(p, n, page);
    std::int64_t t1 = now_ns();
    sh->t[2 * w] = t0;
    sh->t[2 * w + 1] = t1;
    ::munmap(p, n * page);
  };
  std::vector<pid_t> pids;
  for (std::size_t w = 1; w < workers; ++w) {
    pid_t pid = ::fork();
    if (pid < 0) {
      std::perror("bare: fork");
      std::exit(4);
    }
    if (pid == 0) {
      const std::size_t n = slice(pages, workers, w).second;
      char* p = map_slice(n);
      if (p == MAP_FAILED) ::_exit(1);
      sh->arrived.fetch_add(1);
      while (!sh->go.load(std::memory_order_acquire)) {
      }
      pass(w, p, n);
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  const std::size_t n0 = slice(pages, workers, 0).second;
  char* p0 = map_slice(n0);
  if (p0 == MAP_FAILED) {
    std::perror("bare: mmap");
    std::exit(4);
  }
  while (sh->arrived.load() < workers - 1) {
  }
  sh->go.store(true, std::memory_order_release);
  pass(0, p0, n0);
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "bare: a worker failed\n");
      std::exit(4);
    }
  }
  std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = 0;
  for (std::size_t w = 0; w < workers; ++w) {
    start = std::min(start, sh->t[2 * w]);
    end = std::max(end, sh->t[2 * w + 1]);
  }
  ::munmap(m, sizeof(Shared));
  return static_cast<double>(pages) / (static_cast<double>(end - start) / 1e9);
}

/// "256M" -> 268435456 (K/M/G/T binary suffixes, as nightjar's size type).
std::uint64_t parse_size(const std::string& s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  std::string suffix(end);
  int shift = suffix == ""    ? 0
              : suffix == "K" ? 10
              : suffix == "M" ? 20
              : suffix == "G" ? 30
              : suffix == "T" ? 40
                              : -1;
  if (end == s.c_str() || shift < 0) {
    std::fprintf(stderr, "pft_vs_bare: bad size '%s'; write e.g. 256M or 1G\n", s.c_str());
    std::exit(2);
  }
  return static_cast<std::uint64_t>(v) << shift;
}

double hmean(const std::vector<double>& xs) {
  auto m = nightjar::stats::mean_of(xs, nightjar::MeanKind::harmonic);
  return m ? *m : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string size_text = "256M", mode = "threads";
  std::int64_t clients = 1;
  int rounds = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "pft_vs_bare: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--size")
      size_text = value();
    else if (a == "--clients")
      clients = std::atoll(value().c_str());
    else if (a == "--mode")
      mode = value();
    else if (a == "--rounds")
      rounds = std::atoi(value().c_str());
    else {
      std::fprintf(stderr,
                   "usage: pft_vs_bare [--size 256M] [--clients 1] [--mode threads|processes] "
                   "[--rounds 10]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (clients < 1 || rounds < 1) {
    std::fprintf(stderr, "pft_vs_bare: clients and rounds must be at least 1\n");
    return 2;
  }
  const std::uint64_t size = parse_size(size_text);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = size / page;
  const auto workers = static_cast<std::size_t>(clients);

  nightjar::Cell cell{"pft",
                      {{"clients", {std::to_string(clients), static_cast<double>(clients)}},
                       {"mode", {mode, 0}},
                       {"size", {size_text, static_cast<double>(size)}}}};
  nightjar::RunContext ctx;
  ctx.machine.mem_total_bytes = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * page;
  ctx.machine.cpus = static_cast<unsigned>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  ctx.warn = [](const std::string& w) { std::fprintf(stderr, "warning: %s\n", w.c_str()); };

  const nightjar::Workload* workload = nightjar::find_workload("pft");
  if (workload == nullptr) {
    std::fprintf(stderr, "pft_vs_bare: the pft workload is not registered (workloads/pft.cpp)\n");
    return 4;
  }
  try {
    workload->validate(cell, ctx.machine);
  } catch (const nightjar::ParamError& e) {
    std::fprintf(stderr, "pft_vs_bare: %s: %s\n", e.field.c_str(), e.message.c_str());
    return 2;
  }
  auto bare = [&] {
    return mode == "processes" ? bare_processes(pages, workers, page)
                               : bare_threads(pages, workers, page);
  };

  std::vector<double> ours, theirs;
  try {
    auto session = workload->start(cell, ctx);
    session->warmup();  // both sides warm: the host backs the guest's memory
    (void)bare();
    for (int r = 0; r < rounds; ++r) {
      nightjar::IterationResult res = session->measure();
      if (res.failure) {
        std::fprintf(stderr, "pft_vs_bare: nightjar pass failed: %s\n", res.failure->c_str());
        return 4;
      }
      ours.push_back(res.metrics.at("faults_per_sec"));
      theirs.push_back(bare());
      std::fprintf(stderr, "round %2d: nightjar %12.0f  bare %12.0f faults/sec\n", r + 1,
                   ours.back(), theirs.back());
    }
  } catch (const nightjar::Error& e) {
    std::fprintf(stderr, "pft_vs_bare: %s\n", e.what());
    return nightjar::to_int(e.code());
  }

  const double a = hmean(ours), b = hmean(theirs);
  std::printf("pft size=%s clients=%lld mode=%s rounds=%d (interleaved)\n", size_text.c_str(),
              static_cast<long long>(clients), mode.c_str(), rounds);
  std::printf("nightjar pft Hmean faults/sec: %.0f\n", a);
  std::printf("bare loop    Hmean faults/sec: %.0f\n", b);
  std::printf("nightjar/bare faults/sec ratio: %.2f (goal >= 0.98)\n", b > 0 ? a / b : 0.0);
  // The rounds are noisy (a few % per round on a VM): the ratio's 95% BCa
  // bootstrap interval says whether the goal is met or the run too short.
  if (auto ci = nightjar::stats::bca_ratio_ci(theirs, ours, nightjar::MeanKind::harmonic, 1)) {
    const char* verdict = ci->lo >= 0.98  ? "met"
                          : ci->hi < 0.98 ? "missed"
                                          : "not decided at this noise: add --rounds";
    std::printf("95%% BCa interval of the ratio: [%.3f, %.3f]; goal >= 0.98: %s\n", ci->lo, ci->hi,
                verdict);
  }
  return 0;
}

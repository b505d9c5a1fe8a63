// The cleanup storm (issue 12, check 4): 50 runs of pft, tcp_sendfile with a
// depth-3 cgroup tree, tmpfs_refault and the pft-thp knob variant, each
// SIGKILLed at a random time between 0.1 s and 10 s and each followed by
// `nightjar cleanup`. Afterwards it counts what nightjar left: cgroups,
// tmpfs mounts, swap areas, zram devices, changed knobs, processes and
// journals. All must be 0; the counts are printed.
//
// The runs use a journal directory of their own (NIGHTJAR_JOURNAL_DIR) and
// hold the tmpfs_refault tests' lock, so that no other test's zram or swap
// counts as theirs. Processes are told apart by an environment variable
// every process of the storm inherits. A few minutes (label slow). Skips
// (77) without root, zram, mkswap or a memory cgroup. NIGHTJAR_STORM_RUNS
// overrides the number of runs, NIGHTJAR_STORM_SEED the seed.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "root/root_support.h"
#include "test_support.h"
#include "workloads/sys/knobs.h"
#include "workloads/sys/zram.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

constexpr const char* kThp = "/sys/kernel/mm/transparent_hugepage/enabled";

std::set<std::string> zram_devices() {
  std::set<std::string> out;
  for (const auto& d : fs::directory_iterator("/sys/block"))
    if (d.path().filename().string().rfind("zram", 0) == 0)
      out.insert(d.path().filename().string());
  return out;
}

std::set<std::string> swap_areas() {
  std::set<std::string> out;
  for (const auto& e : read_proc_swaps()) out.insert(e.filename);
  return out;
}

/// Processes whose environment holds `marker` ("NIGHTJAR_STORM=<token>").
int processes_with(const std::string& marker) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::atoi(name.c_str()) == ::getpid()) continue;
    std::string env = test::read_file(e.path().string() + "/environ");
    for (char& c : env)
      if (c == '\0') c = '\n';
    if (("\n" + env).find("\n" + marker + "\n") != std::string::npos) ++n;
  }
  return n;
}

/// The THP setting as the system holds it: read under the knob lock
/// (knob_lock_path()), so that a variant of another nightjar running at the
/// same time (which holds the lock while its knobs are in force) has
/// restored its value first. Waits up to 5 minutes for the lock.
std::string thp_at_rest() {
  const int fd = ::open(knob_lock_path().c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  for (int i = 0; fd >= 0 && i < 3000 && ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string value = knob_reading(test::read_file(kThp));
  if (fd >= 0) ::close(fd);
  return value;
}

/// Does `name` (a cgroup or mount point) belong to nightjar process `pid`?
bool names_pid(const std::string& name, pid_t pid) {
  const std::string p = "-" + std::to_string(pid);
  return name.find(p + "-") != std::string::npos ||
         (name.size() >= p.size() && name.compare(name.size() - p.size(), p.size(), p) == 0);
}

TEST(CleanupStorm, FiftyKilledRunsLeaveNothingAfterCleanup) {
  if (std::string why = test::sweep_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  const int lock =
      ::open("/tmp/nightjar-tmpfs-refault-tests.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  test::TempDir dir;
  const std::string journal = dir.path() + "/journal";
  const std::string token = std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr));
  const std::string marker = "NIGHTJAR_STORM=" + token;
  ::setenv("NIGHTJAR_JOURNAL_DIR", journal.c_str(), 1);
  ::setenv("NIGHTJAR_STORM", token.c_str(), 1);

  const int runs =
      std::getenv("NIGHTJAR_STORM_RUNS") ? std::atoi(std::getenv("NIGHTJAR_STORM_RUNS")) : 50;
  const unsigned seed = std::getenv("NIGHTJAR_STORM_SEED")
                            ? static_cast<unsigned>(std::atol(std::getenv("NIGHTJAR_STORM_SEED")))
                            : std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> when(0.1, 10.0);
  const std::vector<std::vector<std::string>> jobs = {
      {test::source_path("jobs/pft-quick.yaml"), "--iterations", "100"},
      {test::source_path("jobs/netperf-sendfile-quick.yaml"), "--iterations", "20"},
      {test::source_path("jobs/tmpfs-refault-quick.yaml"), "--iterations", "100"},
      {test::source_path("jobs/pft-thp.yaml"), "--iterations", "100"},
  };
  const std::set<std::string> zram_before = zram_devices(), swaps_before = swap_areas();
  const std::string thp_before = thp_at_rest();
  std::printf("storm: %d runs, seed %u, journal %s\n", runs, seed, journal.c_str());

  std::vector<pid_t> pids;
  int removed = 0, cleanup_failures = 0;
  for (int i = 0; i < runs; ++i) {
    std::vector<std::string> args = {"run"};
    const auto& job = jobs[static_cast<std::size_t>(i) % jobs.size()];
    args.insert(args.end(), job.begin(), job.end());
    args.insert(args.end(), {"--db", dir.path() + "/storm.db"});
    const double t = when(rng);
    const pid_t pid = test::spawn_nightjar(args, dir.path(), "run" + std::to_string(i));
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
    std::this_thread::sleep_for(std::chrono::duration<double>(t));
    ::kill(pid, SIGKILL);
    const int rc = test::wait_exit_code(pid);
    test::CommandResult c = test::run_nightjar({"cleanup"});
    // Left for later only when another nightjar holds the knob lock: retry.
    for (int retry = 0; retry < 10 && c.exit_code != 0; ++retry) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      c = test::run_nightjar({"cleanup"});
    }
    if (c.exit_code != 0) ++cleanup_failures;
    const auto at = c.out.find("\nremoved ");
    if (at != std::string::npos) removed += std::atoi(c.out.c_str() + at + 9);
    std::printf("storm: run %2d %-28s killed after %5.2f s (exit %d); cleanup exit %d\n", i,
                fs::path(job.front()).filename().c_str(), t, rc, c.exit_code);
    if (c.exit_code != 0) std::printf("%s", c.out.c_str());
  }

  // What is left, narrowed to the storm's own processes.
  int cgroups = 0, mounts = 0;
  for (const auto& c : test::nightjar_cgroups_matching(""))
    for (pid_t p : pids)
      if (names_pid(fs::path(c).filename().string(), p)) ++cgroups;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);)
    if (line.find(" - tmpfs nightjar-") != std::string::npos)
      for (pid_t p : pids)
        if (line.find("/nightjar-" + std::to_string(p) + "-") != std::string::npos) ++mounts;
  int swaps = 0, zram = 0;
  for (const auto& s : swap_areas()) swaps += swaps_before.count(s) ? 0 : 1;
  for (const auto& z : zram_devices()) zram += zram_before.count(z) ? 0 : 1;
  const std::string thp_after = thp_at_rest();
  const int knobs = thp_after == thp_before ? 0 : 1;
  std::printf("storm: %s: '%s' before, '%s' after\n", kThp, thp_before.c_str(), thp_after.c_str());
  const int processes = processes_with(marker);
  int journals = 0;
  if (fs::exists(journal))
    for (const auto& e : fs::directory_iterator(journal)) {
      (void)e;
      ++journals;
    }
  std::printf(
      "storm: after %d killed runs (%d objects removed by cleanup, %d cleanups failed): "
      "cgroups %d, mounts %d, swap areas %d, zram devices %d, changed knobs %d, processes %d, "
      "journals %d\n",
      runs, removed, cleanup_failures, cgroups, mounts, swaps, zram, knobs, processes, journals);
  EXPECT_EQ(cgroups, 0);
  EXPECT_EQ(mounts, 0);
  EXPECT_EQ(swaps, 0);
  EXPECT_EQ(zram, 0);
  EXPECT_EQ(knobs, 0);
  EXPECT_EQ(processes, 0);
  EXPECT_EQ(journals, 0);
  EXPECT_EQ(cleanup_failures, 0);
  ::unsetenv("NIGHTJAR_STORM");
  ::unsetenv("NIGHTJAR_JOURNAL_DIR");
  ::close(lock);
}

}  // namespace
}  // namespace nightjar

// Unit under test: the ownership journal and the sweep on the real machine,
// through the nightjar binary (issue 12, checks 5 and 6): a tmpfs_refault run
// SIGKILLed during its read leaves its swap area, zram device, tmpfs mount
// and memcg, and the next `nightjar run` removes them and says so; a THP
// knob that a SIGKILLed variant changed is restored; the objects of a
// running nightjar survive a concurrent `nightjar cleanup`.
//
// Each test uses a journal directory of its own (NIGHTJAR_JOURNAL_DIR), so
// that tests running at the same time never sweep each other's objects, and
// takes the tmpfs_refault tests' lock (/tmp/nightjar-tmpfs-refault-tests.lock)
// so that no other test changes zram devices meanwhile. Skips (77) without
// root, zram, mkswap, a memory cgroup, or with zswap enabled.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "root_support.h"
#include "test_support.h"
#include "workloads/sys/knobs.h"
#include "workloads/sys/zram.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kThp = "/sys/kernel/mm/transparent_hugepage/enabled";

/// What a killed run leaves and a sweep removes: active swap areas and zram
/// devices (all of them: the tests' lock keeps other zram users away), and
/// the tmpfs mounts and cgroups named after the nightjar process `pid`
/// (others' tests may make their own meanwhile).
struct Objects {
  std::set<std::string> swaps, zram, mounts, cgroups;

  static Objects take(pid_t pid) {
    Objects o;
    const std::string p = "-" + std::to_string(pid);
    for (const auto& e : read_proc_swaps()) o.swaps.insert(e.filename);
    for (const auto& d : fs::directory_iterator("/sys/block"))
      if (d.path().filename().string().rfind("zram", 0) == 0)
        o.zram.insert(d.path().filename().string());
    if (pid <= 0) return o;
    std::ifstream mi("/proc/self/mountinfo");
    std::string line;
    while (std::getline(mi, line))
      if (line.find(" - tmpfs nightjar-") != std::string::npos &&
          line.find(p + "-") != std::string::npos)
        o.mounts.insert(line);
    for (const auto& c : test::nightjar_cgroups_matching(p)) {
      const std::string name = fs::path(c).filename().string();
      if (name.find(p + "-") != std::string::npos ||
          name.compare(name.size() - p.size(), p.size(), p) == 0)
        o.cgroups.insert(c);
    }
    return o;
  }
  bool operator==(const Objects&) const = default;
};

std::string describe(const Objects& o) {
  std::string s;
  for (const auto* set : {&o.swaps, &o.zram, &o.mounts, &o.cgroups})
    for (const auto& x : *set) s += "  " + x + "\n";
  return s;
}

/// The bracketed choice of the THP file ("madvise").
std::string thp_now() {
  return knob_reading(test::read_file(kThp));
}

class CleanupRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = test::sweep_skip_reason(); !why.empty()) GTEST_SKIP() << why;
    lock_ = ::open("/tmp/nightjar-tmpfs-refault-tests.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    ASSERT_GE(lock_, 0);
    ASSERT_EQ(::flock(lock_, LOCK_EX), 0);
    journal_ = dir_.path() + "/journal";
    ::setenv("NIGHTJAR_JOURNAL_DIR", journal_.c_str(), 1);  // the nightjar processes inherit it
    before_ = Objects::take(0);                             // swaps and zram only
    quick_ = dir_.write("quick.yaml", "workload: fake\niterations: 1\nwarmup: 0\n");
  }
  void TearDown() override {
    // Whatever a failed check left: the journal still names it.
    if (!journal_.empty()) test::run_nightjar({"cleanup"});
    ::unsetenv("NIGHTJAR_JOURNAL_DIR");
    ::unsetenv("NIGHTJAR_TMPFS_REFAULT_PHASE_FILE");
    if (lock_ >= 0) ::close(lock_);
  }

  /// Waits until `file` reads `text` (a phase), up to `seconds`.
  static bool wait_for_text(const std::string& file, const std::string& text, int seconds) {
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < deadline) {
      if (test::read_file(file) == text) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

  bool journal_empty() const { return !fs::exists(journal_) || fs::is_empty(journal_); }

  test::TempDir dir_;
  std::string journal_, quick_;
  Objects before_;
  int lock_ = -1;
};

// Check 5: SIGKILL during the read; the next run removes swap, zram, mount
// and memcg, and says so.
TEST_F(CleanupRoot, ObjectsOfARefaultRunKilledDuringTheReadAreRemovedByTheNextRun) {
  const std::string phase = dir_.path() + "/phase";
  ::setenv("NIGHTJAR_TMPFS_REFAULT_PHASE_FILE", phase.c_str(), 1);
  // The read must still run when SIGKILL arrives: 1 GiB reads for about a
  // second here, 128 MiB for seconds under TCG (the qemu guest).
  const pid_t pid = test::spawn_nightjar(
      {"run", test::source_path("jobs/tmpfs-refault-quick.yaml"), "--db", dir_.path() + "/a.db",
       "--warmup", "0", "--iterations", "1", "--set", "size=" + test::test_file_size("1G", "128M")},
      dir_.path(), "killed");
  ASSERT_GT(pid, 0);
  const bool reading = wait_for_text(phase, "read\n", 120);
  ::kill(pid, SIGKILL);
  EXPECT_EQ(test::wait_exit_code(pid), 128 + SIGKILL);
  ::unsetenv("NIGHTJAR_TMPFS_REFAULT_PHASE_FILE");
  ASSERT_TRUE(reading) << "the read never started; stderr:\n"
                       << test::read_file(dir_.path() + "/killed.err");

  const Objects left = Objects::take(pid);
  EXPECT_GT(left.swaps.size(), before_.swaps.size()) << describe(left);
  EXPECT_GT(left.zram.size(), before_.zram.size()) << describe(left);
  EXPECT_EQ(left.mounts.size(), 1u) << describe(left);
  EXPECT_EQ(left.cgroups.size(), 1u) << describe(left);

  const test::CommandResult env = test::run_nightjar({"env"});
  EXPECT_NE(env.out.find("swap area /dev/zram"), std::string::npos) << env.out;
  EXPECT_NE(env.out.find("left by nightjar pid " + std::to_string(pid)), std::string::npos)
      << env.out;
  EXPECT_NE(env.out.find("remove them with `nightjar cleanup`"), std::string::npos) << env.out;

  const test::CommandResult next =
      test::run_nightjar({"run", quick_, "--db", dir_.path() + "/b.db"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  const std::string said = "cleanup: nightjar pid " + std::to_string(pid);
  for (const char* what : {"swapoff /dev/zram", "hot-removed zram",
                           "unmounted tmpfs /run/nightjar-", "removed cgroup /sys/fs/cgroup/"})
    EXPECT_NE(next.err.find(what), std::string::npos) << what << "\n" << next.err;
  EXPECT_NE(next.err.find(said), std::string::npos) << next.err;
  EXPECT_EQ(Objects::take(pid), before_) << describe(Objects::take(pid));
  EXPECT_TRUE(journal_empty());
}

// Check 5: a THP knob changed by a SIGKILLed variant is restored by the next run.
TEST_F(CleanupRoot, ThpKnobOfAKilledVariantIsRestored) {
  if (test::read_file(kThp).empty()) GTEST_SKIP() << "no " << kThp;
  const std::string original = thp_now();
  const std::string wanted = original == "never" ? "madvise" : "never";
  const std::string job =
      dir_.write("thp.yaml",
                 "workload: fake\nparams: {sleep: 1s}\niterations: 100\nwarmup: 0\nvariants:\n"
                 "  killed: {sysfs: {" +
                     std::string(kThp) + ": " + wanted + "}}\n");
  const pid_t pid =
      test::spawn_nightjar({"run", job, "--db", dir_.path() + "/k.db"}, dir_.path(), "variant");
  ASSERT_GT(pid, 0);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (thp_now() != wanted && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(test::wait_exit_code(pid), 128 + SIGKILL);
  ASSERT_EQ(thp_now(), wanted) << "the variant never wrote its knob: "
                               << test::read_file(dir_.path() + "/variant.err");

  test::CommandResult next = test::run_nightjar({"run", quick_, "--db", dir_.path() + "/q.db"});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  std::string said = next.err;
  // Another nightjar may hold the knob lock just now: then the knob waits
  // for the next sweep, and says so.
  for (int i = 0; i < 30 && thp_now() != original; ++i) {
    EXPECT_NE(said.find("not restored yet: another nightjar holds the knob lock"),
              std::string::npos)
        << said;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    said = test::run_nightjar({"cleanup"}).out;
  }
  EXPECT_EQ(thp_now(), original);
  EXPECT_NE(said.find("restored knob " + std::string(kThp) + " to '" + original + "'"),
            std::string::npos)
      << said;
  EXPECT_TRUE(journal_empty());
}

// Check 6: a live nightjar's objects survive a concurrent `nightjar cleanup`.
TEST_F(CleanupRoot, ARunningNightjarsObjectsSurviveACleanup) {
  const pid_t pid =
      test::spawn_nightjar({"run", test::source_path("jobs/netperf-sendfile-quick.yaml"), "--db",
                            dir_.path() + "/live.db", "--set", "clients=2", "--set", "duration=6s",
                            "--iterations", "1", "--warmup", "0"},
                           dir_.path(), "live");
  ASSERT_GT(pid, 0);
  // Its cgroup tree and its two senders exist once the pass started.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  std::vector<std::string> tree;
  std::vector<pid_t> senders;
  while (Clock::now() < deadline && (tree.empty() || senders.size() < 2)) {
    tree = test::nightjar_cgroups_matching("-" + std::to_string(pid));
    senders.clear();
    for (pid_t c : test::children_of(pid))
      if (test::comm_of(c) == "tcp_sendfile-tx") senders.push_back(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(tree.size(), 1u) << test::read_file(dir_.path() + "/live.err");
  ASSERT_EQ(senders.size(), 2u);

  const test::CommandResult cleanup = test::run_nightjar({"cleanup"});
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.out << cleanup.err;
  EXPECT_NE(cleanup.out.find("removed 0 object(s)"), std::string::npos) << cleanup.out;
  EXPECT_NE(cleanup.out.find("of 1 running nightjar process(es) left alone"), std::string::npos)
      << cleanup.out;
  EXPECT_TRUE(fs::exists(tree.front())) << "cleanup removed a live run's cgroup";
  for (pid_t s : senders) EXPECT_EQ(::kill(s, 0), 0) << "cleanup killed a live run's sender";

  EXPECT_EQ(test::wait_exit_code(pid), 0) << test::read_file(dir_.path() + "/live.err");
  EXPECT_EQ(test::query_one(dir_.path() + "/live.db", "SELECT status FROM run"), "complete");
  EXPECT_EQ(Objects::take(pid), before_) << describe(Objects::take(pid));
  EXPECT_TRUE(journal_empty());
}

}  // namespace
}  // namespace nightjar

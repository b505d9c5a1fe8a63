// Unit under test: workloads/sys/monitors.{h,cpp} — take_snapshot() parsing of fake
// /proc/vmstat, /proc/stat and /proc/<pid>/stat trees, and monitor_deltas()
// against hand-computed deltas, utilisation and foreign CPU seconds; plus a
// smoke test on the real /proc with a CPU-burning child process.
#include "workloads/sys/monitors.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace nightjar {
namespace {

namespace fs = std::filesystem;

const double kHz = static_cast<double>(::sysconf(_SC_CLK_TCK));  // 100 on Linux

/// A fake /proc in a temporary directory (mkdtemp under /tmp).
class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nightjar-monitors-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    proc_ = dir_ + "/proc";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::path p = proc_ + "/" + rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  /// A /proc/<pid>/stat line (proc(5) field order) with the given times.
  static std::string stat_line(long pid, const std::string& comm, long ppid, unsigned utime,
                               unsigned stime, unsigned cutime, unsigned cstime) {
    return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) +
           " 4222 3043 0 -1 4194304 101 0 0 0 " + std::to_string(utime) + " " +
           std::to_string(stime) + " " + std::to_string(cutime) + " " + std::to_string(cstime) +
           " 20 0 1 0 36562 3133440 413 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 "
           "0 0 0\n";
  }
  /// Writes self, a child, a grandchild and an unrelated process.
  void write_processes(unsigned self_u, unsigned self_s, unsigned self_cu, unsigned child_u,
                       unsigned child_s, unsigned grand_u, unsigned grand_s) {
    long me = ::getpid();
    write("self/stat", stat_line(me, "nightjar", 1, self_u, self_s, self_cu, 0));
    write("900001/stat", stat_line(900001, "netperf (client) x", me, child_u, child_s, 0, 0));
    write("900002/stat", stat_line(900002, "sh", 900001, grand_u, grand_s, 0, 0));
    write("900003/stat", stat_line(900003, "unrelated", 1, 999, 999, 0, 0));
    write("900004/status", "not a stat file\n");  // a pid directory without stat
    write("sys/kernel/x", "");                    // non-numeric entries are skipped
  }
  std::string dir_, proc_;
};

TEST_F(FakeProc, SnapshotParsesEveryFile) {
  write("vmstat", "nr_free_pages 12345\npgpgin 4000\npgfault 1000\npgmajfault 5\n");
  write("stat",
        "cpu  1000 10 500 8000 100 0 20 5 0 0\n"
        "cpu0 500 5 250 4000 50 0 10 2 0 0\n"
        "intr 12345\n");
  write_processes(30, 10, 5, 20, 5, 10, 0);

  auto s = take_snapshot(proc_);
  std::map<std::string, std::uint64_t> vm{
      {"nr_free_pages", 12345}, {"pgpgin", 4000}, {"pgfault", 1000}, {"pgmajfault", 5}};
  EXPECT_EQ(s.vmstat, vm);
  EXPECT_EQ(s.cpu_ticks, (std::vector<std::uint64_t>{1000, 10, 500, 8000, 100, 0, 20, 5}));
  // self 30+10+5+0, child 20+5, grandchild 10+0; the unrelated process is not ours.
  EXPECT_EQ(s.own_cpu_ticks, 45u + 25u + 10u);
  EXPECT_GT(s.wall_seconds, 0.0);
}

TEST_F(FakeProc, ProcessTreeFromChildrenFiles) {
  // With CONFIG_PROC_CHILDREN the tree is walked through task/<tid>/children
  // (every thread has its own list); the unrelated 900003 is never read.
  write_processes(30, 10, 5, 20, 5, 10, 0);
  long me = ::getpid();
  write("self/task/" + std::to_string(me) + "/children", "");
  write("self/task/" + std::to_string(me + 1) + "/children", "900001 ");
  write("900001/task/900001/children", "900002 ");
  write("900002/task/900002/children", "");
  write("900003/stat", "garbage that would fail to parse\n");
  EXPECT_EQ(take_snapshot(proc_).own_cpu_ticks, 45u + 25u + 10u);
}

TEST_F(FakeProc, MissingFilesGiveEmptySnapshot) {
  auto s = take_snapshot(proc_ + "/nonexistent");
  EXPECT_TRUE(s.vmstat.empty());
  EXPECT_TRUE(s.cpu_ticks.empty());
  EXPECT_EQ(s.own_cpu_ticks, 0u);
}

TEST_F(FakeProc, DeltasHandComputed) {
  // Before: an older kernel without swpin_zero.
  write("vmstat",
        "nr_free_pages 12345\npgpgin 4000\npswpin 0\npswpout 0\npgfault 1000\npgmajfault 5\n"
        "workingset_refault_anon 10\nworkingset_refault_file 20\n");
  write("stat", "cpu  1000 10 500 8000 100 0 20 5 0 0\n");
  write_processes(30, 10, 5, 20, 5, 10, 0);  // own = 45 + 25 + 10 = 80 ticks
  auto before = take_snapshot(proc_);

  write("vmstat",
        "nr_free_pages 2345\npgpgin 528288\npswpin 131072\npswpout 131072\npgfault 1500\n"
        "pgmajfault 7\nworkingset_refault_anon 131060\nworkingset_refault_file 20\n");
  // Deltas: user 150, nice 0, system 60, idle 160, iowait 20, irq 0, softirq 10,
  // steal 0 -> total 400 ticks, busy 240 (iowait counts busy) -> 60 %.
  write("stat", "cpu  1150 10 560 8160 120 0 30 5 0 0\n");
  write_processes(50, 15, 5, 60, 15, 20, 5);  // own = 70 + 75 + 25 = 170 ticks
  auto after = take_snapshot(proc_);

  auto d = monitor_deltas(before, after);
  std::map<std::string, double> expected{
      {"vmstat.pgfault", 500},
      {"vmstat.pgmajfault", 2},
      {"vmstat.pswpin", 131072},
      {"vmstat.pswpout", 131072},
      {"vmstat.workingset_refault_anon", 131050},
      {"vmstat.workingset_refault_file", 0},
      {"vmstat.pgpgin", 524288},
      {"cpu.util_pct", 60.0},
      {"cpu.own_sec", 90 / kHz},                   // 0.9 s at 100 Hz
      {"cpu.foreign_sec", 240 / kHz - 90 / kHz}};  // 2.4 - 0.9 = 1.5 s
  ASSERT_EQ(d.size(), expected.size());
  for (const auto& [key, value] : expected) {
    ASSERT_EQ(d.count(key), 1u) << key;
    EXPECT_DOUBLE_EQ(d.at(key), value) << key;
  }
  EXPECT_EQ(d.count("vmstat.swpin_zero"), 0u);     // absent on this "kernel": omitted, not 0
  EXPECT_EQ(d.count("vmstat.nr_free_pages"), 0u);  // not a monitored counter
}

MonitorSnapshot make(std::map<std::string, std::uint64_t> vm, std::vector<std::uint64_t> cpu,
                     std::uint64_t own) {
  MonitorSnapshot s;
  s.vmstat = std::move(vm);
  s.cpu_ticks = std::move(cpu);
  s.own_cpu_ticks = own;
  return s;
}

TEST(MonitorDeltas, DecreasedCounterIsOmitted) {
  auto before = make({{"pgfault", 100}, {"pgmajfault", 50}}, {10, 0, 10, 80}, 5);
  auto after = make({{"pgfault", 150}, {"pgmajfault", 3}}, {20, 0, 20, 160}, 8);
  auto d = monitor_deltas(before, after);
  EXPECT_DOUBLE_EQ(d.at("vmstat.pgfault"), 50);
  EXPECT_EQ(d.count("vmstat.pgmajfault"), 0u);
  // 4-field (very old) cpu line: total 100, idle 80 -> 20 %.
  EXPECT_DOUBLE_EQ(d.at("cpu.util_pct"), 20.0);
}

TEST(MonitorDeltas, CpuCounterGoingBackwardsOmitsCpuDeltas) {
  // iowait decreased (a known NO_HZ accounting quirk): util and foreign omitted.
  auto before = make({}, {100, 0, 100, 800, 50, 0, 0, 0}, 10);
  auto after = make({}, {200, 0, 150, 900, 40, 0, 0, 0}, 30);
  auto d = monitor_deltas(before, after);
  EXPECT_EQ(d.count("cpu.util_pct"), 0u);
  EXPECT_EQ(d.count("cpu.foreign_sec"), 0u);
  EXPECT_DOUBLE_EQ(d.at("cpu.own_sec"), 20 / kHz);
}

TEST(MonitorDeltas, OwnTicksGoingBackwardsOmitsOwnAndForeign) {
  auto before = make({}, {100, 0, 100, 800, 0, 0, 0, 0}, 50);
  auto after = make({}, {150, 0, 150, 900, 0, 0, 0, 0}, 40);
  auto d = monitor_deltas(before, after);
  EXPECT_DOUBLE_EQ(d.at("cpu.util_pct"), 50.0);
  EXPECT_EQ(d.count("cpu.own_sec"), 0u);
  EXPECT_EQ(d.count("cpu.foreign_sec"), 0u);
}

TEST(MonitorDeltas, ForeignIsClampedAtZero) {
  // Machine busy 10 ticks, own tree 25 ticks (tick sampling differs): 0, not negative.
  auto before = make({}, {100, 0, 100, 800, 0, 0, 0, 0}, 0);
  auto after = make({}, {105, 0, 105, 890, 0, 0, 0, 0}, 25);
  auto d = monitor_deltas(before, after);
  EXPECT_DOUBLE_EQ(d.at("cpu.util_pct"), 10.0);
  EXPECT_DOUBLE_EQ(d.at("cpu.foreign_sec"), 0.0);
  EXPECT_DOUBLE_EQ(d.at("cpu.own_sec"), 25 / kHz);
}

TEST(MonitorDeltas, EmptyIntervalHasNoUtilisation) {
  auto s = make({{"pgfault", 7}}, {1, 2, 3, 4, 5, 6, 7, 8}, 9);
  auto d = monitor_deltas(s, s);
  EXPECT_EQ(d.count("cpu.util_pct"), 0u);
  EXPECT_DOUBLE_EQ(d.at("cpu.foreign_sec"), 0.0);
  EXPECT_DOUBLE_EQ(d.at("vmstat.pgfault"), 0.0);
}

TEST(MonitorsRealMachine, ChildCpuCountsAsOwn) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    volatile unsigned long x = 0;
    for (;;) x = x + 1;  // burn CPU until killed
  }
  auto before = take_snapshot();
  timespec ts{0, 400'000'000};
  ::nanosleep(&ts, nullptr);
  auto after = take_snapshot();
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);

  EXPECT_GT(before.vmstat.count("pgfault"), 0u);
  EXPECT_GE(before.cpu_ticks.size(), 4u);
  EXPECT_GT(after.wall_seconds, before.wall_seconds);
  auto d = monitor_deltas(before, after);
  ASSERT_EQ(d.count("cpu.own_sec"), 1u);
  // The live child burned up to 0.4 s; on a loaded machine much less, but
  // never nothing (one tick = 0.01 s).
  EXPECT_GE(d.at("cpu.own_sec"), 0.01);
  ASSERT_EQ(d.count("cpu.util_pct"), 1u);
  EXPECT_GE(d.at("cpu.util_pct"), 0.0);
  EXPECT_LE(d.at("cpu.util_pct"), 100.0);
  EXPECT_GE(d.at("cpu.foreign_sec"), 0.0);
}

}  // namespace
}  // namespace nightjar

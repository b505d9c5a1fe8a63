// The extra monitors (workloads/sys/monitor_set.h): the /proc parsers on
// the kernel's formats, the deltas of counters and levels, the catalog, and
// perf-stat on this machine (its software events count this process).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "workloads/sys/monitor_set.h"
#include "workloads/sys/perf_stat.h"
#include "workloads/sys/proc_counters.h"

namespace nightjar {
namespace {

TEST(ProcCounters, MeminfoLinesAreLevelsWithParenthesesReplaced) {
  ProcValues v;
  parse_meminfo(
      "MemTotal:       24683748 kB\nActive(anon):     1234 kB\nHugePages_Total:       0\n"
      "garbage line\n",
      v);
  EXPECT_EQ(v.levels.at("meminfo.MemTotal"), 24683748.0);
  EXPECT_EQ(v.levels.at("meminfo.Active_anon_"), 1234.0);
  EXPECT_EQ(v.levels.at("meminfo.HugePages_Total"), 0.0);
  EXPECT_EQ(v.levels.size(), 3u);
  EXPECT_TRUE(v.counters.empty());
}

TEST(ProcCounters, InterruptsAreSummedOverCpusAndNumericIrqsNamedByDevice) {
  ProcValues v;
  parse_per_cpu_table(
      "           CPU0       CPU1       \n"
      " 24:          1          2  IO-APIC   5-edge      ACPI:Ged\n"
      "LOC:     100        200   Local timer interrupts\n"
      "ERR:          3\n",
      "interrupts", v);
  EXPECT_EQ(v.counters.at("interrupts.24-ACPI:Ged"), 3u);
  EXPECT_EQ(v.counters.at("interrupts.LOC"), 300u);
  EXPECT_EQ(v.counters.at("interrupts.ERR"), 3u);
  ProcValues s;
  parse_per_cpu_table(
      "                    CPU0       CPU1\n          HI:   0  1\n   TIMER: 69888 54968\n",
      "softirqs", s);
  EXPECT_EQ(s.counters.at("softirqs.TIMER"), 124856u);
  EXPECT_EQ(s.counters.at("softirqs.HI"), 1u);
}

TEST(ProcCounters, SchedstatCpuLinesAreSummedAndDomainLinesSkipped) {
  ProcValues v;
  parse_schedstat(
      "version 15\ntimestamp 4295\ncpu0 0 0 10 4 7 3 1000 50 9\n"
      "domain0 3 1 2 3 4 5 6 7 8 9\ncpu1 1 0 20 6 3 1 2000 70 11\n",
      v);
  EXPECT_EQ(v.counters.at("schedstat.sched_count"), 30u);
  EXPECT_EQ(v.counters.at("schedstat.run_ns"), 3000u);
  EXPECT_EQ(v.counters.at("schedstat.wait_ns"), 120u);
  EXPECT_EQ(v.counters.at("schedstat.timeslices"), 20u);
  EXPECT_EQ(v.counters.at("schedstat.yld_count"), 1u);
  EXPECT_EQ(v.counters.count("schedstat.legacy"), 0u);
}

TEST(ProcCounters, SnmpTcpCountersSkipConstantsAndKeepCurrEstabAsALevel) {
  ProcValues v;
  parse_snmp(
      "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
      "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab RetransSegs\n"
      "Tcp: 1 200 120000 -1 16 2 5\n",
      {"Tcp"}, v);
  EXPECT_EQ(v.counters.at("tcp.ActiveOpens"), 16u);
  EXPECT_EQ(v.counters.at("tcp.RetransSegs"), 5u);
  EXPECT_EQ(v.levels.at("tcp.CurrEstab"), 2.0);
  EXPECT_EQ(v.counters.count("tcp.MaxConn"), 0u);
  EXPECT_EQ(v.counters.count("ip.DefaultTTL"), 0u);
  ProcValues x;
  parse_snmp("TcpExt: SyncookiesSent TCPLostRetransmit\nTcpExt: 0 7\n", {"TcpExt"}, x);
  EXPECT_EQ(x.counters.at("tcpext.TCPLostRetransmit"), 7u);
}

TEST(ProcCounters, MemoryStatEventKeysAreCountersAndSizesLevels) {
  ProcValues v;
  parse_memory_stat({{"anon", 4096}, {"pgfault", 10}, {"thp_fault_alloc", 2}, {"total_pgfault", 3}},
                    "memcg.top.stat.", v);
  EXPECT_EQ(v.levels.at("memcg.top.stat.anon"), 4096.0);
  EXPECT_EQ(v.counters.at("memcg.top.stat.pgfault"), 10u);
  EXPECT_EQ(v.counters.at("memcg.top.stat.thp_fault_alloc"), 2u);
  EXPECT_EQ(v.counters.at("memcg.top.stat.total_pgfault"), 3u);
}

TEST(MonitorSet, DeltasOfCountersLevelsAtTheEndAndBackwardsCountersOmitted) {
  MonitorSet set({}, "/nonexistent", nullptr);
  MonitorSet::Reading a, b;
  a.proc.counters = {{"softirqs.NET_RX", 10}, {"softirqs.HI", 9}};
  b.proc.counters = {{"softirqs.NET_RX", 25}, {"softirqs.HI", 3}, {"softirqs.NEW", 1}};
  a.proc.levels = {{"meminfo.MemFree", 100}};
  b.proc.levels = {{"meminfo.MemFree", 80}};
  const auto d = set.deltas(a, b);
  EXPECT_EQ(d.at("softirqs.NET_RX"), 15.0);
  EXPECT_EQ(d.count("softirqs.HI"), 0u) << "went backwards";
  EXPECT_EQ(d.count("softirqs.NEW"), 0u) << "absent before";
  EXPECT_EQ(d.at("meminfo.MemFree"), 80.0);
}

TEST(MonitorSet, CatalogSelectionOfRows) {
  EXPECT_NE(find_monitor("perf-stat"), nullptr);
  EXPECT_EQ(find_monitor("perf"), nullptr);
  EXPECT_TRUE(monitor_selected_row({"net"}, "tcpext.TCPLostRetransmit"));
  EXPECT_FALSE(monitor_selected_row({"net"}, "vmstat.pgfault"));
  EXPECT_TRUE(monitor_selected_row({}, "unknown.row")) << "rows of no monitor are kept";
  for (const auto& m : monitor_catalog()) {
    EXPECT_FALSE(m.what.empty()) << m.name;
    EXPECT_FALSE(m.cost.empty()) << m.name;
    EXPECT_FALSE(m.availability.empty()) << m.name;
  }
}

TEST(PerfStat, DeltasScaleMultiplexedCountersAndDeriveIpc) {
  PerfReading a, b;
  a.values = {
      {"cycles", {1000, 10, 10}}, {"instructions", {500, 10, 10}}, {"task-clock", {0, 0, 0}}};
  b.values = {{"cycles", {2000, 30, 20}},  // ran half the interval: scaled x2
              {"instructions", {3500, 30, 30}},
              {"task-clock", {2'000'000'000, 5, 5}}};
  const auto d = perf_deltas(a, b);
  EXPECT_DOUBLE_EQ(d.at("perf.cycles"), 2000.0);
  EXPECT_DOUBLE_EQ(d.at("perf.instructions"), 3000.0);
  EXPECT_DOUBLE_EQ(d.at("perf.ipc"), 1.5);
  EXPECT_DOUBLE_EQ(d.at("perf.task-clock_sec"), 2.0);
  PerfReading never_ran = b;
  never_ran.values["cycles"].running = 10;
  EXPECT_EQ(perf_deltas(a, never_ran).count("perf.cycles"), 0u) << "not 0: unknown";
}

// On this machine: the software events count this thread's page faults; a
// hardware event is either counted or listed as unavailable, never both.
TEST(PerfStat, SoftwarePageFaultsCountTheFaultsOfThisThread) {
  PerfStat perf;
  if (perf.unavailable().count("page-faults"))
    GTEST_SKIP() << "page-faults: " << perf.unavailable().at("page-faults");
  const PerfReading before = perf.read();
  const std::size_t pages = 256, page = 4096;
  void* p =
      ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED) << std::strerror(errno);
  ::madvise(p, pages * page, MADV_NOHUGEPAGE);
  for (std::size_t i = 0; i < pages; ++i) static_cast<volatile char*>(p)[i * page] = 1;
  ::munmap(p, pages * page);
  const auto d = perf_deltas(before, perf.read());
  EXPECT_GE(d.at("perf.page-faults"), static_cast<double>(pages));
  EXPECT_GT(d.at("perf.task-clock_sec"), 0.0);
  for (const auto& e : perf_stat_events()) {
    const bool counted = before.values.count(e.name) > 0;
    EXPECT_NE(counted, perf.unavailable().count(e.name) > 0) << e.name;
  }
  if (perf.unavailable().count("cycles")) {
    EXPECT_EQ(d.count("perf.ipc"), 0u);
  }
}

}  // namespace
}  // namespace nightjar

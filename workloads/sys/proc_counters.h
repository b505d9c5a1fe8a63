// Parsers of the /proc and cgroupfs files the extra monitors read
// (docs/monitors.md): text in, named values out, pure. Each returns the
// values of one file under the monitor's prefix; a line it cannot read is
// skipped (the kernel's formats: Documentation/filesystems/proc.rst,
// Documentation/scheduler/sched-stats.rst, Documentation/admin-guide/cgroup-v2.rst,
// Documentation/admin-guide/cgroup-v1/memory.rst).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace nightjar {

/// Values read from one file: cumulative counters (stored as per-iteration
/// deltas) and levels (gauges, stored as the value at the end of the iteration).
struct ProcValues {
  std::map<std::string, std::uint64_t> counters;
  std::map<std::string, double> levels;
};

/// /proc/meminfo: every line "Name: V [kB]" as the level "meminfo.<Name>"
/// (kB as written; HugePages_* counts). Parentheses in names become '_'
/// ("Active(anon)" -> "meminfo.Active_anon_").
void parse_meminfo(std::string_view text, ProcValues& out);

/// /proc/interrupts or /proc/softirqs (`prefix` "interrupts" / "softirqs"):
/// each line's per-CPU columns summed into the counter "<prefix>.<label>";
/// a numeric IRQ is labelled with its last word too ("interrupts.24-ACPI:Ged")
/// so that a renumbering does not join two devices. The header line (CPU
/// names) gives the number of columns; ERR/MIS (one column) are read as one.
void parse_per_cpu_table(std::string_view text, std::string_view prefix, ProcValues& out);

/// /proc/schedstat (version 15 and later): the "cpuN" lines summed over
/// CPUs: counters "schedstat.yld_count", "sched_count", "sched_goidle",
/// "ttwu_count", "ttwu_local", "run_ns" (time on CPU), "wait_ns" (time runnable,
/// waiting for a CPU) and "timeslices". Domain lines are not read.
void parse_schedstat(std::string_view text, ProcValues& out);

/// /proc/net/snmp or /proc/net/netstat: the header/value line pairs of the
/// sections named in `sections` ("Tcp", "TcpExt"), as counters
/// "<section lower-case>.<Name>" ("tcp.RetransSegs", "tcpext.TCPLostRetransmit").
/// Tcp's RtoAlgorithm, RtoMin, RtoMax and MaxConn are constants, not
/// counters, and are skipped; CurrEstab is the level "tcp.CurrEstab".
void parse_snmp(std::string_view text, std::initializer_list<std::string_view> sections,
                ProcValues& out);

/// A memcg's memory.stat (v1 or v2 keys) under `prefix` ("memcg.top.stat."):
/// event counts (keys starting with pg, thp_, workingset_, and v1's total_pg...,
/// total_workingset_...) as counters, the rest (bytes or pages in use) as levels.
void parse_memory_stat(const std::map<std::string, std::uint64_t>& stat, std::string_view prefix,
                       ProcValues& out);

}  // namespace nightjar

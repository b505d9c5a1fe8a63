// pft: the page fault test, as used by mmtests and LKP (reference:
// shared/reference/workloads.md §2). N workers — threads sharing one mm, or
// processes each with its own mm — write one byte per page of an anonymous
// private mapping, one zero-fill minor fault per page, and the figures are
// pft's fault/wsec and flt/cpu/s.
#pragma once

#include <memory>

#include "workloads/workload.h"

namespace nightjar {

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
std::unique_ptr<Workload> make_pft_workload();

}  // namespace nightjar

// Also reachable as ::make_pft_workload().
using nightjar::make_pft_workload;

// Variants: named configurations on top of a kernel (docs/reference.md
// "Vocabulary"), declared by a job's `variants:` section, and the knobs they
// write.
//
//   variants:
//     thp-never:   {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}
//     thp-madvise: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: madvise}}
//     tcp-big:     {sysctl: {net.ipv4.tcp_wmem: "4096 65536 4194304"}}
//     memcg-prot:  {cgroup: {top: {memory.min: 64M, memory.low: 128M}}}
//     vanilla:     {}                      # a label only
//
// A variant's keys: `sysfs` (paths under /sys), `procfs` (paths under /proc),
// `sysctl` (dotted names such as vm.swappiness, or paths under /proc/sys),
// `cgroup` (keys merged over the job's own `cgroup:` section: a variant's
// `top` replaces the job's `top`), `description` (free text).
//
// The knobs are written and restored by KnobSet (workloads/sys/knobs.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/sys/cgroup.h"
#include "workloads/sys/knobs.h"

namespace nightjar {

/// One entry of a job's `variants:` section, its shape checked.
struct VariantSpec {
  std::string name;         ///< the variant's label, stored in run.variant
  int line = 0;             ///< 1-based line of the name in the job file
  std::string description;  ///< free text, "" when absent
  std::vector<Knob> knobs;  ///< sysfs, procfs and sysctl knobs in the order written
  /// The job's `cgroup:` with this variant's `cgroup:` keys merged over it
  /// (harness/job/cgroup_spec.cpp; CgroupSpec is in workloads/sys/cgroup.h): the cgroup setup its
  /// cells run with.
  CgroupSpec cgroup;
  int cgroup_line = 0;  ///< 1-based line of its `cgroup:` key; 0 when absent
};

/// check_knob_targets (workloads/sys/knobs.h) of a variant's knobs, errors
/// reading "job:line: variants.NAME: knob PATH resolves to ..., outside /sys
/// and /proc; ...".
void check_knob_targets(const VariantSpec& variant, const std::string& job_path,
                        const std::string& fs_prefix = "");

}  // namespace nightjar

// How a workload's results look in LKP (Intel's Linux Kernel Performance
// tests): which LKP testcase (and `test`) measures what the workload
// measures, and the LKP job keys and stats.json metrics that are its cell
// parameters and metrics. The workload owns its table (its
// Workload::lkp_mapping(), workloads/workload.h); `nightjar import --format
// lkp --as-nightjar` finds it in the workload's declaration
// (results/model/declarations.h) and stores an LKP tree as a run of the
// workload (results/io/lkp.h; docs/data.md "LKP trees as nightjar runs").
// Pure data: no I/O.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nightjar {

/// How the value of an LKP job key becomes a nightjar parameter's text.
enum class LkpParamRule {
  same,          ///< the text as it is ("10K", "ipv4", "300s"), parsed by the parameter
  percent_cpus,  ///< LKP's "N%" (percent of the testbox's CPUs) -> "N%cpus"; a number as it is
  ignored,       ///< not a cell parameter of the workload (LkpParamMap::why says why)
};

/// One LKP job key (a top-level run key such as nr_threads, or a key of the
/// testcase's own mapping such as test) and the parameter it is.
struct LkpParamMap {
  std::string lkp;         ///< LKP's key: "nr_threads"
  std::string param = {};  ///< the workload's parameter: "clients" ("" when ignored)
  LkpParamRule rule = LkpParamRule::same;
  std::string why = {};  ///< ignored: why the key is not a parameter (for docs and notes)
};

/// One LKP metric (a key of stats.json, LKP's name) and the workload's metric
/// it measures, in the same unit (each workload's unit test checks the units
/// against LKP's direction table).
struct LkpMetricMap {
  std::string lkp;     ///< "netperf.Throughput_Mbps"
  std::string metric;  ///< "throughput"
};

/// A workload's LKP table. LKP keys of the job that the table does not name
/// are refused by the import (they may change what was measured); LKP
/// metrics it does not name are left out, with a note.
struct LkpMapping {
  std::string testcase;  ///< LKP's testcase: "netperf", "pft"
  /// The value of the testcase's `test` key that selects this workload
  /// ("TCP_SENDFILE"); "" when the testcase alone does.
  std::string test = {};
  std::vector<LkpParamMap> params;
  std::vector<LkpMetricMap> metrics;
  /// Parameters LKP always runs the benchmark with, as text (pft: mode =
  /// processes, since LKP runs pft -n; size = 20%mem, its mapping size).
  /// A key of `params` mapped to the same parameter overrides it.
  std::vector<std::pair<std::string, std::string>> fixed = {};
};

}  // namespace nightjar

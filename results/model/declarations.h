// What workloads declare, as plain data: each workload's parameters and
// metrics by name. The results layer never depends on the workloads layer;
// where it needs a workload's declarations (the declared order of metrics in
// a comparison, the type of a plot axis, the base-unit number of an imported
// parameter) the caller passes a WorkloadCatalog, which the workloads layer
// builds from its registry (workloads/workload.h, workload_catalog()).
// Workloads a catalog does not know (data imported from other tools) are
// handled by each consumer's documented fallback.
//
// A declaration also carries the workload's output hooks (its
// netperf-compatible blocks, results/model/netperf.h) and its LKP names
// (results/model/lkp_mapping.h), so that a renderer or an importer asks the
// workload instead of naming it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/lkp_mapping.h"
#include "results/model/metric.h"
#include "results/model/netperf.h"
#include "results/model/params.h"

namespace nightjar {

/// One workload's declarations.
struct WorkloadDeclaration {
  std::string name;                       ///< registry name ("pft")
  std::vector<ParamDescriptor> params;    ///< in declared order
  std::vector<MetricDescriptor> metrics;  ///< in declared order
  /// The workload's `run --format netperf` blocks of a stored iteration;
  /// empty when the workload has none (Workload::netperf_output()).
  NetperfOutput netperf = {};
  /// How LKP names the workload's cells and metrics (Workload::lkp_mapping()),
  /// for `import --format lkp --as-nightjar`; nullopt when LKP has no such test.
  std::optional<LkpMapping> lkp = {};

  /// The parameter named `name`, or nullptr.
  const ParamDescriptor* param(std::string_view name) const;
  /// The metric named `name`, or nullptr.
  const MetricDescriptor* metric(std::string_view name) const;
};

/// Declarations by workload name.
class WorkloadCatalog {
 public:
  /// Adds (or replaces) the declaration of `d.name`.
  void add(WorkloadDeclaration d);
  /// The declaration of `workload`, or nullptr when the catalog does not know it.
  const WorkloadDeclaration* find(std::string_view workload) const;
  /// The declarations, in name order (byte order).
  std::vector<const WorkloadDeclaration*> all() const;
  /// A catalog that knows no workload (every consumer's fallback applies).
  static const WorkloadCatalog& empty();

  /// The catalog of the workloads linked into this program: what the
  /// provider given to link() returns (the workloads layer's registry gives
  /// its workload_catalog() before main(), workloads/registry.cpp), or
  /// empty() when none was given. For the few entry points of the results
  /// layer that no caller hands a catalog (the `run --format` table,
  /// results/render/run_output.h); every other consumer takes one as an
  /// argument.
  static const WorkloadCatalog& linked();
  /// Sets the provider linked() calls. Called during static initialisation
  /// by the workloads layer; not meant to be called by hand.
  static void link(const WorkloadCatalog& (*provider)());

 private:
  std::map<std::string, WorkloadDeclaration, std::less<>> by_name_;
};

}  // namespace nightjar

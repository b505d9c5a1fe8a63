// What workloads declare, as plain data: each workload's parameters and
// metrics by name. The results layer never depends on the workloads layer;
// where it needs a workload's declarations (the declared order of metrics in
// a comparison, the type of a plot axis, the base-unit number of an imported
// parameter) the caller passes a WorkloadCatalog, which the workloads layer
// builds from its registry (workloads/workload.h, workload_catalog()).
// Workloads a catalog does not know (data imported from other tools) are
// handled by each consumer's documented fallback.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "results/model/metric.h"
#include "results/model/params.h"

namespace nightjar {

/// One workload's declarations.
struct WorkloadDeclaration {
  std::string name;                       ///< registry name ("pft")
  std::vector<ParamDescriptor> params;    ///< in declared order
  std::vector<MetricDescriptor> metrics;  ///< in declared order

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
  /// A catalog that knows no workload (every consumer's fallback applies).
  static const WorkloadCatalog& empty();

 private:
  std::map<std::string, WorkloadDeclaration, std::less<>> by_name_;
};

}  // namespace nightjar

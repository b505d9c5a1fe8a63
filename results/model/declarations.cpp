// Workload declarations as data (results/model/declarations.h).
#include "results/model/declarations.h"

namespace nightjar {

const ParamDescriptor* WorkloadDeclaration::param(std::string_view n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

const MetricDescriptor* WorkloadDeclaration::metric(std::string_view n) const {
  for (const auto& m : metrics)
    if (m.name == n) return &m;
  return nullptr;
}

void WorkloadCatalog::add(WorkloadDeclaration d) {
  std::string key = d.name;
  by_name_.insert_or_assign(std::move(key), std::move(d));
}

const WorkloadDeclaration* WorkloadCatalog::find(std::string_view workload) const {
  auto it = by_name_.find(workload);
  return it == by_name_.end() ? nullptr : &it->second;
}

const WorkloadCatalog& WorkloadCatalog::empty() {
  static const WorkloadCatalog none;
  return none;
}

}  // namespace nightjar

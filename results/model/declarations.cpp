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

std::vector<const WorkloadDeclaration*> WorkloadCatalog::all() const {
  std::vector<const WorkloadDeclaration*> out;
  out.reserve(by_name_.size());
  for (const auto& [name, d] : by_name_) out.push_back(&d);
  return out;
}

namespace {
// Constant-initialised (no constructor runs), so link() may be called by any
// file's static initialiser.
const WorkloadCatalog& (*linked_provider)() = nullptr;
}  // namespace

const WorkloadCatalog& WorkloadCatalog::linked() {
  return linked_provider ? linked_provider() : empty();
}

void WorkloadCatalog::link(const WorkloadCatalog& (*provider)()) {
  linked_provider = provider;
}

const WorkloadCatalog& WorkloadCatalog::empty() {
  static const WorkloadCatalog none;
  return none;
}

}  // namespace nightjar

// The workload registry: the storage the NIGHTJAR_WORKLOAD registrars of the
// workload files fill before main() (workloads/workload.h), kept sorted by
// name. Nothing here names a workload: adding one is one new file.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "workloads/workload.h"

namespace nightjar {
namespace {

// Constructed on first use, so a registrar of any file may run first: the
// order of static initialisation across files is not defined.
std::vector<std::unique_ptr<Workload>>& registry_storage() {
  static std::vector<std::unique_ptr<Workload>> storage;
  return storage;
}

}  // namespace

void register_workload(std::unique_ptr<Workload> workload) {
  auto& r = registry_storage();
  const std::string_view name = workload->name();
  auto pos = std::lower_bound(r.begin(), r.end(), name,
                              [](const auto& w, std::string_view n) { return w->name() < n; });
  if (pos != r.end() && (*pos)->name() == name) {
    // Before main(): no exception can be caught, and no output is set up yet.
    std::fprintf(stderr,
                 "nightjar: two workloads are registered as '%.*s' (\"%.*s\" and \"%.*s\"); "
                 "rename one of them (NIGHTJAR_WORKLOAD, workloads/workload.h)\n",
                 static_cast<int>(name.size()), name.data(),
                 static_cast<int>((*pos)->summary().size()), (*pos)->summary().data(),
                 static_cast<int>(workload->summary().size()), workload->summary().data());
    std::abort();
  }
  r.insert(pos, std::move(workload));
}

const std::vector<std::unique_ptr<Workload>>& workload_registry() {
  return registry_storage();
}

const Workload* find_workload(std::string_view name) {
  const auto& r = workload_registry();
  auto it = std::find_if(r.begin(), r.end(), [&](const auto& w) { return w->name() == name; });
  return it == r.end() ? nullptr : it->get();
}

const WorkloadCatalog& workload_catalog() {
  static const WorkloadCatalog catalog = [] {
    WorkloadCatalog c;
    for (const auto& w : workload_registry())
      c.add(WorkloadDeclaration{std::string(w->name()), w->params(), w->metrics(),
                                w->netperf_output(), w->lkp_mapping()});
    return c;
  }();
  return catalog;
}

namespace {
// The results layer's entry points without a caller-given catalog read this
// registry's (WorkloadCatalog::linked()).
[[maybe_unused]] const bool catalog_linked = (WorkloadCatalog::link(&workload_catalog), true);
}  // namespace

}  // namespace nightjar

// The workload registry: adding a workload is one file plus one line here.
#include <algorithm>

#include "workloads/builtin.h"
#include "workloads/exec.h"
#include "workloads/gbench.h"
#include "workloads/pft.h"
#include "workloads/tcp_sendfile.h"
#include "workloads/tmpfs_refault.h"
#include "workloads/workload.h"

namespace nightjar {

const std::vector<std::unique_ptr<Workload>>& workload_registry() {
  static const std::vector<std::unique_ptr<Workload>> registry = [] {
    std::vector<std::unique_ptr<Workload>> r;
    r.push_back(make_pft_workload());
    r.push_back(make_tmpfs_refault_workload());
    r.push_back(make_tcp_sendfile_workload());
    r.push_back(make_tcp_stream_workload());
    r.push_back(make_fake_workload());
    r.push_back(make_null_workload());
    r.push_back(make_exec_workload());
    r.push_back(make_gbench_workload());
    return r;
  }();
  return registry;
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
      c.add(WorkloadDeclaration{std::string(w->name()), w->params(), w->metrics()});
    return c;
  }();
  return catalog;
}

}  // namespace nightjar

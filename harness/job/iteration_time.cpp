// The declared iteration time of a job's cells (harness/job/iteration_time.h).
#include "harness/job/iteration_time.h"

#include <algorithm>
#include <functional>

namespace nightjar {
namespace {

// The estimate from the values of each timing parameter that `values`
// gives (none: the parameter does not count).
DeclaredIterationTime estimate(
    const Workload& workload,
    const std::function<std::vector<double>(const std::string&)>& values) {
  DeclaredIterationTime t;
  for (const auto& d : workload.params()) {
    if (!sets_iteration_time(d)) continue;
    const std::vector<double> v = values(d.name);
    double sum = 0;
    for (double x : v) sum += x;
    if (v.empty() || sum <= 0) continue;
    t.seconds += sum / static_cast<double>(v.size());
    t.params.push_back(d.name);
  }
  return t;
}

}  // namespace

bool sets_iteration_time(const ParamDescriptor& d) {
  return d.type == ParamType::duration && d.name != "timeout";
}

DeclaredIterationTime declared_iteration_time(const Workload& workload, const Matrix& m) {
  return estimate(workload, [&](const std::string& name) {
    std::vector<double> v;
    auto it = std::find(m.axis_names.begin(), m.axis_names.end(), name);
    if (it != m.axis_names.end())
      for (const auto& value : m.axes[static_cast<std::size_t>(it - m.axis_names.begin())])
        v.push_back(value.value.number);
    return v;
  });
}

DeclaredIterationTime declared_iteration_time(const Workload& workload, const Cell& cell) {
  return estimate(workload, [&](const std::string& name) {
    auto it = cell.params.find(name);
    return it == cell.params.end() ? std::vector<double>{} : std::vector<double>{it->second.number};
  });
}

}  // namespace nightjar

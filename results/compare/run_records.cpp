// The records of the run outputs (results/compare/run_records.h).
#include "results/compare/run_records.h"

#include <map>

#include "results/stats/descriptive.h"

namespace nightjar {
namespace {

// The summary of one stored run's samples.
RunSummary summarize_run(const RunReader& store, const RunRow& run) {
  RunSummary out{run.id,   run.variant,
                 run.cell, to_string(run.status) + (run.reason.empty() ? "" : ": " + run.reason),
                 {},       run.kernel_release};
  // Statistics of the valid samples; the invalid ones are counted beside n.
  std::map<std::string, std::vector<double>> by_metric;
  std::map<std::string, int> invalid;
  for (const auto& s : store.samples(run.id, SampleSet::all)) {
    auto& values = by_metric[s.metric];
    if (s.invalid.empty())
      values.push_back(s.value);
    else
      ++invalid[s.metric];
  }
  if (by_metric.empty()) return out;
  auto descriptors = store.metrics(run.workload);
  std::map<std::string, MetricDescriptor> desc;
  for (auto& d : descriptors) desc[d.name] = d;
  // Declared order first, then anything else stored.
  std::vector<std::string> order;
  for (const auto& d : descriptors)
    if (by_metric.count(d.name)) order.push_back(d.name);
  for (const auto& [name, _] : by_metric)
    if (!desc.count(name)) order.push_back(name);
  for (const auto& name : order) {
    const auto& values = by_metric[name];
    MetricDescriptor d =
        desc.count(name) ? desc[name]
                         : MetricDescriptor{.name = name, .mean = MeanKind::arithmetic, .doc = ""};
    stats::Summary s = stats::summarize(values);
    MetricSummary m;
    m.metric = name;
    m.unit = d.unit;
    m.mean = d.mean;
    m.n = s.n;
    m.invalid = invalid.count(name) ? invalid.at(name) : 0;
    m.mean_value = stats::mean_of(values, d.mean);
    m.coeff_var = s.n >= 2 ? s.coeff_var : 0;
    m.min = s.n ? s.min : 0;
    m.max = s.n ? s.max : 0;
    out.metrics.push_back(std::move(m));
  }
  return out;
}

}  // namespace

std::vector<RunSummary> summarize_runs(const RunReader& store,
                                       const std::vector<std::int64_t>& run_ids) {
  std::vector<RunSummary> out;
  for (auto id : run_ids) {
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    if (!rows.empty()) out.push_back(summarize_run(store, rows.front()));
  }
  return out;
}

std::vector<NetperfRun> netperf_runs(const RunReader& store,
                                     const std::vector<std::int64_t>& run_ids,
                                     const WorkloadCatalog& catalog) {
  std::vector<NetperfRun> out;
  for (auto id : run_ids) {
    NetperfRun run{id, {}};
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    const WorkloadDeclaration* d = rows.empty() ? nullptr : catalog.find(rows.front().workload);
    if (d && d->netperf) {
      const std::map<std::string, std::string> params = store.run_params(id);
      // iteration -> counter name -> value
      std::map<int, std::map<std::string, double>> counters;
      for (const auto& m : store.monitors(id)) counters[m.iteration][m.metric] = m.value;
      for (const IterationRow& row : store.iterations(id)) {
        auto blocks = d->netperf(
            NetperfIteration{params, row.status == IterationStatus::ok, counters[row.iteration]});
        run.blocks.insert(run.blocks.end(), blocks.begin(), blocks.end());
      }
    }
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace nightjar

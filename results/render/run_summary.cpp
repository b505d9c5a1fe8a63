#include "results/render/run_summary.h"
#include "results/model/metric.h"

#include <fmt/format.h>

#include <map>

#include "results/render/table.h"
#include "results/stats/descriptive.h"

namespace nightjar {

namespace {
// Numbers for humans: 4 decimals below 100, 2 above, like mmtests' tables.
std::string number(double v) {
  return std::abs(v) < 100 ? fmt::format("{:.4f}", v) : fmt::format("{:.2f}", v);
}
}  // namespace

std::string render_run_summary(const ResultsStore& store,
                               const std::vector<std::int64_t>& run_ids) {
  using A = TextTable::Align;
  TextTable t({"run", "variant", "cell", "metric", "unit", "n", "mean", "value", "CoeffVar", "Min",
               "Max", "status"},
              {A::right, A::left, A::left, A::left, A::left, A::right, A::left, A::right, A::right,
               A::right, A::right, A::left});
  for (auto id : run_ids) {
    RunFilter f;
    f.run_id = id;
    auto rows = store.runs(f);
    if (rows.empty()) continue;
    const RunRow& run = rows.front();
    auto samples = store.samples(id, SampleSet::all);
    std::string status = to_string(run.status) + (run.reason.empty() ? "" : ": " + run.reason);
    if (samples.empty()) {
      t.add_row(
          {std::to_string(id), run.variant, run.cell, "-", "", "0", "", "", "", "", "", status});
      continue;
    }
    // Statistics of the valid samples; the invalid ones are counted beside n.
    std::map<std::string, std::vector<double>> by_metric;
    std::map<std::string, int> invalid;
    for (const auto& s : samples) {
      auto& values = by_metric[s.metric];
      if (s.invalid.empty())
        values.push_back(s.value);
      else
        ++invalid[s.metric];
    }
    auto descriptors = store.metrics(run.workload);
    std::map<std::string, MetricDescriptor> desc;
    for (auto& d : descriptors) desc[d.name] = d;
    // Declared order first, then anything else stored.
    std::vector<std::string> order;
    for (const auto& d : descriptors)
      if (by_metric.count(d.name)) order.push_back(d.name);
    for (const auto& [name, _] : by_metric)
      if (!desc.count(name)) order.push_back(name);
    bool first = true;
    for (const auto& name : order) {
      const auto& values = by_metric[name];
      MetricDescriptor d =
          desc.count(name)
              ? desc[name]
              : MetricDescriptor{.name = name, .mean = MeanKind::arithmetic, .doc = ""};
      stats::Summary s = stats::summarize(values);
      auto mean = stats::mean_of(values, d.mean);
      const int bad = invalid.count(name) ? invalid.at(name) : 0;
      const std::string n =
          std::to_string(s.n) + (bad ? fmt::format(" ({} invalid)", bad) : std::string());
      const bool any = s.n > 0;
      t.add_row({first ? std::to_string(id) : "", first ? run.variant : "", first ? run.cell : "",
                 name, d.unit, n, mean_label(d.mean),
                 !any   ? "-"
                 : mean ? number(*mean)
                        : "undefined",
                 s.n >= 2 ? fmt::format("{:.2f}%", s.coeff_var) : "-", any ? number(s.min) : "-",
                 any ? number(s.max) : "-", first ? status : ""});
      first = false;
    }
  }
  return t.render();
}

std::string render_run_list(const std::vector<RunRow>& runs, const std::vector<FactColumn>& facts) {
  using A = TextTable::Align;
  std::vector<std::string> head = {"id", "job", "cell", "variant", "build", "kernel"};
  std::vector<A> align = {A::right, A::left, A::left, A::left, A::left, A::left};
  for (const auto& f : facts) {
    head.push_back(f.key);
    align.push_back(A::left);
  }
  for (const char* h : {"status", "samples", "started", "reason"}) {
    head.push_back(h);
    align.push_back(std::string(h) == "samples" ? A::right : A::left);
  }
  TextTable t(head, align);
  for (const auto& r : runs) {
    std::string samples = fmt::format("{}/{}", r.samples, r.iterations);
    if (r.failed) samples += fmt::format(" ({} failed)", r.failed);
    if (r.invalid) samples += fmt::format(" ({} invalid)", r.invalid);
    std::vector<std::string> row = {
        std::to_string(r.id), r.job, r.cell, r.variant, r.build.empty() ? "-" : r.build,
        r.kernel_release};
    for (const auto& f : facts) {
      auto it = f.values.find(r.id);
      row.push_back(it == f.values.end() ? "-" : it->second);
    }
    for (const auto& cell : {std::string(to_string(r.status)), samples, r.started_at, r.reason})
      row.push_back(cell);
    t.add_row(row);
  }
  return t.render();
}

std::string render_invalid_samples(const ResultsStore& store, std::int64_t run_id) {
  // Grouped by iteration and reason: an invalid iteration marks all its
  // values with one reason.
  std::vector<std::pair<int, std::string>> order;
  std::map<std::pair<int, std::string>, std::string> values;
  for (const auto& s : store.samples(run_id, SampleSet::all)) {
    if (s.invalid.empty()) continue;
    auto [it, fresh] = values.try_emplace({s.iteration, s.invalid});
    if (fresh) order.emplace_back(s.iteration, s.invalid);
    it->second += fmt::format("{}{}={:g}", it->second.empty() ? "" : " ", s.metric, s.value);
  }
  if (order.empty()) return "";
  std::string out =
      "invalid samples (left out of every statistic; --include-invalid shows them):\n";
  for (const auto& key : order)
    out += fmt::format("  iteration {}: {}: {}\n", key.first, values.at(key), key.second);
  return out;
}

}  // namespace nightjar

#include "results/render/run_summary.h"
#include "results/model/metric.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "results/model/text.h"
#include "results/render/table.h"

namespace nightjar {

std::string render_run_summary(const std::vector<RunSummary>& runs) {
  using A = TextTable::Align;
  // A kernel column when the runs measured more than one kernel (run
  // --kernel A --kernel B): otherwise two rows of one cell look alike.
  std::set<std::string> kernels;
  for (const RunSummary& run : runs) kernels.insert(run.kernel);
  const bool by_kernel = kernels.size() > 1;
  std::vector<std::string> head = {"run", "variant"};
  std::vector<A> align = {A::right, A::left};
  if (by_kernel) {
    head.push_back("kernel");
    align.push_back(A::left);
  }
  for (const char* h :
       {"cell", "metric", "unit", "n", "mean", "value", "CoeffVar", "Min", "Max", "status"})
    head.push_back(h);
  for (A a : {A::left, A::left, A::left, A::right, A::left, A::right, A::right, A::right, A::right,
              A::left})
    align.push_back(a);
  TextTable t(head, align);
  auto row = [&](const RunSummary& run, bool first, std::vector<std::string> rest) {
    std::vector<std::string> cells = {first ? std::to_string(run.id) : "",
                                      first ? run.variant : ""};
    if (by_kernel) cells.push_back(first ? run.kernel : "");
    cells.insert(cells.end(), rest.begin(), rest.end());
    t.add_row(cells);
  };
  for (const RunSummary& run : runs) {
    if (run.metrics.empty()) {
      row(run, true, {run.cell, "-", "", "0", "", "", "", "", "", run.status});
      continue;
    }
    bool first = true;
    for (const MetricSummary& m : run.metrics) {
      const std::string n = std::to_string(m.n) +
                            (m.invalid ? fmt::format(" ({} invalid)", m.invalid) : std::string());
      const bool any = m.n > 0;
      row(run, first,
          {first ? run.cell : "", m.metric, m.unit, n, mean_label(m.mean),
           !any           ? "-"
           : m.mean_value ? table_number(*m.mean_value)
                          : "undefined",
           m.n >= 2 && std::isfinite(m.coeff_var) ? fmt::format("{:.2f}%", m.coeff_var) : "-",
           any ? table_number(m.min) : "-", any ? table_number(m.max) : "-",
           first ? run.status : ""});
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

std::string render_invalid_samples(const std::vector<SampleRow>& samples) {
  // Grouped by iteration and reason: an invalid iteration marks all its
  // values with one reason.
  std::vector<std::pair<int, std::string>> order;
  std::map<std::pair<int, std::string>, std::string> values;
  for (const auto& s : samples) {
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

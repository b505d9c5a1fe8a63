// KCIDB I/O documents of loaded sides: see results/io/kcidb.h.
#include "results/io/kcidb.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "results/stats/descriptive.h"

namespace nightjar {

namespace {

using Json = nlohmann::ordered_json;

// A component of a KCIDB test path, which allows [a-zA-Z0-9_-] between dots:
// any other byte becomes '_' (the exact names are in the test's misc).
std::string path_component(const std::string& name) {
  std::string out = name.empty() ? "_" : name;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) c = '_';
  return out;
}

// The one build (label, kernel release) of a side; UsageError when its runs have several.
std::pair<std::string, std::string> side_build(const LoadedSide& side) {
  if (side.kernels.size() > 1 || side.builds.size() > 1) {
    std::string kernels, builds;
    for (const auto& k : side.kernels) kernels += (kernels.empty() ? "" : ", ") + k;
    for (const auto& b : side.builds) builds += (builds.empty() ? "" : ", ") + b;
    throw UsageError(fmt::format(
        "export --format kcidb: side '{}' pools runs of several builds (build labels: {}; "
        "kernels: {}), but a KCIDB test belongs to one build; give one selector per build, "
        "e.g. build=LABEL or kernel=RELEASE",
        side.selector.text, builds.empty() ? "none" : builds, kernels.empty() ? "none" : kernels));
  }
  return {side.builds.empty() ? "" : *side.builds.begin(),
          side.kernels.empty() ? "" : *side.kernels.begin()};
}

const MetricDescriptor* find_descriptor(const MetricCatalog& catalog, const std::string& workload,
                                        const std::string& metric) {
  auto w = catalog.find(workload);
  if (w == catalog.end()) return nullptr;
  for (const auto& d : w->second)
    if (d.name == metric) return &d;
  return nullptr;
}

// KCIDB status of a NEW side's verdict (docs/data.md "KCIDB export").
const char* status_of(stats::Verdict v) {
  switch (v) {
    case stats::Verdict::regression:
      return "FAIL";
    case stats::Verdict::improvement:
    case stats::Verdict::unchanged:
      return "PASS";
    case stats::Verdict::inconclusive:
    case stats::Verdict::undefined:
      break;
  }
  return "DONE";
}

using RowKey = std::tuple<std::string, std::string, std::string, std::string>;

// The comparison's metric rows by (workload, job, cell, metric).
std::map<RowKey, const ComparisonRow*> rows_by_key(const Comparison* comparison) {
  std::map<RowKey, const ComparisonRow*> rows;
  if (!comparison) return rows;
  for (const auto& row : comparison->rows)
    if (row.kind == ComparisonRow::Kind::metric)
      rows[{row.workload, row.job, row.cell, row.name}] = &row;
  return rows;
}

void add_finite(Json& obj, const char* key, double value) {
  if (std::isfinite(value)) obj[key] = value;
}

// The verdict of side `i` of `row` in a test's misc, and the test's status.
void add_verdict(Json& test, Json& misc, const ComparisonRow& row, std::size_t i,
                 const std::string& base_name) {
  if (i == 0 || i >= row.significance.size() || !row.significance[i]) {
    misc["role"] = "base";
    return;
  }
  const stats::Significance& s = *row.significance[i];
  test["status"] = status_of(s.verdict);
  misc["role"] = "new";
  misc["base"] = base_name;
  misc["verdict"] = std::string(stats::to_string(s.verdict));
  add_finite(misc, "change_pct", s.pct_change);
  if (s.q) add_finite(misc, "q", *s.q);
}

}  // namespace

void require_kcidb_origin(const std::string& flag, const std::string& origin) {
  bool ok = !origin.empty();
  for (char c : origin)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) ok = false;
  if (!ok)
    throw UsageError(fmt::format(
        "{}: '{}' is not a KCIDB origin; write the CI system's name in lower-case letters, "
        "digits and '_' (e.g. nightjar or mylab_perf)",
        flag, origin));
}

std::vector<Selector> kcidb_default_sides(const ResultsStore& store, const std::string& job,
                                          const std::string& workload) {
  const std::vector<std::int64_t> ids = select_export_runs(store, {}, job, workload);
  const auto labels = store.run_labels(std::set<std::int64_t>(ids.begin(), ids.end()));
  std::vector<Selector> sides;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto id : ids) {
    auto l = labels.find(id);
    if (l == labels.end() || !seen.insert({l->second.build, l->second.kernel_release}).second)
      continue;
    Selector s;
    s.build = l->second.build;
    s.kernel = l->second.kernel_release;
    s.text = s.build.empty() ? "kernel=" + s.kernel : "build=" + s.build + ",kernel=" + s.kernel;
    sides.push_back(std::move(s));
  }
  return sides;
}

nlohmann::ordered_json kcidb_document(const std::vector<LoadedSide>& sides,
                                      const MetricCatalog& catalog, const Comparison* comparison,
                                      const KcidbOptions& options) {
  const std::string& origin = options.origin;
  Json doc;
  doc["version"] = {{"major", kKcidbMajor}, {"minor", kKcidbMinor}};
  std::map<std::string, Json> checkouts, builds;
  Json tests = Json::array();
  const auto rows = rows_by_key(comparison);
  for (std::size_t i = 0; i < sides.size(); ++i) {
    const LoadedSide& side = sides[i];
    const auto [label, release] = side_build(side);
    const std::string checkout_key = label.empty() ? release : label;
    const std::string checkout_id = fmt::format("{}:{}", origin, checkout_key);
    const std::string build_id = fmt::format("{}:{}@{}", origin, checkout_key, release);
    if (!checkouts.count(checkout_id))
      checkouts[checkout_id] = {
          {"id", checkout_id},
          {"origin", origin},
          {"comment", label.empty() ? "kernel " + release : "nightjar build " + label},
          {"misc", {{"build", label}}}};
    if (!builds.count(build_id))
      builds[build_id] = {{"id", build_id},
                          {"origin", origin},
                          {"checkout_id", checkout_id},
                          {"comment", "kernel release " + release},
                          {"misc", {{"kernel_release", release}, {"build", label}}}};
    for (const auto& [key, cell] : side.cells) {
      for (const auto& [metric, samples] : cell.metrics) {
        const MetricDescriptor* d = find_descriptor(catalog, key.workload, metric);
        const MeanKind mean = d ? d->mean : MeanKind::arithmetic;
        const stats::Summary summary = stats::summarize(samples);
        Json test;
        test["id"] =
            fmt::format("{}:{}/{}/{}/{}", origin, side.selector.text, key.job, key.cell, metric);
        test["origin"] = origin;
        test["build_id"] = build_id;
        test["path"] = fmt::format("{}.{}.{}", path_component(key.workload),
                                   path_component(key.job), path_component(metric));
        test["status"] = "DONE";
        if (auto m = stats::summary_mean(summary, mean); m && std::isfinite(*m)) {
          Json number = {{"value", *m}};
          if (d && !d->unit.empty()) number["unit"] = d->unit;
          test["number"] = number;
        }
        if (side.testboxes.size() == 1)
          test["environment"] = {{"comment", "testbox " + *side.testboxes.begin()}};
        Json misc;
        misc["side"] = side.selector.text;
        misc["workload"] = key.workload;
        misc["job"] = key.job;
        misc["cell"] = key.cell;
        misc["metric"] = metric;
        if (side.variants.size() == 1) misc["variant"] = *side.variants.begin();
        if (d) misc["direction"] = std::string(to_string(d->direction));
        misc["mean"] = std::string(to_string(mean));
        misc["n"] = summary.n;
        add_finite(misc, "CoeffVar", summary.coeff_var);
        misc["runs"] = cell.run_ids;
        misc["samples"] = samples;
        if (auto row = rows.find({key.workload, key.job, key.cell, metric}); row != rows.end())
          add_verdict(test, misc, *row->second, i, sides[0].selector.text);
        test["misc"] = std::move(misc);
        tests.push_back(std::move(test));
      }
    }
  }
  doc["checkouts"] = Json::array();
  for (auto& [id, c] : checkouts) doc["checkouts"].push_back(std::move(c));
  doc["builds"] = Json::array();
  for (auto& [id, b] : builds) doc["builds"].push_back(std::move(b));
  doc["tests"] = std::move(tests);
  return doc;
}

}  // namespace nightjar

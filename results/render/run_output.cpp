#include "results/render/run_output.h"

#include <fmt/format.h>

#include <algorithm>

#include "results/model/text.h"
#include "results/render/netperf.h"
#include "results/render/run_summary.h"

namespace nightjar {
namespace {

RunOutput text_output(const ResultsStore& store, const std::vector<std::int64_t>& run_ids) {
  return {render_run_summary(summarize_runs(store, run_ids)), {}};
}

// The workloads with netperf output, as the notes and --help name them:
// "a/b" (the linked catalog's, in name order).
const std::string& netperf_workloads() {
  static const std::string names = [] {
    std::vector<std::string> n;
    for (const WorkloadDeclaration* d : WorkloadCatalog::linked().all())
      if (d->netperf) n.push_back(d->name);
    return join(n, "/");
  }();
  return names;
}

RunOutput netperf_output(const ResultsStore& store, const std::vector<std::int64_t>& run_ids) {
  std::vector<std::int64_t> other;
  RunOutput out{render_netperf(netperf_runs(store, run_ids, WorkloadCatalog::linked()), &other),
                {}};
  for (auto id : other)
    out.notes.push_back(fmt::format(
        "run {} has no netperf result blocks (not {}, or no iterations)", id, netperf_workloads()));
  return out;
}

}  // namespace

const std::vector<RunOutputFormat>& run_output_formats() {
  static const std::string netperf_doc = fmt::format(
      "one netperf result block per client and iteration of {} runs", netperf_workloads());
  static const std::vector<RunOutputFormat> formats = {
      {"text", "per-cell summary", text_output},
      {"netperf", netperf_doc, netperf_output},
  };
  return formats;
}

const RunOutputFormat* find_run_output_format(std::string_view name) {
  const auto& f = run_output_formats();
  auto it = std::find_if(f.begin(), f.end(), [&](const auto& x) { return x.name == name; });
  return it == f.end() ? nullptr : &*it;
}

std::vector<std::string> run_output_names() {
  std::vector<std::string> names;
  for (const auto& f : run_output_formats()) names.emplace_back(f.name);
  return names;
}

std::string run_output_choices_text() {
  std::vector<std::string> items;
  for (const auto& f : run_output_formats()) items.push_back(fmt::format("{} ({})", f.name, f.doc));
  const std::string last = items.back();
  items.pop_back();
  return items.empty() ? last : join(items, ", ") + " or " + last;
}

}  // namespace nightjar

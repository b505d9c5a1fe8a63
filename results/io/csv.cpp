// Tidy sample CSV export (`nightjar export --format csv`): see
// results/io/csv.h. The file is parsed by csv_read.cpp and stored by
// csv_import.cpp.
#include <fmt/format.h>

#include <iterator>
#include <ostream>
#include <set>

#include "results/compare/selector.h"
#include "results/io/csv.h"
#include "results/io/csv_detail.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

using namespace csv_detail;

std::string describe_narrowing(const std::string& job, const std::string& workload) {
  std::string out;
  if (!job.empty()) out += " --job " + job;
  if (!workload.empty()) out += " --workload " + workload;
  return out.empty() ? "" : " (with" + out + ")";
}

// The header line: the lead columns, one param.NAME per parameter, the tail
// columns, and `invalid` when invalid samples are exported.
std::string csv_header(const std::set<std::string>& param_names, bool invalid) {
  std::string line;
  for (const char* c : kLeadColumns) line += std::string(line.empty() ? "" : ",") + c;
  for (const auto& name : param_names) line += "," + csv_field(std::string(kParamPrefix) + name);
  for (const char* c : kTailColumns) line += std::string(",") + c;
  if (invalid) line += std::string(",") + kInvalidColumn;
  return line + '\n';
}

// The fields of a run's rows before the iteration: run, job, workload, the
// parameters, variant, build, kernel, testbox, started_at (with the comma
// after it).
std::string row_prefix(std::int64_t id, const ExportRun& run,
                       const std::set<std::string>& param_names) {
  const RunLabels& l = run.labels;
  std::string prefix = fmt::format("{},{},{}", id, csv_field(l.job), csv_field(l.workload));
  for (const auto& name : param_names) {
    auto it = run.params.find(name);
    prefix += ',';
    if (it != run.params.end()) prefix += csv_field(it->second);
  }
  prefix +=
      fmt::format(",{},{},{},{},{},", csv_field(l.variant), csv_field(l.build),
                  csv_field(l.kernel_release), csv_field(l.hostname), csv_field(l.started_at));
  return prefix;
}

// ",unit,direction,mean" of each recorded (workload, metric).
std::map<std::pair<std::string, std::string>, std::string> descriptor_fields(
    const ResultsStore& store) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  for (const auto& [workload, m] : store.all_metrics())
    out[{workload, m.name}] =
        fmt::format(",{},{},{}", csv_field(m.unit), to_string(m.direction), to_string(m.mean));
  return out;
}

}  // namespace

std::vector<std::int64_t> select_export_runs(const ResultsStore& store,
                                             const std::vector<std::string>& selectors,
                                             const std::string& job, const std::string& workload) {
  std::vector<Selector> parsed;
  for (const auto& s : selectors) parsed.push_back(parse_selector(s));
  if (parsed.empty()) parsed.emplace_back();  // every run
  std::set<std::int64_t> ids;
  for (const auto& sel : parsed) {
    // A selector's job/workload and --job/--workload must both match.
    if ((!sel.job.empty() && !job.empty() && sel.job != job) ||
        (!sel.workload.empty() && !workload.empty() && sel.workload != workload)) {
      throw UsageError(fmt::format("selector '{}' cannot match{}: it names another {}; drop one",
                                   sel.text, describe_narrowing(job, workload),
                                   sel.job != job ? "job" : "workload"));
    }
    RunFilter f;
    f.run_id = sel.run_id;
    f.job = sel.job.empty() ? job : sel.job;
    f.workload = sel.workload.empty() ? workload : sel.workload;
    f.variant = sel.variant;
    f.build = sel.build;
    f.kernel_release = sel.kernel;
    f.hostname = sel.testbox;
    auto runs = store.runs(f);
    if (runs.empty())
      throw UsageError(fmt::format(
          "export: {} matched no runs{}; {}",
          sel.text.empty() ? std::string("the database") : "selector '" + sel.text + "'",
          describe_narrowing(job, workload), describe_stored_runs(store)));
    for (const auto& r : runs) ids.insert(r.id);
  }
  return {ids.begin(), ids.end()};
}

CsvExportStats write_samples_csv(const ResultsStore& store,
                                 const std::vector<std::int64_t>& run_ids, std::ostream& out,
                                 bool include_invalid) {
  CsvExportStats stats;
  // One read snapshot: every query sees the same data (WAL), even while
  // `nightjar run` adds samples.
  const ResultsStore::ReadSnapshot snapshot(store);
  // Runs without samples write no row (and add no parameter column).
  const std::map<std::int64_t, ExportRun> runs =
      store.export_runs(run_ids, include_invalid ? SampleSet::all : SampleSet::valid);
  std::set<std::string> param_names;
  for (const auto& [id, r] : runs)
    for (const auto& [name, value] : r.params) param_names.insert(name);
  const auto descriptors = descriptor_fields(store);

  std::string buf = csv_header(param_names, include_invalid);
  buf.reserve(1 << 16);
  // The runs scanned: those written, and (invalid samples left out) also the
  // runs whose samples are all invalid, so that theirs are counted.
  std::vector<std::int64_t> ids;
  for (const auto& [id, r] : runs) ids.push_back(id);
  if (!include_invalid) {
    ids.clear();
    for (const auto& [id, r] : store.export_runs(run_ids, SampleSet::all)) ids.push_back(id);
  }
  const std::string undeclared = ",,,";
  std::int64_t current = -1;
  std::string prefix;
  const ExportRun* run = nullptr;
  std::string last_metric;
  const std::string* last_descriptor = &undeclared;
  // Every sample is read, so that the invalid ones left out are counted.
  store.scan_samples(
      ids,
      [&](const SampleView& v) {
        if (!v.invalid.empty() && !include_invalid) {
          ++stats.invalid;
          return;
        }
        if (v.run_id != current) {
          current = v.run_id;
          run = &runs.at(v.run_id);
          prefix = row_prefix(v.run_id, *run, param_names);
          last_metric.clear();
          last_descriptor = &undeclared;
          ++stats.runs;
        }
        if (last_metric != v.metric) {
          last_metric = v.metric;
          auto it = descriptors.find({run->labels.workload, last_metric});
          last_descriptor = it == descriptors.end() ? &undeclared : &it->second;
        }
        buf += prefix;
        fmt::format_to(std::back_inserter(buf), "{},{}{},{}", v.iteration, csv_field(last_metric),
                       *last_descriptor, v.value);
        if (include_invalid) {
          buf += ',';
          buf += csv_field(v.invalid);
          if (!v.invalid.empty()) ++stats.invalid;
        }
        buf += '\n';
        ++stats.samples;
        if (buf.size() > (1 << 16) - 512) {
          out << buf;
          buf.clear();
        }
      },
      SampleSet::all);
  out << buf;
  return stats;
}

}  // namespace nightjar

// Tidy sample CSV import into the store (`nightjar import FILE.csv`, after
// csv_read.cpp parsed and checked the file): see results/io/csv.h.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <iterator>
#include <set>

#include "results/io/csv.h"
#include "results/io/csv_detail.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"

namespace nightjar {
namespace {

using namespace csv_detail;

// run_param.number of an imported parameter: as the workload parses it
// (bytes, seconds, counts), else the text as a plain number, else 0 (text).
class ParamNumbers {
 public:
  ParamNumbers(const WorkloadCatalog& declared, const MachineFacts& machine)
      : declared_(declared), machine_(machine) {}
  double number(const std::string& workload, const std::string& name, const std::string& text) {
    if (const WorkloadDeclaration* w = declared_.find(workload)) {
      if (const ParamDescriptor* d = w->param(name)) {
        try {
          return parse_param(*d, text, machine_).number;
        } catch (const ParamError&) {
        }
      }
    }
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && p == text.data() + text.size() && std::isfinite(v) ? v : 0;
  }

 private:
  const WorkloadCatalog& declared_;
  const MachineFacts& machine_;
};

// A stored run, for "is this the run the file holds?".
struct StoredRun {
  std::string job, workload, variant, build, kernel, testbox;
  std::map<std::string, std::string> params;  // non-empty values
  std::vector<SampleRow> samples;             // by iteration, metric
};

// `labels`: the labels of the stored runs among the file's ids (one query for
// the whole file); a run id absent from it is free.
std::optional<StoredRun> stored_run(const ResultsStore& store, std::int64_t id,
                                    const std::map<std::int64_t, RunLabels>& stored_labels) {
  auto found = stored_labels.find(id);
  if (found == stored_labels.end()) return std::nullopt;
  const RunLabels* labels = &found->second;
  StoredRun r;
  r.job = labels->job;
  r.workload = labels->workload;
  r.variant = labels->variant;
  r.build = labels->build;
  r.kernel = labels->kernel_release;
  r.testbox = labels->hostname;
  for (const auto& [name, value] : store.run_params(id))
    if (!value.empty()) r.params[name] = value;
  r.samples = store.samples(id, SampleSet::all);
  return r;
}

bool same_run(const CsvRun& f, const StoredRun& s) {
  if (f.job != s.job || f.workload != s.workload || f.variant != s.variant || f.build != s.build ||
      f.kernel != s.kernel || f.testbox != s.testbox || f.params != s.params ||
      f.samples.size() != s.samples.size())
    return false;
  for (std::size_t i = 0; i < f.samples.size(); ++i)
    if (f.samples[i].iteration != s.samples[i].iteration ||
        f.samples[i].metric != s.samples[i].metric || f.samples[i].value != s.samples[i].value ||
        f.samples[i].invalid != s.samples[i].invalid)
      return false;
  return true;
}

std::string list_ids(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < 10; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > 10) out += fmt::format(", ... ({} in all)", items.size());
  return out;
}

// Records the file's descriptors the database does not have yet; fails when a
// recorded one has another unit or direction (or mean, when the file gives one).
void add_file_metrics(ResultsStore& store, const SamplesCsv& csv) {
  std::map<std::string, std::vector<MetricDescriptor>> missing;
  for (const auto& m : csv.metrics) {
    if (!m.declared) continue;
    auto stored = store.stored_metric(m.workload, m.descriptor.name);
    if (!stored) {
      missing[m.workload].push_back(m.descriptor);
      continue;
    }
    if (stored->unit != m.descriptor.unit || stored->direction != m.descriptor.direction ||
        (m.mean_given && stored->mean != m.descriptor.mean))
      fail(csv.source, m.line,
           fmt::format("metric '{}' of workload '{}' is recorded in {} with unit '{}', "
                       "direction {}, mean {}, but the file says unit '{}', direction {}, "
                       "mean {}; make the file's unit/direction/mean columns match, or import "
                       "into another database (--db); nothing imported",
                       m.descriptor.name, m.workload, store.path(), stored->unit,
                       to_string(stored->direction), to_string(stored->mean), m.descriptor.unit,
                       to_string(m.descriptor.direction), to_string(m.descriptor.mean)));
  }
  for (const auto& [workload, metrics] : missing) store.add_missing_metrics(workload, metrics);
}

// Where a file's run was measured (docs/data.md "Importing twice"): its
// testbox, its run id there and its start; files without started_at name the
// run by its labels and cell instead of the start. The same whichever
// database the file is imported into.
std::string csv_identity(const CsvRun& run) {
  std::string id = fmt::format("csv testbox={} run={}", run.testbox, run.id);
  if (!run.started_at.empty()) return id + " started_at=" + run.started_at;
  std::string cell;  // as Cell::id() writes it: the set parameters, sorted
  for (const auto& [name, value] : run.params)
    cell += (cell.empty() ? "" : " ") + name + "=" + value;
  return id + fmt::format(" job={} workload={} cell=[{}] variant={} build={} kernel={}", run.job,
                          run.workload, cell, run.variant, run.build, run.kernel);
}

// A digest of everything an import stores of `run`: labels, parameters and
// samples (values as their shortest exact text).
std::string csv_digest(const CsvRun& run) {
  std::string text = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}\n", run.job, run.workload, run.variant,
                                 run.build, run.kernel, run.testbox, run.started_at);
  for (const auto& [name, value] : run.params) text += name + "=" + value + "\n";
  for (const auto& sample : run.samples)
    fmt::format_to(std::back_inserter(text), "{}\t{}\t{}\t{}\n", sample.iteration, sample.metric,
                   sample.value, sample.invalid);
  return fnv1a64_hex(text);
}

// A file's run that is not stored yet, with its import identity and digest.
struct FreshRun {
  const CsvRun* run;
  std::string identity, digest;
};

// The run a file's run is stored as.
ImportedRun imported_run(const FreshRun& fresh, const std::string& source, bool keep_id,
                         ParamNumbers& numbers, const CsvImportOptions& options) {
  const CsvRun& run = *fresh.run;
  ImportedRun ir;
  if (keep_id) ir.id = run.id;
  ir.job = run.job;
  ir.workload = run.workload;
  ir.variant = run.variant;
  ir.build = run.build;
  for (const auto& [name, text] : run.params)
    ir.params[name] = ParamValue{text, numbers.number(run.workload, name, text)};
  ir.kernel.release = run.kernel;
  ir.testbox.hostname = run.testbox;
  ir.match_by_name = true;
  ir.iterations = run.samples.empty() ? 0 : run.samples.back().iteration;  // sorted
  ir.started_at = run.started_at;  // "" (a file without the column): the import time
  if (auto origin = options.origins.find(run.id); origin != options.origins.end()) {
    ir.kernel = origin->second.kernel;
    ir.kernel.release = run.kernel;  // the file's column names the kernel
    ir.testbox = origin->second.testbox;
    ir.match_by_name = false;
    for (const auto& [k, v] : origin->second.context) ir.context[k] = v;
    ir.job_path = origin->second.job_path;
    if (origin->second.iterations > 0) ir.iterations = origin->second.iterations;
    ir.detail = origin->second.detail;
  }
  for (const auto& [k, v] : options.context) ir.context[k] = v;
  ir.context["import.format"] = "csv";
  ir.context["import.file"] = source;
  ir.identity = fresh.identity;
  ir.digest = fresh.digest;
  ir.samples = run.samples;
  return ir;
}

}  // namespace

CsvImportResult import_samples_csv(ResultsStore& store, const SamplesCsv& csv,
                                   const WorkloadCatalog& declared, const MachineFacts& machine) {
  return import_samples_csv(store, csv, declared, machine, CsvImportOptions{});
}

CsvImportResult import_samples_csv(ResultsStore& store, const SamplesCsv& csv,
                                   const WorkloadCatalog& declared, const MachineFacts& machine,
                                   const CsvImportOptions& options) {
  CsvImportResult result;
  ResultsStore::Transaction tx(store);
  add_file_metrics(store, csv);

  // Which runs are new, and whether their ids are free. When one id is used
  // by another run, every new run gets a new id, in file order, so that the
  // runs keep their order (compare orders cells as they were run).
  std::vector<FreshRun> fresh;
  std::vector<std::string> renumbered, skipped;
  // A scoped import (another source's fresh database) takes the next ids.
  bool keep_ids = options.identity_scope.empty();
  std::map<std::int64_t, RunLabels> stored_labels;  // runs stored under the file's ids
  if (options.identity_scope.empty()) {
    std::set<std::int64_t> ids;
    for (const auto& run : csv.runs) ids.insert(run.id);
    stored_labels = store.run_labels(ids);
  }
  for (const auto& run : csv.runs) {
    // Imported before (from this file or another holding the same run)?
    std::string identity = options.identity_scope + csv_identity(run), digest = csv_digest(run);
    if (auto before = store.imported_as(identity)) {
      if (before->digest != digest)
        fail(csv.source, run.line,
             fmt::format("run {} (testbox '{}'{}) was imported before as run {} of {} with other "
                         "labels, parameters or samples; the file changed since. Nothing "
                         "imported: import the changed file into another database (--db), or "
                         "export the stored run to see what differs",
                         run.id, run.testbox,
                         run.started_at.empty() ? "" : ", started " + run.started_at,
                         before->run_id, store.path()));
      ++result.already_stored;
      result.stored_as[run.id] = before->run_id;
      skipped.push_back(fmt::format("{} (stored as {})", run.id, before->run_id));
      continue;
    }
    if (auto existing = stored_run(store, run.id, stored_labels)) {
      if (same_run(run, *existing)) {
        ++result.already_stored;
        result.stored_as[run.id] = run.id;
        skipped.push_back(std::to_string(run.id));
        continue;
      }
      keep_ids = false;
    }
    fresh.push_back({&run, std::move(identity), std::move(digest)});
  }

  ParamNumbers numbers(declared, machine);
  for (const FreshRun& run : fresh) {
    std::int64_t id =
        store.insert_imported_run(imported_run(run, csv.source, keep_ids, numbers, options));
    result.stored_as[run.run->id] = id;
    if (!keep_ids && options.identity_scope.empty())
      renumbered.push_back(fmt::format("{} -> {}", run.run->id, id));
    result.run_ids.push_back(id);
    result.samples += run.run->samples.size();
  }
  tx.commit();
  if (!skipped.empty())
    result.notes.push_back(
        fmt::format("{} run(s) of {} already stored with the same samples, not imported again "
                    "(file run ids): {}",
                    skipped.size(), csv.source, list_ids(skipped)));
  if (!renumbered.empty())
    result.notes.push_back(fmt::format(
        "run ids of {} are used by other runs in {}; its {} run(s) are stored under new ids: "
        "{}",
        csv.source, store.path(), renumbered.size(), list_ids(renumbered)));
  return result;
}

}  // namespace nightjar

// Google Benchmark reports into the store: see results/io/gbench.h.
#include "results/io/gbench.h"

#include <iterator>
#include <set>

#include <fmt/format.h>

#include "results/io/import_checks.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"

namespace nightjar {

namespace {

// The report's identity: its content (docs/data.md "Importing twice"). Not
// its host, binary and date: Google Benchmark dates a report to the second,
// and two runs of one binary within a second are two measurements.
std::string gbench_identity(const GbenchReport& report) {
  return "gbench report=" + report.report_digest;
}

// A digest of what an import stores: labels, kernel, testbox, descriptors, samples.
std::string gbench_digest(const ImportedRun& run, const std::vector<MetricDescriptor>& metrics) {
  std::string text = fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n", run.job, run.variant, run.build,
                                 run.kernel.release, run.testbox.hostname, run.started_at);
  for (const auto& d : metrics)
    text +=
        fmt::format("{}\t{}\t{}\t{}\n", d.name, d.unit, to_string(d.direction), to_string(d.mean));
  for (const auto& sample : run.samples)
    fmt::format_to(std::back_inserter(text), "{}\t{}\t{}\n", sample.iteration, sample.metric,
                   sample.value);
  return fnv1a64_hex(text);
}

}  // namespace

GbenchImportResult import_gbench(ResultsStore& store, const GbenchReport& report,
                                 const GbenchImportOptions& options) {
  GbenchImportResult result;
  ImportedRun run;
  run.job = options.job;
  run.workload = kGbenchWorkload;
  run.variant = options.variant;
  run.build = options.build;
  const bool here = !report.host_name.empty() && report.host_name == options.here.hostname;
  if (here) {
    run.testbox = options.here;
    run.kernel = options.here_kernel;
  } else {
    run.testbox.hostname = report.host_name.empty() ? "unknown" : report.host_name;
    run.testbox.cpus = report.num_cpus;
  }
  if (!options.kernel.empty() && options.kernel != run.kernel.release) {
    run.kernel = KernelIdentity{};
    run.kernel.release = options.kernel;
  }
  if (here)
    result.notes.push_back(
        fmt::format("the report was written on this machine ({}): recorded its testbox and {}",
                    report.host_name,
                    options.kernel.empty() ? "the running kernel " + run.kernel.release +
                                                 " (pass --kernel RELEASE if it ran under another)"
                                           : "kernel " + options.kernel));
  else
    result.notes.push_back(fmt::format(
        "the report was written on {} (not this machine): recorded testbox {} ({} CPUs) and "
        "{}",
        report.host_name.empty() ? "an unnamed host" : report.host_name, run.testbox.hostname,
        report.num_cpus,
        options.kernel.empty() ? "an unknown kernel (pass --kernel RELEASE to name it)"
                               : "kernel " + options.kernel));
  // A report's own date orders it among builds (nightjar trend), as a run's start does.
  run.started_at = report.started_at;
  run.context = report.context;
  run.context["import.format"] = "gbench";
  run.context["import.file"] = options.source;
  if (here) run.context["testbox.memory_bytes"] = std::to_string(run.testbox.memory_bytes);
  run.iterations = static_cast<int>(report.repetitions.size());
  for (std::size_t k = 0; k < report.repetitions.size(); ++k)
    for (const auto& [metric, value] : report.repetitions[k])
      run.samples.push_back({static_cast<int>(k + 1), metric, value});

  run.identity = gbench_identity(report);
  run.digest = gbench_digest(run, report.metrics);

  ResultsStore::Transaction tx(store);
  if (auto stored =
          stored_import(store, run.identity, run.digest, options.source,
                        fmt::format("this report (host {}, date {})",
                                    report.host_name.empty() ? "unknown" : report.host_name,
                                    report.started_at.empty() ? "none" : report.started_at),
                        "--job/--variant/--build/--kernel/--time-unit/--counter")) {
    result.run_id = *stored;
    result.already_imported = true;
    return result;
  }
  for (const auto& d : report.metrics) {
    auto stored = store.stored_metric(kGbenchWorkload, d.name);
    if (!stored) continue;
    if (stored->unit != d.unit || stored->direction != d.direction) {
      const bool time = d.name.ends_with(".real_time") || d.name.ends_with(".cpu_time");
      throw UsageError(fmt::format(
          "{}: metric {} is already recorded for workload gbench in {} ({} is better) but this "
          "report has {} ({} is better); {}; nothing imported",
          options.source, d.name, stored->unit.empty() ? "no unit" : "'" + stored->unit + "'",
          to_string(stored->direction), d.unit.empty() ? "no unit" : "'" + d.unit + "'",
          to_string(d.direction),
          time ? fmt::format("import with --time-unit {}", stored->unit)
               : fmt::format("declare it as stored with --counter {}:{}:{}",
                             d.name.substr(d.name.rfind('.') + 1), stored->unit,
                             to_string(stored->direction))));
    }
  }
  store.add_missing_metrics(kGbenchWorkload, report.metrics);
  result.run_id = store.insert_imported_run(run);
  tx.commit();
  result.samples = run.samples.size();
  result.iterations = report.repetitions.size();
  std::set<std::string> with_samples;
  for (const auto& s : run.samples) with_samples.insert(s.metric);
  result.metrics = with_samples.size();
  for (const auto& w : report.warnings) result.notes.push_back("warning: " + w);
  return result;
}

}  // namespace nightjar

// `nightjar export` and `nightjar import`: samples out as tidy CSV; tidy CSV
// or Google Benchmark JSON in (docs/data.md). The formats are in
// results/io/csv.h and results/io/gbench.h; this file is the command line.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "harness/cli/commands.h"
#include "harness/job/job.h"
#include "harness/job/lkp_job.h"
#include "results/compare/selector.h"
#include "results/io/bundle.h"
#include "results/io/bundle_runs.h"
#include "results/io/csv.h"
#include "results/io/gbench.h"
#include "results/io/input_file.h"
#include "results/io/kcidb.h"
#include "results/io/lkp.h"
#include "results/io/mmtests.h"
#include "results/model/text.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

// ---- export ---------------------------------------------------------------

struct ExportArgs {
  std::string db, format = "csv", output = "-", job, workload;
  std::vector<std::string> selectors;
  bool include_invalid = false;
  // --format kcidb
  std::string base, origin = "nightjar", test = "welch";
  double alpha = 0.05, min_effect = 1.0;
  std::vector<std::string> ignore_params;
};

// Writes an export to `output` ("-": stdout) through `write`; a file is
// written beside the target and renamed, so a failed export leaves no half file.
void write_export(const std::string& output, const std::function<void(std::ostream&)>& write) {
  if (output == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) throw EnvironmentError("export: cannot write to stdout");
    return;
  }
  const std::string tmp = fmt::format("{}.tmp{}", output, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw EnvironmentError(
          fmt::format("-o {}: cannot create {}: {}; write to a writable "
                      "directory or use -o - for stdout",
                      output, tmp, std::strerror(errno)));
    try {
      write(out);
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw EnvironmentError(
          fmt::format("-o {}: writing failed (disk full?); nothing written", output));
    }
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw EnvironmentError(
        fmt::format("-o {}: cannot rename {} to it: {}", output, tmp, std::strerror(err)));
  }
}

ExitCode run_export_csv(const ExportArgs& a) {
  const std::vector<Selector> selectors = parse_selectors(a.selectors);  // before the database
  ResultsStore store = open_existing_store(a.db);
  std::vector<std::int64_t> ids = select_export_runs(store, selectors, a.job, a.workload);
  CsvExportStats stats;
  write_export(a.output, [&](std::ostream& out) {
    stats = write_samples_csv(store, ids, out, a.include_invalid);
  });
  std::cerr << fmt::format("nightjar: exported {} samples of {} run(s){}\n", stats.samples,
                           stats.runs, a.output == "-" ? "" : " to " + a.output);
  if (stats.invalid)
    std::cerr << (a.include_invalid
                      ? fmt::format("nightjar: {} of them invalid (their reason in the invalid "
                                    "column)\n",
                                    stats.invalid)
                      : fmt::format("nightjar: {} invalid sample(s) left out; --include-invalid "
                                    "exports them with their reason\n",
                                    stats.invalid));
  if (stats.runs < ids.size())
    std::cerr << fmt::format(
        "nightjar: {} matching run(s) have no samples (skipped, failed{} or still running) and "
        "write no row\n",
        ids.size() - stats.runs, stats.invalid && !a.include_invalid ? ", only invalid ones" : "");
  return ExitCode::ok;
}

// `export --format kcidb`: the sides (the selectors, else one per build and
// kernel) as a KCIDB document, with verdicts against --base when given.
ExitCode run_export_kcidb(const ExportArgs& a) {
  if (a.include_invalid)
    throw UsageError(
        "--include-invalid applies to --format csv only: a KCIDB test carries the valid "
        "samples its number summarises");
  std::vector<Selector> selectors = parse_selectors(a.selectors);  // before the database
  std::optional<Selector> base;
  if (!a.base.empty()) base = parse_selector(a.base);
  require_kcidb_origin("--origin", a.origin);
  const stats::SignificanceOptions options = significance_options(a.test, a.alpha, a.min_effect);
  ResultsStore store = open_existing_store(a.db);
  const bool all = selectors.empty();
  if (all) selectors = kcidb_default_sides(store, a.job, a.workload);
  const SideQuery query{a.job, a.workload, a.ignore_params, &workload_catalog(), false};
  std::vector<LoadedSide> sides;
  if (base) sides.push_back(load_side(store, *base, query, "BASE"));
  for (const auto& selector : selectors) {
    LoadedSide side = load_side(store, selector, query, base ? "NEW" : "side");
    // Without selectors, the build of the base is not a NEW side of its own.
    if (base && all &&
        std::includes(sides[0].run_ids.begin(), sides[0].run_ids.end(), side.run_ids.begin(),
                      side.run_ids.end()))
      continue;
    sides.push_back(std::move(side));
  }
  if (base && sides.size() < 2)
    throw UsageError(fmt::format(
        "export --format kcidb --base {}: no other runs to compare with it; name the NEW "
        "side(s) as selectors (e.g. build=v6.18)",
        a.base));
  std::vector<Selector> names;
  for (const auto& s : sides) names.push_back(s.selector);
  check_distinct_sides(names);
  const MetricCatalog catalog = sides_metric_catalog(store, sides, query);
  std::optional<Comparison> comparison;
  if (base) comparison = compare_loaded_sides(store, sides, catalog, query, options);
  const nlohmann::ordered_json doc =
      kcidb_document(sides, catalog, comparison ? &*comparison : nullptr, {a.origin});
  write_export(a.output, [&](std::ostream& out) { out << doc.dump(2) << "\n"; });
  std::cerr << fmt::format(
      "nightjar: exported {} test(s) of {} side(s), {} build(s) as KCIDB v{}.{}{}{}\n",
      doc["tests"].size(), sides.size(), doc["builds"].size(), kKcidbMajor, kKcidbMinor,
      comparison ? fmt::format(" ({} against {})", comparison->verdict, a.base) : "",
      a.output == "-" ? "" : " to " + a.output);
  return ExitCode::ok;
}

ExitCode run_export(const ExportArgs& a) {
  if (a.format == "kcidb") return run_export_kcidb(a);
  if (!a.base.empty() || !a.ignore_params.empty())
    throw UsageError(
        "--base and --ignore-param apply to --format kcidb only (the verdicts of its tests)");
  return run_export_csv(a);
}

// ---- import ---------------------------------------------------------------

struct ImportArgs {
  std::string db, format = "csv", file, variant, build, job, kernel, time_unit;
  std::vector<std::string> counters;
  std::vector<std::string> files;  // every positional argument; `file` is the first
  bool as_nightjar = false;        // --format lkp: store as nightjar's own workload
};

// The input file of an import: a regular file or "-" (stdin), at most the
// format's cap (results/io/input_file.h).
InputFile open_import(const std::string& file, bool gbench) {
  static constexpr InputKind kCsv{
      .noun = "CSV file",
      .expect = "import a tidy CSV file as `nightjar export` writes it, or - for stdin",
      .max_bytes = kMaxCsvImportBytes,
      .cap = "1 GiB",
      .too_large_fix = "split it by run (export SELECTOR... -o FILE) and import the parts",
      .allow_stdin = true,
  };
  static constexpr InputKind kGbench{
      .noun = "Google Benchmark report",
      .expect = "import a JSON report as --benchmark_out=FILE writes it, or - for stdin",
      .max_bytes = kMaxGbenchReportBytes,
      .cap = "64 MiB",
      .too_large_fix =
          "a report is a few KiB per benchmark: check that this is the report "
          "you meant, or split the benchmarks with --benchmark_filter",
      .allow_stdin = true,
  };
  return InputFile(file, gbench ? kGbench : kCsv);
}

std::string describe_ids(const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return "";
  std::int64_t lo = *std::min_element(ids.begin(), ids.end());
  std::int64_t hi = *std::max_element(ids.begin(), ids.end());
  if (static_cast<std::size_t>(hi - lo + 1) == ids.size())
    return lo == hi ? fmt::format(" (id {})", lo) : fmt::format(" (ids {}-{})", lo, hi);
  return fmt::format(" (ids {}...{})", lo, hi);
}

ExitCode store_csv(const ImportArgs& a, const SamplesCsv& csv,
                   const CsvImportOptions& options = {});

ExitCode import_csv(const ImportArgs& a) {
  std::vector<std::string> gbench_only;
  if (!a.variant.empty()) gbench_only.push_back("--variant");
  if (!a.build.empty()) gbench_only.push_back("--build");
  if (!a.job.empty()) gbench_only.push_back("--job");
  if (!a.kernel.empty()) gbench_only.push_back("--kernel");
  if (!a.time_unit.empty()) gbench_only.push_back("--time-unit");
  if (!a.counters.empty()) gbench_only.push_back("--counter");
  if (!gbench_only.empty()) {
    std::string flags;
    for (const auto& f : gbench_only) flags += (flags.empty() ? "" : ", ") + f;
    throw UsageError(fmt::format(
        "{} only apply to --format gbench, lkp and mmtests; a tidy CSV file names every run's "
        "job, variant, build and kernel in its rows",
        flags));
  }
  if (looks_like_tar_gz(a.file)) {
    // A bundle (`nightjar bundle`): its members read into memory (samples.csv
    // capped as a CSV file is) and checked, then samples.csv imported as any
    // tidy CSV file, with what format 2 adds as each run's origin.
    const BundleContents bundle = read_bundle(a.file, workload_catalog(), probe_machine_facts());
    return store_csv(a, bundle.samples, bundle.options);
  }
  InputFile input = open_import(a.file, false);
  const std::string& source = input.source();
  const std::string_view head = input.head();
  if (auto first = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
      first != std::string::npos && head[first] == '{')
    throw UsageError(fmt::format(
        "{}: this is JSON, not tidy CSV; import Google Benchmark output with --format gbench "
        "--variant NAME",
        source));
  // Streamed: every row checked before the database is opened.
  return store_csv(
      a, parse_samples_csv(input.stream(), source, workload_catalog(), probe_machine_facts()));
}

// Stores a parsed CSV file (or a bundle's samples.csv) and says what it added.
ExitCode store_csv(const ImportArgs& a, const SamplesCsv& csv, const CsvImportOptions& options) {
  const std::string& source = csv.source;
  ResultsStore store = open_store(a.db);
  CsvImportResult r =
      import_samples_csv(store, csv, workload_catalog(), probe_machine_facts(), options);
  for (const auto& note : r.notes) std::cerr << "nightjar: " << note << "\n";
  std::cout << fmt::format(
      "imported {} run(s){}, {} samples from {}{}\n", r.run_ids.size(), describe_ids(r.run_ids),
      r.samples, source,
      r.already_stored ? fmt::format("; {} run(s) already stored, skipped", r.already_stored) : "");
  return ExitCode::ok;
}

ExitCode import_gbench_file(const ImportArgs& a) {
  if (a.variant.empty())
    throw UsageError(
        "--format gbench needs --variant NAME: the label of this report's runs, as `nightjar "
        "run --variant` gives one (e.g. --variant patched)");
  require_label("--variant", a.variant);
  for (const auto& [flag, label] : {std::pair{"--build", &a.build}, std::pair{"--job", &a.job},
                                    std::pair{"--kernel", &a.kernel}})
    if (!label->empty()) require_label(flag, *label);
  GbenchOptions options;
  options.time_unit = a.time_unit;
  std::string declarations;
  for (const auto& c : a.counters) declarations += c + " ";
  try {
    options.counters = parse_counter_declarations(declarations, "--counter");
  } catch (const ParamError& e) {
    throw UsageError(e.field + ": " + e.message);
  }
  InputFile input = open_import(a.file, true);
  const std::string source = input.source();
  GbenchReport report = parse_gbench_json(input.read_all(), options, source);
  GbenchImportOptions o;
  o.source = source;
  o.job = a.job.empty() ? default_gbench_job(report, a.file) : a.job;
  o.variant = a.variant;
  o.build = a.build;
  o.kernel = a.kernel;
  o.here = probe_testbox();
  o.here_kernel = probe_kernel_identity();
  ResultsStore store = open_store(a.db);
  GbenchImportResult r = import_gbench(store, report, o);
  if (r.already_imported) {
    std::cout << fmt::format(
        "imported 0 runs: {} is already stored as run {} (same report, same labels and "
        "samples); importing it again would count its samples twice\n",
        source, r.run_id);
    return ExitCode::ok;
  }
  for (const auto& note : r.notes) std::cerr << "nightjar: " << note << "\n";
  if (report.aggregate_entries)
    std::cerr << fmt::format(
        "nightjar: {} aggregate entries (mean, median, stddev, cv) not imported: nightjar "
        "computes its own statistics from the repetitions\n",
        report.aggregate_entries);
  std::cout << fmt::format(
      "imported run {} (job {}, workload gbench, variant {}): {} benchmarks, {} metrics, {} "
      "repetitions, {} samples from {}\n",
      r.run_id, o.job, o.variant, report.benchmarks, r.metrics, r.iterations, r.samples, source);
  return ExitCode::ok;
}

// `import --format lkp DIR...`: every tree parsed and checked, then stored
// in one transaction.
ExitCode import_lkp_dirs(const ImportArgs& a) {
  if (!a.time_unit.empty() || !a.counters.empty())
    throw UsageError("--time-unit and --counter apply to --format gbench only");
  LkpImportOptions o;
  if (!a.variant.empty()) o.variant = a.variant;
  o.job = a.job;
  o.build = a.build;
  o.kernel = a.kernel;
  for (const auto& [flag, label] :
       {std::pair{"--variant", &o.variant}, std::pair{"--build", &o.build},
        std::pair{"--job", &o.job}, std::pair{"--kernel", &o.kernel}})
    if (!label->empty()) require_label(flag, *label);
  std::vector<LkpTree> trees;
  for (const auto& dir : a.files) {
    LkpTree tree = read_lkp_tree(dir, read_lkp_job(lkp_job_path(dir)));
    trees.push_back(a.as_nightjar ? lkp_tree_as_nightjar(std::move(tree), workload_catalog())
                                  : std::move(tree));
  }
  ResultsStore store = open_store(a.db);
  LkpImportResult r = import_lkp(store, trees, o);
  for (const auto& note : r.notes) std::cerr << "nightjar: " << note << "\n";
  std::string skipped;
  for (const auto& [dir, id] : r.already_stored)
    skipped += fmt::format("{}{} (run {})", skipped.empty() ? "" : ", ", dir, id);
  std::cout << fmt::format("imported {} run(s){}, {} samples from {} LKP result director{}{}\n",
                           r.run_ids.size(), describe_ids(r.run_ids), r.samples, trees.size(),
                           trees.size() == 1 ? "y" : "ies",
                           skipped.empty() ? "" : "; already stored, skipped: " + skipped);
  return ExitCode::ok;
}

// `import --format mmtests DIR`: every log parsed and checked, then stored in
// one transaction.
ExitCode import_mmtests_dir(const ImportArgs& a) {
  if (!a.build.empty() || !a.job.empty() || !a.kernel.empty() || !a.time_unit.empty() ||
      !a.counters.empty())
    throw UsageError(
        "--format mmtests takes --variant only: the builds are mmtests' run names "
        "(work/log/NAME) and the jobs its benchmarks");
  MmtestsImportOptions o;
  if (!a.variant.empty()) o.variant = a.variant;
  require_label("--variant", o.variant);
  const MmtestsResults results = read_mmtests_dir(a.file);
  ResultsStore store = open_store(a.db);
  MmtestsImportResult r = import_mmtests(store, results, o);
  for (const auto& w : results.warnings) std::cerr << "nightjar: warning: " << w << "\n";
  std::set<std::string> names;
  for (const auto& run : results.runs) names.insert(run.name);
  std::cout << fmt::format(
      "imported {} run(s){}, {} samples of {} mmtests run name(s) from {}{}\n", r.run_ids.size(),
      describe_ids(r.run_ids), r.samples, names.size(), a.file,
      r.already_stored ? fmt::format("; {} run(s) already stored, skipped", r.already_stored) : "");
  return ExitCode::ok;
}

ExitCode run_import(ImportArgs& a) {
  a.file = a.files.front();
  if (a.as_nightjar && a.format != "lkp")
    throw UsageError(
        "--as-nightjar applies to --format lkp only (it maps LKP's testcases, keys and metrics "
        "onto nightjar's workloads); drop it");
  if (a.format == "lkp") return import_lkp_dirs(a);
  if (a.files.size() > 1)
    throw UsageError(
        fmt::format("--format {} imports one file at a time ({} given); run import once per file",
                    a.format, a.files.size()));
  if (a.format == "mmtests") return import_mmtests_dir(a);
  return a.format == "gbench" ? import_gbench_file(a) : import_csv(a);
}

}  // namespace

Subcommand add_export_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand(
      "export",
      "Write stored samples as tidy CSV (one row per sample) or as KernelCI KCIDB JSON "
      "(--format kcidb) (docs/data.md)");
  s.cmd
      ->add_option("selectors", a->selectors,
                   "runs to export: selectors as in compare (a variant name, or key=value[,...] "
                   "with keys build, kernel, variant, run, testbox, job, workload); several are "
                   "joined (OR); none: every run")
      ->allow_extra_args(true);
  s.cmd
      ->add_option("--format", a->format,
                   "csv: tidy sample CSV; kcidb: KernelCI KCIDB JSON (schema v5.3), one test per "
                   "side x cell x metric")
      ->check(CLI::IsMember({"csv", "kcidb"}))
      ->capture_default_str();
  s.cmd->add_option("--base", a->base,
                    "kcidb: BASE selector; each other side's tests get PASS/FAIL from the "
                    "verdict against it (without: DONE)");
  s.cmd->add_option("--origin", a->origin, "kcidb: the CI system's name in every id")
      ->capture_default_str();
  s.cmd->add_option("--test", a->test, "kcidb --base: significance rule, as compare's")
      ->check(CLI::IsMember({"welch", "utest", "mmtests", "lkp"}))
      ->capture_default_str();
  s.cmd->add_option("--alpha", a->alpha, "kcidb --base: as compare's")->capture_default_str();
  s.cmd->add_option("--min-effect", a->min_effect, "kcidb --base: as compare's, percent")
      ->capture_default_str();
  s.cmd
      ->add_option("--ignore-param", a->ignore_params,
                   "kcidb: match and pool cells ignoring this parameter (repeatable), as compare's")
      ->allow_extra_args(false);
  s.cmd->add_option("-o,--output", a->output, "FILE to write, or - for stdout")
      ->capture_default_str();
  s.cmd->add_option("--job", a->job, "only runs of this job")
      ->check(not_empty("write a label (docs/input.md \"Labels\") or leave --job out"));
  s.cmd->add_option("--workload", a->workload, "only runs of this workload");
  s.cmd->add_flag("--include-invalid", a->include_invalid,
                  "also export the samples stored invalid, with their reason in a last "
                  "`invalid` column (import stores them invalid again)");
  s.cmd->add_option("--db", a->db, "results database path");
  s.run = [a] { return run_export(*a); };
  return s;
}

Subcommand add_import_command(CLI::App& app) {
  auto a = std::make_shared<ImportArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand(
      "import",
      "Store samples from a tidy CSV file (nightjar export), a Google Benchmark JSON report "
      "(--format gbench), LKP result directories (--format lkp) or an mmtests results "
      "directory (--format mmtests), in one transaction (docs/data.md)");
  s.cmd
      ->add_option("file", a->files,
                   "FILE.csv or FILE.json to import (a regular file of at most 1 GiB of CSV or 64 "
                   "MiB of JSON; docs/input.md), FILE.tar.gz written by `nightjar bundle` (its "
                   "samples.csv), or - for stdin; with --format lkp, one or more LKP result "
                   "directories (job.yaml with stats.json or matrix.json); with --format mmtests, "
                   "one mmtests results directory")
      ->required();
  s.cmd
      ->add_option("--format", a->format,
                   "csv: tidy sample CSV as `nightjar export` writes it; gbench: Google "
                   "Benchmark JSON (--benchmark_out=FILE); lkp: LKP result directories "
                   "(job.yaml, stats.json or matrix.json), one run each; mmtests: an mmtests "
                   "results directory (work/log/NAME/iter-N/BENCHMARK/logs)")
      ->check(CLI::IsMember({"csv", "gbench", "lkp", "mmtests"}))
      ->capture_default_str();
  s.cmd
      ->add_option("--variant", a->variant,
                   "gbench: variant label of the imported run (required); lkp, mmtests: "
                   "(default lkp, mmtests)")
      ->check(not_empty("write a label (docs/input.md \"Labels\") or leave --variant out"));
  s.cmd
      ->add_option("--build", a->build,
                   "gbench, lkp: build label of the imported run (lkp default: the job's "
                   "commit)")
      ->check(not_empty("write a label (docs/input.md \"Labels\") or leave --build out"));
  s.cmd
      ->add_option("--job", a->job,
                   "gbench: job name (default: the benchmark executable's file name, else the "
                   "file's stem); lkp: (default: job_origin's stem, else the testcase)")
      ->check(not_empty("write a label (docs/input.md \"Labels\") or leave --job out"));
  s.cmd
      ->add_option("--kernel", a->kernel,
                   "gbench: kernel release the benchmarks ran under (default: the running "
                   "kernel when the report was written on this machine); lkp: (default: the "
                   "release in the job's kernel image name, vmlinuz-RELEASE)")
      ->check(not_empty("write a label (docs/input.md \"Labels\") or leave --kernel out"));
  s.cmd
      ->add_option("--time-unit", a->time_unit,
                   "gbench: store real_time/cpu_time in this unit (default: each benchmark's "
                   "own time_unit)")
      ->check(CLI::IsMember({"ns", "us", "ms", "s"}));
  s.cmd
      ->add_option("--counter", a->counters,
                   "gbench: NAME[:UNIT[:higher|lower[:hmean|amean|gmean]]]: unit and direction "
                   "of a user counter (repeatable); default: *_per_second are rates (higher, "
                   "Hmean), others higher with Amean")
      ->allow_extra_args(false);
  std::vector<std::string> mapped;  // each workload's own LKP table
  for (const WorkloadDeclaration* d : workload_catalog().all())
    if (d->lkp)
      mapped.push_back(fmt::format("{}{} as {}", d->lkp->testcase,
                                   d->lkp->test.empty() ? "" : " " + d->lkp->test, d->name));
  s.cmd->add_flag("--as-nightjar", a->as_nightjar,
                  fmt::format("lkp: store each tree as a run of the nightjar workload that "
                              "measures the same test ({}), with its metric names, units and "
                              "cell parameters, so that compare matches it with nightjar's "
                              "runs; LKP metrics the workload lacks are left out (docs/data.md "
                              "\"LKP trees as nightjar runs\")",
                              join(mapped)));
  s.cmd->add_option("--db", a->db, "results database path (created when missing)");
  s.run = [a] { return run_import(*a); };
  return s;
}

}  // namespace nightjar

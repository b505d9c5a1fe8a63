// `nightjar bundle BASE NEW [NEW...] -o FILE.tar.gz [--text]`: what a reply on
// a mailing list needs to reproduce a comparison (docs/publish.md "Bundles"):
// README.txt (the post body), the job files of the runs, samples.csv
// (`nightjar export --include-invalid` of the runs) and what compare reads
// besides samples (bundle format 2: FORMAT, runs.json, kernel_config/HASH;
// results/io/bundle_runs.h), which `nightjar import FILE.tar.gz` loads into
// another database. The post body is made of the
// existing renderers and records: the changelog table of `nightjar report`
// (results/render/report.h), the run summary of `nightjar show --summary`
// (n, mean, CoeffVar, invalid samples; results/render/run_summary.h), and the
// stored kernel, testbox and context of each run. Nothing is computed here.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/commands.h"
#include "results/compare/comparison.h"
#include "results/compare/selector.h"
#include "results/io/bundle.h"
#include "results/io/bundle_runs.h"
#include "results/io/csv.h"
#include "results/render/report.h"
#include "results/render/run_summary.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

struct BundleArgs {
  std::vector<std::string> sides;  // [0] = BASE
  std::string db, output, job, workload;
  std::vector<std::string> ignore_params;
  bool text = false;
};

// The kernel, testbox, job and context lines of one run.
std::string describe_run(const ResultsStore& store, const RunRecord& r, std::int64_t id) {
  std::string out = fmt::format("run {}: job {}{}, workload {}, cell {}, variant {}{}\n", id, r.job,
                                r.job_path.empty() ? "" : " (" + r.job_path + ")", r.workload,
                                r.cell, r.variant, r.build.empty() ? "" : ", build " + r.build);
  out += fmt::format("  iterations {} planned (+{} warmup), status {}\n", r.iterations, r.warmup,
                     to_string(r.status));
  const auto [kernel, testbox] = store.run_machine(id);
  if (kernel)
    out += fmt::format("  kernel  {} {}\n  cmdline {}\n  config_hash {}\n", kernel->release,
                       kernel->version, kernel->cmdline,
                       kernel->config_hash.empty() ? "(config not readable)" : kernel->config_hash);
  if (testbox)
    out += fmt::format("  testbox {}, {}, {} cpus, {} bytes memory\n", testbox->hostname,
                       testbox->cpu_model.empty() ? "cpu model unknown" : testbox->cpu_model,
                       testbox->cpus, testbox->memory_bytes);
  if (!r.context.empty()) {
    out += "  env:";
    for (const auto& [k, v] : r.context) out += fmt::format(" {}={}", k, v);
    out += "\n";
  }
  return out;
}

// The post body: the report table, the run summary, then every run's facts.
std::string post_body(const ResultsStore& store, const BundleArgs& a,
                      const std::vector<Selector>& sides, const std::vector<std::int64_t>& ids,
                      const std::map<std::int64_t, RunRecord>& records) {
  const SideQuery query{a.job, a.workload, a.ignore_params, &workload_catalog(), false};
  const Comparison c =
      compare_selectors(store, sides, query, significance_options("welch", 0.05, 1.0));
  std::string body = render_report({{"", &c}}, ReportOptions{});
  body += "\nRuns (n, mean, CoeffVar and invalid samples per run and metric):\n\n";
  body += render_run_summary(summarize_runs(store, ids));
  body += "\n";
  for (const auto& [id, r] : records) body += describe_run(store, r, id);
  body += fmt::format(
      "\nReproduce: `nightjar import BUNDLE.tar.gz` loads these runs into your database;\n"
      "`nightjar compare {}` then compares your runs with these.\n",
      a.sides.front() + " " + a.sides.back());
  return body;
}

// The job files the runs name, read from disk when they are still there
// (the store records the path, not the text): jobs/NAME per distinct path.
std::vector<ArchiveMember> job_files(const std::map<std::int64_t, RunRecord>& records,
                                     std::string& notes) {
  std::vector<ArchiveMember> out;
  std::set<std::string> seen;
  for (const auto& [id, r] : records) {
    if (r.job_path.empty() || !seen.insert(r.job_path).second) continue;
    std::ifstream in(r.job_path, std::ios::binary);
    if (!in) {
      notes +=
          fmt::format("job file {} (run {}) is not readable here; not bundled\n", r.job_path, id);
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    std::string name = std::filesystem::path(r.job_path).filename().string();
    while (std::any_of(out.begin(), out.end(),
                       [&](const ArchiveMember& m) { return m.name == "jobs/" + name; }))
      name = "_" + name;
    out.push_back({"jobs/" + name, text.str()});
  }
  return out;
}

ExitCode cmd_bundle(const BundleArgs& a) {
  if (a.sides.size() < 2)
    throw UsageError(
        "bundle: give a BASE and at least one NEW selector, e.g. `nightjar bundle vanilla "
        "patched -o repro.tar.gz`");
  if (a.text == !a.output.empty())
    throw UsageError(a.text ? "bundle: --text prints the post body and writes no file; drop -o"
                            : "bundle: give -o FILE.tar.gz (or --text for the post body alone)");
  const std::vector<Selector> sides = parse_selectors(a.sides);
  check_distinct_sides(sides);
  ResultsStore store = open_existing_store(a.db);
  const std::vector<std::int64_t> ids = select_export_runs(store, sides, a.job, a.workload);
  std::map<std::int64_t, RunRecord> records;
  for (auto id : ids)
    if (auto r = store.run_record(id)) records.emplace(id, std::move(*r));
  std::string body = post_body(store, a, sides, ids, records);
  if (a.text) {
    std::cout << body;
    std::cout.flush();
    return ExitCode::ok;
  }
  std::string notes;
  std::vector<ArchiveMember> jobs = job_files(records, notes);
  if (!notes.empty()) body += "\n" + notes;
  std::ostringstream csv;
  const CsvExportStats stats = write_samples_csv(store, ids, csv, true);
  std::vector<ArchiveMember> members{{"README.txt", body}};
  members.insert(members.end(), jobs.begin(), jobs.end());
  members.push_back({"samples.csv", csv.str()});
  // Format 2 (results/io/bundle_runs.h): FORMAT first among them, then what
  // compare reads besides samples (runs.json, kernel_config/HASH).
  for (auto& m : bundle_format_members(store, ids)) members.push_back(std::move(m));
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  write_tar_gz(a.output, members, std::chrono::duration_cast<std::chrono::seconds>(now).count());
  if (!notes.empty()) std::cerr << "nightjar: " << notes;
  std::cerr << fmt::format(
      "nightjar: bundled {} run(s), {} samples ({} invalid), {} job file(s) into {}\n", stats.runs,
      stats.samples, stats.invalid, jobs.size(), a.output);
  return ExitCode::ok;
}

}  // namespace

Subcommand add_bundle_command(CLI::App& app) {
  auto a = std::make_shared<BundleArgs>();
  Subcommand s;
  s.cmd = app.add_subcommand(
      "bundle",
      "A reproducer for a mailing-list reply: BASE NEW [NEW...] selectors into a .tar.gz of the "
      "report table, job files, kernel/testbox/env facts and samples.csv (docs/publish.md)");
  s.cmd
      ->add_option("sides", a->sides,
                   "selectors as for `report` (a variant name, or key=value[,key=value]); the "
                   "first is BASE")
      ->required();
  s.cmd->add_option("-o,--output", a->output, "FILE.tar.gz to write");
  s.cmd->add_flag("--text", a->text, "print the post body (README.txt) alone; write no file");
  s.cmd->add_option("--db", a->db, "results database path");
  s.cmd->add_option("--job", a->job, "only runs of this job, on every side");
  s.cmd->add_option("--workload", a->workload, "only runs of this workload, on every side");
  s.cmd
      ->add_option("--ignore-param", a->ignore_params,
                   "match cells ignoring this parameter (repeatable), as report")
      ->allow_extra_args(false);
  s.run = [a] { return cmd_bundle(*a); };
  return s;
}

}  // namespace nightjar

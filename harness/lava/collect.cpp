// Bringing one LAVA job's results home: see harness/lava/collect.h.
#include "harness/lava/collect.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "harness/lava/report.h"
#include "harness/lava/samples_block.h"
#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/probe.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

std::string run_key(const std::string& job, const std::string& variant, const std::string& cell) {
  return job + "\x1f" + variant + "\x1f" + cell;
}

std::string cell_id(const std::string& workload, const std::map<std::string, ParamValue>& params) {
  return Cell{workload, params}.id();
}

// The cell of a guest run: the planned cell with the same id (numbers in
// base units), else the texts parsed by the workload's descriptors.
std::map<std::string, ParamValue> guest_params(const GuestRun& g, const LavaJobEntry& entry) {
  std::map<std::string, ParamValue> params;
  for (const auto& [name, text] : g.params) params[name] = ParamValue{text, 0};
  const std::string id = cell_id(g.workload, params);
  for (const auto& p : entry.plan)
    if (p.job == g.job && p.workload == g.workload && cell_id(p.workload, p.params) == id)
      return p.params;
  if (const Workload* w = find_workload(g.workload))
    for (auto& [name, value] : params)
      for (const auto& d : w->params())
        if (d.name == name) try {
            value.number = parse_param(d, value.text, MachineFacts{}).number;
          } catch (const ParamError&) {
          }
  return params;
}

// Stores a run that has no samples (skipped, failed, aborted) unless a
// collect stored it before under `identity`. Returns its id, or 0 when it
// was stored before.
std::int64_t store_sampleless(ResultsStore& store, NewRun run, RunStatus status,
                              const std::string& reason, const std::string& identity,
                              const std::vector<std::string>& warnings) {
  if (store.imported_as(identity)) return 0;
  run.context["import.identity"] = identity;
  if (status == RunStatus::skipped) return store.record_skipped(run, reason);
  const std::int64_t id = store.begin_run(run);
  for (const auto& w : warnings) store.add_warning(id, w);
  store.finish_run(id, status, reason);
  return id;
}

RunStatus status_of(const std::string& s) {
  if (s == "skipped") return RunStatus::skipped;
  if (s == "aborted") return RunStatus::aborted;
  return RunStatus::failed;  // failed, and "running" (the guest stopped inside it)
}

void count(LavaCollected& out, RunStatus s) {
  if (s == RunStatus::skipped)
    ++out.skipped;
  else if (s == RunStatus::aborted)
    ++out.aborted;
  else
    ++out.failed;
}

}  // namespace

void add_collected(LavaCollected& total, const LavaCollected& c) {
  total.run_ids.insert(total.run_ids.end(), c.run_ids.begin(), c.run_ids.end());
  total.complete += c.complete;
  total.failed += c.failed;
  total.skipped += c.skipped;
  total.aborted += c.aborted;
  total.samples += c.samples;
  total.already_stored += c.already_stored;
}

namespace {

// What every run a collect stores carries: the lava.* facts, the testbox
// name and the import identity's scope ("lava KEY ").
struct CollectScope {
  std::map<std::string, std::string> facts;
  std::string testbox;
  std::string scope;
};

CollectScope collect_scope(const LavaJobEntry& entry, const LavaJobRef& ref) {
  CollectScope c;
  c.testbox = ref.device.empty() ? entry.device_type : ref.device;
  c.facts = {{"lava.job", ref.key},
             {"lava.job_id", ref.job_id},
             {"lava.device_type", entry.device_type},
             {"lava.job_name", entry.job_name},
             {"lava.definition", entry.file},
             {"lava.kernel", entry.kernel}};
  if (!ref.url.empty()) c.facts["lava.url"] = ref.url;
  if (!ref.device.empty()) c.facts["lava.device"] = ref.device;
  c.scope = "lava " + ref.key + " ";
  return c;
}

// Imports the guest's report (samples.csv and runs.json of `blocks`) into
// `out`, then stores the guest's runs without samples with their own status
// and reason. Returns the guest's runs; counts them by run_key in `reported`.
std::vector<GuestRun> import_guest_report(ResultsStore& store, const LavaJobEntry& entry,
                                          const LavaJobRef& ref, const ConsoleBlocks& blocks,
                                          const CollectScope& c, LavaCollected& out,
                                          std::map<std::string, int>& reported) {
  std::vector<GuestRun> guest = parse_guest_runs(blocks.files.at("runs.json"), ref.key);
  std::istringstream in(blocks.files.at("samples.csv"));
  const SamplesCsv csv =
      parse_samples_csv(in, ref.key + ": samples.csv", workload_catalog(), probe_machine_facts());
  CsvImportOptions options;
  options.identity_scope = c.scope;
  options.context = c.facts;
  for (const auto& g : guest) {
    CsvRunOrigin o;
    o.kernel = g.kernel;
    o.testbox = g.testbox;
    o.testbox.hostname = c.testbox;
    o.context = g.context;
    o.context["lava.guest_hostname"] = g.testbox.hostname;
    options.origins[g.run] = std::move(o);
  }
  const CsvImportResult r =
      import_samples_csv(store, csv, workload_catalog(), probe_machine_facts(), options);
  out.run_ids = r.run_ids;
  out.complete = static_cast<int>(r.run_ids.size());
  out.samples = r.samples;
  out.already_stored = r.already_stored;
  // The guest's runs without samples: their own status and reason.
  for (const auto& g : guest) {
    reported[run_key(g.job, g.variant, cell_id(g.workload, guest_params(g, entry)))]++;
    if (r.stored_as.count(g.run)) continue;
    NewRun run;
    run.job = g.job;
    run.job_path = g.job_path;
    run.cell = Cell{g.workload, guest_params(g, entry)};
    run.variant = g.variant;
    run.build = g.build;
    run.iterations = g.iterations;
    run.warmup = g.warmup;
    run.kernel = g.kernel;
    run.testbox = g.testbox;
    run.testbox.hostname = c.testbox;
    run.context = g.context;
    run.context["lava.guest_hostname"] = g.testbox.hostname;
    for (const auto& [k, v] : c.facts) run.context[k] = v;
    const RunStatus s = g.status == "complete" ? RunStatus::failed : status_of(g.status);
    const std::string reason =
        g.status == "complete" ? "the guest stored no samples for this run" : g.reason;
    const std::int64_t id = store_sampleless(
        store, run, s, reason, fmt::format("{}guest-run {}", c.scope, g.run), g.warnings);
    if (id == 0) {
      ++out.already_stored;
      continue;
    }
    out.run_ids.push_back(id);
    count(out, s);
  }
  return guest;
}

// What LAVA says, for the runs that did not come home.
std::string missing_runs_reason(const LavaJobRef& ref, bool have_report,
                                const ConsoleBlocks& blocks) {
  std::string why;
  if (!ref.passed) why = "LAVA job " + ref.job_id + " failed: " + ref.error;
  if (!have_report) {
    std::string blocks_why;
    for (const auto& [name, broken] : blocks.broken)
      blocks_why += (blocks_why.empty() ? "" : "; ") + name + ": " + broken;
    const std::string missing =
        blocks_why.empty() ? "the guest printed no samples (no nightjar-lava blocks on the console)"
                           : "the samples did not come home intact (" + blocks_why + ")";
    return why.empty() ? missing : why + "; " + missing;
  }
  return why.empty() ? "the guest did not run it (its runs.json does not list it)"
                     : why + "; the guest did not report this run";
}

// Stores every planned run of `entry` the guest did not report (beyond
// `reported` of its cell) as failed with `why`, on the guest's kernel and
// testbox when it reported any, else the entry's.
void store_missing_runs(ResultsStore& store, const LavaJobEntry& entry,
                        const std::vector<GuestRun>& guest,
                        const std::map<std::string, int>& reported, const std::string& why,
                        const CollectScope& c, LavaCollected& out) {
  KernelIdentity kernel;
  kernel.release = entry.kernel_release;
  if (!guest.empty()) kernel = guest.front().kernel;
  if (kernel.release.empty()) kernel.release = "lava:" + fs::path(entry.kernel).filename().string();
  Testbox box;
  box.hostname = c.testbox;
  if (!guest.empty()) {
    box = guest.front().testbox;
    box.hostname = c.testbox;
  }
  std::map<std::string, int> planned_seen;
  for (const auto& p : entry.plan) {
    const std::string key = run_key(p.job, p.variant, cell_id(p.workload, p.params));
    const auto r = reported.find(key);
    const int reported_runs = r == reported.end() ? 0 : r->second;
    for (int i = 0; i < std::max(1, entry.runs); ++i) {
      const int nth = ++planned_seen[key];
      if (nth <= reported_runs) continue;
      NewRun run;
      run.job = p.job;
      run.job_path = p.job_path;
      run.cell = Cell{p.workload, p.params};
      run.variant = p.variant;
      run.build = p.build;
      run.iterations = p.iterations;
      run.warmup = p.warmup;
      run.kernel = kernel;
      run.testbox = box;
      run.context = c.facts;
      const std::int64_t id =
          store_sampleless(store, run, RunStatus::failed, why,
                           fmt::format("{}planned {} {} [{}] #{}", c.scope, p.job, p.variant,
                                       cell_id(p.workload, p.params), nth),
                           {});
      if (id == 0) {
        ++out.already_stored;
        continue;
      }
      out.run_ids.push_back(id);
      ++out.failed;
    }
  }
}

}  // namespace

LavaCollected collect_lava_job(ResultsStore& store, const LavaJobEntry& entry,
                               const LavaJobRef& ref, const LavaLog& log) {
  LavaCollected out;
  const CollectScope c = collect_scope(entry, ref);
  const ConsoleBlocks blocks = decode_console_blocks(log.console);
  const bool have_report = blocks.files.count("samples.csv") && blocks.files.count("runs.json");
  std::vector<GuestRun> guest;
  std::map<std::string, int> reported;  // run_key -> guest runs of that cell
  if (have_report) guest = import_guest_report(store, entry, ref, blocks, c, out, reported);
  store_missing_runs(store, entry, guest, reported, missing_runs_reason(ref, have_report, blocks),
                     c, out);
  if (!ref.passed && have_report)
    out.notes.push_back(fmt::format("{}: LAVA says the job failed ({}), but its samples came home",
                                    ref.key, ref.error));
  return out;
}

}  // namespace nightjar

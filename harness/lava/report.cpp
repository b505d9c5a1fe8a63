// The guest side of a LAVA job: see harness/lava/report.h.
#include "harness/lava/report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness/lava/samples_block.h"
#include "harness/vm/initramfs.h"
#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/stats/descriptive.h"
#include "results/store/store.h"
#include "workloads/workload.h"

namespace nightjar {
namespace {

using json = nlohmann::json;
constexpr std::size_t kMaxCaseName = 100;  // LAVA's TestCase.name (help_max_length(100))

std::string case_word(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out;
}

// Whether `value` is what parameter `key` of `workload` is without a job
// setting it (its declared default, canonicalised as the job parser does).
bool default_value(const std::string& workload, const std::string& key, const ParamValue& value) {
  const Workload* w = find_workload(workload);
  if (!w) return false;
  for (const auto& d : w->params()) {
    if (d.name != key) continue;
    if (d.default_value == value.text) return true;
    try {
      return parse_param(d, d.default_value, MachineFacts{}).text == value.text;
    } catch (const ParamError&) {
      return false;
    }
  }
  return false;
}

std::string case_name(const RunRecord& r, int repeat) {
  std::string name = case_word(r.job) + "." + case_word(r.variant);
  for (const auto& [key, value] : r.params)
    if (!value.text.empty() && !default_value(r.workload, key, value))
      name += "." + case_word(key + "_" + value.text);
  if (repeat > 1) name += fmt::format(".run{}", repeat);
  if (name.size() > kMaxCaseName) {
    const std::string hash = fnv1a64_hex(name).substr(0, 8);
    name = name.substr(0, kMaxCaseName - hash.size() - 1) + "." + hash;
  }
  return name;
}

// The main metric of a run: the workload's first declared one (the first of
// the cell's metrics for a workload whose metrics depend on the cell), else
// the first stored one by name.
std::optional<MetricDescriptor> main_metric(const RunReader& store, const RunRecord& r) {
  if (const Workload* w = find_workload(r.workload)) {
    Cell cell;
    cell.workload = r.workload;
    cell.params = r.params;
    std::vector<MetricDescriptor> metrics = w->cell_metrics(cell);
    if (!metrics.empty()) return metrics.front();
  }
  std::vector<MetricDescriptor> stored = store.metrics(r.workload);
  if (!stored.empty()) return stored.front();
  return std::nullopt;
}

std::string result_of(const std::string& status) {
  if (status == "complete") return "pass";
  if (status == "skipped") return "skip";
  return "fail";
}

std::vector<RunRow> all_runs(const RunReader& store) {
  return store.runs(RunFilter{});
}

}  // namespace

std::vector<LavaCase> lava_cases(const RunReader& store) {
  std::vector<LavaCase> cases;
  std::map<std::string, int> seen;  // the cell's base name -> runs so far
  for (const RunRow& row : all_runs(store)) {
    const std::optional<RunRecord> r = store.run_record(row.id);
    if (!r) continue;
    LavaCase c;
    const std::string base = case_name(*r, 1);
    c.name = case_name(*r, ++seen[base]);
    c.result = result_of(r->status);
    if (const auto m = main_metric(store, *r)) {
      std::vector<double> values;
      for (const auto& s : store.samples(row.id, SampleSet::valid))
        if (s.metric == m->name) values.push_back(s.value);
      if (auto mean = stats::mean_of(values, m->mean)) {
        c.measurement = fmt::format("{:.6g}", *mean);
        c.units = m->unit.empty() ? m->name : m->unit;
        for (char& ch : c.units)  // one word for lava-test-case's KEY=VALUE signal
          if (std::isspace(static_cast<unsigned char>(ch)) || ch == '=') ch = '_';
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string lava_cases_text(const std::vector<LavaCase>& cases) {
  std::string out;
  for (const auto& c : cases) {
    out += c.name + " " + c.result;
    if (!c.measurement.empty()) out += " " + c.measurement + " " + c.units;
    out += "\n";
  }
  return out;
}

std::string guest_runs_json(const RunReader& store) {
  json runs = json::array();
  for (const RunRow& row : all_runs(store)) {
    const std::optional<RunRecord> r = store.run_record(row.id);
    if (!r) continue;
    const auto [kernel, box] = store.run_machine(row.id);
    json params = json::object();
    for (const auto& [name, value] : r->params) params[name] = value.text;
    std::size_t samples = 0;
    for (const auto& it : r->iteration_data) samples += it.metrics.size();
    json j = {{"run", row.id},
              {"job", r->job},
              {"job_path", r->job_path},
              {"workload", r->workload},
              {"variant", r->variant},
              {"build", r->build},
              {"cell", r->cell},
              {"params", params},
              {"status", r->status},
              {"reason", r->reason},
              {"started_at", row.started_at},
              {"iterations", r->iterations},
              {"warmup", r->warmup},
              {"samples", samples},
              {"context", r->context},
              {"warnings", r->warnings}};
    if (kernel)
      j["kernel"] = {{"release", kernel->release},
                     {"version", kernel->version},
                     {"cmdline", kernel->cmdline},
                     {"config_hash", kernel->config_hash}};
    if (box)
      j["testbox"] = {{"hostname", box->hostname},
                      {"cpu_model", box->cpu_model},
                      {"cpus", box->cpus},
                      {"memory_bytes", box->memory_bytes}};
    runs.push_back(std::move(j));
  }
  return runs.dump(1) + "\n";
}

std::vector<GuestRun> parse_guest_runs(const std::string& text, const std::string& source) {
  const json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_array())
    throw UsageError(source + ": runs.json is not a JSON array of runs");
  std::vector<GuestRun> out;
  for (const auto& j : doc) {
    try {
      GuestRun g;
      g.run = j.at("run").get<std::int64_t>();
      g.job = j.at("job").get<std::string>();
      g.job_path = j.value("job_path", "");
      g.workload = j.at("workload").get<std::string>();
      g.variant = j.at("variant").get<std::string>();
      g.build = j.value("build", "");
      g.cell = j.value("cell", "");
      g.params = j.value("params", std::map<std::string, std::string>{});
      g.status = j.at("status").get<std::string>();
      g.reason = j.value("reason", "");
      g.started_at = j.value("started_at", "");
      g.iterations = j.value("iterations", 0);
      g.warmup = j.value("warmup", 0);
      g.samples = j.value("samples", std::size_t{0});
      g.context = j.value("context", std::map<std::string, std::string>{});
      g.warnings = j.value("warnings", std::vector<std::string>{});
      if (j.contains("kernel")) {
        const json& k = j["kernel"];
        g.kernel.release = k.value("release", "");
        g.kernel.version = k.value("version", "");
        g.kernel.cmdline = k.value("cmdline", "");
        g.kernel.config_hash = k.value("config_hash", "");
      }
      if (j.contains("testbox")) {
        const json& t = j["testbox"];
        g.testbox.hostname = t.value("hostname", "");
        g.testbox.cpu_model = t.value("cpu_model", "");
        g.testbox.cpus = t.value("cpus", 0u);
        g.testbox.memory_bytes = t.value("memory_bytes", std::uint64_t{0});
      }
      out.push_back(std::move(g));
    } catch (const json::exception& e) {
      throw UsageError(fmt::format("{}: runs.json: run {}: {}", source, out.size() + 1, e.what()));
    }
  }
  return out;
}

void lava_report(const std::string& db, const std::string& cases_path) {
  // A `nightjar run` that refused its input created no database: report
  // none (the host then stores the planned runs as failed).
  std::error_code ec;
  std::string csv =
      "run,job,workload,variant,build,kernel,testbox,started_at,iteration,metric,"
      "unit,direction,mean,value,invalid\n";
  std::string runs = "[]\n";
  std::vector<LavaCase> cases;
  if (std::filesystem::is_regular_file(db, ec)) {
    ResultsStore store(db, ResultsStore::Access::read_only);
    std::vector<std::int64_t> ids;
    for (const RunRow& r : all_runs(store)) ids.push_back(r.id);
    std::ostringstream out;
    write_samples_csv(store, ids, out, /*include_invalid=*/true);
    csv = out.str();
    runs = guest_runs_json(store);
    cases = lava_cases(store);
  }
  write_whole_file(cases_path, lava_cases_text(cases));
  std::cout << encode_console_block("samples.csv", csv) << encode_console_block("runs.json", runs)
            << std::flush;
}

}  // namespace nightjar

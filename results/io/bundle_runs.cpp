// The members of a bundle besides README.txt and the job files, written and
// read back: see results/io/bundle_runs.h.
#include "results/io/bundle_runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "results/formats/json_text.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kConfigPrefix = "kernel_config/";
constexpr std::string_view kFix = "write bundles with `nightjar bundle`; nothing imported";

Json run_json(const ResultsStore& store, std::int64_t id, const RunRecord& r,
              std::set<std::string>& config_hashes) {
  Json j;
  j["run"] = id;
  j["job"] = r.job;
  j["job_path"] = r.job_path;
  j["workload"] = r.workload;
  j["variant"] = r.variant;
  j["build"] = r.build;
  j["status"] = to_string(r.status);
  j["reason"] = r.reason;
  j["iterations"] = r.iterations;
  j["warmup"] = r.warmup;
  const auto [kernel, testbox] = store.run_machine(id);
  if (kernel) {
    j["kernel"] = {{"release", kernel->release},
                   {"version", kernel->version},
                   {"cmdline", kernel->cmdline},
                   {"config_hash", kernel->config_hash}};
    if (!kernel->config_hash.empty()) config_hashes.insert(kernel->config_hash);
  }
  if (testbox)
    j["testbox"] = {{"hostname", testbox->hostname},
                    {"cpu_model", testbox->cpu_model},
                    {"cpus", testbox->cpus},
                    {"memory_bytes", testbox->memory_bytes}};
  j["context"] = Json::object();
  for (const auto& [k, v] : r.context) j["context"][k] = v;
  j["warnings"] = r.warnings;
  Json rows = Json::array();
  for (const auto& it : r.iteration_data) {
    Json monitors = Json::object();
    for (const auto& [name, value] : it.monitors) monitors[name] = value;
    rows.push_back({{"iteration", it.row.iteration},
                    {"status", to_string(it.row.status)},
                    {"reason", it.row.reason},
                    {"started_at", it.row.started_at},
                    {"duration_sec", it.row.duration_sec},
                    {"monitors", std::move(monitors)},
                    {"flags", it.flags}});
  }
  j["iteration_rows"] = std::move(rows);
  return j;
}

}  // namespace

std::vector<ArchiveMember> bundle_format_members(const ResultsStore& store,
                                                 const std::vector<std::int64_t>& run_ids) {
  const std::map<std::int64_t, ExportRun> with_samples = store.export_runs(run_ids, SampleSet::all);
  Json runs = Json::array();
  std::set<std::string> hashes;
  for (const auto& [id, _] : with_samples)
    if (auto r = store.run_record(id)) runs.push_back(run_json(store, id, *r, hashes));
  std::vector<ArchiveMember> out{{"FORMAT", fmt::format("{}\n", kBundleFormat)},
                                 {"runs.json", Json{{"runs", std::move(runs)}}.dump(1) + "\n"}};
  for (const auto& hash : hashes)
    if (auto text = store.kernel_config(hash))
      out.push_back({std::string(kConfigPrefix) + hash, std::move(*text)});
  return out;
}

namespace {

// Reads the fields of runs.json, naming the member and the field in errors.
class RunsJson {
 public:
  explicit RunsJson(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError(fmt::format("{}: {}: {}; {}", source_, where, what, kFix));
  }
  const Json& field(const Json& object, const std::string& where, const char* key) const {
    if (!object.is_object()) fail(where, "not an object");
    auto it = object.find(key);
    if (it == object.end()) fail(where, fmt::format("no field \"{}\"", key));
    return *it;
  }
  std::string text(const Json& object, const std::string& where, const char* key) const {
    const Json& v = field(object, where, key);
    if (!v.is_string()) fail(where + "." + key, "not a string");
    return v.get<std::string>();
  }
  std::int64_t integer(const Json& object, const std::string& where, const char* key) const {
    const Json& v = field(object, where, key);
    if (!v.is_number_integer()) fail(where + "." + key, "not an integer");
    return v.get<std::int64_t>();
  }
  double number(const Json& v, const std::string& where) const {
    if (!v.is_number()) fail(where, "not a number");
    return v.get<double>();
  }
  std::map<std::string, std::string> texts(const Json& object, const std::string& where,
                                           const char* key) const {
    const Json& v = field(object, where, key);
    if (!v.is_object()) fail(where + "." + key, "not an object");
    std::map<std::string, std::string> out;
    for (const auto& [k, value] : v.items()) {
      if (!value.is_string()) fail(fmt::format("{}.{}.{}", where, key, k), "not a string");
      out[k] = value.get<std::string>();
    }
    return out;
  }
  std::vector<std::string> list(const Json& object, const std::string& where,
                                const char* key) const {
    const Json& v = field(object, where, key);
    if (!v.is_array()) fail(where + "." + key, "not an array");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(fmt::format("{}.{}[{}]", where, key, i), "not a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

 private:
  std::string source_;
};

// One iteration row of runs.json into `detail`.
void read_iteration_row(const RunsJson& in, const Json& row, const std::string& where,
                        ImportedRunDetail& detail) {
  IterationRow r;
  const std::int64_t iteration = in.integer(row, where, "iteration");
  if (iteration < 1 || iteration > 1'000'000'000) in.fail(where + ".iteration", "not 1 or more");
  r.iteration = static_cast<int>(iteration);
  const std::string status = in.text(row, where, "status");
  auto parsed = parse_iteration_status(status);
  if (!parsed) in.fail(where + ".status", fmt::format("unknown status '{}'", status));
  r.status = *parsed;
  r.reason = in.text(row, where, "reason");
  r.started_at = in.text(row, where, "started_at");
  r.duration_sec = in.number(in.field(row, where, "duration_sec"), where + ".duration_sec");
  if (!detail.iteration_rows.empty() && detail.iteration_rows.back().iteration >= r.iteration)
    in.fail(where + ".iteration", "iterations must ascend, each once");
  detail.iteration_rows.push_back(r);
  const Json& monitors = in.field(row, where, "monitors");
  if (!monitors.is_object()) in.fail(where + ".monitors", "not an object");
  for (const auto& [name, value] : monitors.items())
    detail.monitors.push_back(
        {r.iteration, name, in.number(value, where + ".monitors." + name), ""});
  for (auto& flag : in.list(row, where, "flags")) detail.flags.emplace_back(r.iteration, flag);
}

// runs[i] of runs.json: the origin of the samples.csv run it names.
void read_run(const RunsJson& in, const Json& j, const std::string& where, const SamplesCsv& csv,
              const std::map<std::string, std::string>& configs, CsvImportOptions& options) {
  const std::int64_t id = in.integer(j, where, "run");
  auto run =
      std::find_if(csv.runs.begin(), csv.runs.end(), [&](const CsvRun& r) { return r.id == id; });
  if (run == csv.runs.end())
    in.fail(where + ".run", fmt::format("run {} has no row in samples.csv", id));
  if (options.origins.count(id)) in.fail(where + ".run", fmt::format("run {} is given twice", id));
  auto label = [&](const char* key, const std::string& csv_value, const Json& object,
                   const std::string& at) {
    const std::string value = in.text(object, at, key);
    if (value != csv_value)
      in.fail(at + "." + key,
              fmt::format("'{}', but samples.csv line {} says '{}'", value, run->line, csv_value));
  };
  label("job", run->job, j, where);
  label("workload", run->workload, j, where);
  label("variant", run->variant, j, where);
  label("build", run->build, j, where);
  CsvRunOrigin& o = options.origins[id];
  o.job_path = in.text(j, where, "job_path");
  const std::string status = in.text(j, where, "status");
  auto parsed = parse_run_status(status);
  if (!parsed) in.fail(where + ".status", fmt::format("unknown status '{}'", status));
  o.detail.status = *parsed;
  o.detail.reason = in.text(j, where, "reason");
  const std::int64_t planned = in.integer(j, where, "iterations");
  const std::int64_t warmup = in.integer(j, where, "warmup");
  if (planned < 0 || planned > 1'000'000'000 || warmup < 0 || warmup > 1'000'000'000)
    in.fail(where + ".iterations", "iterations and warmup must be 0 or more");
  o.iterations = static_cast<int>(planned);
  o.detail.warmup = static_cast<int>(warmup);
  if (j.contains("kernel")) {
    const std::string at = where + ".kernel";
    const Json& k = j["kernel"];
    label("release", run->kernel, k, at);
    o.kernel = {run->kernel,
                in.text(k, at, "version"),
                in.text(k, at, "cmdline"),
                in.text(k, at, "config_hash"),
                "",
                ""};
    if (auto c = configs.find(o.kernel.config_hash); c != configs.end())
      o.kernel.config_text = c->second;
  }
  if (j.contains("testbox")) {
    const std::string at = where + ".testbox";
    const Json& t = j["testbox"];
    label("hostname", run->testbox, t, at);
    o.testbox.hostname = run->testbox;
    o.testbox.cpu_model = in.text(t, at, "cpu_model");
    const std::int64_t cpus = in.integer(t, at, "cpus"), memory = in.integer(t, at, "memory_bytes");
    if (cpus < 0 || cpus > 1'000'000 || memory < 0)
      in.fail(at + ".cpus", "cpus and memory_bytes must be 0 or more");
    o.testbox.cpus = static_cast<unsigned>(cpus);
    o.testbox.memory_bytes = static_cast<std::uint64_t>(memory);
  }
  o.context = in.texts(j, where, "context");
  o.detail.warnings = in.list(j, where, "warnings");
  const Json& rows = in.field(j, where, "iteration_rows");
  if (!rows.is_array()) in.fail(where + ".iteration_rows", "not an array");
  for (std::size_t i = 0; i < rows.size(); ++i)
    read_iteration_row(in, rows[i], fmt::format("{}.iteration_rows[{}]", where, i), o.detail);
}

// The format of FORMAT's text: 1 or 2; else UsageError naming the member.
int bundle_format(const std::string& path, const std::string& text) {
  const std::string t(trim(text));
  int format = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), format);
  if (ec != std::errc() || p != t.data() + t.size() || format < 1)
    throw UsageError(fmt::format("{}: FORMAT: line 1: '{}' is not a bundle format number; {}", path,
                                 t.substr(0, 40), kFix));
  if (format > kBundleFormat)
    throw UsageError(fmt::format(
        "{}: FORMAT: bundle format {} is newer than this nightjar reads (formats 1 to {}); "
        "import it with a newer nightjar; nothing imported",
        path, format, kBundleFormat));
  return format;
}

}  // namespace

BundleContents read_bundle(const std::string& path, const WorkloadCatalog& declared,
                           const MachineFacts& machine) {
  std::map<std::string, std::string> members;
  for (auto& m : read_tar_gz(path, kMaxCsvImportBytes, 2 * kMaxCsvImportBytes))
    members[m.name] = std::move(m.data);
  BundleContents out;
  if (auto f = members.find("FORMAT"); f != members.end())
    out.format = bundle_format(path, f->second);
  auto samples = members.find("samples.csv");
  if (samples == members.end())
    throw UsageError(fmt::format(
        "{}: holds no samples.csv: not a nightjar bundle; import a bundle as `nightjar bundle "
        "-o FILE.tar.gz` writes it",
        path));
  {
    std::istringstream in(samples->second);
    out.samples = parse_samples_csv(in, path + ":samples.csv", declared, machine);
  }
  if (out.format < 2) return out;  // format 1: samples.csv alone, as before

  std::map<std::string, std::string> configs;  // hash -> text
  for (auto& [name, text] : members) {
    if (!name.starts_with(kConfigPrefix)) continue;
    const std::string hash = name.substr(kConfigPrefix.size());
    const std::string actual = fnv1a64_hex(text);
    if (actual != hash)
      throw UsageError(fmt::format("{}:{}: the text's config hash is {}, not {}; {}", path, name,
                                   actual, hash, kFix));
    configs[hash] = std::move(text);
  }
  auto runs = members.find("runs.json");
  if (runs == members.end())
    throw UsageError(fmt::format("{}: holds no runs.json, which bundle format {} has; {}", path,
                                 out.format, kFix));
  const RunsJson in(path + ":runs.json");
  const Json doc = parse_json_text(runs->second, path + ":runs.json", kFix);
  const Json& list = in.field(doc, "(top)", "runs");
  if (!list.is_array()) in.fail("runs", "not an array");
  for (std::size_t i = 0; i < list.size(); ++i)
    read_run(in, list[i], fmt::format("runs[{}]", i), out.samples, configs, out.options);
  for (const auto& run : out.samples.runs)
    if (!out.options.origins.count(run.id))
      in.fail("runs",
              fmt::format("no entry for run {} of samples.csv (line {})", run.id, run.line));
  return out;
}

}  // namespace nightjar

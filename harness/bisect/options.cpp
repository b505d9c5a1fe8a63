// The session options room of `nightjar bisect`: see harness/bisect/options.h.
#include "harness/bisect/options.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/bisect/git.h"
#include "harness/vm/initramfs.h"
#include "harness/vm/qemu.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "results/store/store.h"
#include "workloads/sys/probe.h"

namespace nightjar {

namespace fs = std::filesystem;
using nlohmann::json;

std::string session_options_json(const BisectJobOptions& o, std::optional<bool> test_merge_branch) {
  json sets = json::array();
  for (const auto& s : o.overrides) sets.push_back({{"key", s.key}, {"values", s.values}});
  json j = {{"metric", o.metric},
            {"sets", sets},
            {"variant", o.variant},
            {"max_iterations", o.max_iterations},
            {"alpha", o.alpha},
            {"build_command", o.build_command},
            {"build_timeout", o.build_timeout}};
  j["iterations"] = o.iterations ? json(*o.iterations) : json(nullptr);
  j["warmup"] = o.warmup ? json(*o.warmup) : json(nullptr);
  j["min_effect_pct"] = o.min_effect_pct ? json(*o.min_effect_pct) : json(nullptr);
  if (test_merge_branch) j["test_merge_branch"] = *test_merge_branch;
  if (o.kernel.enabled) {
    const KernelBuildOptions& k = o.kernel;
    j["kernel"] = {{"config", k.config},       {"defconfig", k.defconfig},
                   {"fragments", k.fragments}, {"dir", k.dir},
                   {"jobs", k.jobs},           {"vm_memory_mb", k.vm_memory_mb},
                   {"vm_cpus", k.vm_cpus},     {"vm_timeout_sec", k.vm_timeout_sec},
                   {"pair_good", k.pair_good}, {"vm_hugepages", k.vm_hugepages}};
  }
  return j.dump();
}

SessionOptions session_options(const BisectSession& session) {
  SessionOptions so;
  BisectJobOptions& o = so.job;
  o.job_path = session.job_path;
  const json j = json::parse(session.options, nullptr, false);
  if (!j.is_object()) return so;
  o.metric = j.value("metric", "");
  for (const auto& s : j.value("sets", json::array()))
    o.overrides.push_back({s.value("key", ""), s.value("values", std::vector<std::string>{})});
  o.variant = j.value("variant", "");
  o.max_iterations = j.value("max_iterations", 30);
  o.alpha = j.value("alpha", 0.05);
  o.build_command = j.value("build_command", "");
  o.build_timeout = j.value("build_timeout", 0.0);
  if (j.contains("iterations") && j["iterations"].is_number())
    o.iterations = j["iterations"].get<int>();
  if (j.contains("warmup") && j["warmup"].is_number()) o.warmup = j["warmup"].get<int>();
  if (j.contains("min_effect_pct") && j["min_effect_pct"].is_number())
    o.min_effect_pct = j["min_effect_pct"].get<double>();
  so.test_merge_branch = j.value("test_merge_branch", false);
  if (j.contains("kernel") && j["kernel"].is_object()) {
    const json& k = j["kernel"];
    KernelBuildOptions& kb = o.kernel;
    kb.enabled = true;
    kb.config = k.value("config", "");
    kb.defconfig = k.value("defconfig", "");
    kb.fragments = k.value("fragments", std::vector<std::string>{});
    kb.dir = k.value("dir", "");
    kb.jobs = k.value("jobs", 0);
    kb.vm_memory_mb = k.value("vm_memory_mb", 2048);
    kb.vm_cpus = k.value("vm_cpus", 0);
    kb.vm_timeout_sec = k.value("vm_timeout_sec", 600);
    // Sessions stored before pairing existed decided against the endpoints.
    kb.pair_good = k.value("pair_good", false);
    kb.vm_hugepages = k.value("vm_hugepages", false);
  }
  return so;
}

RunOptions run_options(const BisectJobOptions& o, const std::string& build,
                       std::optional<int> iterations) {
  RunOptions r;
  r.job_paths = {o.job_path};
  r.variant = o.variant;
  r.build = build;
  r.iterations = iterations ? iterations : o.iterations;
  r.warmup = o.warmup;
  r.overrides = o.overrides;
  return r;
}

namespace {

void check_limits(const BisectJobOptions& job) {
  if (job.job_path.empty())
    throw UsageError("bisect: --job is required; write --job jobs/NAME.yaml");
  if (job.max_iterations < 1) throw UsageError("--max-iterations: must be at least 1");
  if (!(job.alpha > 0 && job.alpha < 1))
    throw UsageError("--alpha: must be in (0, 1), such as 0.05");
  if (job.min_effect_pct && !(*job.min_effect_pct >= 0))
    throw UsageError("--min-effect: must be 0 or more (percent)");
}

// The metric bisect judges: --metric among the cell's metrics, else the first.
MetricDescriptor pick_metric(const PlannedJob& pj, const Prepared& p, BisectJobOptions& job) {
  std::vector<MetricDescriptor> metrics = pj.workload->cell_metrics(pj.cells.front());
  if (job.metric.empty()) {
    if (metrics.empty())
      throw UsageError(job.job_path + ": the workload declares no metric to bisect on");
    job.metric = metrics.front().name;
    return metrics.front();
  }
  std::vector<std::string> names;
  for (const auto& m : metrics) {
    names.push_back(m.name);
    if (m.name == job.metric) return m;
  }
  throw UsageError(fmt::format("--metric {}: {} ({}) has no such metric; its metrics are {}",
                               job.metric, job.job_path, p.workload, join(names, ", ")));
}

// The top directory of the git work tree `repo`.
std::string repository_top(const std::string& repo) {
  std::error_code ec;
  std::string dir = fs::absolute(repo.empty() ? "." : repo, ec).lexically_normal().string();
  if (!fs::is_directory(dir))
    throw UsageError(
        fmt::format("--repo {}: not a directory; write --repo PATH of a git work tree", repo));
  Git probe(dir);
  CommandResult top = probe.run({"rev-parse", "--show-toplevel"}, true);
  if (!top.ok() || trim(top.out).empty())
    throw UsageError(
        fmt::format("--repo {}: not a git work tree ({}); write --repo PATH of a clone", repo,
                    output_tail(top.err, 2)));
  return std::string(trim(top.out));
}

}  // namespace

Prepared prepare(const std::string& repo, BisectJobOptions& job) {
  Prepared p;
  check_limits(job);
  std::error_code ec;
  job.job_path = fs::absolute(job.job_path, ec).lexically_normal().string();
  p.machine = probe_machine_facts();
  auto plan = plan_runs(run_options(job, "", std::nullopt), p.machine);  // UsageError on bad input
  const PlannedJob& pj = plan.front();
  if (pj.variants.size() > 1) {
    std::vector<std::string> names;
    for (const auto& v : pj.variants) names.push_back(v.name);
    throw UsageError(
        fmt::format("{}: the job has variants {}; bisect measures one: write --variant NAME",
                    job.job_path, join(names, ", ")));
  }
  p.job_name = pj.job.name;
  p.workload = std::string(pj.workload->name());
  p.iterations = pj.iterations;
  p.cells = std::max<std::size_t>(pj.cells.size(), 1);
  if (p.iterations > job.max_iterations)
    throw UsageError(
        fmt::format("--max-iterations {} is below the {} iterations of the first batch; "
                    "raise it or lower --iterations",
                    job.max_iterations, p.iterations));
  p.metric = pick_metric(pj, p, job);
  check_kernel_build_options(job.kernel, job.build_command);
  if (job.kernel.enabled) {  // EnvironmentError saying what to build or install
    find_guest_binary("");
    check_vm_tools();  // before a first kernel build of a quarter of an hour
  }
  p.top = repository_top(repo);
  return p;
}

void enter(const Prepared& p) {
  if (::chdir(p.top.c_str()) != 0)
    throw EnvironmentError(fmt::format("cannot change to {}: {}", p.top, std::strerror(errno)));
}

std::string db_path(const std::string& db) {
  std::error_code ec;
  return fs::absolute(ResultsStore::resolve_path(db), ec).lexically_normal().string();
}

}  // namespace nightjar

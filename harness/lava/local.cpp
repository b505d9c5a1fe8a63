// `nightjar lava run`: see harness/lava/local.h.
#include "harness/lava/local.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "harness/job/job.h"
#include "harness/vm/initramfs.h"
#include "results/model/exit_codes.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

// Where lava-dispatcher 2023.01 keeps a job's files: DIR/<prefix><job id>
// (only the prefix is configurable).
constexpr const char* kDispatcherTmp = "/var/lib/lava/dispatcher/tmp";

// Seconds lava-run may take for a definition: its job timeout plus 5
// minutes (lava-run enforces the job timeout itself; this bounds a hung
// dispatcher). 6 hours when the definition names none.
double outer_timeout(const std::string& definition) {
  try {
    const YAML::Node job = YAML::LoadFile(definition);
    const YAML::Node t = job["timeouts"]["job"];
    double s = 0;
    if (t && t["minutes"]) s += t["minutes"].as<double>() * 60;
    if (t && t["hours"]) s += t["hours"].as<double>() * 3600;
    if (t && t["seconds"]) s += t["seconds"].as<double>();
    if (s > 0) return s + 300;
  } catch (const YAML::Exception&) {
  }
  return 6 * 3600;
}

}  // namespace

LavaManifest check_lava_run(const LavaRunOptions& o) {
  LavaManifest m = read_lava_manifest(o.dir);
  if (!fs::is_regular_file(o.device))
    throw UsageError(fmt::format(
        "--device {}: no such file; give a rendered LAVA device configuration (docs/lava.md "
        "\"The device dictionary\" renders one from lava-server's device-type templates)",
        o.device));
  if (!o.dispatcher.empty() && !fs::is_regular_file(o.dispatcher))
    throw UsageError("--dispatcher " + o.dispatcher + ": no such file");
  for (const auto& f : o.only) {
    bool known = false;
    for (const auto& e : m.jobs) known = known || e.file == f;
    if (!known)
      throw UsageError(fmt::format("--job {}: not a job of {}/{}; its jobs are listed there", f,
                                   o.dir, kLavaManifest));
  }
  if (find_program(o.lava_run).empty())
    throw EnvironmentError(o.lava_run +
                           " is not installed; apt-get install --no-install-recommends "
                           "lava-dispatcher (docs/lava.md)");
  if (!o.testbox.empty()) require_label("--testbox", o.testbox);
  return m;
}

LavaRunSummary run_lava_jobs_locally(ResultsStore& store, const LavaRunOptions& o,
                                     const LavaManifest& m) {
  const std::string testbox = o.testbox.empty() ? fs::path(o.device).stem().string() : o.testbox;

  const fs::path work = fs::path(m.dir) / "lava-run";
  fs::create_directories(work);
  std::string dispatcher = o.dispatcher;
  if (dispatcher.empty()) {
    dispatcher = (work / "dispatcher.yaml").string();
    write_whole_file(dispatcher,
                     "# nightjar lava run: lava-run's dispatcher configuration\n"
                     "prefix: nightjar-\n");
  }

  LavaRunSummary summary;
  // Job ids: the start in milliseconds since the epoch (strictly increasing
  // here), so that every lava-run of a definition has a key of its own.
  long long last_id = 0;
  for (const auto& e : m.jobs) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), e.file) == o.only.end())
      continue;
    if (interrupted()) {
      summary.interrupted = true;
      break;
    }
    last_id = std::max(
        last_id + 1, static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()));
    const std::string id = std::to_string(last_id);
    const std::string definition = (fs::path(m.dir) / e.file).string();
    const std::string log_path = (work / (id + ".log")).string();
    CommandSpec spec;
    spec.argv = {o.lava_run,     "--job-id", id,         "--output-dir", (work / id).string(),
                 "--dispatcher", dispatcher, "--device", o.device,       definition};
    spec.stdout_path = log_path;
    spec.merge_stderr = true;  // lava-run writes its log on stderr
    spec.timeout_sec = outer_timeout(definition);
    spec.kill_grace_sec = 20;  // lava-run cancels the job and stops qemu on SIGTERM
    spec.reap_orphans = true;
    std::cerr << fmt::format("nightjar: lava: job {} ({}): lava-run on {} ...\n", id, e.file,
                             testbox);
    const CommandResult r = run_command(spec);
    if (!r.started) throw EnvironmentError(r.error);
    if (r.interrupted) {
      // Nothing of this job came home (the guest prints its samples at the
      // end): it is not stored, as an interrupted qemu guest's unreported
      // runs are not.
      std::cerr << fmt::format(
          "nightjar: lava: job {} ({}): interrupted; lava-run stopped{}, "
          "nothing of it stored; log {}\n",
          id, e.file, r.orphans_killed.empty() ? "" : " (and the qemu it left behind)", log_path);
      summary.interrupted = true;
      break;
    }
    const LavaLog log = parse_lava_log(read_whole_file(log_path));
    LavaJobRef ref;
    ref.key = "lava-run:" + definition + "#" + id;
    ref.job_id = id;
    ref.device = testbox;
    ref.passed = lava_job_passed(log) && r.ok();
    ref.error = lava_job_error(log);
    if (r.timed_out)
      ref.error = fmt::format("lava-run did not end within {:.0f} s and was killed; {}",
                              spec.timeout_sec, ref.error);
    // lava-run removes its job directory when the job ends, not when it is
    // killed: the one named by nightjar's own dispatcher prefix goes here.
    if (o.dispatcher.empty()) {
      std::error_code ec;
      fs::remove_all(fs::path(kDispatcherTmp) / ("nightjar-" + id), ec);
    }
    if (!r.orphans_killed.empty())
      std::cerr << fmt::format(
          "nightjar: lava: job {}: killed {} process(es) lava-run left "
          "behind (pid {})\n",
          id, r.orphans_killed.size(), r.orphans_killed.front());
    const LavaCollected c = collect_lava_job(store, e, ref, log);
    for (const auto& note : c.notes) std::cerr << "nightjar: " << note << "\n";
    std::cerr << fmt::format(
        "nightjar: lava: job {} ({}): {} in {:.0f} s{}; {} complete, {} failed, {} skipped; log "
        "{}\n",
        id, e.file, ref.passed ? "passed" : "FAILED", r.wall_sec,
        ref.passed ? "" : " (" + ref.error + ")", c.complete, c.failed, c.skipped, log_path);
    ++summary.jobs;
    if (ref.passed) ++summary.passed;
    add_collected(summary.totals, c);
  }
  return summary;
}

}  // namespace nightjar

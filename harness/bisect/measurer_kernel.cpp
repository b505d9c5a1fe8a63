// Building a commit's kernel out of tree and measuring it by booting it in
// qemu with the job inside: the CommitMeasurer of `bisect run
// --kernel-build` (harness/bisect/measurer.h; options, cache layout and make
// command lines in harness/bisect/kernel_build.h; docs/bisect.md "Bisecting
// kernels").
//
// A build that fails is a failed BuildResult (the driver skips the commit
// with the tail of the build log). A kernel that panics or hangs at boot, or
// a guest that cannot run the job, leaves runs stored as failed with the
// reason and the console tail (harness/vm/qemu.h classify_vm_failure): the
// step has no samples and the driver skips it with those reasons. Neither is
// ever a verdict.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "harness/bisect/kernel_build.h"
#include "harness/bisect/measurer.h"
#include "harness/bisect/print.h"
#include "harness/vm/initramfs.h"
#include "harness/vm/qemu.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

class KernelMeasurer final : public CommitMeasurer {
 public:
  KernelMeasurer(ResultsStore& store, BisectJobOptions job, Prepared prepared)
      : store_(store), job_(std::move(job)), prep_(std::move(prepared)) {
    const KernelBuildOptions& k = job_.kernel;
    key_ = config_key(k);
    dir_ = kernel_dir(k, prep_.top, key_);
    out_ = dir_ + "/out";
    CommandSpec probe;
    probe.argv = {"ccache", "--version"};
    probe.interrupted = [] { return false; };
    ccache_ = run_command(probe).ok();
    jobs_ = k.jobs > 0 ? k.jobs : static_cast<int>(std::max(1u, prep_.machine.cpus));
    fs::create_directories(dir_ + "/logs");
    fs::create_directories(dir_ + "/images");
    std::cerr << fmt::format("nightjar: kernel builds in {} (config key {}, make -j{}{})\n", dir_,
                             key_, jobs_, ccache_ ? ", ccache" : ", no ccache installed");
  }

  BuildResult build(const std::string& sha, const std::string& tree) override {
    BuildResult b;
    b.ran = true;
    const std::string cached = image_dir(dir_, sha, key_);
    if (auto id = read_cached_image(cached)) {
      std::cerr << fmt::format("nightjar: kernel {} of {}: cached image (built in {:.0f} s)\n",
                               id->release, short_sha(sha), id->build_seconds);
      return b;
    }
    const std::string log = fmt::format("{}/logs/{}.log", dir_, sha);
    std::error_code ec;
    fs::remove(log, ec);
    double seconds = 0;
    auto step = [&](std::vector<std::string> argv, double timeout) {
      CommandSpec spec;
      spec.argv = std::move(argv);
      spec.cwd = tree;
      spec.merge_stderr = true;
      spec.timeout_sec = timeout;
      CommandResult r = run_command(spec);
      if (r.interrupted || interrupted()) throw Interrupted();
      seconds += r.wall_sec;
      append_log(log, join(spec.argv, " "), r.out);
      return r;
    };
    if (auto why = configure(step)) return failed(b, seconds, *why, log);
    CommandResult r = step(make_argv(out_, {"bzImage"}, jobs_, ccache_), job_.build_timeout);
    if (!r.ok()) return failed(b, seconds, "make bzImage " + r.describe(job_.build_timeout), log);
    CommandResult rel = step(make_argv(out_, {"-s", "kernelrelease"}, 0, ccache_), 60);
    BuiltKernel id;
    id.commit = sha;
    id.release = std::string(trim(rel.out));
    id.config_key = key_;
    id.config_hash = fnv1a64_hex(read_whole_file(out_ + "/.config"));
    id.build_seconds = seconds;
    store_image(cached, id);
    b.seconds = seconds;
    std::cerr << fmt::format("nightjar: kernel {} of {}: built in {:.0f} s (config hash {})\n",
                             id.release, short_sha(sha), seconds, id.config_hash);
    return b;
  }

  MeasuredRuns run_job(const std::string& sha, int iterations,
                       const std::map<std::string, std::string>& context) override {
    const std::string image = image_dir(dir_, sha, key_);
    const std::optional<BuiltKernel> id = read_cached_image(image);
    if (!id)
      throw EnvironmentError(fmt::format(
          "no kernel image of {} in {}: the build did not finish; run `nightjar bisect resume`",
          short_sha(sha), image));
    RunOptions o = run_options(job_, sha, iterations);
    o.context = context;
    for (const auto& [k, v] : built_kernel_context(*id)) o.context[k] = v;
    MachineFacts guest = prep_.machine;
    guest.mem_total_bytes = static_cast<std::uint64_t>(job_.kernel.vm_memory_mb) << 20;
    if (job_.kernel.vm_cpus > 0) guest.cpus = static_cast<unsigned>(job_.kernel.vm_cpus);
    auto plan = plan_runs(o, guest);
    QemuOptions q;
    q.kernels = {image + "/bzImage"};
    q.memory_mb = job_.kernel.vm_memory_mb;
    q.cpus = job_.kernel.vm_cpus;
    q.timeout_sec = job_.kernel.vm_timeout_sec;
    q.hugepages = job_.kernel.vm_hugepages;
    q.keep_dir = fmt::format("{}/boots/{}", dir_, sha);
    std::error_code ec;
    fs::remove_all(q.keep_dir, ec);
    fs::create_directories(q.keep_dir, ec);
    RunOutcome r = execute_runs_in_vms(plan, o, q, store_);
    return {r.run_ids, r.interrupted};
  }

 private:
  // The build tree's .config for this commit: the full --kernel-config, or
  // DIR/assembled.config (made at the first commit from --defconfig and the
  // fragments), then `make olddefconfig`. The reason when a step failed.
  template <class Step>
  std::optional<std::string> configure(Step& step) {
    fs::create_directories(out_);
    const std::string assembled = dir_ + "/assembled.config";
    std::error_code ec;
    std::string base = job_.kernel.config;
    if (base.empty() && fs::is_regular_file(assembled, ec)) base = assembled;
    if (!base.empty()) {
      fs::copy_file(base, out_ + "/.config", fs::copy_options::overwrite_existing);
    } else {
      CommandResult d = step(make_argv(out_, {job_.kernel.defconfig}, 0, ccache_), 600);
      if (!d.ok()) return "make " + job_.kernel.defconfig + " " + d.describe();
      CommandResult m = step(merge_config_argv(out_, job_.kernel.fragments), 600);
      if (!m.ok()) return "merge_config.sh " + m.describe();
    }
    CommandResult o = step(make_argv(out_, {"olddefconfig"}, 0, ccache_), 600);
    if (!o.ok()) return "make olddefconfig " + o.describe();
    if (base.empty()) fs::copy_file(out_ + "/.config", assembled);
    return std::nullopt;
  }

  static void append_log(const std::string& log, const std::string& command,
                         const std::string& output) {
    write_whole_file(log, read_whole_file(log) + "$ " + command + "\n" + output);
  }

  static BuildResult& failed(BuildResult& b, double seconds, const std::string& why,
                             const std::string& log) {
    b.ok = false;
    b.seconds = seconds;
    b.tail = fmt::format("{} (log {}): {}", why, log, output_tail(read_whole_file(log), 12, 1500));
    return b;
  }

  // Copies bzImage and .config (as config-RELEASE, where run --kernel looks
  // for it) and writes kernel.json, under a temporary name renamed at the end.
  void store_image(const std::string& to, const BuiltKernel& id) {
    const std::string tmp = to + ".partial";
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp);
    fs::copy_file(out_ + "/arch/x86/boot/bzImage", tmp + "/bzImage");
    fs::copy_file(out_ + "/.config", tmp + "/config-" + id.release);
    write_whole_file(tmp + "/kernel.json", kernel_identity_json(id));
    fs::remove_all(to, ec);
    fs::rename(tmp, to);
  }

  ResultsStore& store_;
  const BisectJobOptions job_;
  const Prepared prep_;
  std::string key_, dir_, out_;
  bool ccache_ = false;
  int jobs_ = 1;
};

}  // namespace

std::unique_ptr<CommitMeasurer> kernel_measurer(ResultsStore& store, const BisectJobOptions& job,
                                                const Prepared& prepared) {
  return std::make_unique<KernelMeasurer>(store, job, prepared);
}

}  // namespace nightjar

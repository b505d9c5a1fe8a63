// The kernel axis: initramfs builder, qemu session and the guest side of the
// JSON-lines protocol. See harness/vm/qemu.h and docs/qemu.md.
#include "harness/vm/qemu.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/vm/guest_record.h"
#include "harness/vm/hugepages.h"
#include "results/model/exit_codes.h"
#include "results/model/identity.h"
#include "results/model/text.h"
#include "workloads/sys/process.h"
#include "workloads/sys/signals.h"

namespace nightjar {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kPortName = "org.nightjar.results";
constexpr int kTailLines = 20;

bool on_path(const std::string& tool) {
  return !find_program(tool).empty();
}

}  // namespace

// ---------------------------------------------------------------- accelerator

Accelerator choose_accelerator(const std::string& cpuinfo, const std::string& kvm_device) {
  Accelerator a;
  std::string flags_line;
  {
    std::ifstream in(cpuinfo);
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("flags", 0) == 0) {
        flags_line =
            " " + line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 1) + " ";
        break;
      }
  }
  std::string ext;
  if (flags_line.find(" vmx ") != std::string::npos) ext = "vmx";
  if (flags_line.find(" svm ") != std::string::npos) ext = "svm";
  if (ext.empty()) {
    a.why = "the CPU has no hardware virtualization (no vmx or svm in " + cpuinfo + ")";
    if (access(kvm_device.c_str(), F_OK) == 0)
      a.why +=
          "; " + kvm_device + " exists but is not used: without vmx/svm it would not run a guest";
    return a;
  }
  int fd = open(kvm_device.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    a.why = fmt::format("{} in {} but {} cannot be opened: {}", ext, cpuinfo, kvm_device,
                        std::strerror(errno));
    return a;
  }
  int version = ioctl(fd, KVM_GET_API_VERSION, 0);
  close(fd);
  if (version != KVM_API_VERSION) {
    a.why = fmt::format("{} in {} but {} does not answer KVM_GET_API_VERSION", ext, cpuinfo,
                        kvm_device);
    return a;
  }
  a.kvm = true;
  a.why = fmt::format("{} in {} and {} answers", ext, cpuinfo, kvm_device);
  return a;
}

// ---------------------------------------------------------------- qemu process

namespace {

// A temporary directory removed on destruction unless kept.
struct WorkDir {
  fs::path path;
  bool keep = false;
  ~WorkDir() {
    if (!keep && !path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

KernelIdentity identity_from_json(const json& j) {
  KernelIdentity k;
  k.release = j.value("release", "");
  k.version = j.value("version", "");
  k.cmdline = j.value("cmdline", "");
  k.config_hash = j.value("config_hash", "");
  k.config_source = j.value("config_source", "");
  return k;
}

json identity_to_json(const KernelIdentity& k) {
  return json{{"release", k.release},
              {"version", k.version},
              {"cmdline", k.cmdline},
              {"config_hash", k.config_hash},
              {"config_source", k.config_source}};
}

std::string run_key(const std::string& job, const std::string& variant, const std::string& cell) {
  return job + "\x1f" + variant + "\x1f" + cell;
}

void count_status(RunOutcome& o, RunStatus s) {
  switch (s) {
    case RunStatus::complete:
      ++o.complete;
      break;
    case RunStatus::failed:
      ++o.failed;
      break;
    case RunStatus::skipped:
      ++o.skipped;
      break;
    case RunStatus::aborted:
      ++o.aborted;
      break;
    case RunStatus::running:
      break;
  }
}

}  // namespace

std::string guest_cgroup2_options(const JobFile& job, const QemuOptions& qemu) {
  if (qemu.cgroup2_options) return *qemu.cgroup2_options;
  return job.vm_cgroup2_options.value_or(kDefaultCgroup2Options);
}

std::vector<GuestBoot> plan_guest_boots(const std::vector<PlannedJob>& plan,
                                        const QemuOptions& qemu) {
  std::vector<GuestBoot> boots;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const std::string options = guest_cgroup2_options(plan[i].job, qemu);
    auto it = std::find_if(boots.begin(), boots.end(),
                           [&](const GuestBoot& b) { return b.cgroup2_options == options; });
    if (it == boots.end()) it = boots.insert(boots.end(), GuestBoot{options, {}});
    it->jobs.push_back(i);
  }
  return boots;
}

std::optional<std::string> cgroup2_mount_warning(const std::string& requested,
                                                 const std::string& mounted) {
  if (requested.empty()) return std::nullopt;
  const std::vector<std::string> have = split(mounted, ',');
  std::vector<std::string> missing;
  for (const std::string& option : split(requested, ','))
    if (std::find(have.begin(), have.end(), option) == have.end()) missing.push_back(option);
  if (missing.empty()) return std::nullopt;
  return fmt::format(
      "the guest's cgroup2 is mounted with '{}', without {} (the guest kernel refused the mount "
      "options '{}' and mounted cgroup2 without them): memcg settings that depend on {} are not "
      "in force in this run",
      mounted.empty() ? std::string("nothing") : mounted, join(missing, ", "), requested,
      missing.size() > 1 ? "them" : "it");
}

std::string tail_lines(const std::string& text, int lines) {
  std::string t = text;
  t.erase(std::remove(t.begin(), t.end(), '\r'), t.end());
  while (!t.empty() && t.back() == '\n') t.pop_back();
  std::size_t pos = t.size();
  for (int n = 0; n < lines && pos > 0; ++n) {
    pos = t.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  return pos == 0 ? t : t.substr(pos + 1);
}

std::optional<std::string> classify_vm_failure(const std::string& console,
                                               const std::string& qemu_output, bool timed_out,
                                               int timeout_sec, bool done_seen, int exit_code) {
  if (qemu_output.find("KVM internal error") != std::string::npos)
    return "KVM internal error in qemu (the guest stopped); qemu said: " +
           tail_lines(qemu_output, 3);
  if (auto p = console.find("Kernel panic - not syncing"); p != std::string::npos) {
    std::string line = console.substr(p, console.find('\n', p) - p);
    line = std::string(trim(line));
    if (line.rfind("Kernel panic - ", 0) == 0) line = line.substr(15);
    return "guest kernel panic (" + line + ")";
  }
  if (timed_out)
    return fmt::format("timeout: the guest did not finish within {} s (--vm-timeout)", timeout_sec);
  if (done_seen) return std::nullopt;
  if (console.find("nightjar-guest: init started") == std::string::npos) {
    if (exit_code != 0 && console.empty())
      return fmt::format("qemu could not boot the kernel (exit {}): {}", exit_code,
                         trim(tail_lines(qemu_output, 3)));
    return "boot failure: the guest never reached nightjar's init";
  }
  return "the guest stopped before nightjar reported the end of the job";
}

// ---------------------------------------------------------------- host side

namespace {

// What every kernel of one `run --kernel` shares: the programs, the
// accelerator, the guest size and the spec the guest runs.
struct VmSetup {
  std::string busybox = "/bin/busybox";
  std::string guest_binary;
  Accelerator accel;
  int cpus = 1;
  std::string accel_warning;  ///< "" under KVM
  Testbox host;
  // Of one boot (plan_guest_boots): the jobs' spec, their host paths and
  // the cgroup2 mount options.
  json spec;
  std::vector<std::string> host_job_paths;
  std::string cgroup2_options;
  /// Of one kernel: the text of the config-<release> beside its image
  /// (KernelImage::config), "" when absent. The guest sends only the
  /// config's hash; a hash that matches this text stores the text with the
  /// kernel (the kconfig diff of docs/environment.md needs it).
  std::string kernel_config;
  /// --vm-hugepages: the hugetlbfs guest memory lives in ("" = ordinary memory).
  std::string mem_path;
};

void warn_tcg(const Accelerator& accel) {
  std::cerr << "nightjar: WARNING: ************************************************************\n"
               "nightjar: WARNING: no KVM: "
            << accel.why
            << ".\n"
               "nightjar: WARNING: qemu runs under TCG (software emulation): the figures measure\n"
               "nightjar: WARNING: EMULATION and are NOT comparable to real hardware or to KVM.\n"
               "nightjar: WARNING: Use them only to check that the job runs on each kernel.\n"
               "nightjar: WARNING: ************************************************************\n";
}

// The spec the guest's `nightjar guest-run` reads (jobs at their paths in
// the initramfs, the run options).
json guest_spec(const std::vector<PlannedJob>& plan, const RunOptions& options,
                std::vector<std::string>& host_job_paths) {
  json jobs = json::array();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    host_job_paths.push_back(plan[i].job.path);
    jobs.push_back(guest_job_path(i, plan[i].job.path));
  }
  json sets = json::array();
  for (const auto& s : options.overrides) sets.push_back({{"key", s.key}, {"values", s.values}});
  json spec = {{"jobs", jobs},
               {"variant", options.variant},
               {"interleave", options.interleave},
               {"build", options.build},
               {"sets", sets},
               {"context", options.context}};
  if (options.iterations) spec["iterations"] = *options.iterations;
  if (options.warmup) spec["warmup"] = *options.warmup;
  return spec;
}

}  // namespace

void check_vm_tools(const std::string& qemu, const std::string& busybox) {
  if (!on_path(qemu))
    throw EnvironmentError(qemu +
                           " is not installed; apt-get install qemu-system-x86 (or run "
                           "ci/fetch-kernels.sh)");
  if (!on_path("cpio"))
    throw EnvironmentError("cpio is not installed (builds the initramfs); apt-get install cpio");
  check_static_busybox(busybox);
}

namespace {

// Checks the host's tools and gathers what every kernel and boot shares.
VmSetup prepare_vm_setup(const std::vector<PlannedJob>& plan, const QemuOptions& q,
                         ResultsStore& store) {
  VmSetup v;
  check_vm_tools(q.qemu, v.busybox);
  v.guest_binary = find_guest_binary(q.guest_binary);
  v.accel = choose_accelerator();
  const unsigned host_cpus = std::max(1u, std::thread::hardware_concurrency());
  v.cpus = q.cpus > 0 ? q.cpus : static_cast<int>(std::min(2u, host_cpus));
  if (!v.accel.kvm) {
    warn_tcg(v.accel);
    v.accel_warning = "measured under qemu TCG (software emulation, " + v.accel.why +
                      "): the figures measure emulation and are not comparable to real hardware";
  }
  v.host = probe_testbox();
  for (const auto& job : plan)
    store.register_metrics(std::string(job.workload->name()), job.workload->metrics());
  return v;
}

// Where one boot's initramfs and logs go: kept under --vm-keep (one
// directory per boot: RELEASE-PID, then RELEASE-PID-2, ... when a kernel
// boots again for --runs or for jobs with other cgroup2 options), else a
// temporary directory removed afterwards.
void make_work_dir(WorkDir& work, const QemuOptions& q, const KernelImage& k) {
  if (!q.keep_dir.empty()) {
    // Absolute: cpio runs inside the staging directory, and a relative
    // --vm-keep made its list and archive paths point nowhere (exit 127).
    const fs::path base = fs::absolute(q.keep_dir) / fmt::format("{}-{}", k.release, getpid());
    fs::create_directories(base.parent_path());
    work.path = base;
    for (int n = 2; !fs::create_directory(work.path); ++n)
      work.path = base.string() + "-" + std::to_string(n);
    work.keep = true;
    return;
  }
  std::string tmpl = (fs::temp_directory_path() / "nightjar-vm-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    throw EnvironmentError("mkdtemp failed: " + std::string(std::strerror(errno)));
  work.path = tmpl;
}

// The qemu guest's /init: the common setup (harness/vm/initramfs.h), then it
// finds the results port, runs `nightjar guest-run` (or the --vm-init
// override) and powers off. `cgroup2_options`: the boot's cgroup2 mount
// options (guest_cgroup2_options).
std::string qemu_guest_init(const QemuOptions& q, const std::string& cgroup2_options) {
  std::string body =
      q.init_override.empty()
          ? "/nightjar/nightjar guest-run --port \"$port\" --spec /nightjar/spec.json\n"
            "echo \"nightjar-guest: guest-run exited $?\"\n"
          : "echo 'nightjar-guest: running the --vm-init override'\n" + q.init_override + "\n";
  std::string tail = R"SH(port=
for p in /sys/class/virtio-ports/*; do
  [ "$(cat "$p/name" 2>/dev/null)" = "@PORT@" ] && port=/dev/${p##*/}
done
if [ -z "$port" ]; then
  echo "nightjar-guest: no virtio-serial port @PORT@ (virtio_console not loaded?); using /dev/ttyS1"
  port=/dev/ttyS1
fi
@BODY@sync
sleep 1
poweroff -f
)SH";
  for (std::size_t p; (p = tail.find("@PORT@")) != std::string::npos;)
    tail.replace(p, 6, kPortName);
  tail.replace(tail.find("@BODY@"), 6, body);
  GuestInit init;
  init.hostname = "nightjar-vm";
  init.cgroup2_options = cgroup2_options;
  init.tail = tail;
  init.tail_source = "harness/vm/qemu.cpp (results port, guest-run, poweroff)";
  return guest_init_script(init);
}

// The files of one guest session.
struct SessionFiles {
  std::string initrd, console, results, results_serial, qemu_log;
  explicit SessionFiles(const fs::path& dir)
      : initrd((dir / "initramfs.cpio").string()),
        console((dir / "console.log").string()),
        results((dir / "results.jsonl").string()),
        results_serial((dir / "results-ttyS1.jsonl").string()),
        qemu_log((dir / "qemu.log").string()) {}
};

constexpr const char* kKernelCmdline = "console=ttyS0,115200 panic=-1 rdinit=/init loglevel=4";

std::vector<std::string> qemu_argv(const QemuOptions& q, const VmSetup& v, const std::string& image,
                                   const SessionFiles& f) {
  std::vector<std::string> argv = {q.qemu,
                                   "-nodefaults",
                                   "-no-reboot",
                                   "-display",
                                   "none",
                                   "-monitor",
                                   "none",
                                   "-machine",
                                   "pc",
                                   "-accel",
                                   v.accel.kvm ? "kvm" : "tcg",
                                   "-cpu",
                                   v.accel.kvm ? "host" : "max",
                                   "-m",
                                   std::to_string(q.memory_mb),
                                   "-smp",
                                   std::to_string(v.cpus),
                                   "-kernel",
                                   image,
                                   "-initrd",
                                   f.initrd,
                                   "-append",
                                   kKernelCmdline,
                                   "-serial",
                                   "file:" + f.console,
                                   "-chardev",
                                   "file,id=njserial,path=" + f.results_serial,
                                   "-serial",
                                   "chardev:njserial",
                                   "-device",
                                   "virtio-serial-pci",
                                   "-chardev",
                                   "file,id=njport,path=" + f.results,
                                   "-device",
                                   std::string("virtserialport,chardev=njport,name=") + kPortName};
  if (!v.mem_path.empty()) argv.insert(argv.end(), {"-mem-path", v.mem_path, "-mem-prealloc"});
  return argv;
}

// How a qemu session ended.
struct QemuEnd {
  bool timed_out = false;
  int exit_code = 0;
  double seconds = 0;  ///< wall time of the session
};

// Runs qemu until it exits, times out or nightjar is interrupted. qemu is a
// ChildProcess (workloads/sys/process.h): killed and reaped on every path by
// its destructor; PR_SET_PDEATHSIG kills it if nightjar itself is killed.
QemuEnd run_qemu(const std::vector<std::string>& argv, const QemuOptions& q, const VmSetup& v,
                 const SessionFiles& f, const std::string& release) {
  QemuEnd end;
  const auto t0 = std::chrono::steady_clock::now();
  {
    ChildProcess vm(SpawnSpec{.argv = argv, .stdout_path = f.qemu_log, .stderr_to_stdout = true});
    std::cerr << fmt::format(
        "nightjar: kernel {}: booting qemu ({}, {} CPUs, {} MiB, cgroup2 {}, timeout {} s)\n",
        release, v.accel.kvm ? "KVM" : "TCG", v.cpus, q.memory_mb,
        v.cgroup2_options.empty() ? "defaults" : v.cgroup2_options, q.timeout_sec);
    for (;;) {
      if (auto status = vm.poll()) {
        end.exit_code = nightjar::exit_code(*status);
        break;
      }
      const bool late = std::chrono::steady_clock::now() - t0 > std::chrono::seconds(q.timeout_sec);
      if (interrupted() || late) {
        end.timed_out = late && !interrupted();
        vm.kill_and_reap();
        end.exit_code = 128 + SIGKILL;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }  // qemu is gone here on every path
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return end;
}

// What the guest said over its results port.
struct GuestReport {
  bool have_hello = false, done = false, have_plan = false;
  KernelIdentity kernel;
  Testbox box;
  double boot_s = -1;
  std::vector<std::tuple<std::string, std::string, std::string, std::size_t>> planned;
  std::set<std::string> reported;  ///< run_key of every run the guest reported
  std::string error;
};

// "yes" when the kernel is a PREEMPT_RT one: CONFIG_PREEMPT_RT=y in its
// config-<release>, else "PREEMPT_RT" in its version string (uname -v);
// "no" otherwise. `nightjar report --group kernel` titles its tables by it.
std::string preempt_rt(const KernelImage& k) {
  if (!k.config.empty())
    return read_whole_file(k.config).find("\nCONFIG_PREEMPT_RT=y\n") != std::string::npos ? "yes"
                                                                                          : "no";
  return k.version.find("PREEMPT_RT") != std::string::npos ? "yes" : "no";
}

// Facts stored with every run of one guest session.
std::map<std::string, std::string> session_facts(const VmSetup& v, const QemuOptions& q,
                                                 const KernelImage& k) {
  const std::string& image = k.path;
  return {{"vm.accelerator", v.accel.kvm ? "kvm" : "tcg"},
          {"kernel.preempt_rt", preempt_rt(k)},
          {"vm.kernel_image", fs::absolute(image).string()},
          {"vm.host", v.host.hostname},
          {"vm.host_cpu_model", v.host.cpu_model},
          {"vm.memory_mb", std::to_string(q.memory_mb)},
          {"vm.cpus", std::to_string(v.cpus)},
          {"vm.cgroup2_options", v.cgroup2_options},
          {"vm.memory_backing", v.mem_path.empty() ? "host pages" : "hugetlbfs 2M"}};
}

// One JSON line of the guest: hello, plan, run (imported into `store` at
// once), done or error.
void read_guest_line(const json& j, GuestReport& g, const VmSetup& v,
                     std::map<std::string, std::string>& facts, std::vector<std::string>& warnings,
                     double session_s, ResultsStore& store, RunOutcome& outcome) {
  const std::string t = j.value("t", "");
  if (t == "hello") {
    g.have_hello = true;
    g.kernel = identity_from_json(j.at("kernel"));
    if (!g.kernel.config_hash.empty() && !v.kernel_config.empty() &&
        fnv1a64_hex(v.kernel_config) == g.kernel.config_hash)
      g.kernel.config_text = v.kernel_config;
    const json& tb = j.at("testbox");
    g.box.hostname = tb.value("hostname", "nightjar-vm");
    g.box.cpu_model = tb.value("cpu_model", "");
    g.box.cpus = tb.value("cpus", 1u);
    g.box.memory_bytes = tb.value("memory_bytes", std::uint64_t{0});
    g.boot_s = j.value("uptime", -1.0);
    facts["vm.boot_seconds"] = fmt::format("{:.2f}", g.boot_s);
    if (j.contains("cgroup2")) {  // the cgroup2 mount's super options, as the guest sees them
      const std::string mounted = j.value("cgroup2", "");
      facts["vm.cgroup2_mount"] = mounted;
      if (auto w = cgroup2_mount_warning(v.cgroup2_options, mounted)) {
        std::cerr << "nightjar: WARNING: kernel " << g.kernel.release << ": " << *w << "\n";
        warnings.push_back(*w);
      }
    }
  } else if (t == "plan") {
    g.have_plan = true;
    for (const auto& p : j.at("runs"))
      g.planned.emplace_back(p.at("job").get<std::string>(), p.at("variant").get<std::string>(),
                             p.at("cell").get<std::string>(), p.value("job_index", 0));
  } else if (t == "run" && g.have_hello) {
    facts["vm.session_seconds"] = fmt::format("{:.1f}", session_s);
    std::int64_t id = 0;
    RunStatus s =
        import_guest_run(j, g.kernel, g.box, v.host_job_paths, facts, warnings, store, id);
    outcome.run_ids.push_back(id);
    count_status(outcome, s);
    g.reported.insert(run_key(j.at("job").get<std::string>(), j.at("variant").get<std::string>(),
                              j.value("cell_id", "")));
  } else if (t == "done") {
    g.done = true;
  } else if (t == "error") {
    g.error = j.value("message", "");
  }
}

GuestReport read_guest_report(const std::string& lines, const VmSetup& v,
                              std::map<std::string, std::string>& facts,
                              std::vector<std::string>& warnings, double session_s,
                              ResultsStore& store, RunOutcome& outcome) {
  GuestReport g;
  std::stringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    line.erase(std::remove(line.begin(), line.end(), '\r'), line.end());
    auto brace = line.find('{');
    if (brace == std::string::npos) continue;
    json j = json::parse(line.substr(brace), nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    try {
      read_guest_line(j, g, v, facts, warnings, session_s, store, outcome);
    } catch (const json::exception& e) {
      std::cerr << "nightjar: warning: bad line from the guest (" << e.what() << "): " << line
                << "\n";
    }
  }
  return g;
}

// The cell of a run that did not report: as the host planned it when the
// ids match, else parsed from the guest's cell id.
Cell unreported_cell(const PlannedJob& pj, const std::string& cell_id) {
  Cell cell;
  cell.workload = pj.workload ? std::string(pj.workload->name()) : "";
  for (const auto& c : pj.cells)
    if (c.id() == cell_id) return c;
  std::stringstream ids(cell_id);
  std::string kv;
  while (ids >> kv) {
    auto eq = kv.find('=');
    if (eq != std::string::npos) cell.params[kv.substr(0, eq)] = ParamValue{kv.substr(eq + 1), 0};
  }
  return cell;
}

// Every planned run that did not report is stored as failed with `reason`.
// Without the guest's own plan, the host's plan is used.
void store_unreported(GuestReport& g, const std::vector<PlannedJob>& plan,
                      const RunOptions& options, const std::map<std::string, std::string>& facts,
                      const std::vector<std::string>& warnings, const std::string& reason,
                      ResultsStore& store, RunOutcome& outcome) {
  if (!g.have_plan) {
    for (std::size_t i = 0; i < plan.size(); ++i)
      for (const auto& v : plan[i].variants)
        for (const auto& c : plan[i].cells)
          g.planned.emplace_back(plan[i].job.name, v.name, c.id(), i);
  }
  for (const auto& [job, variant, cell_id, index] : g.planned) {
    if (g.reported.count(run_key(job, variant, cell_id))) continue;
    const PlannedJob& pj = plan[std::min(index, plan.size() - 1)];
    NewRun run;
    run.job = job;
    run.job_path = pj.job.path;
    run.variant = variant;
    run.build = options.build;
    run.iterations = pj.iterations;
    run.warmup = pj.warmup;
    run.kernel = g.kernel;
    run.testbox = g.box;
    run.context = facts;
    run.cell = unreported_cell(pj, cell_id);
    std::int64_t id = store.begin_run(run);
    for (const auto& w : warnings) store.add_warning(id, w);
    store.finish_run(id, RunStatus::failed, reason);
    outcome.run_ids.push_back(id);
    ++outcome.failed;
  }
}

// One kernel image: initramfs, qemu, the guest's runs imported; a failed
// session stores the runs that did not report as failed with the console
// tail. Returns false when nightjar was interrupted.
bool run_one_kernel(const std::string& image, const std::vector<PlannedJob>& plan,
                    const RunOptions& options, const QemuOptions& q, const VmSetup& v,
                    ResultsStore& store, RunOutcome& outcome) {
  KernelImage k = inspect_kernel_image(image, q.modules);
  WorkDir work;
  make_work_dir(work, q, k);
  std::cerr << fmt::format("nightjar: kernel {} ({}): building the initramfs in {}\n", k.release,
                           image, work.path.string());
  const SessionFiles f(work.path);
  InitramfsContent content;
  content.init = qemu_guest_init(q, v.cgroup2_options);
  content.busybox = v.busybox;
  content.guest_binary = v.guest_binary;
  content.job_paths = v.host_job_paths;
  content.spec_json = v.spec.dump(2) + "\n";
  content.extra_files = q.extra_files;
  build_initramfs(work.path / "root", f.initrd, k, content);
  if (k.modules_dir.empty())
    std::cerr << "nightjar: note: no modules for " << k.release
              << " (--modules DIR); virtio_console and zram must be built in, else the "
                 "results go over /dev/ttyS1\n";

  const QemuEnd end = run_qemu(qemu_argv(q, v, image, f), q, v, f, k.release);
  std::string lines = read_whole_file(f.results);
  if (lines.empty()) lines = read_whole_file(f.results_serial);
  const std::string console_text = read_whole_file(f.console),
                    qemu_text = read_whole_file(f.qemu_log);
  auto facts = session_facts(v, q, k);
  std::vector<std::string> warnings;
  if (!v.accel_warning.empty()) warnings.push_back(v.accel_warning);
  VmSetup with_config = v;
  if (!k.config.empty()) with_config.kernel_config = read_whole_file(k.config);
  GuestReport g =
      read_guest_report(lines, with_config, facts, warnings, end.seconds, store, outcome);
  std::cerr << fmt::format(
      "nightjar: kernel {}: qemu ran {:.1f} s ({}); the guest reached nightjar's init after {} "
      "(guest clock)\n",
      k.release, end.seconds, v.accel.kvm ? "KVM" : "TCG",
      g.boot_s >= 0 ? fmt::format("{:.1f} s", g.boot_s) : std::string("- (never)"));

  if (interrupted()) {
    outcome.interrupted = true;
    std::cerr << "nightjar: interrupted: qemu stopped; runs the guest had reported are kept\n";
    return false;
  }
  std::optional<std::string> failure = classify_vm_failure(console_text, qemu_text, end.timed_out,
                                                           q.timeout_sec, g.done, end.exit_code);
  if (!failure && !g.error.empty()) failure = "the guest could not run the job: " + g.error;
  if (!failure) return true;
  if (!g.error.empty() && failure->find(g.error) == std::string::npos)
    *failure += " (guest: " + g.error + ")";

  std::string tail = tail_lines(console_text.empty() ? qemu_text : console_text, kTailLines);
  std::string reason = *failure + "; console tail:\n" + tail;
  if (!work.keep) reason += "\n(keep every log with --vm-keep DIR)";
  std::cerr << "nightjar: kernel " << k.release << ": " << *failure << "\n" << tail << "\n";
  if (!g.have_hello) {
    g.kernel.release = k.release;
    g.kernel.version = k.version;
    g.kernel.cmdline = kKernelCmdline;
    g.box.hostname = "nightjar-vm";
    g.box.cpus = static_cast<unsigned>(v.cpus);
    g.box.memory_bytes = static_cast<std::uint64_t>(q.memory_mb) << 20;
  }
  facts["vm.session_seconds"] = fmt::format("{:.1f}", end.seconds);
  store_unreported(g, plan, options, facts, warnings, reason, store, outcome);
  return true;
}

}  // namespace

RunOutcome execute_runs_in_vms(const std::vector<PlannedJob>& plan, const RunOptions& options,
                               const QemuOptions& q, ResultsStore& store) {
  install_interrupt_handlers();
  RunOutcome outcome;
  // --runs N: one boot per run, in rounds over the kernels (K1 K2 K1 K2 ...);
  // each boot runs the plan once.
  RunOptions once = options;
  once.runs = 1;
  VmSetup shared = prepare_vm_setup(plan, q, store);
  // Held across every boot of this call, given back on every path.
  std::unique_ptr<GuestHugePages> huge;
  if (q.hugepages) {
    huge = std::make_unique<GuestHugePages>(q.memory_mb);
    shared.mem_path = huge->path();
    std::cerr << fmt::format(
        "nightjar: guest memory on {} huge pages of 2 MiB in {} ({} added to the host's pool "
        "for these boots)\n",
        huge->pages(), huge->path(), huge->added());
  }
  // Jobs whose guests mount cgroup2 differently boot apart (job order kept).
  struct Boot {
    std::vector<PlannedJob> plan;
    VmSetup setup;
  };
  std::vector<Boot> boots;
  for (const GuestBoot& b : plan_guest_boots(plan, q)) {
    Boot boot{{}, shared};
    for (std::size_t i : b.jobs) boot.plan.push_back(plan[i]);
    boot.setup.spec = guest_spec(boot.plan, once, boot.setup.host_job_paths);
    boot.setup.cgroup2_options = b.cgroup2_options;
    boots.push_back(std::move(boot));
  }
  for (int round = 0; round < std::max(1, options.runs); ++round) {
    for (const auto& image : q.kernels) {
      for (const Boot& boot : boots) {
        if (interrupted()) return outcome;
        if (!run_one_kernel(image, boot.plan, once, q, boot.setup, store, outcome)) return outcome;
      }
    }
  }
  return outcome;
}

// ---------------------------------------------------------------- guest side

namespace {

// Writes JSON lines to the results port, one write(2) per line.
class Port {
 public:
  explicit Port(const std::string& path) {
    fd_ = open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0)
      throw EnvironmentError("cannot open the results port " + path + ": " + std::strerror(errno));
    if (isatty(fd_)) {  // ttyS1: raw, so that "\n" is not turned into "\r\n"
      termios t{};
      if (tcgetattr(fd_, &t) == 0) {
        cfmakeraw(&t);
        cfsetospeed(&t, B115200);
        tcsetattr(fd_, TCSANOW, &t);
      }
    }
  }
  ~Port() {
    if (fd_ >= 0) {
      if (isatty(fd_)) tcdrain(fd_);
      fsync(fd_);
      close(fd_);
    }
  }
  void send(const json& j) {
    // Replacing bytes that are not UTF-8 (a [program] frame is the comm the
    // kernel reported) instead of throwing.
    std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::size_t off = 0;
    while (off < text.size()) {
      ssize_t n = write(fd_, text.data() + off, text.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw EnvironmentError(std::string("writing the results port: ") + std::strerror(errno));
      off += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace

int guest_run_main(const std::string& port_path, const std::string& spec_path) {
  Port port(port_path);
  KernelIdentity kernel = probe_kernel_identity();
  Testbox box = probe_testbox();
  double uptime = -1;
  {
    std::ifstream up("/proc/uptime");
    up >> uptime;
  }
  port.send({{"t", "hello"},
             {"kernel", identity_to_json(kernel)},
             {"testbox",
              {{"hostname", box.hostname},
               {"cpu_model", box.cpu_model},
               {"cpus", box.cpus},
               {"memory_bytes", box.memory_bytes}}},
             {"uptime", uptime},
             {"cgroup2", CgroupLayout::detect().v2_options}});
  RunOptions options;
  std::vector<PlannedJob> plan;
  try {
    json spec = json::parse(read_whole_file(spec_path));
    options.job_paths = spec.at("jobs").get<std::vector<std::string>>();
    options.variant = spec.value("variant", "");
    options.interleave = spec.value("interleave", false);
    options.build = spec.value("build", "");
    if (spec.contains("iterations")) options.iterations = spec["iterations"].get<int>();
    if (spec.contains("warmup")) options.warmup = spec["warmup"].get<int>();
    const json sets = spec.value("sets", json::array());
    for (const auto& s : sets)
      options.overrides.push_back(SetOverride{s.at("key").get<std::string>(),
                                              s.at("values").get<std::vector<std::string>>()});
    options.context = spec.value("context", std::map<std::string, std::string>{});
    plan = plan_runs(options, probe_machine_facts());
  } catch (const std::exception& e) {
    port.send({{"t", "error"}, {"message", e.what()}});
    std::cerr << "nightjar-guest: " << e.what() << "\n";
    return to_int(ExitCode::usage);
  }
  json runs = json::array();
  for (std::size_t i = 0; i < plan.size(); ++i)
    for (const auto& v : plan[i].variants)
      for (const auto& c : plan[i].cells)
        runs.push_back(
            {{"job", plan[i].job.name}, {"variant", v.name}, {"cell", c.id()}, {"job_index", i}});
  port.send({{"t", "plan"}, {"runs", runs}});

  ResultsStore store("/tmp/nightjar-guest.db");
  bool was_interrupted = false, any_failed = false;
  // One cell at a time, so that every finished run leaves the guest at once.
  for (std::size_t i = 0; i < plan.size() && !was_interrupted; ++i) {
    for (const auto& cell : plan[i].cells) {
      PlannedJob one = plan[i];
      one.cells = {cell};
      RunOutcome o = execute_runs({one}, options, store);
      for (auto id : o.run_ids) port.send(export_guest_run(store, id, i));
      any_failed = any_failed || o.failed > 0;
      if (o.interrupted) {
        was_interrupted = true;
        break;
      }
    }
  }
  port.send({{"t", "done"}, {"interrupted", was_interrupted}});
  return to_int(was_interrupted ? ExitCode::interrupted
                : any_failed    ? ExitCode::environment
                                : ExitCode::ok);
}

}  // namespace nightjar

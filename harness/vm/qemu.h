// The kernel axis: `nightjar run JOB --kernel IMAGE [--kernel IMAGE...]`
// boots each kernel image in qemu and runs the job inside (docs/qemu.md).
//
// Per kernel image the host:
//  1. reads the image's own version string (bzImage header) and finds its
//     config (IMAGE's directory: config-<release>) and modules (--modules DIR,
//     else <image dir>/../lib/modules/<release> as `dpkg -x` leaves them);
//  2. builds an initramfs (harness/vm/initramfs.h, shared with the LAVA
//     ramdisk): /init (a busybox sh script), busybox (busybox-static), the
//     statically linked nightjar (CMake -DNIGHTJAR_STATIC=ON:
//     nightjar-static), the job files, the modules virtio-serial and zram
//     need (with their dependencies, when they are modules), the kernel
//     config and the spec the guest runs;
//  3. boots qemu-system-x86_64 with KVM when the host CPU has vmx/svm in
//     /proc/cpuinfo AND /dev/kvm works, else TCG with a loud warning (the
//     figures then measure emulation);
//  4. the guest runs `nightjar guest-run`, which sends JSON lines over a
//     virtio-serial port (org.nightjar.results; /dev/ttyS1 when the kernel
//     has no virtio console): hello (the guest's kernel identity and
//     testbox), plan (the runs it will do), one line per finished run (its
//     samples, monitors, context, status), done;
//  5. imports every run into the host database with the guest's kernel
//     identity; a boot failure, guest panic, timeout or KVM internal error
//     stores the runs that did not report as failed with the tail of the
//     console log. qemu is killed and reaped on every path, also SIGINT.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/run/runner.h"
#include "harness/vm/initramfs.h"
#include "results/store/store.h"
#include "workloads/sys/probe.h"

namespace nightjar {

/// Options of the kernel axis (`nightjar run --kernel ...`).
struct QemuOptions {
  std::vector<std::string> kernels;  ///< --kernel IMAGE, in order
  std::string modules;               ///< --modules DIR ("" = next to each image)
  int memory_mb = 2048;              ///< --vm-memory MiB of guest RAM
  int cpus = 0;                      ///< --vm-cpus; 0 = min(2, host CPUs)
  int timeout_sec = 1800;            ///< --vm-timeout: whole boot + job, seconds
  std::string guest_binary;          ///< --guest-binary: static nightjar; "" = find it
  std::string qemu = "qemu-system-x86_64";
  /// Test hook (hidden --vm-init): shell text run by /init instead of
  /// nightjar guest-run (e.g. "exit 1" to make the guest panic).
  std::string init_override;
  /// Test hook (hidden --vm-file SRC=DEST, repeatable): files or directories
  /// copied into the initramfs at the absolute guest path DEST (the static
  /// test binary and the paths it expects, tests/vm/guest-tests.sh).
  std::vector<std::pair<std::string, std::string>> extra_files;
  std::string keep_dir;  ///< --vm-keep DIR: keep initramfs and logs there ("" = temp, removed)
  /// --vm-hugepages: back the guest's memory with the host's 2 MiB huge pages
  /// (GuestHugePages, harness/vm/hugepages.h), reserved for the boots and
  /// given back after; stored with every run as vm.memory_backing.
  bool hugepages = false;
  /// --vm-cgroup-options: mount options of the guest's cgroup2 (comma list,
  /// e.g. "memory_recursiveprot,nsdelegate"; "" = the kernel's defaults).
  /// When given it overrides every job's `vm: cgroup2_options`; nullopt: each
  /// job's, else kDefaultCgroup2Options (guest_cgroup2_options). Stored with
  /// every run as vm.cgroup2_options.
  std::optional<std::string> cgroup2_options;
};

/// The cgroup2 mount options of the guest `job` runs in: --vm-cgroup-options
/// when given, else the job's `vm: cgroup2_options`, else
/// kDefaultCgroup2Options.
/// Checks the host tools a guest boot needs: `qemu` on PATH, cpio (the
/// initramfs) and a static busybox at `busybox`. Throws EnvironmentError
/// naming the missing one and the package to install. `run --kernel` checks
/// them before the first boot, `bisect run --kernel-build` before the first
/// kernel build.
void check_vm_tools(const std::string& qemu = "qemu-system-x86_64",
                    const std::string& busybox = "/bin/busybox");

std::string guest_cgroup2_options(const JobFile& job, const QemuOptions& qemu);

/// One boot per kernel (and run) for each distinct guest_cgroup2_options()
/// of the plan: the options and the indices of the jobs of `plan` that boot
/// with them, in the order the jobs come (a guest mounts cgroup2 once, so
/// jobs asking for other options need a guest of their own).
struct GuestBoot {
  std::string cgroup2_options;
  std::vector<std::size_t> jobs;
};
std::vector<GuestBoot> plan_guest_boots(const std::vector<PlannedJob>& plan,
                                        const QemuOptions& qemu);

/// The warning stored with every run of a guest whose cgroup2 lacks an
/// option it was to be mounted with, or nullopt: `requested` is the comma
/// list given to the guest, `mounted` the super options its
/// /proc/self/mountinfo shows ("rw,nsdelegate,memory_recursiveprot"; the
/// guest falls back to a mount without options when the kernel refuses one).
std::optional<std::string> cgroup2_mount_warning(const std::string& requested,
                                                 const std::string& mounted);

/// KVM or TCG, and why.
struct Accelerator {
  bool kvm = false;
  std::string why;  ///< "vmx in /proc/cpuinfo and /dev/kvm answers" or why not
};
/// KVM only when `cpuinfo` lists vmx or svm AND `kvm_device` opens read-write
/// and answers KVM_GET_API_VERSION (a /dev/kvm node alone is not enough).
Accelerator choose_accelerator(const std::string& cpuinfo = "/proc/cpuinfo",
                               const std::string& kvm_device = "/dev/kvm");

/// Why a VM session failed, from what it left behind, or nullopt when it ran
/// to the end: a KVM internal error in qemu's output, a kernel panic or
/// "Attempted to kill init" on the console, the timeout, qemu failing to start
/// the kernel, or the guest powering off without its "done" line.
std::optional<std::string> classify_vm_failure(const std::string& console,
                                               const std::string& qemu_output, bool timed_out,
                                               int timeout_sec, bool done_seen, int exit_code);

/// The last `lines` lines of `text` (console log tails for failed runs).
std::string tail_lines(const std::string& text, int lines);

/// Runs the plan once per kernel image in qemu (see the file comment) and
/// stores every run; options.runs > 1: that many rounds over the images, one
/// boot per kernel and run (K1 K2 K1 K2 ...), each running the plan once. It
/// stores every run in `store` with the guest's kernel identity. Prints the
/// time per boot on stderr. SIGINT: qemu is killed, the runs reported so far
/// are kept, the outcome says interrupted.
RunOutcome execute_runs_in_vms(const std::vector<PlannedJob>& plan, const RunOptions& options,
                               const QemuOptions& qemu, ResultsStore& store);

/// `nightjar guest-run --port PORT --spec FILE` inside the guest: runs the
/// jobs of the spec (JSON written by the host) into a database on tmpfs and
/// sends every finished run as a JSON line on PORT. Returns the exit code.
int guest_run_main(const std::string& port, const std::string& spec_path);

}  // namespace nightjar

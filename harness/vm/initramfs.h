// The nightjar guest's initramfs: what `nightjar run --kernel` boots in qemu
// (harness/vm/qemu.h) and what `nightjar lava jobs` deploys as a LAVA
// ramdisk (harness/lava/jobs.h). One builder and one /init for both, so that
// a guest under LAVA is set up exactly as nightjar's own qemu guest is
// (docs/qemu.md "In the guest", docs/lava.md "The ramdisk").
//
// Per kernel image:
//  - inspect_kernel_image reads the image's version string (bzImage header)
//    and finds its config (config-<release> beside it) and modules;
//  - guest_modules picks the modules virtio-serial and zram need (with their
//    dependencies, in load order);
//  - build_initramfs writes a cpio "newc" archive (the `cpio` tool, files
//    owned by root): /init, busybox (busybox-static), the statically linked
//    nightjar (CMake -DNIGHTJAR_STATIC=ON: nightjar-static) at
//    /nightjar/nightjar, the job files at /nightjar/jobs/<i>/<name>, the
//    kernel config at /boot/config-<release>, the modules (decompressed) and
//    their load order, and any extra files.
//
// The /init (guest_init_script) mounts proc, sysfs, devtmpfs, tmpfs /tmp and
// /run, loads the modules, brings up lo (127.0.0.1/8 and ::1), mounts cgroup2
// with the given options and enables +memory in the root's subtree_control,
// then runs the caller's tail: the qemu guest finds its results port and runs
// `nightjar guest-run`; the LAVA guest starts an interactive shell on the
// console for LAVA's test shell.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "harness/job/job.h"

namespace nightjar {

/// What nightjar reads from a kernel image before booting it.
struct KernelImage {
  std::string path;  ///< as given
  std::string
      banner;  ///< the image's version string ("6.1.0-18-amd64 (debian-kernel@...) #1 SMP ...")
  std::string release;      ///< first word of the banner (`uname -r` of the guest)
  std::string version;      ///< the banner from " #" on (`uname -v` of the guest)
  std::string config;       ///< config-<release> next to the image, "" when absent
  std::string modules_dir;  ///< lib/modules/<release> to take modules from, "" when none
};

/// Reads the bzImage header of `path` (setup header magic "HdrS", version
/// string at 0x200 + the u16 at 0x20E) and finds its config and modules.
/// `modules_flag` is --modules: a lib/modules/<release> directory itself, or
/// a directory holding <release>/ or lib/modules/<release>/. Throws
/// UsageError naming the path when it is unreadable or not a bzImage.
KernelImage inspect_kernel_image(const std::string& path, const std::string& modules_flag);

/// The statically linked nightjar to put into the guest: `flag` when given,
/// else nightjar-static next to the running binary, else $NIGHTJAR_STATIC_BINARY.
/// Throws UsageError (a `flag` that is not executable) or EnvironmentError
/// saying how to build it.
std::string find_guest_binary(const std::string& flag);

/// The modules (paths relative to `modules_dir`) to load in the guest, in
/// load order (dependencies first), for `wanted` names ("virtio_console",
/// "zram"): read from modules.dep; names built into the kernel
/// (modules.builtin) or absent are left out.
std::vector<std::string> guest_modules(const std::string& modules_dir,
                                       const std::vector<std::string>& wanted);

/// Checks that `busybox` is a statically linked busybox (busybox-static; the
/// dynamic one would need libc in the guest). Throws EnvironmentError saying
/// to install busybox-static.
void check_static_busybox(const std::string& busybox = "/bin/busybox");

/// The guest's /init (see the file comment).
struct GuestInit {
  std::string hostname = "nightjar-vm";  ///< the guest's hostname (its testbox name)
  /// Mount options of the guest's cgroup2 (comma list); "" = the kernel's
  /// defaults. The guest falls back to a mount without options when the
  /// kernel refuses them.
  std::string cgroup2_options = kDefaultCgroup2Options;
  /// Shell text run after the common setup, as PID 1 (busybox sh, PATH set):
  /// it must not return unless the guest may panic ("Attempted to kill init").
  std::string tail;
  /// Who writes the tail, for the script's comment ("harness/vm/qemu.cpp").
  std::string tail_source;
};

/// The /init script text for `init`: "#!/bin/busybox sh", the common setup,
/// then init.tail. Each stage prints a "nightjar-guest: " line on the console.
std::string guest_init_script(const GuestInit& init);

/// Where job `index` of a guest's job list lives inside the initramfs:
/// "/nightjar/jobs/<index>/<file name of host_path>".
std::string guest_job_path(std::size_t index, const std::string& host_path);

/// What an initramfs holds besides the kernel's modules and config.
struct InitramfsContent {
  std::string init;                      ///< the /init text (guest_init_script)
  std::string busybox = "/bin/busybox";  ///< a static busybox (check_static_busybox)
  std::string guest_binary;              ///< the static nightjar, installed as /nightjar/nightjar
  std::vector<std::string> job_paths;    ///< host job files, to guest_job_path(i, path)
  std::string spec_json;                 ///< "" = none; else written to /nightjar/spec.json
  /// Files or directories copied to absolute guest paths (SRC, DEST).
  std::vector<std::pair<std::string, std::string>> extra_files;
};

/// Writes the initramfs of kernel `k` (see the file comment) to `out`, an
/// uncompressed cpio newc archive, staging the tree in `staging` (created;
/// left for the caller to remove). Throws EnvironmentError when a file
/// cannot be copied, a module cannot be decompressed (naming the tool to
/// install) or cpio fails (saying to install cpio).
void build_initramfs(const std::filesystem::path& staging, const std::string& out,
                     const KernelImage& k, const InitramfsContent& content);

/// The whole file at `path` ("" when it cannot be read).
std::string read_whole_file(const std::string& path);

/// Writes `text` to `path` (created or truncated), then sets `mode` unless it
/// is perms::none. Throws EnvironmentError naming the path.
void write_whole_file(const std::string& path, const std::string& text,
                      std::filesystem::perms mode = std::filesystem::perms::none);

}  // namespace nightjar

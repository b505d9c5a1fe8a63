// Kernel builds of `nightjar bisect run --kernel-build` (docs/bisect.md
// "Bisecting kernels"): the options, the config recipe and its hash, the
// layout of a session's build directory and image cache, and the make
// command lines. The measurer that uses them is measurer_kernel.cpp
// (harness/bisect/measurer.h); everything here is pure or touches only
// files, so it is unit-tested without a kernel tree
// (tests/unit/test_bisect_kernel.cpp).
//
// Layout of the kernel directory DIR (--kernel-dir, default
// $XDG_CACHE_HOME/nightjar/kernel-bisect/REPOHASH-CONFIGKEY, ~/.cache when
// XDG_CACHE_HOME is unset):
//   DIR/out/                 the one persistent `make O=` build tree (incremental)
//   DIR/assembled.config     the config made from --defconfig + fragments at
//                            the first commit built, reused for every commit
//   DIR/images/SHA-KEY/      a finished build: bzImage, config-RELEASE,
//                            kernel.json ({"commit", "release", "config_key",
//                            "config_hash", "build_seconds"}); written under
//                            a temporary name and renamed, so an interrupted
//                            build leaves no entry and is rebuilt on resume
//   DIR/logs/SHA.log         the build's output (make's stdout and stderr)
//   DIR/boots/SHA/           the last boot's console.log, qemu.log, initramfs
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nightjar {

/// How each commit's kernel is configured, built and booted
/// (`bisect run --kernel-build`); stored with the session (its options JSON,
/// "kernel") so `bisect resume` builds the same way.
struct KernelBuildOptions {
  bool enabled = false;                ///< --kernel-build
  std::string config;                  ///< --kernel-config FILE: a full .config (absolute)
  std::string defconfig;               ///< --defconfig TARGET: tinyconfig, x86_64_defconfig, ...
  std::vector<std::string> fragments;  ///< --config-fragment FILE... (absolute), in order
  std::string dir;                     ///< --kernel-dir DIR ("" = the default, see above)
  int jobs = 0;                        ///< --kernel-jobs N for make -j (0 = the CPUs)
  int vm_memory_mb = 2048;             ///< --vm-memory MiB
  int vm_cpus = 0;                     ///< --vm-cpus (0 = min(2, CPUs))
  int vm_timeout_sec = 600;            ///< --vm-timeout: one boot and job, seconds
  bool vm_hugepages = false;           ///< --vm-hugepages (QemuOptions::hugepages)
  /// Each commit (and the bad endpoint) is decided against boots of the good
  /// endpoint's cached image measured beside it (commit, good, alternately,
  /// at least 3 each), with boots as the unit (runs as the unit), not against
  /// the endpoint's first runs on pooled iterations: guests' boots differ far
  /// more than their iterations (docs/bisect.md "Paired with the good
  /// endpoint"). On by default; --no-pair-good turns it off.
  bool pair_good = true;
};

/// Checks `o` when enabled: exactly one of --kernel-config and --defconfig,
/// fragments only with --defconfig, every file readable, no --build command
/// beside it (`build_command`); makes the paths absolute. When not enabled,
/// any kernel option given is an error. Throws UsageError naming the option
/// and the fix.
void check_kernel_build_options(KernelBuildOptions& o, const std::string& build_command);

/// The text the config key is computed from: "config\n" + the full config's
/// text, or "defconfig NAME\n" then "fragment BASENAME\n" + text for each
/// fragment in order. Throws EnvironmentError naming a file it cannot read.
std::string config_recipe(const KernelBuildOptions& o);

/// 16 hex digits: FNV-1a-64 (results/model/identity.h) of config_recipe(o).
/// Two sessions with the same recipe share images.
std::string config_key(const KernelBuildOptions& o);

/// The kernel directory: `o.dir` when set, else the default under the cache
/// directory named by the repository top `repo_top` and `key`.
std::string kernel_dir(const KernelBuildOptions& o, const std::string& repo_top,
                       const std::string& key);

/// DIR/images/SHA-KEY: where the image of commit `sha` built with config key
/// `key` is cached.
std::string image_dir(const std::string& dir, const std::string& sha, const std::string& key);

/// What a cached build records (kernel.json).
struct BuiltKernel {
  std::string commit;       ///< full commit id
  std::string release;      ///< `make kernelrelease` (the guest's `uname -r`)
  std::string config_key;   ///< config_key() of the recipe
  std::string config_hash;  ///< FNV-1a-64 of the final .config (what runs record as config_hash)
  double build_seconds = 0;
};

/// The facts stored with every run of a built kernel (run context):
/// kbuild.commit, kbuild.release, kbuild.config_hash, kbuild.config_key,
/// kbuild.build_seconds (one decimal). `bisect log` prints them per step.
std::map<std::string, std::string> built_kernel_context(const BuiltKernel& k);

/// kernel.json's text for `k`.
std::string kernel_identity_json(const BuiltKernel& k);

/// The identity read from image directory `dir` (its kernel.json), or
/// nullopt when the entry is incomplete (no bzImage or no readable
/// kernel.json): such an entry is built again.
std::optional<BuiltKernel> read_cached_image(const std::string& dir);

/// make's argv for `target` in source tree (cwd) with build tree `out`:
/// {"make", "O=OUT", ["-jN",] ["CC=ccache gcc" when `ccache`,] TARGET...}.
std::vector<std::string> make_argv(const std::string& out, const std::vector<std::string>& targets,
                                   int jobs, bool ccache);

/// merge_config.sh's argv that merges `fragments` onto OUT/.config (-m: no
/// olddefconfig of its own; make olddefconfig follows).
std::vector<std::string> merge_config_argv(const std::string& out,
                                           const std::vector<std::string>& fragments);

}  // namespace nightjar

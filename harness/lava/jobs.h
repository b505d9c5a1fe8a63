// `nightjar lava jobs`: a job's kernel x testbox matrix as LAVA job
// definitions (docs/lava.md). One LAVA job per kernel x device type x
// variant; each deploys the kernel and a nightjar ramdisk, boots it, and runs
// an inline test definition:
//
//   nightjar run JOBS... --db /tmp/nightjar-lava.db [options]   (in the guest)
//   nightjar lava report ...                                     (cases + blocks)
//   lava-test-case NAME --result R --measurement V --units U     (per run)
//
// The ramdisk is nightjar's own guest initramfs (harness/vm/initramfs.h:
// the same /init setup as `nightjar run --kernel`, with nightjar-static and
// the job files inside) whose /init ends in an interactive shell with the
// prompt kLavaPrompt for LAVA's test shell; it is deployed as `format:
// cpio.newc` with `overlays: {lava: true}`, so LAVA adds its test overlay
// into it. Device type qemu has a built-in deploy/boot (`to: tmpfs`, `method:
// qemu`); other device types take theirs from a template (--template
// TYPE=FILE, docs/lava.md "Real boards").
//
// DIR gets the job definitions (YAML, written with yaml-cpp), one ramdisk
// per kernel, and the manifest nightjar-lava.json that `nightjar lava run`
// and `nightjar lava submit` read: every LAVA job with its kernel, device
// type, variant and the runs it plans (so that a job that fails can store
// each planned run as failed with LAVA's error).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/model/params.h"

namespace nightjar {

/// The prompt of the nightjar ramdisk's shell (a LAVA boot `prompts:` entry).
inline constexpr const char* kLavaPrompt = "nightjar-lava# ";
/// The manifest's file name inside DIR.
inline constexpr const char* kLavaManifest = "nightjar-lava.json";

/// Options of `nightjar lava jobs`.
struct LavaJobsOptions {
  std::vector<std::string> job_paths;     ///< JOB...: nightjar job files
  std::vector<std::string> kernels;       ///< --kernel URL_OR_PATH, in order
  std::vector<std::string> device_types;  ///< --device-type TYPE
  std::vector<std::string> tags;          ///< --testbox-tags: LAVA device tags every job requires
  /// --variant: each value (a comma list is split) is one LAVA job per kernel
  /// and device type, running `nightjar run --variant VALUE`; none: one job
  /// running the job files' own variant selection.
  std::vector<std::string> variants;
  int runs = 1;                                  ///< --runs N, passed to the guest
  std::vector<std::string> sets;                 ///< --set k=v, passed to the guest
  std::optional<int> iterations, warmup;         ///< --iterations, --warmup
  std::string build;                             ///< --build label, passed to the guest
  std::map<std::string, std::string> context;    ///< --context k=v, passed to the guest
  std::string out_dir;                           ///< -o DIR
  std::string modules;                           ///< --modules DIR (as `run --kernel`)
  std::string guest_binary;                      ///< --guest-binary (nightjar-static)
  std::map<std::string, std::string> templates;  ///< --template TYPE=FILE
  /// --url-base URL: where DIR will be served from (http://host/path); the
  /// jobs then name DIR's files (and copies of path kernels) under it. ""
  /// = file:// URLs of this machine (lava-run, or a worker on this machine).
  std::string url_base;
  std::string priority = "medium";                  ///< --priority high|medium|low|0..100
  std::map<std::string, std::string> lava_context;  ///< --lava-context k=v (job `context:`)
  std::optional<int>
      timeout_minutes;  ///< --timeout: the test action's minutes (default: estimated)
};

/// One run a LAVA job plans (a cell of a job file and variant; `runs` of them).
struct LavaPlannedRun {
  std::string job, job_path, workload, variant, build;
  std::map<std::string, ParamValue> params;
  int iterations = 0, warmup = 0;
};

/// One LAVA job of the manifest.
struct LavaJobEntry {
  std::string file;         ///< the definition's file name in DIR
  std::string job_name;     ///< its job_name
  std::string device_type;  ///< its device_type
  std::string kernel;       ///< --kernel as given (URL or path)
  /// The kernel's release read from a path's (or a local file:// URL's)
  /// bzImage header; "" for a URL (the guest reports its own).
  std::string kernel_release;
  std::string variant;  ///< --variant value, "" = the jobs' own selection
  int runs = 1;
  std::vector<LavaPlannedRun> plan;
};

/// DIR's manifest.
struct LavaManifest {
  std::string dir;  ///< the directory (absolute)
  std::vector<LavaJobEntry> jobs;
};

/// Validates everything (job files with the overrides, kernels, device types
/// and templates, priority) before writing anything, then writes DIR
/// (created): the ramdisks, the definitions and the manifest. Returns the
/// manifest. Throws UsageError (exit 2) for bad input: a job file or
/// override the runner refuses, a kernel path that is not a bzImage, a URL
/// that is not http(s):// or file://, a device type other than qemu without
/// --template, a template that is not a YAML mapping with deploy and boot
/// actions naming @RAMDISK_URL@, a kernel command line with `quiet`, a bad
/// priority; EnvironmentError (exit 4) when nightjar-static, busybox-static
/// or cpio is missing or DIR cannot be written.
LavaManifest write_lava_jobs(const LavaJobsOptions& options);

/// Reads DIR/nightjar-lava.json. Throws UsageError naming the file and what
/// is wrong (missing: "run `nightjar lava jobs ... -o DIR` first").
LavaManifest read_lava_manifest(const std::string& dir);

/// The kernel command line of nightjar's LAVA guests (never `quiet`: LAVA
/// waits for the kernel's "Linux version" banner).
std::string lava_kernel_cmdline();

}  // namespace nightjar

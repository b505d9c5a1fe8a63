// `nightjar lava run DIR --device DEV.yaml`: the jobs of `nightjar lava
// jobs` through a local `lava-run` (lava-dispatcher, no server): for one
// machine, or for CI (docs/lava.md "One machine"). Each job:
//
//   lava-run --job-id ID --output-dir DIR/lava-run/ID --dispatcher D.yaml
//            --device DEV.yaml DIR/FILE      > DIR/lava-run/ID.log 2>&1
//
// then its log (lava-run writes it on stderr, harness/lava/log.h) is read
// and its results brought home (harness/lava/collect.h) with the LAVA job
// id (the start in milliseconds since the epoch: each lava-run of a
// definition is a job of its own) and key "lava-run:DIR/FILE#ID". lava-run runs through the process
// toolkit with reap_orphans: qemu, which lava-run starts in a session of its
// own, is killed by PID if lava-run leaves it behind; SIGINT/SIGTERM send
// lava-run SIGTERM (it cancels the job and stops qemu), then SIGKILL, and
// the interrupted job is not stored (nothing of it came home).
#pragma once

#include <string>
#include <vector>

#include "harness/lava/collect.h"
#include "results/store/store.h"

namespace nightjar {

/// Options of `nightjar lava run`.
struct LavaRunOptions {
  std::string dir;         ///< DIR of `nightjar lava jobs`
  std::string device;      ///< --device: a rendered LAVA device configuration (YAML)
  std::string dispatcher;  ///< --dispatcher: lava-run's dispatcher configuration ("" = none)
  /// --testbox: the testbox name of the runs (default: DEV's file stem, the
  /// device's name in a lab, as lava-server's devices/NAME.jinja2)
  std::string testbox;
  std::vector<std::string> only;      ///< --job FILE: only these definitions (default: all)
  std::string lava_run = "lava-run";  ///< the program (tests)
};

/// What `nightjar lava run` did.
struct LavaRunSummary {
  int jobs = 0, passed = 0;
  LavaCollected totals;
  bool interrupted = false;
};

/// Checks the options before any database is opened and returns DIR's
/// manifest. Throws UsageError for a missing manifest, device or dispatcher
/// file or an unknown --job; EnvironmentError when lava-run is not installed
/// (saying to install lava-dispatcher).
LavaManifest check_lava_run(const LavaRunOptions& options);

/// Runs every job of `manifest` (or those of options.only) in order and
/// stores their runs in `store`; prints a line per job on stderr. A job LAVA
/// fails is not an error here: its runs are stored as failed.
LavaRunSummary run_lava_jobs_locally(ResultsStore& store, const LavaRunOptions& options,
                                     const LavaManifest& manifest);

}  // namespace nightjar

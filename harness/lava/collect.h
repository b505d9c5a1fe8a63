// Bringing one LAVA job's results home (docs/lava.md "How the data comes
// home"), the same for `nightjar lava run` (local lava-run) and `nightjar
// lava collect` (a LAVA server):
//
//  1. the console blocks of the job's log (harness/lava/samples_block.h):
//     samples.csv is parsed and checked by the CSV import's own parser
//     (results/io/csv.h) and stored through import_samples_csv, scoped to
//     the LAVA job (its import identity starts with the job's key), with the
//     guest's exact kernel identity and testbox from runs.json (hostname: the
//     LAVA device, else the device type) and its run context;
//  2. the guest's runs without samples (skipped, failed) are stored with
//     their status and reason;
//  3. every run the manifest planned that the guest did not report is
//     stored as failed with LAVA's error text (a job that failed to deploy
//     or boot, timed out, or whose blocks are damaged).
//
// Every run gets the facts lava.job (the key), lava.job_id, lava.url (the
// job's page on a server), lava.device_type, lava.device and lava.job_name.
// Everything is stored under an import identity, so collecting a job again
// adds nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/lava/jobs.h"
#include "harness/lava/log.h"
#include "results/store/store.h"

namespace nightjar {

/// Which LAVA job a log belongs to, and how LAVA says it ended.
struct LavaJobRef {
  /// Names the job wherever it ran: "http://server/scheduler/job/42" for a
  /// server, "lava-run:DIR/FILE#ID" for a local lava-run.
  std::string key;
  std::string job_id;   ///< LAVA's job id
  std::string url;      ///< the job's page ("" for lava-run)
  std::string device;   ///< the device that ran it ("" when unknown)
  bool passed = false;  ///< LAVA's job result (health Complete on a server)
  std::string error;    ///< LAVA's error text when it did not pass
};

/// What one job added.
struct LavaCollected {
  std::vector<std::int64_t> run_ids;  ///< runs stored now, in order
  int complete = 0, failed = 0, skipped = 0, aborted = 0;
  std::size_t already_stored = 0;  ///< runs found stored by an earlier collect
  std::size_t samples = 0;
  std::vector<std::string> notes;  ///< for stderr
};

/// Adds `c` to `total` (the run ids appended, the counts summed).
void add_collected(LavaCollected& total, const LavaCollected& c);

/// Stores what `log` holds for manifest job `entry` (see the file comment).
/// Throws UsageError when samples.csv or runs.json is intact but refused by
/// their parsers (naming the job and the line), and for a CSV import
/// conflict; the database is then unchanged for that job.
LavaCollected collect_lava_job(ResultsStore& store, const LavaJobEntry& entry,
                               const LavaJobRef& ref, const LavaLog& log);

}  // namespace nightjar

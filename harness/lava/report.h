// The guest side of a LAVA job (docs/lava.md "How the data comes home"):
// after `nightjar run` has stored the job's runs in the guest's database,
// `nightjar lava report --db DB --cases FILE` (hidden; the job's test
// definition runs it) writes one LAVA test case per run to FILE, which the
// test definition hands to `lava-test-case NAME --result R --measurement V
// --units U` (so that the lab's own UI shows each cell's main figure), and
// prints two files as console blocks (harness/lava/samples_block.h):
//
//  - samples.csv: every sample of every run, as `nightjar export
//    --include-invalid` writes it (results/io/csv.h): the tidy CSV the host
//    imports through `nightjar import`'s code;
//  - runs.json: every run with what the CSV does not hold: status and
//    reason (runs without samples: skipped, failed), the guest's kernel
//    identity (uname -r, uname -v, /proc/cmdline, config hash) and testbox
//    (hostname, CPU model, CPUs, memory), the run context and warnings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "results/model/identity.h"
#include "results/store/run_store.h"

namespace nightjar {

/// One LAVA test case: the arguments of `lava-test-case`.
struct LavaCase {
  /// "JOB.VARIANT.KEY_VALUE.KEY_VALUE[.runN]" (the parameters whose value is
  /// not the workload's default, by name; the Nth run of a cell ends in
  /// .runN), every character outside
  /// [A-Za-z0-9._-] replaced by '_', at most 100 characters (LAVA's
  /// TestCase.name limit; a longer name is cut and ends with a hash).
  std::string name;
  std::string result;       ///< pass (complete), fail (failed, aborted, running) or skip
  std::string measurement;  ///< the main metric's summary mean, "" when none
  std::string units;        ///< its unit, blanks and '=' made '_' ("" when none)
};

/// The test cases of every run in `store`, in run order: the main metric of
/// a run is its workload's first declared metric (`nightjar list` shows it
/// first; for a workload nightjar does not know, the first metric by name),
/// summarised by its mean kind (Hmean for rates, Amean for times) over the
/// valid samples.
std::vector<LavaCase> lava_cases(const RunReader& store);

/// The cases as lines of FILE: "NAME RESULT [MEASUREMENT UNITS]", blank-separated.
std::string lava_cases_text(const std::vector<LavaCase>& cases);

/// A run as the guest reports it in runs.json.
struct GuestRun {
  std::int64_t run = 0;  ///< the guest's run id (the `run` column of samples.csv)
  std::string job, job_path, workload, variant, build, cell;
  std::map<std::string, std::string> params;  ///< name -> canonical text
  std::string status, reason, started_at;
  int iterations = 0, warmup = 0;
  std::size_t samples = 0;  ///< samples stored (valid and invalid)
  KernelIdentity kernel;
  Testbox testbox;
  std::map<std::string, std::string> context;
  std::vector<std::string> warnings;
};

/// runs.json of `store`: a JSON array of GuestRun objects, by run id.
std::string guest_runs_json(const RunReader& store);

/// Parses runs.json. Throws UsageError "SOURCE: runs.json: ..." naming what
/// is missing or of the wrong type.
std::vector<GuestRun> parse_guest_runs(const std::string& text, const std::string& source);

/// `nightjar lava report --db DB --cases FILE`: writes the cases to FILE and
/// prints the samples.csv and runs.json blocks on stdout. Throws
/// EnvironmentError when FILE cannot be written; a database without runs
/// gives empty files (the host then stores the planned runs as failed).
void lava_report(const std::string& db, const std::string& cases_path);

}  // namespace nightjar

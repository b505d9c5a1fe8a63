// What a bundle carries besides its README and job files, and how `nightjar
// import FILE.tar.gz` reads it back (docs/publish.md "Bundles"). The archive
// itself is results/io/bundle.h; the post body is harness/cli/cmd_bundle.cpp.
//
// Format 1 (nightjar before issue 36): samples.csv alone, a tidy CSV export
// (results/io/csv.h). Format 2 adds what `compare` reads besides samples, so
// that the receiver's comparison prints what the sender's does:
//
//   FORMAT              "2\n": the format; a bundle without it is format 1
//   samples.csv         as in format 1 (`export --include-invalid`)
//   runs.json           {"runs": [RUN...]}, one object per bundled run, by
//                       run id: "run" (the id in samples.csv), "job",
//                       "job_path", "workload", "variant", "build",
//                       "status", "reason", "iterations", "warmup",
//                       "started_at", "kernel" {release, version, cmdline,
//                       config_hash}, "testbox" {hostname, cpu_model, cpus,
//                       memory_bytes}, "context" {KEY: VALUE} (the run facts
//                       and fingerprint), "warnings" [TEXT], and
//                       "iteration_rows" [{iteration, status, reason,
//                       started_at, duration_sec, monitors {NAME: NUMBER},
//                       flags [TEXT]}]
//   kernel_config/HASH  the kernel config text of each config hash the runs
//                       name, when the sender's database holds it
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "results/io/bundle.h"
#include "results/io/csv.h"
#include "results/store/store.h"

namespace nightjar {

/// The bundle format this nightjar writes and the newest it reads.
inline constexpr int kBundleFormat = 2;

/// The members of format 2 that a bundle of the runs `run_ids` (ascending)
/// holds besides README.txt, jobs/ and samples.csv: FORMAT, runs.json and
/// one kernel_config/HASH per stored config of their kernels. Runs that
/// samples.csv holds no row of (no samples) are left out, as there.
std::vector<ArchiveMember> bundle_format_members(const ResultsStore& store,
                                                 const std::vector<std::int64_t>& run_ids);

/// A bundle read and checked, ready for import_samples_csv.
struct BundleContents {
  int format = 1;            ///< 1: samples.csv only; 2: with runs.json
  SamplesCsv samples;        ///< samples.csv, source "FILE:samples.csv"
  CsvImportOptions options;  ///< format 2: each run's origin (kernel with its
                             ///< config text, testbox, context, detail)
};

/// Reads the bundle `path` (one pass over the archive, at most
/// kMaxCsvImportBytes of samples.csv and as much again of the other members)
/// and checks every member before the database is opened. Throws UsageError
/// (exit 2) naming the file and the member: "FILE: holds no samples.csv";
/// "FILE: FORMAT: bundle format N is newer than this nightjar reads (1 to
/// 2)..."; "FILE:samples.csv:LINE: ..." (parse_samples_csv); "FILE:runs.json:
/// runs[I].FIELD: ..." for a missing field, a wrong type, an unknown status,
/// a run samples.csv does not hold or whose labels differ from its rows;
/// "FILE:kernel_config/HASH: ..." for a text whose hash is not HASH.
BundleContents read_bundle(const std::string& path, const WorkloadCatalog& declared,
                           const MachineFacts& machine);

}  // namespace nightjar

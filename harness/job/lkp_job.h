// LKP's job.yaml (the atomic job an LKP result directory was measured by)
// read into the record results/io/lkp.h imports. It lives here, not in
// results/io, because YAML nodes stay in harness/job (docs/architecture.md
// "Layers"); no node leaves this file.
#pragma once

#include <string>

#include "results/io/lkp.h"

namespace nightjar {

/// Reads LKP job file `path` (a regular file of at most 1 MiB, one YAML
/// document) into an LkpJob: testcase (else suite), testbox, nr_cpu,
/// commit, kernel, rootfs, kconfig, compiler, job_origin's stem, and as
/// parameters the scalar entries of the testcase's own mapping and the
/// top-level keys of kLkpRunKeys. Throws UsageError "PATH: ..." for a file
/// that is not YAML, not a mapping, or has no testcase/suite or testbox,
/// saying what to write.
LkpJob read_lkp_job(const std::string& path);

}  // namespace nightjar

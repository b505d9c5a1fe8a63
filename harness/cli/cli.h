// The `nightjar` command line: parse -> validated options -> dispatch, and the
// one place where errors become exit codes (results/model/exit_codes.h).
#pragma once

namespace nightjar {

/// Runs the nightjar CLI and returns the process exit code: 0 success,
/// 2 usage error, 4 environment/workload/database error, 130 interrupted
/// (the full table is in results/model/exit_codes.h and README.md).
int cli_main(int argc, char** argv);

}  // namespace nightjar

// LAVA job logs (docs/lava.md "How the data comes home"). `lava-run` writes
// its log on stderr and a LAVA server serves the same log
// (/api/v0.2/jobs/N/logs/): one YAML mapping per line, `{"dt": ..., "lvl":
// ..., "msg": ...}`, on the server as items of a list ("- {...}"). Values can
// be tagged, so the lines are read as YAML (yaml-cpp), not JSON. Records
// with `lvl: target` carry the device's console lines, `lvl: results` the
// test cases (`msg: {definition, case, result, measurement, units}`) and,
// last, the job's own result (`definition: lava, case: job`, with
// `error_type` and `error_msg` when it failed); `lvl: error` LAVA's errors.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// One `lvl: results` record.
struct LavaResult {
  std::string definition;  ///< "lava" for LAVA's own actions, else the test definition
  std::string name;        ///< the case
  std::string result;      ///< pass, fail, skip, unknown
  std::string measurement, units;
  std::string error_type, error_msg;  ///< of a failed `lava` case
};

/// What a LAVA log says.
struct LavaLog {
  std::string console;              ///< the `target` lines, each ending in "\n"
  std::vector<LavaResult> results;  ///< every results record, in order
  std::vector<std::string> errors;  ///< every `lvl: error` message, in order
  std::optional<LavaResult> job;    ///< the `lava` definition's `job` case, when the log has it
  std::size_t records = 0;          ///< lines read as records
  std::size_t other_lines = 0;      ///< non-empty lines that are not records
};

/// Reads a log (lava-run's stderr or a server's log file). Never throws:
/// lines that are not records are counted in other_lines.
LavaLog parse_lava_log(std::string_view text);

/// Whether the job ended well: its `job` case passed. A log without one
/// (a dispatcher killed mid-job) did not.
bool lava_job_passed(const LavaLog& log);

/// LAVA's error text of a job that did not pass: the `job` case's
/// "error_type: error_msg", else the last `lvl: error` message, else what is
/// missing ("the log ends before LAVA's job result").
std::string lava_job_error(const LavaLog& log);

}  // namespace nightjar

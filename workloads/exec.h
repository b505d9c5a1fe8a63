// The `exec` workload and the child-process runner it is built on.
//
// `exec` runs a user's command once per iteration (an argv list, no shell
// unless the job sets `shell: on`), with a timeout, and parses its metrics
// from the output by declared rules: `key=value` lines (default), a regex
// with one capture per metric, or one JSON object. The metric names
// `wall_time` and `cpu_time` are measured by exec itself (wall_time is the
// default when the job declares none). It is how users measure
// anything that is not a built-in workload, and how nightjar's tests plant
// regressions for `nightjar bisect` (docs/bisect.md).
//
// run_command() is the one place nightjar starts an external program and
// waits for it (the exec workload, bisect's build command and git): its own
// process group, PR_SET_PDEATHSIG, stdin from /dev/null, output captured,
// a timeout, and prompt termination of the whole group on SIGINT/SIGTERM.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "results/model/metric.h"
#include "results/model/params.h"
#include "workloads/workload.h"

namespace nightjar {

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

/// What to run and how.
struct CommandSpec {
  std::vector<std::string> argv;           ///< argv[0] is looked up in PATH unless it contains '/'
  std::string cwd;                         ///< working directory; "" = nightjar's own
  std::map<std::string, std::string> env;  ///< added to (or replacing in) nightjar's environment
  double timeout_sec = 0;                  ///< > 0: the group is killed after this many seconds
  bool merge_stderr = false;  ///< true: stderr goes into `out` too (interleaved as written)
  /// Bytes kept of each stream; beyond that the output is read and dropped
  /// (the result says `truncated`).
  std::size_t capture_limit = 16u << 20;
  /// Polled every few milliseconds; when it returns true the group gets
  /// SIGTERM, then SIGKILL after `kill_grace_sec`, and the result says
  /// `interrupted`. Default: nightjar's SIGINT/SIGTERM flag (harness/signals.h).
  std::function<bool()> interrupted;
  double kill_grace_sec = 1.0;
};

/// How a command ended and what it wrote.
struct CommandResult {
  bool started = false;      ///< false: fork/chdir/exec failed (see `error`)
  std::string error;         ///< why it did not start ("cannot run 'x': No such file or directory")
  int exit_code = -1;        ///< exit status when it exited normally, else -1
  int signal = 0;            ///< the signal that killed it, else 0
  bool timed_out = false;    ///< killed because timeout_sec passed
  bool interrupted = false;  ///< killed because `interrupted()` became true
  bool truncated = false;    ///< a stream exceeded capture_limit
  std::string out, err;      ///< captured stdout (and stderr when merged) / stderr
  double wall_sec = 0;       ///< from fork to reaping, seconds
  double cpu_sec = 0;        ///< user + system CPU of the child and the descendants it waited for

  /// Exited with status 0.
  bool ok() const { return started && exit_code == 0 && !timed_out && !interrupted; }
  /// "exited with status 2", "killed by SIGSEGV", "timed out after 5 s",
  /// "interrupted", or `error`.
  std::string describe(double timeout_sec = 0) const;
  /// The last lines of stderr and stdout for a failure reason:
  /// "stderr: ...; stdout: ..." (each at most `max_lines` lines / `max_chars`).
  std::string tail(std::size_t max_lines = 8, std::size_t max_chars = 600) const;
};

/// Runs `spec` to completion (or timeout, or interruption) and returns how it
/// ended. The child runs in a new process group with PR_SET_PDEATHSIG(SIGKILL),
/// default signal handling and stdin from /dev/null; whatever is left of its
/// group when it ends (background processes) is SIGKILLed, so nothing started
/// here outlives the call. Never throws for the command's own failures; throws
/// EnvironmentError only when pipes cannot be created.
CommandResult run_command(const CommandSpec& spec);

/// The last `max_lines` lines of `text` (at most `max_chars` characters,
/// trailing blank lines dropped), joined with " | " for a one-line reason.
std::string output_tail(const std::string& text, std::size_t max_lines = 8,
                        std::size_t max_chars = 600);

/// Splits a command line into words without a shell: blanks separate words;
/// '…' keeps everything literally; "…" keeps everything but \" \\ \$ \`;
/// a backslash outside quotes escapes the next character. No expansion of
/// variables, globs or ~. A text starting with '[' is read as a JSON array of
/// strings instead (`["./bench", "--size", "1M"]`). Throws ParamError (field
/// `field`) for unbalanced quotes, a trailing backslash, a bad JSON array or
/// an empty command.
std::vector<std::string> split_command_line(const std::string& text,
                                            const std::string& field = "command");

// ---------------------------------------------------------------------------
// Metric rules
// ---------------------------------------------------------------------------

/// How metrics are found in the output (`parse:`).
enum class ParseRule {
  key_value,  ///< `kv`: lines `NAME=NUMBER` (blanks allowed around '='); the last one counts
  regex,      ///< `regex`: one ECMAScript regex, one capture per metric in declared order;
              ///< the last match in the output counts
  json,       ///< `json`: one JSON object (the whole output, else its last line starting
              ///< with '{'); a metric is a top-level key or a dotted path `a.b`
};

/// Parses `metrics:`: declarations `NAME[:UNIT[:DIRECTION[:MEAN]]]` separated
/// by blanks or ';'. DIRECTION is `higher` (default) or `lower`; MEAN is
/// `hmean`, `amean` or `gmean` (default: hmean for higher, amean for lower).
/// Names: letters, digits, '_', '.', '-', '/'; unique. `wall_time` and
/// `cpu_time` are measured by exec itself (seconds, lower is better, Amean)
/// instead of parsed. Throws ParamError (field "metrics").
std::vector<MetricDescriptor> parse_exec_metrics(const std::string& text);

/// Extracts every metric of `declared` but wall_time/cpu_time from `output`
/// by `rule` (`regex` is the
/// pattern for ParseRule::regex; its captures are those metrics, in order).
/// Returns name -> value for the metrics found
/// and, in `missing`, a one-line explanation per metric not found or not a
/// finite number. Throws ParamError (field "regex") for a pattern that does not
/// compile or has a capture count different from the number of metrics.
std::map<std::string, double> extract_metrics(const std::string& output,
                                              const std::vector<MetricDescriptor>& declared,
                                              ParseRule rule, const std::string& regex,
                                              std::vector<std::string>& missing);

}  // namespace nightjar

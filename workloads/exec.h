// The `exec` workload: a user's command as a workload.
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
// The command runs through run_command() of the process toolkit
// (workloads/sys/process.h, where every program nightjar starts goes): its
// own process group, PR_SET_PDEATHSIG, stdin from /dev/null, output
// captured, a timeout, and prompt termination of the whole group on
// SIGINT/SIGTERM. This file only turns its output into metrics.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "results/model/metric.h"
#include "results/model/params.h"
#include "workloads/workload.h"

namespace nightjar {

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

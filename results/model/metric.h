// Metric descriptors: the unit, direction and summary mean of every figure a
// workload measures. Shared by workloads, the results store, statistics and
// renderers so that "higher is better" is decided in exactly one place.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// Which way a metric improves. Decides the summary mean and the sign of
/// %change (positive = better, as in mmtests' compare-kernels.sh).
enum class Direction { higher_is_better, lower_is_better };

/// The mean that summarises a metric's samples: harmonic for rates measured
/// over a fixed amount of work (throughput, faults/sec), arithmetic for times,
/// geometric for ratios (see docs/reference.md "Which mean").
enum class MeanKind { harmonic, arithmetic, geometric };

/// One named figure a workload reports per iteration. Workloads write it
/// with designated initializers, fields in this order (`{.name =
/// "elapsed", .unit = "s", .direction = Direction::lower_is_better, .mean =
/// MeanKind::arithmetic, .doc = "..."}`); `name` and `doc` have no default,
/// so -Wmissing-field-initializers reports a declaration without them.
struct MetricDescriptor {
  std::string name;       ///< e.g. "faults_per_sec"
  std::string unit = {};  ///< e.g. "faults/sec", "Mbps", "s"
  Direction direction = Direction::higher_is_better;
  MeanKind mean = MeanKind::harmonic;
  std::string doc;  ///< one line for `nightjar list`
  /// A value of 0 is a measurement, though the unit is a time: a CPU time
  /// sampled in clock ticks (getrusage) is 0 for a short pass.
  /// impossible_value() then refuses only negative values. Not stored: the
  /// workload's declaration says it (docs/compare.md "Invalid samples").
  bool zero_is_measured = false;
};

/// "higher" / "lower": the spelling stored in the database and printed by `list`.
std::string_view to_string(Direction d);
/// "hmean" / "amean" / "gmean".
std::string_view to_string(MeanKind m);
/// "Hmean" / "Amean" / "Gmean": the mean's name in tables (mmtests' spelling).
const char* mean_label(MeanKind m);
/// Inverse of to_string(Direction); throws std::invalid_argument on anything else.
Direction direction_from_string(std::string_view s);
/// Inverse of to_string(MeanKind); throws std::invalid_argument on anything else.
MeanKind mean_kind_from_string(std::string_view s);

/// Why `value` cannot be a measurement of metric `m`, or nullopt when it can
/// (docs/compare.md "Invalid samples"): a value that is not finite (NaN,
/// infinity) never is; a value <= 0 of a metric summarised by its harmonic
/// or geometric mean (a rate, a ratio: the mean of a set holding it is
/// undefined) or whose unit is a time (s, ms, us, µs, ns, min: nothing takes
/// no time; unless m.zero_is_measured, when only a negative time is) is not
/// either. The reason names the metric, its value and unit,
/// and why ("throughput = 0 ops/s: a rate (Hmean) must be positive"). Other
/// values (a count or a percentage of 0) are measurements.
std::optional<std::string> impossible_value(const MetricDescriptor& m, double value);

/// True when `name` is a valid metric name: letters, digits, '_', '.', '-', '/'.
bool valid_metric_name(const std::string& name);

/// Parses metric declarations `NAME[:UNIT[:DIRECTION[:MEAN]]]` separated by
/// blanks or ';' (a job's `metrics:`, gbench's counter declarations).
/// DIRECTION is `higher` (default) or `lower`; MEAN is `hmean`, `amean` or
/// `gmean` (default: hmean for higher, amean for lower). Names as
/// valid_metric_name; unique. A name of `measured` (metrics the workload
/// measures itself, such as exec's wall_time) takes that descriptor and may
/// only repeat its unit, direction and mean. Throws ParamError (field
/// "metrics") naming the declaration and what to write.
std::vector<MetricDescriptor> parse_metric_declarations(
    const std::string& text, const std::vector<MetricDescriptor>& measured = {});

}  // namespace nightjar

// The iteration record: what one measured iteration of a cell produced, as a
// workload returns it and the store commits it (results/store/store.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nightjar {

/// What one measured iteration produced.
struct IterationResult {
  /// metric name -> value in the metric's declared unit. Every declared
  /// metric should be present; a missing one is simply not stored.
  std::map<std::string, double> metrics;
  /// Workload-level counters stored beside the monitor deltas (for example
  /// pft's measured minor faults): name -> value.
  std::map<std::string, double> counters;
  /// Warnings attached to this sample ("minflt differs from pages by 23%: THP?").
  std::vector<std::string> flags;
  /// Set when the iteration failed: the sample is stored as failed with this
  /// reason and no metric values.
  std::optional<std::string> failure;
  /// Set by the workload when the iteration ran to the end but did not
  /// measure what it is meant to (a client that moved 0 bytes, an eviction
  /// that did not reach swap; docs/workloads.md "Invalid samples"): the
  /// iteration is stored with status `invalid` and this reason, and every
  /// one of its values is stored marked invalid with it. Consumers leave
  /// invalid values out (docs/compare.md "Invalid samples").
  std::optional<std::string> invalid;
  /// Single values that cannot be measurements, metric name -> reason ("a
  /// rate of 0 ops/s is not a measurement"): each is stored marked invalid,
  /// the iteration's other values stay valid. The runner fills it with
  /// impossible_value() (results/model/metric.h) for every metric; a
  /// workload may add its own. A metric of `metrics` only: a name absent
  /// there is ignored.
  std::map<std::string, std::string> invalid_metrics;
};

}  // namespace nightjar

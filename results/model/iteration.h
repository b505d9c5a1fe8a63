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
};

}  // namespace nightjar

// The profile record of the perf-profile monitor (docs/monitors.md
// "perf-profile"): the call stacks sampled during one measured iteration,
// folded ("root;...;leaf" -> samples, the format of Brendan Gregg's
// stackcollapse and flamegraph.pl), and the per-symbol counts that
// `compare --why` tests (results/compare/why.h). Pure: no I/O; the sampling
// is workloads/sys/perf_profile.h, the storage results/store/.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

namespace nightjar {

/// The folded call stacks of one measured iteration.
struct IterationProfile {
  /// The sampled event: "cycles" (PERF_TYPE_HARDWARE) or "cpu-clock"
  /// (PERF_TYPE_SOFTWARE, where no PMU offers cycles).
  std::string event;
  double frequency_hz = 0;  ///< the sampling frequency asked for (samples/s per thread)
  std::uint64_t lost = 0;   ///< samples the kernel dropped (PERF_RECORD_LOST), not in `stacks`
  /// Folded stack -> samples: frames root first, separated by ';' (see
  /// fold_frames); every count > 0.
  std::map<std::string, std::uint64_t> stacks;

  /// The samples in `stacks` (the sum of the counts).
  std::uint64_t samples() const;
};

/// Folds one call chain given leaf first (as perf_event_open's
/// PERF_SAMPLE_CALLCHAIN lists it) into "root;...;leaf". A ';' inside a
/// frame becomes ':' and an empty frame "[unknown]", so that splitting at
/// ';' gives the frames back.
std::string fold_frames(std::span<const std::string> leaf_first);

/// The folded text of `profile`: one "stack count" line per stack, in the
/// stacks' order (flamegraph.pl's input).
std::string folded_text(const IterationProfile& profile);

/// Per-symbol sample counts of folded stacks: `self` counts the samples
/// whose leaf is the symbol, `children` those whose stack holds the symbol
/// anywhere (inclusive: once per stack, also when it recurses). Symbols are
/// frame names as stored.
struct SymbolCounts {
  std::map<std::string, std::uint64_t> self, children;
  std::uint64_t samples = 0;  ///< all samples of the stacks
};

/// The SymbolCounts of `stacks` (IterationProfile::stacks).
SymbolCounts symbol_counts(const std::map<std::string, std::uint64_t>& stacks);

}  // namespace nightjar

// What else differed between two sides of a comparison (docs/environment.md):
// the fingerprint facts of each side's runs, the named list of facts that are
// compared, which differences are intended (the variant's knobs; the kernel
// when the sides are kernels) and which are confounders, and the kernel
// config diff in the manner of the kernel's scripts/diffconfig.
//
// Read by `nightjar env --diff`, and by compare_selectors for the
// environment section and the confounder warnings of every compare/check
// layout. Records only: results/render/environment.h prints them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "results/compare/selector.h"
#include "results/store/run_store.h"

namespace nightjar {

/// The facts compared between sides, in docs/environment.md's order: exact
/// keys ("thp.enabled") and prefixes ending in ".*" ("sysctl.*": every key
/// that starts "sysctl."). Facts that differ between any two runs by nature
/// (load.avg1, min_effect*, job.set, vm.boot_seconds, import.*, lava.*) are
/// not in it and never listed; nor is job.hash (sides often come from
/// different job files, and what of a job changes the numbers is its cells'
/// parameters, which cells are matched on).
const std::vector<std::string>& environment_fact_names();

/// True when `key` is named by environment_fact_names().
bool is_environment_fact(std::string_view key);

/// The file a fact is read from when a variant knob can set it
/// ("thp.enabled" -> "/sys/kernel/mm/transparent_hugepage/enabled",
/// "sysctl.vm.swappiness" -> "/proc/sys/vm/swappiness"), the sources
/// workloads/sys/probe.h and workloads/sys/fingerprint.h document; "" for a
/// fact no knob file sets. A fact whose file is a knob of either side
/// ("knob.<file>" among its facts) differs by intent.
std::string fact_knob_path(std::string_view key);

/// One side's fingerprint: fact key -> the distinct values among the side's
/// runs (one value when the runs agree). Only environment facts.
using SideFingerprint = std::map<std::string, std::set<std::string>>;

/// The fingerprint of the runs `run_ids` (RunReader::run_fingerprint of each,
/// kept to is_environment_fact keys). Empty for no runs.
SideFingerprint side_fingerprint(const RunReader& store, const std::vector<std::int64_t>& run_ids);

/// One fact that differs between two sides.
struct FactDifference {
  std::string key;
  std::string base, now;  ///< the side's values joined " | "; "(absent)" when no run has it
  bool intended = false;  ///< a knob of a side, or the kernel of sides that are kernels
  bool accepted = false;  ///< named by --accept-env: listed, but no warning and no exit code
  /// Neither intended nor accepted: it warns, and fails `check --strict-env`.
  bool confounder() const { return !intended && !accepted; }
};

/// One kernel config option that differs, as scripts/diffconfig sees it: a
/// line "CONFIG_X=v" has value v, "# CONFIG_X is not set" has value "n".
struct KconfigChange {
  std::string option;         ///< "CONFIG_PREEMPT_RT"
  std::string before, after;  ///< "" on the side that lacks the option
};

/// The differing options of two kernel configs, each group sorted by name.
struct KconfigDiff {
  std::vector<KconfigChange> removed;  ///< only in the first config
  std::vector<KconfigChange> added;    ///< only in the second
  std::vector<KconfigChange> changed;  ///< in both, with other values
  std::size_t count() const { return removed.size() + added.size() + changed.size(); }
};

/// The options of a kernel .config text: "CONFIG_X=v" -> v (quotes kept),
/// "# CONFIG_X is not set" -> "n"; other lines (comments, blanks) are
/// skipped. A later line for the same option wins, as in Kconfig.
std::map<std::string, std::string> parse_kconfig(std::string_view text);

/// diffconfig's comparison of two config texts (`before` the BASE side's).
KconfigDiff diff_kconfig(std::string_view before, std::string_view after);

/// What differs between BASE and one NEW side.
struct EnvironmentDiff {
  std::string base_name, now_name;    ///< the selectors as written
  std::vector<FactDifference> facts;  ///< differing facts, by key
  /// Facts (by key) that one side has no value of (absent or ""): runs of
  /// an older nightjar or imported ones. Unknown, so not compared; the
  /// section counts them when it is printed.
  std::vector<std::string> unrecorded;
  std::optional<KconfigDiff> kconfig;  ///< when each side has one config hash, they differ
                                       ///< and both texts are stored
  /// Why a differing config hash has no kconfig diff ("the config of
  /// kernel.config_hash 1a2b... is not stored"); "" otherwise.
  std::string kconfig_note;

  bool empty() const { return facts.empty(); }
  /// The keys of the confounders (FactDifference::confounder), by key.
  std::vector<std::string> confounders() const;
};

/// How differences are classified.
struct EnvironmentPolicy {
  /// The sides are kernels (a side's selector names kernel=): the kernel.*
  /// facts of the kernel's build (release, version, config_hash, compiler)
  /// differ by intent.
  bool kernels_intended = false;
  std::set<std::string> accepted;  ///< --accept-env KEY (exact fact keys)
};

/// The differing environment facts of two fingerprints, classified by
/// `policy` (docs/environment.md "Intended and confounders"). No kconfig.
EnvironmentDiff diff_fingerprints(const SideFingerprint& base, const SideFingerprint& now,
                                  const EnvironmentPolicy& policy);

/// diff_fingerprints of two loaded sides' runs, with the kconfig diff read
/// from the store (RunReader::kernel_config) when kernel.config_hash
/// differs; kernels_intended from the selectors, accepted from `accepted`.
EnvironmentDiff diff_sides(const RunReader& store, const LoadedSide& base, const LoadedSide& now,
                           const std::set<std::string>& accepted);

/// The warning of a diff with confounders, for Comparison::warnings:
/// "environment: b differs from a in thp.enabled (always -> never), not by
/// intent: a confounder; `--accept-env KEY` if known (docs/environment.md)".
/// nullopt when it has none.
std::optional<std::string> confounder_warning(const EnvironmentDiff& diff);

}  // namespace nightjar

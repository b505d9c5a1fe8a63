// The environment diff as text (docs/environment.md): the whole diff of
// `nightjar env --diff`, and the environment section of compare's layouts.
// Reads results/compare/environment.h records only.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "results/compare/environment.h"

namespace nightjar {

/// One kernel config change as scripts/diffconfig prints it, with the
/// CONFIG_ prefix kept: "-CONFIG_X n" (removed: only in BASE), "+CONFIG_Y y"
/// (added), "CONFIG_Z n -> y" (changed).
std::string kconfig_line(const KconfigChange& change, char kind);

/// Every line of `diff` as kconfig_line prints it, in diffconfig's order:
/// removed, changed, added (each group sorted by option name).
std::vector<std::string> kconfig_lines(const KconfigDiff& diff);

/// "confounder", "intended" or "accepted" (FactDifference's flags).
const char* fact_kind(const FactDifference& fact);

/// "BASE a vs NEW b: 3 facts differ (1 intended, 2 confounders)", with
/// ", 1 accepted" and "; N more recorded on one side only, not compared"
/// when there are such facts.
std::string environment_header(const EnvironmentDiff& diff);

/// "42 options differ (3 removed, 30 added, 9 changed)".
std::string kconfig_count_text(const KconfigDiff& diff);

/// The whole diff of `env --diff`: a header line naming both sides and the
/// counts, one line per differing fact ("  confounder  thp.enabled  always ->
/// never"; kinds confounder, intended, accepted), then, when the configs
/// differ, "kernel config: <kconfig_count_text>" and the groups removed,
/// changed and added (diffconfig's order), each "name (count):" and every
/// line; or the diff's kconfig_note. "no environment facts differ between A
/// and B\n" when nothing differs.
std::string render_environment_diff(const EnvironmentDiff& diff);

/// The environment section of compare's text layouts: "" when every diff is
/// empty; else "environment:" and, per NEW side with differences, the facts
/// as render_environment_diff does, then "kernel config: <count text>:" and
/// the options by group ("changed (9): CONFIG_A y -> n, CONFIG_B 1 -> 0,
/// ..." then added, then removed: a changed option is a choice, most added
/// and removed ones follow from it), on lines of at most 100 columns, at
/// most `max_options` in all and then "... N more: `nightjar env --diff A
/// B` lists every one".
std::string render_environment_section(const std::vector<EnvironmentDiff>& diffs,
                                       std::size_t max_options = 100);

}  // namespace nightjar

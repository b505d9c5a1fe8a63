// The environment diff as text: results/render/environment.h.
#include "results/render/environment.h"

#include <fmt/format.h>

#include <algorithm>

namespace nightjar {

const char* fact_kind(const FactDifference& f) {
  return f.intended ? "intended" : f.accepted ? "accepted" : "confounder";
}

std::string environment_header(const EnvironmentDiff& d) {
  std::size_t intended = 0, accepted = 0;
  for (const auto& f : d.facts) {
    intended += f.intended;
    accepted += !f.intended && f.accepted;
  }
  const std::size_t confounders = d.facts.size() - intended - accepted;
  std::string counts = fmt::format("{} intended, {} confounder{}", intended, confounders,
                                   confounders == 1 ? "" : "s");
  if (accepted) counts += fmt::format(", {} accepted", accepted);
  if (!d.unrecorded.empty())
    counts += fmt::format("; {} more recorded on one side only, not compared", d.unrecorded.size());
  return fmt::format("BASE {} vs NEW {}: {} fact{} differ{} ({})", d.base_name, d.now_name,
                     d.facts.size(), d.facts.size() == 1 ? "" : "s", d.facts.size() == 1 ? "s" : "",
                     counts);
}

namespace {

std::string fact_lines(const EnvironmentDiff& d, const std::string& indent) {
  std::size_t key_w = 0;
  for (const auto& f : d.facts) key_w = std::max(key_w, f.key.size());
  std::string out;
  for (const auto& f : d.facts)
    out += fmt::format("{}{:<10}  {:<{}}  {} -> {}\n", indent, fact_kind(f), f.key, key_w, f.base,
                       f.now);
  return out;
}

}  // namespace

std::vector<std::string> kconfig_lines(const KconfigDiff& k) {
  std::vector<std::string> out;
  for (const auto& c : k.removed) out.push_back(kconfig_line(c, '-'));
  for (const auto& c : k.changed) out.push_back(kconfig_line(c, ' '));
  for (const auto& c : k.added) out.push_back(kconfig_line(c, '+'));
  return out;
}

std::string kconfig_line(const KconfigChange& c, char kind) {
  if (kind == '-') return fmt::format("-{} {}", c.option, c.before);
  if (kind == '+') return fmt::format("+{} {}", c.option, c.after);
  return fmt::format("{} {} -> {}", c.option, c.before, c.after);
}

std::string kconfig_count_text(const KconfigDiff& k) {
  return fmt::format("{} option{} differ{} ({} removed, {} added, {} changed)", k.count(),
                     k.count() == 1 ? "" : "s", k.count() == 1 ? "s" : "", k.removed.size(),
                     k.added.size(), k.changed.size());
}

std::string render_environment_diff(const EnvironmentDiff& d) {
  if (d.empty())
    return fmt::format("no environment facts differ between {} and {}\n", d.base_name, d.now_name);
  std::string out = environment_header(d) + "\n" + fact_lines(d, "  ");
  if (d.kconfig) {
    out += "kernel config: " + kconfig_count_text(*d.kconfig) + "\n";
    auto group = [&](const char* name, const std::vector<KconfigChange>& changes, char kind) {
      if (changes.empty()) return;
      out += fmt::format("{} ({}):\n", name, changes.size());
      for (const auto& c : changes) out += "  " + kconfig_line(c, kind) + "\n";
    };
    group("removed", d.kconfig->removed, '-');
    group("changed", d.kconfig->changed, ' ');
    group("added", d.kconfig->added, '+');
  } else if (!d.kconfig_note.empty()) {
    out += "kernel config: " + d.kconfig_note + "\n";
  }
  return out;
}

std::string render_environment_section(const std::vector<EnvironmentDiff>& diffs,
                                       std::size_t max_options) {
  std::string out;
  for (const auto& d : diffs) {
    if (d.empty()) continue;
    out += "  " + environment_header(d) + "\n" + fact_lines(d, "    ");
    if (d.kconfig && d.kconfig->count() > 0) {
      // Every group on wrapped lines, one option after another, so that a
      // kernel comparison names its options (the 47 between Debian's
      // generic and PREEMPT_RT kernels fit in a dozen lines); at most
      // `max_options`, the changed ones first: a changed option is a choice
      // (CONFIG_PREEMPT_VOLUNTARY y -> n), most removed and added ones
      // follow from one.
      out += "    kernel config: " + kconfig_count_text(*d.kconfig) + ":\n";
      std::size_t left = max_options;
      auto group = [&](const char* name, const std::vector<KconfigChange>& changes, char kind) {
        if (changes.empty() || left == 0) return;
        std::string line = fmt::format("      {} ({}):", name, changes.size());
        std::size_t shown = 0;
        for (const auto& c : changes) {
          if (left == 0) break;
          const std::string item =
              " " + kconfig_line(c, kind) + (shown + 1 < changes.size() ? "," : "");
          if (line.size() + item.size() > 100) {
            out += line + "\n";
            line = "        " + item.substr(1);
          } else {
            line += item;
          }
          ++shown;
          --left;
        }
        out += line + "\n";
      };
      group("changed", d.kconfig->changed, ' ');
      group("added", d.kconfig->added, '+');
      group("removed", d.kconfig->removed, '-');
      if (left == 0 && max_options < d.kconfig->count())
        out += fmt::format("      ... {} more: `nightjar env --diff {} {}` lists every one\n",
                           d.kconfig->count() - max_options, d.base_name, d.now_name);
    } else if (!d.kconfig_note.empty()) {
      out += "    kernel config: " + d.kconfig_note + "\n";
    }
  }
  return out.empty() ? out : "\nenvironment:\n" + out;
}

}  // namespace nightjar

// Parsers of /proc/meminfo, interrupts, softirqs, schedstat, net/snmp,
// net/netstat and memcg memory.stat for the extra monitors.
#include "workloads/sys/proc_counters.h"

#include <charconv>
#include <vector>

#include "results/model/text.h"

namespace nightjar {
namespace {

// The lines of `text`, without their '\n'.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// The blank-separated words of `line`.
std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <class T>
bool number(std::string_view s, T& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  for (auto p : prefixes)
    if (s.starts_with(p)) return true;
  return false;
}

}  // namespace

void parse_meminfo(std::string_view text, ProcValues& out) {
  for (auto line : lines_of(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(trim(line.substr(0, colon)));
    for (char& c : name)
      if (c == '(' || c == ')') c = '_';
    const auto w = words_of(line.substr(colon + 1));
    std::uint64_t v = 0;
    if (w.empty() || !number(w[0], v)) continue;
    out.levels["meminfo." + name] = static_cast<double>(v);
  }
}

void parse_per_cpu_table(std::string_view text, std::string_view prefix, ProcValues& out) {
  const auto lines = lines_of(text);
  if (lines.empty()) return;
  const std::size_t cpus = words_of(lines[0]).size();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto w = words_of(lines[i]);
    if (w.size() < 2 || !w[0].ends_with(':')) continue;
    std::string_view label = w[0].substr(0, w[0].size() - 1);
    std::uint64_t sum = 0, v = 0;
    std::size_t j = 1;
    for (; j < w.size() && j <= cpus && number(w[j], v); ++j) sum += v;
    if (j == 1) continue;
    std::string name = std::string(prefix) + "." + std::string(label);
    unsigned irq = 0;
    if (number(label, irq) && j < w.size()) name += "-" + std::string(w.back());
    out.counters[name] += sum;
  }
}

void parse_schedstat(std::string_view text, ProcValues& out) {
  static const char* const kFields[] = {"yld_count",    "legacy",     "sched_count",
                                        "sched_goidle", "ttwu_count", "ttwu_local",
                                        "run_ns",       "wait_ns",    "timeslices"};
  for (auto line : lines_of(text)) {
    const auto w = words_of(line);
    if (w.empty() || !w[0].starts_with("cpu")) continue;
    for (std::size_t f = 0; f < std::size(kFields) && f + 1 < w.size(); ++f) {
      std::uint64_t v = 0;
      if (f == 1 || !number(w[f + 1], v)) continue;  // field 2 is always 0 (legacy)
      out.counters[std::string("schedstat.") + kFields[f]] += v;
    }
  }
}

void parse_snmp(std::string_view text, std::initializer_list<std::string_view> sections,
                ProcValues& out) {
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const auto names = words_of(lines[i]), values = words_of(lines[i + 1]);
    if (names.empty() || values.size() != names.size() || names[0] != values[0]) continue;
    const std::string_view section = names[0].substr(0, names[0].size() - 1);
    bool wanted = false;
    for (auto s : sections) wanted = wanted || s == section;
    if (!wanted || !names[0].ends_with(':')) continue;
    std::string prefix(section);
    for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t j = 1; j < names.size(); ++j) {
      const std::string_view n = names[j];
      if (section == "Tcp" &&
          (n == "RtoAlgorithm" || n == "RtoMin" || n == "RtoMax" || n == "MaxConn"))
        continue;
      std::uint64_t v = 0;
      if (!number(values[j], v)) continue;
      const std::string key = prefix + "." + std::string(n);
      if (section == "Tcp" && n == "CurrEstab")
        out.levels[key] = static_cast<double>(v);
      else
        out.counters[key] = v;
    }
    ++i;  // the value line
  }
}

void parse_memory_stat(const std::map<std::string, std::uint64_t>& stat, std::string_view prefix,
                       ProcValues& out) {
  for (const auto& [key, v] : stat) {
    const std::string name = std::string(prefix) + key;
    if (starts_with_any(key, {"pg", "thp_", "workingset_", "total_pg", "total_workingset_",
                              "total_thp_", "zswpin", "zswpout", "total_zswp"}))
      out.counters[name] = v;
    else
      out.levels[name] = static_cast<double>(v);
  }
}

}  // namespace nightjar

#include "results/model/metric.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "results/model/params.h"

#include <stdexcept>

namespace nightjar {

std::string_view to_string(Direction d) {
  return d == Direction::higher_is_better ? "higher" : "lower";
}

std::string_view to_string(MeanKind m) {
  switch (m) {
    case MeanKind::harmonic:
      return "hmean";
    case MeanKind::arithmetic:
      return "amean";
    case MeanKind::geometric:
      return "gmean";
  }
  return "amean";
}

Direction direction_from_string(std::string_view s) {
  if (s == "higher") return Direction::higher_is_better;
  if (s == "lower") return Direction::lower_is_better;
  throw std::invalid_argument("direction must be 'higher' or 'lower', not '" + std::string(s) +
                              "'");
}

const char* mean_label(MeanKind m) {
  switch (m) {
    case MeanKind::harmonic:
      return "Hmean";
    case MeanKind::arithmetic:
      return "Amean";
    case MeanKind::geometric:
      return "Gmean";
  }
  return "Amean";
}

MeanKind mean_kind_from_string(std::string_view s) {
  if (s == "hmean") return MeanKind::harmonic;
  if (s == "amean") return MeanKind::arithmetic;
  if (s == "gmean") return MeanKind::geometric;
  throw std::invalid_argument("mean must be hmean, amean or gmean, not '" + std::string(s) + "'");
}

bool valid_metric_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '/';
  });
}

namespace {
// The units of a time (docs/compare.md "Invalid samples").
bool time_unit(std::string_view unit) {
  static const char* const kUnits[] = {"s", "sec", "ms", "us", "\u00b5s", "ns", "min", "h"};
  return std::find(std::begin(kUnits), std::end(kUnits), unit) != std::end(kUnits);
}
}  // namespace

std::optional<std::string> impossible_value(const MetricDescriptor& m, double value) {
  const std::string unit = m.unit.empty() ? "" : " " + m.unit;
  if (!std::isfinite(value))
    return fmt::format("{} = {}{}: not a finite number", m.name, value, unit);
  if (value > 0) return std::nullopt;
  if (m.mean == MeanKind::harmonic || m.mean == MeanKind::geometric)
    return fmt::format("{} = {:g}{}: a {} ({}) must be positive", m.name, value, unit,
                       m.mean == MeanKind::harmonic ? "rate" : "ratio", mean_label(m.mean));
  if (time_unit(m.unit) && (value < 0 || !m.zero_is_measured))
    return fmt::format("{} = {:g}{}: a time must be {}", m.name, value, unit,
                       m.zero_is_measured ? "0 or more" : "positive");
  return std::nullopt;
}

std::vector<MetricDescriptor> parse_metric_declarations(
    const std::string& text, const std::vector<MetricDescriptor>& measured) {
  std::vector<MetricDescriptor> out;
  std::set<std::string> names;
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ';', ' ');
  std::stringstream in(spaced);
  std::string decl;
  const std::string example =
      "write NAME[:UNIT[:higher|lower[:hmean|amean|gmean]]], such as "
      "`metrics: \"throughput:ops/s:higher latency:ms:lower\"`";
  while (in >> decl) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (true) {
      std::size_t colon = decl.find(':', start);
      parts.push_back(
          decl.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (parts.size() > 4)
      throw ParamError{"metrics", fmt::format("'{}' has too many ':' fields; {}", decl, example)};
    MetricDescriptor d;
    d.name = parts[0];
    if (!valid_metric_name(d.name))
      throw ParamError{"metrics", fmt::format("'{}': a metric name is letters, digits, '_', '.', "
                                              "'-' or '/'; {}",
                                              decl, example)};
    if (!names.insert(d.name).second)
      throw ParamError{"metrics", fmt::format("'{}' is declared twice; keep one", d.name)};
    if (auto b = std::find_if(measured.begin(), measured.end(),
                              [&](const MetricDescriptor& m) { return m.name == d.name; });
        b != measured.end()) {
      // Measured by the workload itself: only its own unit, direction and mean.
      if ((parts.size() > 1 && !parts[1].empty() && parts[1] != b->unit) ||
          (parts.size() > 2 && !parts[2].empty() && parts[2] != to_string(b->direction)) ||
          (parts.size() > 3 && !parts[3].empty() && parts[3] != to_string(b->mean)))
        throw ParamError{"metrics", fmt::format("'{}' is measured by the workload itself in {}, "
                                                "{} is better, {}; write just `{}`",
                                                decl, b->unit, to_string(b->direction),
                                                mean_label(b->mean), d.name)};
      out.push_back(*b);
      continue;
    }
    d.unit = parts.size() > 1 ? parts[1] : "";
    d.direction = Direction::higher_is_better;
    if (parts.size() > 2 && !parts[2].empty()) {
      if (parts[2] == "higher")
        d.direction = Direction::higher_is_better;
      else if (parts[2] == "lower")
        d.direction = Direction::lower_is_better;
      else
        throw ParamError{"metrics", fmt::format("'{}': direction '{}' is not higher or lower; {}",
                                                decl, parts[2], example)};
    }
    d.mean = d.direction == Direction::higher_is_better ? MeanKind::harmonic : MeanKind::arithmetic;
    if (parts.size() > 3 && !parts[3].empty()) {
      try {
        d.mean = mean_kind_from_string(parts[3]);
      } catch (const std::exception&) {
        throw ParamError{"metrics", fmt::format("'{}': mean '{}' is not hmean, amean or gmean; {}",
                                                decl, parts[3], example)};
      }
    }
    d.doc = "declared by the job";
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace nightjar

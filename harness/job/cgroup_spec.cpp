// The `cgroup:` section of a job file -> CgroupSpec (harness/job/yaml_parse.h).
#include "harness/job/yaml_parse.h"

#include <fmt/format.h>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

int yaml_line(const YAML::Node& n) {
  return line_of(n, 0);
}

std::string where(const std::string& path, int line) {
  return line > 0 ? fmt::format("{}:{}", path, line) : path;
}

/// One knob section of `cgroup:` (top, middle, leaves): knob -> value, in order.
CgroupKnobs parse_knob_section(const YAML::Node& value, const std::string& section,
                               const std::string& job_path) {
  CgroupKnobs knobs;
  if (value.IsNull()) return knobs;
  const std::string field = "cgroup." + section;
  if (!value.IsMap())
    throw UsageError(where(job_path, yaml_line(value)) + ": " + field +
                     ": expected a mapping of knob to value; write for example `" + section +
                     ": {memory.min: 64M, memory.low: 128M}`");
  for (const auto& knob_entry : value) {
    const YAML::Node knob_node = knob_entry.first;
    const YAML::Node knob_value_node = knob_entry.second;
    const std::string knob = knob_node.as<std::string>("");
    const int kline = yaml_line(knob_node);
    if (!translate_knob(knob, 1) && !translate_knob(knob, 2))
      throw UsageError(where(job_path, kline) + ": " + field + "." + knob +
                       ": unknown knob; known: " + known_cgroup_knobs());
    if (!knob_value_node.IsScalar())
      throw UsageError(where(job_path, yaml_line(knob_value_node)) + ": " + field + "." + knob +
                       ": expected a value such as 64M or max");
    if (auto problem = cgroup_knob_problem(knob, knob_value_node.Scalar()))
      throw UsageError(where(job_path, yaml_line(knob_value_node)) + ": " + field + "." + knob +
                       ": " + *problem);
    knobs.emplace_back(knob, knob_value_node.Scalar());
  }
  return knobs;
}

}  // namespace

CgroupSpec parse_cgroup_spec(const YAML::Node& node, const std::string& job_path) {
  CgroupSpec spec;
  if (!node.IsDefined() || node.IsNull()) return spec;
  if (!node.IsMap())
    throw UsageError(where(job_path, yaml_line(node)) +
                     ": cgroup: expected a mapping; write for example `cgroup: {depth: 3, "
                     "per_client: true}`");
  spec.depth = 1;  // a cgroup section without depth: one level
  int middle_line = 0;
  for (const auto& entry : node) {
    const YAML::Node key_node = entry.first;
    const YAML::Node value = entry.second;
    const std::string key = key_node.as<std::string>("");
    const std::string at = where(job_path, yaml_line(key_node)) + ": cgroup." + key + ": ";
    const std::string vat = where(job_path, yaml_line(value)) + ": cgroup." + key + ": ";
    if (key == "depth") {
      int d = 0;
      bool ok = value.IsScalar();
      if (ok) {
        try {
          std::size_t used = 0;
          const std::string t = value.Scalar();
          d = std::stoi(t, &used);
          ok = used == t.size();
        } catch (const std::exception&) {
          ok = false;
        }
      }
      if (!ok || d < 1 || d > kMaxCgroupDepth)
        throw UsageError(vat + fmt::format("must be 1..{}; write depth: 3", kMaxCgroupDepth));
      spec.depth = d;
    } else if (key == "per_client") {
      bool b = false;
      if (!value.IsScalar() || !YAML::convert<bool>::decode(value, b))
        throw UsageError(vat + "must be true or false; write per_client: true");
      spec.per_client = b;
    } else if (key == "top") {
      spec.top = parse_knob_section(value, key, job_path);
    } else if (key == "middle") {
      spec.middle = parse_knob_section(value, key, job_path);
      middle_line = yaml_line(key_node);
    } else if (key == "leaves") {
      spec.leaves = parse_knob_section(value, key, job_path);
    } else {
      throw UsageError(at + "unknown key; the keys of cgroup: are depth (1.." +
                       std::to_string(kMaxCgroupDepth) +
                       "), per_client (true/false), top, middle, leaves (knob: value)");
    }
  }
  if (!spec.middle.empty() && spec.depth < 3)
    throw UsageError(where(job_path, middle_line) +
                     fmt::format(": cgroup.middle: depth {} has no middle level (the levels "
                                 "between top and the leaves); write depth: 3 or more, or move "
                                 "the knobs to top or leaves",
                                 spec.depth));
  return spec;
}

YAML::Node merged_cgroup(const YAML::Node& job, const YAML::Node& variant) {
  if (!variant.IsDefined() || variant.IsNull()) return job;
  if (!job.IsDefined() || job.IsNull() || !job.IsMap()) return variant;
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& e : job) merged[e.first.Scalar()] = e.second;
  for (const auto& e : variant) merged[e.first.Scalar()] = e.second;
  return merged;
}

}  // namespace nightjar

// Variants: parsing a job's `variants:` section (harness/job/variants.h).
#include "harness/job/variants.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "harness/job/yaml_parse.h"
#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

constexpr const char* kVariantKeys = "sysfs, procfs, sysctl, cgroup, description";

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '+' || c == '-';
  });
}

void parse_knobs(VariantSpec& v, const std::string& kind, const YAML::Node& node,
                 const std::string& job_path, int kline) {
  const std::string field = "variants." + v.name + "." + kind;
  if (!node.IsMap() || node.size() == 0)
    fail_job_field(
        job_path, line_of(node, kline), field,
        fmt::format("expected a mapping of {} to values, found {}; write {}",
                    kind == "sysctl" ? "sysctl names" : "paths",
                    node.IsMap() ? "an empty mapping" : kind_name(node), knob_example(kind)));
  for (const auto& entry : node) {
    int line = line_of(entry.first, kline);
    if (!entry.first.IsScalar())
      fail_job_field(job_path, line, field,
                     fmt::format("a knob name must be a plain path, found {}; write {}",
                                 kind_name(entry.first), knob_example(kind)));
    std::string problem;
    std::string path = normalise_knob_path(kind, entry.first.Scalar(), problem);
    if (path.empty()) fail_job_field(job_path, line, field, problem);
    const YAML::Node& value = entry.second;
    std::string text;
    if (value.IsScalar()) {
      text = value.Scalar();
    } else if (value.IsSequence() && value.size() > 0) {
      // tcp_wmem: [4096, 65536, 4194304] -> "4096 65536 4194304"
      for (const auto& e : value) {
        if (!e.IsScalar())
          fail_job_field(
              job_path, line_of(e, line), field + "." + entry.first.Scalar(),
              fmt::format("a list element is {}; write plain values such as [4096, 65536, "
                          "4194304]",
                          kind_name(e)));
        text += (text.empty() ? "" : " ") + e.Scalar();
      }
    } else {
      fail_job_field(job_path, line_of(value, line), field + "." + entry.first.Scalar(),
                     fmt::format("expected the value to write, found {}; write {}",
                                 kind_name(value), knob_example(kind)));
    }
    if (text.find('\n') != std::string::npos)
      fail_job_field(job_path, line_of(value, line), field + "." + entry.first.Scalar(),
                     "the value spans several lines; write it on one line");
    for (const auto& k : v.knobs)
      if (k.path == path)
        fail_job_field(job_path, line, field,
                       fmt::format("{} is set twice in variant {} (first on line {}); keep one",
                                   path, v.name, k.line));
    v.knobs.push_back(Knob{path, text, line});
  }
}

}  // namespace

void check_knob_targets(const VariantSpec& variant, const std::string& job_path,
                        const std::string& fs_prefix) {
  check_knob_targets(
      variant.knobs,
      [&](const Knob& k) {
        std::string where = job_path;
        if (!job_path.empty() && k.line > 0) where += fmt::format(":{}", k.line);
        return where + (where.empty() ? "" : ": ") + std::string("variants.") + variant.name + ": ";
      },
      fs_prefix);
}

std::vector<VariantSpec> parse_variants(const YAML::Node& node, const std::string& job_path,
                                        int key_line, const YAML::Node& job_cgroup) {
  const std::string example =
      "`variants:` followed by indented `NAME: {sysfs: {PATH: VALUE}}` lines such as "
      "`thp-never: {sysfs: {/sys/kernel/mm/transparent_hugepage/enabled: never}}`";
  if (!node.IsMap() || node.size() == 0)
    fail_job_field(
        job_path, line_of(node, key_line), "variants",
        fmt::format("expected a mapping of variant names to their knobs, found {}; write {}",
                    node.IsMap() ? "an empty mapping" : kind_name(node), example));
  std::vector<VariantSpec> out;
  for (const auto& entry : node) {
    int line = line_of(entry.first, key_line);
    if (!entry.first.IsScalar())
      fail_job_field(job_path, line, "variants",
                     fmt::format("a variant name must be a plain name, found {}; write {}",
                                 kind_name(entry.first), example));
    VariantSpec v;
    v.name = entry.first.Scalar();
    v.line = line;
    const std::string field = "variants." + v.name;
    if (!valid_name(v.name))
      fail_job_field(
          job_path, line, field,
          "a variant name is 1 to 64 letters, digits, '.', '_', '+' or '-'; write a name such "
          "as thp-never");
    if (v.name == "all")
      fail_job_field(
          job_path, line, field,
          "'all' is reserved (`--variant all` selects every variant); choose another name");
    for (const auto& other : out)
      if (other.name == v.name)
        fail_job_field(job_path, line, field,
                       fmt::format("given twice (first on line {}); keep one", other.line));
    const YAML::Node& body = entry.second;
    if (body.IsNull() || !body.IsDefined()) {
      v.cgroup = parse_cgroup_spec(job_cgroup, job_path);
      out.push_back(std::move(v));  // `vanilla:` or `vanilla: {}`: a label only
      continue;
    }
    if (!body.IsMap())
      fail_job_field(
          job_path, line_of(body, line), field,
          fmt::format("expected a mapping with keys {}, found {}; write {} (or `{}: {{}}` for a "
                      "label only)",
                      kVariantKeys, kind_name(body), example, v.name));
    std::map<std::string, int> seen;
    YAML::Node cgroup_override;
    for (const auto& kv : body) {
      int kline = line_of(kv.first, line);
      if (!kv.first.IsScalar())
        fail_job_field(job_path, kline, field,
                       fmt::format("a key must be a plain name, found {}; known keys are {}",
                                   kind_name(kv.first), kVariantKeys));
      const std::string key = kv.first.Scalar();
      if (auto it = seen.find(key); it != seen.end())
        fail_job_field(job_path, kline, field + "." + key,
                       fmt::format("given twice (first on line {}); keep one", it->second));
      seen.emplace(key, kline);
      if (key == "sysfs" || key == "procfs" || key == "sysctl") {
        parse_knobs(v, key, kv.second, job_path, kline);
      } else if (key == "cgroup") {
        if (!kv.second.IsMap())
          fail_job_field(
              job_path, line_of(kv.second, kline), field + ".cgroup",
              fmt::format("expected a mapping, found {}; write `cgroup: {{top: {{memory.min: "
                          "64M}}}}` (keys as in the job's cgroup: section)",
                          kind_name(kv.second)));
        cgroup_override = kv.second;
        v.cgroup_line = kline;
      } else if (key == "description") {
        if (!kv.second.IsScalar())
          fail_job_field(job_path, kline, field + ".description",
                         fmt::format("expected one line of text, found {}", kind_name(kv.second)));
        v.description = kv.second.Scalar();
      } else {
        std::string hint;
        if (key == "sys" || key == "sysfs_knobs") hint = " (did you mean 'sysfs'?)";
        if (key == "proc") hint = " (did you mean 'procfs'?)";
        if (key == "sysctls") hint = " (did you mean 'sysctl'?)";
        if (key == "cgroups") hint = " (did you mean 'cgroup'?)";
        fail_job_field(job_path, kline, field + "." + key,
                       fmt::format("unknown key{}; a variant's keys are {}", hint, kVariantKeys));
      }
    }
    v.cgroup = parse_cgroup_spec(merged_cgroup(job_cgroup, cgroup_override), job_path);
    out.push_back(std::move(v));
  }
  return out;
}

// ---------------------------------------------------------------- YAML helpers

int line_of(const YAML::Node& node, int fallback) {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0) return fallback;
  return m.line + 1;
}

const char* kind_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "nothing";
  }
}

}  // namespace nightjar

// The YAML side of the job parser, internal to harness/job: nothing outside
// this folder sees a YAML node (job.h, variants.h give typed records).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "harness/job/variants.h"
#include "workloads/sys/cgroup.h"

namespace nightjar {

/// 1-based line of a YAML node (for "FILE:LINE" in errors), or `fallback`
/// when yaml-cpp has no mark for it. Shared by the job and variant parsers.
int line_of(const YAML::Node& node, int fallback);
/// Throws UsageError "path:line: field: message" ("path: field: message" when
/// the line is unknown, "field: message" without a path): every job-file and
/// variant error goes through here so that the form is uniform.
[[noreturn]] void fail_job_field(const std::string& path, int line, std::string_view field,
                                 const std::string& message);
/// "a list", "a mapping", "a scalar" or "nothing": a node's kind for errors.
const char* kind_name(const YAML::Node& node);

/// Parses a job's `variants:` mapping (name -> mapping of the keys above; a
/// Null or `{}` value is a label-only variant). Names are 1..64 characters of
/// [A-Za-z0-9._+-] and not "all". Throws UsageError
/// "path:line: variants.NAME.sysfs: ...; fix" naming file, line and field.
/// `job_cgroup` is the job's own raw `cgroup:` mapping (Null when absent):
/// each variant's `cgroup:` keys are merged over it and parsed.
std::vector<VariantSpec> parse_variants(const YAML::Node& node, const std::string& job_path,
                                        int key_line, const YAML::Node& job_cgroup);

/// Parses a job's raw `cgroup:` mapping (keys depth, per_client, and the
/// knob sections top, middle, leaves). A Null node gives a disabled spec; a
/// mapping without `depth` gives depth 1. Knobs of each section must be
/// known (translate_knob) and their values valid (a size such as 64M, 1G,
/// 20%mem or max; a whole number for memory.swappiness); `middle` needs
/// depth 3 or more.
/// Throws UsageError "path:line: cgroup.depth: must be 1..8; write depth: 3"
/// (line of the offending key or value, from YAML::Mark).
CgroupSpec parse_cgroup_spec(const YAML::Node& node, const std::string& job_path);

/// The job's `cgroup:` with a variant's `cgroup:` keys merged over it (a
/// variant's `top` replaces the job's). Nodes are shared, so error lines
/// still point into the job file.
YAML::Node merged_cgroup(const YAML::Node& job, const YAML::Node& variant);

}  // namespace nightjar

// LAVA job logs: see harness/lava/log.h.
#include "harness/lava/log.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "results/model/text.h"

namespace nightjar {
namespace {

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.Scalar() : std::string();
}

// The text of a target message: a scalar, or (rare) a sequence of lines.
std::string target_text(const YAML::Node& msg) {
  if (msg.IsScalar()) return msg.Scalar();
  std::string out;
  if (msg.IsSequence())
    for (const auto& line : msg)
      if (line.IsScalar()) out += (out.empty() ? "" : "\n") + line.Scalar();
  return out;
}

}  // namespace

LavaLog parse_lava_log(std::string_view text) {
  LavaLog log;
  for (std::string line : split(std::string(text), '\n')) {
    std::string_view body = trim(line);
    if (body.empty()) continue;
    if (body.substr(0, 2) == "- ") body.remove_prefix(2);
    if (body.empty() || body.front() != '{') {
      ++log.other_lines;
      continue;
    }
    YAML::Node rec;
    try {
      rec = YAML::Load(std::string(body));
    } catch (const YAML::Exception&) {
      ++log.other_lines;
      continue;
    }
    if (!rec.IsMap() || !rec["lvl"]) {
      ++log.other_lines;
      continue;
    }
    ++log.records;
    const std::string lvl = scalar(rec, "lvl");
    const YAML::Node msg = rec["msg"];
    if (!msg) continue;
    if (lvl == "target") {
      log.console += target_text(msg) + "\n";
    } else if (lvl == "error") {
      if (msg.IsScalar()) log.errors.push_back(msg.Scalar());
    } else if (lvl == "results" && msg.IsMap()) {
      LavaResult r;
      r.definition = scalar(msg, "definition");
      r.name = scalar(msg, "case");
      r.result = scalar(msg, "result");
      r.measurement = scalar(msg, "measurement");
      r.units = scalar(msg, "units");
      r.error_type = scalar(msg, "error_type");
      r.error_msg = scalar(msg, "error_msg");
      if (r.definition == "lava" && r.name == "job") log.job = r;
      log.results.push_back(std::move(r));
    }
  }
  return log;
}

bool lava_job_passed(const LavaLog& log) {
  return log.job && log.job->result == "pass";
}

std::string lava_job_error(const LavaLog& log) {
  if (log.job && log.job->result != "pass") {
    std::string msg(trim(log.job->error_msg));
    if (!msg.empty()) return log.job->error_type.empty() ? msg : log.job->error_type + ": " + msg;
  }
  if (!log.errors.empty()) return log.errors.back();
  if (!log.job) return "the log ends before LAVA's job result (the dispatcher stopped mid-job)";
  return fmt::format("LAVA's job result is {}", log.job->result);
}

}  // namespace nightjar

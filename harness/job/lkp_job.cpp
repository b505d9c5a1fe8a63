// LKP job.yaml -> LkpJob: see harness/job/lkp_job.h.
#include "harness/job/lkp_job.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "harness/job/job.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

// A scalar's text, "" for anything else (a list, a mapping, null).
std::string scalar(const YAML::Node& node) {
  return node && node.IsScalar() ? node.Scalar() : std::string();
}

}  // namespace

LkpJob read_lkp_job(const std::string& path) {
  static constexpr InputKind kLkpJob{
      .noun = "LKP job file",
      .expect = "an LKP result directory's job.yaml",
      .max_bytes = kMaxJobFileBytes,
      .cap = "1 MiB",
      .too_large_fix =
          "an LKP job.yaml is a few KiB: check that this is the result directory "
          "you meant",
  };
  const std::string text = InputFile(path, kLkpJob).read_all();
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() || e.mark.line < 0 ? 0 : e.mark.line + 1;
    throw UsageError(
        fmt::format("{}{}: not YAML: {}; copy job.yaml again from the LKP result "
                    "directory",
                    path, line > 0 ? fmt::format(":{}", line) : "", e.msg));
  }
  if (!root.IsMap())
    throw UsageError(fmt::format(
        "{}: not an LKP job (a YAML mapping of keys such as testcase, testbox, commit); copy "
        "job.yaml again from the LKP result directory",
        path));
  LkpJob job;
  job.source = path;
  job.testcase = scalar(root["testcase"]);
  if (job.testcase.empty()) job.testcase = scalar(root["suite"]);
  if (job.testcase.empty())
    throw UsageError(fmt::format(
        "{}: testcase: missing; LKP writes the benchmark's name there (testcase: netperf); "
        "add it, or copy job.yaml again",
        path));
  job.testbox = scalar(root["testbox"]);
  if (job.testbox.empty())
    throw UsageError(fmt::format(
        "{}: testbox: missing; LKP records the machine the job ran on there (testbox: "
        "lkp-skl-d01); add it, so that the samples are not mixed with another machine's",
        path));
  const std::string cpus = scalar(root["nr_cpu"]);
  if (!cpus.empty() && cpus.find_first_not_of("0123456789") == std::string::npos && cpus.size() < 7)
    job.nr_cpu = static_cast<unsigned>(std::stoul(cpus));
  job.commit = scalar(root["commit"]);
  job.kernel = scalar(root["kernel"]);
  job.rootfs = scalar(root["rootfs"]);
  job.kconfig = scalar(root["kconfig"]);
  job.compiler = scalar(root["compiler"]);
  if (const std::string origin = scalar(root["job_origin"]); !origin.empty())
    job.job_origin = std::filesystem::path(origin).stem().string();
  for (std::string_view key : kLkpRunKeys)
    if (const std::string v = scalar(root[std::string(key)]); !v.empty())
      job.params[std::string(key)] = v;
  if (const YAML::Node own = root[job.testcase]; own && own.IsMap())
    for (const auto& entry : own)
      if (const std::string v = scalar(entry.second); !v.empty())
        job.params[entry.first.Scalar()] = v;
  return job;
}

}  // namespace nightjar

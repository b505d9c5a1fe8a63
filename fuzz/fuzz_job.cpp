// libFuzzer target: the job parser (harness/job/job.h) on arbitrary bytes.
// parse_job() reads the bytes as a job file's text (YAML syntax, merge keys,
// the node budget, keys, types, cgroup and variants sections); a job that
// parses is expanded into its cells with expand_matrix() against its
// workload's declarations, as `nightjar run` does before opening a database.
// A nightjar::Error (a clear usage error) is the expected answer to bad
// input; anything else escaping (another exception, a crash, a sanitizer
// report, a hang) is a bug. Built with -DNIGHTJAR_FUZZ=ON (docs/input.md
// "Fuzzing"); touches no file and no database.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/job/job.h"
#include "results/model/exit_codes.h"
#include "workloads/workload.h"

namespace {

// Matrices larger than this are not expanded here: the parser is what is
// fuzzed, and the matrix size limit is `run`'s (docs/input.md "Fuzzing").
constexpr double kMaxCells = 4096;

void expand(const nightjar::JobFile& job) {
  const nightjar::Workload* workload = nightjar::find_workload(job.workload);
  if (workload == nullptr) return;
  double cells = 1;
  for (const auto& [name, values] : job.params) cells *= values.empty() ? 1.0 : values.size();
  if (cells > kMaxCells) return;
  nightjar::MachineFacts machine;
  machine.mem_total_bytes = std::uint64_t{8} << 30;  // a fixed machine: runs are reproducible
  machine.cpus = 4;
  (void)nightjar::expand_matrix(job, *workload, {}, machine);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    expand(nightjar::parse_job(text, "fuzz.yaml"));
  } catch (const nightjar::Error&) {
    // the clear error bad input must get
  }
  return 0;
}

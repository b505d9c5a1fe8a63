// libFuzzer target: tidy sample CSV import parsing (results/io/csv.h) on
// arbitrary bytes. parse_samples_csv() is the whole of `nightjar import`
// before the database: header, RFC 4180 quoting, every row's fields and the
// consistency of a run's rows, checked against the registered workloads'
// declarations. A nightjar::Error is the expected answer to bad input;
// anything else escaping is a bug. Touches no file and no database
// (docs/input.md "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "results/io/csv.h"
#include "results/model/exit_codes.h"
#include "workloads/workload.h"

namespace {
// A fixed machine (8 GiB, 4 CPUs) for relative parameter values (20%mem):
// the fuzzer's runs do not depend on the host.
const nightjar::MachineFacts kMachine{std::uint64_t{8} << 30, 4};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    (void)nightjar::parse_samples_csv(in, "fuzz.csv", nightjar::workload_catalog(), kMachine);
  } catch (const nightjar::Error&) {
    // the clear error bad input must get
  }
  return 0;
}

// libFuzzer target: Google Benchmark JSON import parsing (results/formats/gbench.h)
// on arbitrary bytes. parse_gbench_json() is the whole of `nightjar import
// --format gbench` before the database. Each input is parsed twice: with the
// default options (each benchmark keeps its time_unit) and converting to
// microseconds with a declared counter, so the conversions are exercised
// too. A nightjar::Error is the expected answer to bad input; anything else
// escaping is a bug. Touches no file and no database (docs/input.md
// "Fuzzing").
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "results/formats/gbench.h"
#include "results/model/exit_codes.h"

namespace {

void parse(std::string_view text, const nightjar::GbenchOptions& options) {
  try {
    (void)nightjar::parse_gbench_json(text, options, "fuzz.json");
  } catch (const nightjar::Error&) {
    // the clear error bad input must get
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nightjar::GbenchOptions converting = [] {
    nightjar::GbenchOptions o;
    o.time_unit = "us";
    o.counters =
        nightjar::parse_counter_declarations("bytes_per_second:B/s:higher:hmean", "--metrics");
    return o;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  parse(text, nightjar::GbenchOptions{});
  parse(text, converting);
  return 0;
}

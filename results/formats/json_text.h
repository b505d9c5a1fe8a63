// JSON text from other tools, parsed with the bounds every importer needs:
// Google Benchmark reports (results/formats/gbench.h) and LKP's stats.json
// and matrix.json (results/io/lkp.h). Text in, document out; no file.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace nightjar {

/// The deepest nesting of arrays and objects an imported JSON file may have.
/// nlohmann::json parses (and copies, and destroys) by recursion, so a file
/// nested 100 000 deep would overflow the stack instead of getting an error.
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text` as one JSON document. Non-finite numbers written bare
/// (NaN, Infinity, -nan, inf in any case: Google Benchmark and printf-based
/// writers emit them, though JSON has none) become null outside strings, so
/// the caller sees them and can leave them out with a warning.
/// Throws UsageError (exit 2), naming `source`:
///   "SOURCE: arrays and objects nest deeper than 64 levels (byte N); HOW"
///   "SOURCE: not valid JSON (byte N: ...); HOW" (a truncated file ends here)
///   "SOURCE: a number is out of range (...); HOW" (1e400)
/// `how` says how to get a good file (e.g. which program writes it).
nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& source,
                                       std::string_view how);

}  // namespace nightjar

// Bounded JSON parsing of imported files: see results/formats/json_text.h.
#include "results/formats/json_text.h"

#include <fmt/format.h>

#include <cctype>

#include "results/model/exit_codes.h"

namespace nightjar {
namespace {

using ordered_json = nlohmann::ordered_json;

// The length of the non-finite number spelled at text[i] (outside a string):
// an optional sign, then nan, inf or infinity in any case (Google Benchmark
// writes NaN and Infinity; printf-based writers nan, -nan, inf), else 0.
std::size_t non_finite_token_at(std::string_view text, std::size_t i) {
  std::size_t at = i;
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
  auto spelled = [&](std::string_view word) {
    if (text.size() - at < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k)
      if (std::tolower(static_cast<unsigned char>(text[at + k])) != word[k]) return false;
    return true;
  };
  for (std::string_view word : {"infinity", "inf", "nan"})
    if (spelled(word)) return at + word.size() - i;
  return 0;
}

// Non-finite numbers outside strings become null (any spelling:
// non_finite_token_at). Throws UsageError naming `source` when arrays and
// objects nest deeper than kMaxJsonDepth.
std::string sanitize_non_finite(std::string_view text, const std::string& source,
                                std::string_view how) {
  std::string out;  // built by appending: linear in the size of the text
  out.reserve(text.size());
  bool in_string = false;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\') {
        if (i + 1 < text.size()) out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw UsageError(
            fmt::format("{}: arrays and objects nest deeper than {} levels (byte {}); {}", source,
                        kMaxJsonDepth, i + 1, how));
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (std::size_t n = non_finite_token_at(text, i); n > 0) {
      out += "null";
      i += n - 1;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

ordered_json parse_json_text(std::string_view text, const std::string& source,
                             std::string_view how) {
  try {
    return ordered_json::parse(sanitize_non_finite(text, source, how));
  } catch (const ordered_json::parse_error& e) {
    throw UsageError(
        fmt::format("{}: not valid JSON (byte {}: {}); {}", source, e.byte, e.what(), how));
  } catch (const ordered_json::out_of_range& e) {
    // A number beyond double (1e400) escaped as a bare json exception, exit 4
    // (issue 15; the corpus and fuzz/fuzz_gbench.cpp find it at once).
    throw UsageError(fmt::format("{}: a number is out of range ({}); {}", source, e.what(), how));
  }
}

}  // namespace nightjar

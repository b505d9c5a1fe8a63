// Text helpers (results/model/text.h).
#include "results/model/text.h"

#include <string.h>

#include <time.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <sstream>

#include <system_error>

namespace nightjar {

namespace {
constexpr std::string_view kBlanks = " \t\r\n\v\f";
}

std::string rstrip_spaces(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t width,
                                    const std::string& indent) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string word, line;
  while (in >> word) {
    if (line.empty()) {
      line = (lines.empty() ? "" : indent) + word;
    } else if (line.size() + 1 + word.size() <= width) {
      line += " " + word;
    } else {
      lines.push_back(line);
      line = indent + word;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string p_text(double p) {
  return p < 1e-4 ? fmt::format("{:.1e}", p) : fmt::format("{:.4f}", p);
}

std::string table_number(double v) {
  if (!std::isfinite(v)) return "undefined";
  return std::abs(v) < 100 ? fmt::format("{:.4f}", v) : fmt::format("{:.2f}", v);
}

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(kBlanks);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(kBlanks);
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find(sep, start);
    out.emplace_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::vector<std::string> split_blanks(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = s.find_first_not_of(" \t\r\n", i);
    if (b == std::string_view::npos) break;
    auto e = s.find_first_of(" \t\r\n", b);
    if (e == std::string_view::npos) e = s.size();
    out.emplace_back(s.substr(b, e - b));
    i = e;
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string errno_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  if (!abbrev) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (RFC 3629 table 3.7 of
// Unicode: no overlong forms, no surrogates, at most U+10FFFF), 0 if none.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return n;
}

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

}  // namespace

std::string echo_input(std::string_view s, std::size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t n = utf8_length(s, i);
    if (i + std::max<std::size_t>(n, 1) > max_bytes) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (n == 0 || (n == 1 && is_control(c))) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      i += 1;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string printable_problem(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return "is not valid UTF-8 (byte " + std::to_string(i + 1) + ")";
    if (n == 1 && is_control(static_cast<unsigned char>(text[i])))
      return "holds a control character (byte " + std::to_string(i + 1) + ")";
    i += n;
  }
  return "";
}

std::string label_problem(std::string_view label) {
  if (label.empty()) return "is empty";
  if (label.size() > kMaxLabelBytes)
    return "is " + std::to_string(label.size()) + " bytes long (the limit is " +
           std::to_string(kMaxLabelBytes) + ")";
  return printable_problem(label);
}

namespace {

// The largest n' <= n that does not fall inside a UTF-8 character of s.
std::size_t char_boundary_at_or_before(std::string_view s, std::size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string cut_utf8(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return std::string(s.substr(0, char_boundary_at_or_before(s, max_bytes)));
}

std::string cut_middle(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  if (max_bytes < 4) return cut_utf8(s, max_bytes);
  const std::size_t head = (max_bytes - 3 + 1) / 2, tail = max_bytes - 3 - head;
  std::size_t from = s.size() - tail;
  while (from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80) ++from;
  return std::string(s.substr(0, char_boundary_at_or_before(s, head))) + "..." +
         std::string(s.substr(from));
}

namespace {

// The unsigned decimal number of exactly `digits` digits at s[at...]; -1 otherwise.
int fixed_digits(std::string_view s, std::size_t at, std::size_t digits) {
  if (at + digits > s.size()) return -1;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data() + at, s.data() + at + digits, v);
  return ec == std::errc() && p == s.data() + at + digits && s[at] != '+' && s[at] != '-' ? v : -1;
}

}  // namespace

std::optional<std::int64_t> utc_seconds(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS at fixed places.
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  std::tm tm{};
  const int year = fixed_digits(s, 0, 4), month = fixed_digits(s, 5, 2),
            day = fixed_digits(s, 8, 2);
  const int hour = fixed_digits(s, 11, 2), minute = fixed_digits(s, 14, 2),
            second = fixed_digits(s, 17, 2);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60)
    return std::nullopt;
  std::size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    ++at;
    const std::size_t digits_from = at;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
    if (at == digits_from) return std::nullopt;
  }
  long offset = 0;  // seconds east of UTC
  if (at < s.size() && s[at] == 'Z') {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    const long sign = s[at] == '+' ? 1 : -1;
    const int oh = fixed_digits(s, at + 1, 2);
    const bool colon = at + 3 < s.size() && s[at + 3] == ':';
    const int om = fixed_digits(s, at + (colon ? 4 : 3), 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return std::nullopt;
    offset = sign * (oh * 3600L + om * 60L);
    at += colon ? 6 : 5;
  } else {
    return std::nullopt;  // no zone: local time of an unknown place
  }
  if (at != s.size()) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second == 60 ? 59 : second;  // a leap second: the second before it
  const std::time_t t = timegm(&tm) - offset;
  // timegm normalises 2026-02-30 to March 2: such a date does not exist.
  if (tm.tm_mday != day || tm.tm_mon != month - 1) return std::nullopt;
  std::tm utc{};
  if (t < 0 || gmtime_r(&t, &utc) == nullptr || utc.tm_year + 1900 > 9999) return std::nullopt;
  return static_cast<std::int64_t>(t);
}

std::optional<std::string> utc_iso8601(std::string_view s) {
  const std::optional<std::int64_t> seconds = utc_seconds(s);
  if (!seconds) return std::nullopt;
  const std::time_t t = static_cast<std::time_t>(*seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buf);
}

}  // namespace nightjar

// Parameter values: parsing of sizes, durations, counts, numbers, flags and
// choices into canonical text + base units (see results/model/params.h).
//
// Sizes, durations and percentages are parsed as exact decimals (digits before
// and after the point as one 128-bit integer and a power of ten) so that
// "1.5K" is exactly 1536 bytes and "0.1s" exactly 100ms; doubles are only used
// for ParamValue::number and for `number` parameters.
#include "results/model/params.h"
#include "results/model/text.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace nightjar {

namespace {

using u128 = unsigned __int128;

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kNsPerSec = 1'000'000'000;
constexpr std::uint64_t kNsPerMs = 1'000'000;

constexpr const char* kSizeAdvice =
    "write bytes or use K, M, G, T (powers of 2), k, m, g (powers of 10) or N%mem";
constexpr const char* kDurationAdvice =
    "write seconds or use ms, s, m, h (such as 500ms, 60s, 2m, 1h)";
constexpr const char* kCountAdvice = "write a whole number such as 4, or N%cpus such as 100%cpus";

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string u128_to_string(u128 v) {
  if (v == 0) return "0";
  std::string out;
  while (v != 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// An exact non-negative decimal: value = mantissa / 10^scale, with trailing
// fractional zeros removed (so "20.0" and "20" compare equal).
struct Decimal {
  u128 mantissa = 0;
  unsigned scale = 0;
};

// 10^n for n <= 38 (fits in 128 bits).
u128 pow10(unsigned n) {
  u128 p = 1;
  for (unsigned i = 0; i < n; ++i) p *= 10;
  return p;
}

// Reads `digits[.digits]` from the front of `s`. Returns the number of
// characters consumed (0 when `s` does not start with a number); sets
// `overflow` when the digits do not fit.
std::size_t read_decimal(std::string_view s, Decimal& out, bool& overflow) {
  overflow = false;
  std::size_t i = 0;
  std::size_t int_digits = 0;
  std::size_t frac_digits = 0;
  u128 m = 0;
  unsigned scale = 0;
  auto push = [&](char c) {
    if (__builtin_mul_overflow(m, static_cast<u128>(10), &m) ||
        __builtin_add_overflow(m, static_cast<u128>(c - '0'), &m))
      overflow = true;
  };
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    push(s[i]);
    ++i;
    ++int_digits;
  }
  if (i < s.size() && s[i] == '.' && i + 1 < s.size() &&
      std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      push(s[i]);
      ++i;
      ++frac_digits;
      ++scale;
    }
  }
  if (int_digits == 0 && frac_digits == 0) return 0;
  if (scale > 38) overflow = true;
  if (overflow) return i;
  while (scale > 0 && m % 10 == 0) {
    m /= 10;
    --scale;
  }
  out.mantissa = m;
  out.scale = scale;
  return i;
}

// "20", "12.5": the shortest exact text of a decimal.
std::string decimal_text(const Decimal& d) {
  std::string digits = u128_to_string(d.mantissa);
  if (d.scale == 0) return digits;
  if (digits.size() <= d.scale) digits.insert(0, d.scale - digits.size() + 1, '0');
  digits.insert(digits.size() - d.scale, ".");
  return digits;
}

// Splits "12.5%mem" into a decimal and the rest ("%mem"). Returns false when
// the text does not start with a number; throws ParamError on overflow.
bool split_number(const std::string& field, std::string_view text, Decimal& d,
                  std::string_view& suffix, const char* advice) {
  bool overflow = false;
  std::size_t n = read_decimal(text, d, overflow);
  if (n == 0) return false;
  if (overflow) throw ParamError{field, fmt::format("'{}' is too large; {}", text, advice)};
  suffix = text.substr(n);
  return true;
}

ParamError negative(const ParamDescriptor& desc, std::string_view text, const char* what,
                    const char* advice) {
  return ParamError{desc.name, fmt::format("'{}' is a negative {}; {}", text, what, advice)};
}

// ---- size ----------------------------------------------------------------

// Multiplier of an absolute size suffix, or 0 when unknown.
std::uint64_t size_multiplier(std::string_view suffix) {
  struct Entry {
    std::string_view suffix;
    std::uint64_t mult;
  };
  static constexpr Entry kTable[] = {
      {"", 1},
      {"K", 1ULL << 10},
      {"M", 1ULL << 20},
      {"G", 1ULL << 30},
      {"T", 1ULL << 40},
      {"KiB", 1ULL << 10},
      {"MiB", 1ULL << 20},
      {"GiB", 1ULL << 30},
      {"TiB", 1ULL << 40},
      {"k", 1'000ULL},
      {"m", 1'000'000ULL},
      {"g", 1'000'000'000ULL},
  };
  for (const auto& e : kTable)
    if (e.suffix == suffix) return e.mult;
  return 0;
}

// Exact bytes of an absolute size ("10K", "1.5M", "4096"); nullopt when the
// text is not an absolute size. Throws ParamError (with `field`) on a
// fractional byte count or overflow.
std::optional<std::uint64_t> absolute_size(const std::string& field, std::string_view text) {
  Decimal d;
  std::string_view suffix;
  if (!split_number(field, text, d, suffix, kSizeAdvice)) return std::nullopt;
  std::uint64_t mult = size_multiplier(suffix);
  if (mult == 0) return std::nullopt;
  u128 scaled = 0;
  if (__builtin_mul_overflow(d.mantissa, static_cast<u128>(mult), &scaled))
    throw ParamError{field, fmt::format("'{}' is too large; the largest size is 16777215T", text)};
  u128 div = pow10(d.scale);
  if (scaled % div != 0)
    throw ParamError{field, fmt::format("'{}' is not a whole number of bytes; write a size such "
                                        "as {} or use a smaller unit",
                                        text,
                                        format_size(static_cast<std::uint64_t>(
                                            std::min<u128>(scaled / div, UINT64_MAX))))};
  u128 bytes = scaled / div;
  if (bytes > std::numeric_limits<std::uint64_t>::max())
    throw ParamError{field, fmt::format("'{}' is too large; the largest size is 16777215T", text)};
  return static_cast<std::uint64_t>(bytes);
}

ParamValue parse_size(const ParamDescriptor& desc, std::string_view text,
                      const MachineFacts& machine) {
  if (text.front() == '-') throw negative(desc, text, "size", kSizeAdvice);
  Decimal d;
  std::string_view suffix;
  if (!split_number(desc.name, text, d, suffix, kSizeAdvice))
    throw ParamError{desc.name, fmt::format("'{}' is not a size; {}", text, kSizeAdvice)};
  if (suffix == "%mem") {
    if (d.mantissa == 0)
      throw ParamError{desc.name, fmt::format("'{}' is zero; write a positive share of memory "
                                              "such as 20%mem, or an absolute size",
                                              text)};
    if (machine.mem_total_bytes == 0)
      throw ParamError{desc.name, fmt::format("'{}' needs the machine's memory size, which is "
                                              "unknown; write an absolute size such as 1G",
                                              text)};
    u128 product = 0;
    if (__builtin_mul_overflow(static_cast<u128>(machine.mem_total_bytes), d.mantissa, &product))
      throw ParamError{desc.name, fmt::format("'{}' is too large; {}", text, kSizeAdvice)};
    u128 bytes = product / (pow10(d.scale) * 100);
    bytes -= bytes % kPage;  // whole pages, rounded down
    if (bytes > std::numeric_limits<std::uint64_t>::max())
      throw ParamError{desc.name, fmt::format("'{}' is too large; {}", text, kSizeAdvice)};
    return ParamValue{decimal_text(d) + "%mem", static_cast<double>(bytes)};
  }
  auto bytes = absolute_size(desc.name, text);
  if (!bytes)
    throw ParamError{desc.name, fmt::format("'{}' has an unknown suffix; {}", text, kSizeAdvice)};
  return ParamValue{format_size(*bytes), static_cast<double>(*bytes)};
}

// ---- duration --------------------------------------------------------------

// "60s", "500ms", "1.25s": whole seconds in s, else whole milliseconds in ms,
// else decimal seconds (nanosecond resolution).
std::string format_duration_ns(std::uint64_t ns) {
  if (ns % kNsPerSec == 0) return fmt::format("{}s", ns / kNsPerSec);
  if (ns % kNsPerMs == 0) return fmt::format("{}ms", ns / kNsPerMs);
  std::string frac = fmt::format("{:09d}", ns % kNsPerSec);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return fmt::format("{}.{}s", ns / kNsPerSec, frac);
}

ParamValue parse_duration(const ParamDescriptor& desc, std::string_view text) {
  if (text.front() == '-') throw negative(desc, text, "duration", kDurationAdvice);
  Decimal d;
  std::string_view suffix;
  if (!split_number(desc.name, text, d, suffix, kDurationAdvice))
    throw ParamError{desc.name, fmt::format("'{}' is not a duration; {}", text, kDurationAdvice)};
  std::uint64_t unit_ns = 0;
  if (suffix.empty() || suffix == "s")
    unit_ns = kNsPerSec;
  else if (suffix == "ms")
    unit_ns = kNsPerMs;
  else if (suffix == "m")
    unit_ns = 60 * kNsPerSec;
  else if (suffix == "h")
    unit_ns = 3600 * kNsPerSec;
  else
    throw ParamError{desc.name,
                     fmt::format("'{}' has an unknown suffix; {}", text, kDurationAdvice)};
  u128 scaled = 0;
  if (__builtin_mul_overflow(d.mantissa, static_cast<u128>(unit_ns), &scaled))
    throw ParamError{desc.name, fmt::format("'{}' is too long; {}", text, kDurationAdvice)};
  u128 div = pow10(d.scale);
  u128 ns = (scaled + div / 2) / div;  // nearest nanosecond
  if (ns > static_cast<u128>(std::numeric_limits<std::int64_t>::max()))
    throw ParamError{desc.name, fmt::format("'{}' is too long; {}", text, kDurationAdvice)};
  auto ns64 = static_cast<std::uint64_t>(ns);
  return ParamValue{format_duration_ns(ns64), static_cast<double>(ns64) / 1e9};
}

// ---- count -----------------------------------------------------------------

// Exact value of a plain count ("4", "04", "4.0"); nullopt when the text is
// not a plain non-negative whole number or does not fit in int64.
std::optional<std::int64_t> plain_count(std::string_view text) {
  Decimal d;
  bool overflow = false;
  std::size_t n = read_decimal(text, d, overflow);
  if (n == 0 || n != text.size() || overflow || d.scale != 0) return std::nullopt;
  if (d.mantissa > static_cast<u128>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return static_cast<std::int64_t>(d.mantissa);
}

ParamValue parse_count(const ParamDescriptor& desc, std::string_view text,
                       const MachineFacts& machine) {
  if (text.front() == '-') throw negative(desc, text, "count", kCountAdvice);
  Decimal d;
  std::string_view suffix;
  if (!split_number(desc.name, text, d, suffix, kCountAdvice))
    throw ParamError{desc.name, fmt::format("'{}' is not a count; {}", text, kCountAdvice)};
  if (suffix == "%cpus") {
    if (d.mantissa == 0)
      throw ParamError{desc.name, fmt::format("'{}' is zero; write a positive share of the CPUs "
                                              "such as 50%cpus, or a whole number",
                                              text)};
    // round(cpus * pct / 100), half up, at least 1
    u128 product = 0;
    u128 denom = pow10(d.scale) * 100;
    if (__builtin_mul_overflow(static_cast<u128>(std::max(machine.cpus, 1u)), d.mantissa,
                               &product) ||
        product > std::numeric_limits<u128>::max() - denom)
      throw ParamError{desc.name, fmt::format("'{}' is too large; {}", text, kCountAdvice)};
    u128 count = (product + denom / 2) / denom;
    if (count == 0) count = 1;
    if (count > static_cast<u128>(std::numeric_limits<std::int64_t>::max()))
      throw ParamError{desc.name, fmt::format("'{}' is too large; {}", text, kCountAdvice)};
    return ParamValue{decimal_text(d) + "%cpus", static_cast<double>(count)};
  }
  if (!suffix.empty())
    throw ParamError{desc.name, fmt::format("'{}' has an unknown suffix; {}", text, kCountAdvice)};
  if (d.scale != 0)
    throw ParamError{desc.name, fmt::format("'{}' is not a whole number; {}", text, kCountAdvice)};
  if (d.mantissa > static_cast<u128>(std::numeric_limits<std::int64_t>::max()))
    throw ParamError{desc.name, fmt::format("'{}' is too large; {}", text, kCountAdvice)};
  auto n = static_cast<std::int64_t>(d.mantissa);
  return ParamValue{std::to_string(n), static_cast<double>(n)};
}

// ---- number, flag, choice, text --------------------------------------------

ParamValue parse_number(const ParamDescriptor& desc, std::string_view text) {
  double v = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (*first == '+') ++first;  // from_chars rejects a leading '+'
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec == std::errc::result_out_of_range)
    throw ParamError{desc.name,
                     fmt::format("'{}' is out of range; write a number such as 2.5", text)};
  if (ec != std::errc() || ptr != last || !std::isfinite(v))
    throw ParamError{desc.name,
                     fmt::format("'{}' is not a number; write a number such as 2.5", text)};
  if (v == 0) v = 0;  // no "-0"
  return ParamValue{fmt::format("{}", v), v};
}

ParamValue parse_flag(const ParamDescriptor& desc, std::string_view text) {
  std::string l = lower(text);
  if (l == "on" || l == "true" || l == "yes" || l == "1") return ParamValue{"on", 1};
  if (l == "off" || l == "false" || l == "no" || l == "0") return ParamValue{"off", 0};
  throw ParamError{desc.name, fmt::format("'{}' is not on or off; write on or off (also "
                                          "true/false, yes/no, 1/0)",
                                          text)};
}

ParamValue parse_choice(const ParamDescriptor& desc, std::string_view text) {
  for (const auto& c : desc.choices)
    if (c == text) return ParamValue{c, 0};
  std::string example = desc.choices.empty() ? std::string("?") : desc.choices.front();
  std::string list_example = desc.choices.size() >= 2
                                 ? fmt::format(" or [{}, {}]", desc.choices[0], desc.choices[1])
                                 : std::string();
  throw ParamError{desc.name, fmt::format("'{}' is not one of {}; write one of them, such as {}{}",
                                          text, join(desc.choices, ", "), example, list_example)};
}

// ---- bounds ------------------------------------------------------------------

// A base-unit value in the type's own spelling, for bound messages.
std::string format_base(ParamType type, double v) {
  switch (type) {
    case ParamType::count:
      return fmt::format("{}", std::llround(v));
    case ParamType::size:
      if (v >= 0 && v < 18446744073709551616.0 && v == std::floor(v))
        return format_size(static_cast<std::uint64_t>(v));
      return fmt::format("{}", v);
    case ParamType::duration:
      if (v >= 0 && v < 9.2e9)
        return format_duration_ns(static_cast<std::uint64_t>(std::llround(v * 1e9)));
      return fmt::format("{}s", v);
    default:
      return fmt::format("{}", v);
  }
}

const char* type_noun(ParamType type) {
  switch (type) {
    case ParamType::count:
      return "count";
    case ParamType::size:
      return "size";
    case ParamType::duration:
      return "duration";
    default:
      return "number";
  }
}

// The next example above `v`: a list users can copy ("[1, 2]", "[4K, 8K]").
double next_example(ParamType type, double v) {
  if (type == ParamType::count) return v + 1;
  if (v <= 0) return 1;
  return v * 2;
}

void check_bounds(const ParamDescriptor& desc, const ParamValue& value) {
  if (desc.type != ParamType::count && desc.type != ParamType::size &&
      desc.type != ParamType::duration && desc.type != ParamType::number)
    return;
  // Relative values show what they resolved to: "1%mem (40M)".
  std::string shown = value.text;
  if (value.text.find('%') != std::string::npos)
    shown = fmt::format("{} ({})", value.text, format_base(desc.type, value.number));
  const char* noun = type_noun(desc.type);
  if (desc.min && value.number < *desc.min) {
    std::string lo = format_base(desc.type, *desc.min);
    std::string advice;
    if (desc.type == ParamType::count && *desc.min == 1)
      advice = "write a positive count such as 1 or [1, 2]";
    else
      advice = fmt::format("write a {} of at least {} such as {} or [{}, {}]", noun, lo, lo, lo,
                           format_base(desc.type, next_example(desc.type, *desc.min)));
    throw ParamError{desc.name, fmt::format("{} is below the minimum {}; {}", shown, lo, advice)};
  }
  if (desc.max && value.number > *desc.max) {
    std::string hi = format_base(desc.type, *desc.max);
    throw ParamError{desc.name, fmt::format("{} is above the maximum {}; write a {} of at most {} "
                                            "such as {}",
                                            shown, hi, noun, hi, hi)};
  }
}

}  // namespace

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::count:
      return "count";
    case ParamType::size:
      return "size";
    case ParamType::duration:
      return "duration";
    case ParamType::number:
      return "number";
    case ParamType::text:
      return "text";
    case ParamType::choice:
      return "choice";
    case ParamType::flag:
      return "flag";
  }
  return "?";
}

std::string Cell::id() const {
  std::string out;
  for (const auto& [name, value] : params) {
    // An empty text value means "not set": leaving it out keeps ids readable
    // ("seed=1 value=100", not "script= seed=1 skip= value=100") and stable
    // when a workload gains an optional text parameter.
    if (value.text.empty()) continue;
    if (!out.empty()) out += ' ';
    out += name;
    out += '=';
    out += value.text;
  }
  return out;
}

namespace {
const ParamValue& lookup(const Cell& cell, const std::string& name) {
  auto it = cell.params.find(name);
  if (it == cell.params.end())
    throw std::out_of_range(fmt::format("cell '{}' of workload '{}' has no parameter '{}'",
                                        cell.id(), cell.workload, name));
  return it->second;
}
}  // namespace

bool Cell::has(const std::string& name) const {
  return params.find(name) != params.end();
}

std::int64_t Cell::integer(const std::string& name) const {
  const ParamValue& v = lookup(*this, name);
  if (auto exact = plain_count(v.text)) return *exact;  // exact beyond 2^53
  return std::llround(v.number);
}

std::uint64_t Cell::bytes(const std::string& name) const {
  const ParamValue& v = lookup(*this, name);
  try {
    if (auto exact = absolute_size(name, v.text)) return *exact;  // exact beyond 2^53
  } catch (const ParamError&) {
  }
  if (!(v.number > 0)) return 0;
  if (v.number >= 18446744073709551616.0) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(v.number);
}

double Cell::seconds(const std::string& name) const {
  return lookup(*this, name).number;
}

const std::string& Cell::text(const std::string& name) const {
  return lookup(*this, name).text;
}

bool Cell::flag(const std::string& name) const {
  return lookup(*this, name).number != 0;
}

double Cell::number(const std::string& name) const {
  return lookup(*this, name).number;
}

ParamValue parse_param(const ParamDescriptor& desc, const std::string& text,
                       const MachineFacts& machine) {
  std::string_view t = trim(text);
  if (t.empty() && desc.type == ParamType::text) return ParamValue{};  // an optional text
  if (t.empty())
    throw ParamError{
        desc.name,
        fmt::format("empty value; write a {}{}", to_string(desc.type),
                    desc.default_value.empty() ? std::string() : " such as " + desc.default_value)};
  ParamValue value;
  switch (desc.type) {
    case ParamType::count:
      value = parse_count(desc, t, machine);
      break;
    case ParamType::size:
      value = parse_size(desc, t, machine);
      break;
    case ParamType::duration:
      value = parse_duration(desc, t);
      break;
    case ParamType::number:
      value = parse_number(desc, t);
      break;
    case ParamType::text:
      value = ParamValue{std::string(t), 0};
      break;
    case ParamType::choice:
      value = parse_choice(desc, t);
      break;
    case ParamType::flag:
      value = parse_flag(desc, t);
      break;
  }
  check_bounds(desc, value);
  return value;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::pair<unsigned, char> kUnits[] = {
      {40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  if (bytes == 0) return "0";
  for (const auto& [shift, suffix] : kUnits) {
    std::uint64_t unit = 1ULL << shift;
    if (bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string size_text(const Cell& cell, std::uint64_t bytes) {
  std::string text = cell.has("size") ? cell.text("size") : std::to_string(bytes);
  return text + " (" + human_bytes(bytes) + ")";
}

}  // namespace nightjar

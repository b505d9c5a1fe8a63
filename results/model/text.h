// The one set of text helpers every layer uses: trimming, splitting and
// joining, the text of an errno value or a signal, CSV quoting, and cutting
// user input down to something safe to echo. Pure functions: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

/// `s` without its trailing spaces (only ' '): the padding of a table's last
/// column, cut before the line is printed.
std::string rstrip_spaces(std::string s);

/// Greedy word wrap of `text` (words split at blanks) to lines of at most
/// `width` columns (a word longer than that stays whole); continuation lines
/// start with `indent`. The changelog layouts (report, report --why).
std::vector<std::string> wrap_words(const std::string& text, std::size_t width,
                                    const std::string& indent = "  ");

/// A p- or q-value for tables and notes: 4 decimals, scientific below 1e-4
/// ("0.0312", "3.2e-07").
std::string p_text(double p);

/// A measured value for tables: 4 decimals below 100, 2 from 100 up, as
/// mmtests' tables print them ("0.1234", "2154.27"); "undefined" when not
/// finite.
std::string table_number(double v);

/// `s` without leading and trailing blanks (space, tab, CR, LF, VT, FF).
std::string_view trim(std::string_view s);

/// `s` cut at every `sep`; empty fields are kept ("a,,b" -> {"a", "", "b"};
/// "" -> {""}). Fields are not trimmed.
std::vector<std::string> split(std::string_view s, char sep);

/// `s` cut at runs of blanks (space, tab, CR, LF); no empty fields
/// ("  a  b " -> {"a", "b"}).
std::vector<std::string> split_blanks(std::string_view s);

/// The items joined with `sep` between them ({"a", "b"}, ", " -> "a, b").
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

/// The message of errno value `err`, as strerror(3) gives it ("No such file
/// or directory"). Thread-safe.
std::string errno_text(int err);

/// The name of signal `sig`: "SIGKILL"; an unknown number gives "signal 70".
std::string signal_text(int sig);

/// One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF,
/// with quotes doubled.
std::string csv_field(std::string_view s);

/// The most bytes of one piece of user input an error message repeats
/// (docs/input.md "Echoed input").
inline constexpr std::size_t kMaxEchoBytes = 80;

/// `s` made safe to repeat in a message: every control byte (below 0x20,
/// and 0x7f) and every byte that is not part of valid UTF-8 is written as
/// `\xNN` (two hex digits); input longer than `max_bytes` is cut there (at
/// a character boundary) and "... (N bytes)" names its full length.
std::string echo_input(std::string_view s, std::size_t max_bytes = kMaxEchoBytes);

/// The first at most `max_bytes` bytes of `s`, ending at a UTF-8 character
/// boundary (a character that does not fit whole is left out).
std::string cut_utf8(std::string_view s, std::size_t max_bytes);

/// `s` cut to at most `max_bytes` bytes by dropping its middle, marked
/// "...": "pft [a] clients=1 ... size=512M". Never splits a UTF-8 character;
/// below 4 bytes it keeps the head. Used where a label must fit a line
/// (progress bar, plot titles).
std::string cut_middle(std::string_view s, std::size_t max_bytes);

/// The longest label, bytes (docs/input.md "Labels").
inline constexpr std::size_t kMaxLabelBytes = 128;

/// The one rule for labels (--variant, --build, --context keys and values,
/// a job's `variant:`, imported labels): 1..kMaxLabelBytes bytes of valid
/// UTF-8 with no control character (no newline, tab, ESC, DEL). Returns ""
/// for a valid label, else what is wrong, for a message such as
/// "--variant 'a\x0ab': holds a control character (byte 2); ...":
/// "is empty", "is 300 bytes long (the limit is 128)", "holds a control
/// character (byte N)", "is not valid UTF-8 (byte N)". Bytes count from 1.
std::string label_problem(std::string_view label);

/// The part of label_problem that applies to every stored name and value
/// read from a file (metric names, parameter values, benchmark names): valid
/// UTF-8 with no control character, any length. "" when printable, else
/// "holds a control character (byte N)" or "is not valid UTF-8 (byte N)".
std::string printable_problem(std::string_view text);

/// A date-time as ISO 8601 / RFC 3339 writes it, normalised to UTC with
/// whole seconds: "2026-12-01T23:41:59Z", the form nightjar stores and orders
/// runs by (run.started_at). Takes `YYYY-MM-DDTHH:MM:SS`, a space or `T`
/// between date and time, optional fractional seconds (dropped), then `Z`,
/// `+HH:MM`, `-HH:MM`, `+HHMM` or `-HHMM` (Google Benchmark writes local time
/// with an offset). nullopt for anything else: no zone, a date that does not
/// exist (2026-02-30), a field out of range, or a year outside 1970..9999.
std::optional<std::string> utc_iso8601(std::string_view text);

/// As utc_iso8601, the instant as Unix seconds (UTC; fractions dropped), for
/// a time axis (plots/): "1970-01-02T00:00:01Z" -> 86401.
std::optional<std::int64_t> utc_seconds(std::string_view text);

}  // namespace nightjar

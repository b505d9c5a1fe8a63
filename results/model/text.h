// The one set of text helpers every layer uses: trimming, splitting and
// joining, the text of an errno value or a signal, CSV quoting, and cutting
// user input down to something safe to echo. Pure functions: no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nightjar {

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

}  // namespace nightjar

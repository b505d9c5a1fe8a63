// What the three files of the tidy sample CSV share (csv.cpp writes it,
// csv_read.cpp parses it, csv_import.cpp stores a parsed file): the fixed
// columns and the error of a file line. Internal to results/io: nothing
// outside the folder includes it.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "results/model/exit_codes.h"

namespace nightjar::csv_detail {

inline constexpr std::string_view kParamPrefix = "param.";
// The fixed columns, in the order export writes them; the parameter columns
// go after `workload`.
inline constexpr const char* kLeadColumns[] = {"run", "job", "workload"};
inline constexpr const char* kTailColumns[] = {"variant",    "build",     "kernel", "testbox",
                                               "started_at", "iteration", "metric", "unit",
                                               "direction",  "mean",      "value"};
// The optional last column: why a sample is invalid ("" = valid).
inline constexpr const char* kInvalidColumn = "invalid";

/// Throws UsageError "SOURCE:LINE: what" (exit 2).
[[noreturn]] inline void fail(const std::string& source, int line, const std::string& what) {
  throw UsageError(fmt::format("{}:{}: {}", source, line, what));
}

}  // namespace nightjar::csv_detail

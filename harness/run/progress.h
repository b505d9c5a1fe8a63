// Progress of a run on stderr: a one-line bar with the run being measured
// ("run 3/6": one per cell, variant and --runs repeat), variant, iteration
// and ETA when stderr is a terminal (cut to the terminal's width), plain
// lines otherwise (logs, CI). Data never goes here; stdout is for results.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace nightjar {

/// Reports progress of the cells of one `nightjar run`.
class Progress {
 public:
  /// `total_iterations`: warm-up + measured iterations of every cell, for the ETA.
  Progress(int total_cells, long total_iterations, std::FILE* out = stderr);
  /// A slot starts: the run of `variant` in a cell; index is 1-based over
  /// every slot (cells x variants); `label` names job, variant and cell.
  /// Under --interleave the slots of one cell start together and their
  /// iterations alternate: each iteration's bar shows its own slot.
  void cell(int index, const std::string& variant, const std::string& label);
  /// One (warm-up or measured) iteration finished: iteration `done` of `of`
  /// of variant `variant`'s run, which took `seconds`. The variant is named
  /// on every line, since --interleave alternates variants inside a cell.
  void iteration(bool warmup, int done, int of, double seconds, const std::string& variant);
  /// A message that must not be overwritten by the bar (warning, skip).
  void message(const std::string& text);
  /// Ends the bar line, if any.
  void finish();

  /// The bar line for a terminal `columns` wide: at most columns - 1
  /// characters (the last column stays free so no terminal wraps), the cell
  /// label shortened from the middle first, then the bar dropped, then the
  /// line cut. Exposed for tests.
  std::string bar_line(int columns, bool warmup, int done, int of,
                       const std::string& variant) const;
  /// The smoothed time left, "M:SS" ("--:--" before the first iteration).
  std::string eta() const;

 private:
  std::FILE* out_;
  bool tty_;
  int total_cells_;
  long total_iterations_;
  long done_iterations_ = 0;
  int cell_index_ = 0;
  std::string cell_label_;
  /// The slot each variant started last: its index and label.
  std::map<std::string, std::pair<int, std::string>, std::less<>> slots_;
  bool bar_open_ = false;
  /// Exponentially weighted mean of the wall time between iterations
  /// (setup and teardown included), seconds; unset before the first.
  std::optional<double> seconds_per_iteration_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

/// The width of the terminal on `out` (TIOCGWINSZ), else $COLUMNS, else 80.
int terminal_columns(std::FILE* out);

}  // namespace nightjar

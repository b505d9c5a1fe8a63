// Progress of a run on stderr: a one-line bar with cell, iteration and ETA
// when stderr is a terminal, plain lines otherwise (logs, CI). Data never
// goes here; stdout is for results.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace nightjar {

/// Reports progress of the cells of one `nightjar run`.
class Progress {
 public:
  /// `total_iterations`: warm-up + measured iterations of every cell, for the ETA.
  Progress(int total_cells, long total_iterations, std::FILE* out = stderr);
  /// A cell starts: index is 1-based.
  void cell(int index, const std::string& label);
  /// One (warm-up or measured) iteration of the current cell finished.
  void iteration(bool warmup, int done, int of, double seconds);
  /// A message that must not be overwritten by the bar (warning, skip).
  void message(const std::string& text);
  /// Ends the bar line, if any.
  void finish();

 private:
  std::string eta() const;
  std::FILE* out_;
  bool tty_;
  int total_cells_;
  long total_iterations_;
  long done_iterations_ = 0;
  int cell_index_ = 0;
  std::string cell_label_;
  bool bar_open_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace nightjar

#include "harness/run/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace nightjar {

Progress::Progress(int total_cells, long total_iterations, std::FILE* out)
    : out_(out),
      tty_(isatty(fileno(out)) != 0),
      total_cells_(total_cells),
      total_iterations_(total_iterations) {}

std::string Progress::eta() const {
  if (done_iterations_ == 0) return "--:--";
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double left = elapsed / static_cast<double>(done_iterations_) *
                static_cast<double>(total_iterations_ - done_iterations_);
  long s = static_cast<long>(left + 0.5);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

void Progress::cell(int index, const std::string& label) {
  cell_index_ = index;
  cell_label_ = label;
  if (!tty_) fmt::print(out_, "nightjar: cell {}/{}: {}\n", index, total_cells_, label);
}

void Progress::iteration(bool warmup, int done, int of, double seconds) {
  ++done_iterations_;
  if (tty_) {
    int width = 20;
    int filled =
        total_iterations_ ? static_cast<int>(width * done_iterations_ / total_iterations_) : 0;
    fmt::print(out_, "\r\033[K[{}{}] cell {}/{} {}  {} {}/{}  ETA {}", std::string(filled, '#'),
               std::string(width - filled, '.'), cell_index_, total_cells_, cell_label_,
               warmup ? "warm-up" : "iteration", done, of, eta());
    bar_open_ = true;
  } else {
    fmt::print(out_, "nightjar:   {} {}/{} done in {:.3f} s (ETA {})\n",
               warmup ? "warm-up" : "iteration", done, of, seconds, eta());
  }
  std::fflush(out_);
}

void Progress::message(const std::string& text) {
  if (bar_open_) {
    fmt::print(out_, "\r\033[K");
    bar_open_ = false;
  }
  fmt::print(out_, "nightjar: {}\n", text);
  std::fflush(out_);
}

void Progress::finish() {
  if (bar_open_) fmt::print(out_, "\n");
  bar_open_ = false;
  std::fflush(out_);
}

}  // namespace nightjar

#include "harness/run/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "results/model/text.h"

namespace nightjar {

namespace {

// Weight of the newest iteration in the ETA's moving mean: about the last
// five iterations count, so one slow iteration (a setup, a noisy
// neighbour) moves the ETA without making it jump.
constexpr double kEtaWeight = 0.2;

}  // namespace

int terminal_columns(std::FILE* out) {
  winsize w{};
  if (ioctl(fileno(out), TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

Progress::Progress(int total_cells, long total_iterations, std::FILE* out)
    : out_(out),
      tty_(isatty(fileno(out)) != 0),
      total_cells_(total_cells),
      total_iterations_(total_iterations) {}

std::string Progress::eta() const {
  if (!seconds_per_iteration_) return "--:--";
  const double left = *seconds_per_iteration_ *
                      static_cast<double>(std::max(0L, total_iterations_ - done_iterations_));
  const long s = static_cast<long>(left + 0.5);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

void Progress::cell(int index, const std::string& variant, const std::string& label) {
  cell_index_ = index;
  cell_label_ = label;
  slots_[variant] = {index, label};
  if (!tty_) fmt::print(out_, "nightjar: run {}/{}: {}\n", index, total_cells_, label);
}

std::string Progress::bar_line(int columns, bool warmup, int done, int of,
                               const std::string& variant) const {
  const std::size_t room = static_cast<std::size_t>(std::max(columns - 1, 1));
  const std::string head = fmt::format("run {}/{} ", cell_index_, total_cells_);
  const std::string tail = fmt::format("  [{}] {} {}/{}  ETA {}", variant,
                                       warmup ? "warm-up" : "iteration", done, of, eta());
  auto bar = [&](int width) {
    const int filled =
        total_iterations_ ? static_cast<int>(width * std::min(done_iterations_, total_iterations_) /
                                             total_iterations_)
                          : 0;
    return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  };
  for (int width : {20, 10}) {
    const std::string b = bar(width);
    const std::size_t fixed = b.size() + head.size() + tail.size();
    if (fixed + std::min<std::size_t>(cell_label_.size(), 12) <= room)
      return b + head + cut_middle(cell_label_, room - fixed) + tail;
  }
  // Narrower still: the variant, iteration and ETA matter most, then the
  // cell number; the label goes, then the variant name loses its middle.
  const std::size_t fixed = head.size() + tail.size();
  if (fixed + 8 <= room) return head + cut_middle(cell_label_, room - fixed) + tail;
  if (fixed <= room) return head + tail.substr(2);
  const std::string rest =
      fmt::format("] {} {}/{}  ETA {}", warmup ? "warm-up" : "iteration", done, of, eta());
  if (rest.size() + 5 <= room) return "[" + cut_middle(variant, room - rest.size() - 1) + rest;
  return cut_utf8(rest.substr(2), room);
}

void Progress::iteration(bool warmup, int done, int of, double seconds,
                         const std::string& variant) {
  ++done_iterations_;
  const auto now = std::chrono::steady_clock::now();
  const double wall = std::max(seconds, std::chrono::duration<double>(now - last_).count());
  last_ = now;
  seconds_per_iteration_ = seconds_per_iteration_
                               ? kEtaWeight * wall + (1 - kEtaWeight) * *seconds_per_iteration_
                               : wall;
  if (tty_) {
    if (auto slot = slots_.find(variant); slot != slots_.end())
      std::tie(cell_index_, cell_label_) = slot->second;
    fmt::print(out_, "\r\033[K{}", bar_line(terminal_columns(out_), warmup, done, of, variant));
    bar_open_ = true;
  } else {
    fmt::print(out_, "nightjar:   [{}] {} {}/{} done in {:.3f} s (ETA {})\n", variant,
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

// The gnuplot program of `nightjar plot`: see plots/gnuplot.h.
#include "plots/gnuplot.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <gnuplot-iostream.h>

#include "plots/ticks.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;

// A gnuplot string in double quotes: backslash escapes are processed there, so
// '\' and '"' are escaped and a newline becomes \n (a line break in titles).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out + "\"";
}

// A file name in single quotes: nothing is processed but '' for a quote.
std::string quote_path(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string number(double v) {
  return fmt::format("{:.17g}", v);
}

std::string xtics(const std::vector<std::pair<double, std::string>>& ticks) {
  std::string out = "set xtics (";
  for (std::size_t i = 0; i < ticks.size(); ++i)
    out += (i ? ", " : "") + quote(ticks[i].second) + " " + number(ticks[i].first);
  return out + ")\n";
}

// Splits "a; b; c" at "; " into lines of at most `width` characters; a part
// longer than that (a long cell) starts a line of its own and is broken at
// its spaces, or anywhere when a word alone is too long, so that no line runs
// off the image.
std::vector<std::string> wrap_parts(const std::string& text, int width) {
  const std::size_t w = static_cast<std::size_t>(std::max(width, 1));
  std::vector<std::string> lines;
  std::string line;
  auto add_long_part = [&](const std::string& part) {
    std::string piece;
    for (const std::string& word : split(part, ' ')) {
      if (!piece.empty() && piece.size() + 1 + word.size() <= w) {
        piece += " " + word;
        continue;
      }
      if (!piece.empty()) lines.push_back(piece);
      for (piece = word; piece.size() > w; piece.erase(0, w)) lines.push_back(piece.substr(0, w));
    }
    if (!piece.empty()) line = piece;
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find("; ", start);
    std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    start = end == std::string::npos ? text.size() : end + 2;
    if (!line.empty() && line.size() + 2 + part.size() <= w) {
      line += "; " + part;
      continue;
    }
    if (!line.empty()) lines.push_back(line + ";");
    line.clear();
    if (part.size() <= w)
      line = part;
    else
      add_long_part(part);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// Where a change point is drawn: halfway between the last point before it and
// the first point after it.
double change_x(const PlotSeries& s, const stats::ChangePoint& cp) {
  return (s.points[cp.index - 1].x + s.points[cp.index].x) / 2;
}

// The terminal, output, titles, key, footnote and y format. Returns the
// footnote's line count.
std::size_t send_header(Gnuplot& gp, const PlotData& d, const ImageSpec& img,
                        const std::string& output_path) {
  if (img.format == ImageFormat::png) {
    // pngcairo draws antialiased text; plain png (libgd) is the fallback.
    gp << "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
       << "  set terminal pngcairo size " << img.width << "," << img.height
       << " noenhanced font 'sans,10' background rgb 'white'\n"
       << "} else {\n"
       << "  set terminal png size " << img.width << "," << img.height
       << " noenhanced background rgb 'white'\n"
       << "}\n";
  } else {
    gp << "set terminal svg size " << img.width << "," << img.height
       << " noenhanced font 'sans,10' background rgb 'white'\n";
  }
  gp << "set output " << quote_path(output_path) << "\n";
  gp << "set encoding utf8\n";
  gp << "set title " << quote(d.title) << "\n";
  gp << "set xlabel " << quote(d.x_label) << "\n";
  gp << "set ylabel " << quote(d.y_label) << "\n";
  gp << "set grid\n";
  gp << "set key outside right top vertical Left reverse\n";
  const std::vector<std::string> foot = wrap_parts(d.footnote, std::max(40, img.width / 6));
  if (!foot.empty()) {
    // The first line sits at the given height and the others below it: lift
    // it by a line (about 12 px at font size 8) for each line that follows.
    const double y = (8.0 + 12.0 * static_cast<double>(foot.size() - 1)) / img.height;
    gp << "set label 1 " << quote(join(foot, "\n")) << " at screen 0.01, screen " << number(y)
       << " left font ',8'\n";
  }
  // The y axis: the padded range of every value drawn and ticks labelled as
  // the SVG figures label them (plots/ticks.h: "485.5k", never gnuplot's
  // "4.855e+05"). A flat series (every value equal) gets +-10% of its value
  // (+-1 around 0), so that its ticks read apart.
  double y_min = std::numeric_limits<double>::infinity(), y_max = -y_min;
  for (const auto& s : d.series)
    for (const auto& p : s.points) {
      y_min = std::min({y_min, p.lo, p.mean});
      y_max = std::max({y_max, p.hi, p.mean});
      for (double v : p.samples) y_min = std::min(y_min, v), y_max = std::max(y_max, v);
    }
  if (std::isfinite(y_min) && std::isfinite(y_max)) {
    const bool flat = y_max - y_min <= 1e-9 * std::max(std::abs(y_max), 1e-300);
    const double pad = !flat ? (y_max - y_min) * 0.06 : y_max == 0 ? 1 : std::abs(y_max) * 0.1;
    const AxisTicks ticks = nice_ticks(y_min - pad, y_max + pad, 5);
    gp << "set yrange [" << number(y_min - pad) << ":" << number(y_max + pad) << "]\n";
    gp << "set ytics (";
    for (std::size_t i = 0; i < ticks.values.size(); ++i)
      gp << (i ? ", " : "") << quote(ticks.labels[i]) << " " << number(ticks.values[i]);
    gp << ")\n";
  }
  return foot.size();
}

// The x axis: scale, ticks, offsets, and the bottom margin (room for the x
// label, rotated tick labels and `foot_lines` footnote lines).
void send_x_axis(Gnuplot& gp, const PlotData& d, std::size_t foot_lines) {
  bool long_ticks = d.x_ticks.size() > 8;
  for (const auto& t : d.x_ticks) long_ticks = long_ticks || t.second.size() > 6;
  switch (d.x_scale) {
    case XScale::log:
      gp << "set logscale x 2\n";
      [[fallthrough]];
    case XScale::linear:
      if (!d.x_ticks.empty()) gp << xtics(d.x_ticks);
      gp << "set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06\n";
      break;
    case XScale::category: {
      double last = 0;
      for (const auto& s : d.series)
        for (const auto& p : s.points) last = std::max(last, p.x);
      for (const auto& t : d.x_ticks) last = std::max(last, t.first);
      gp << "set xrange [-0.5:" << number(last + 0.5) << "]\n";
      gp << xtics(d.x_ticks);
      gp << "set offsets 0, 0, graph 0.06, graph 0.06\n";
      break;
    }
    case XScale::time: {
      double lo = INFINITY, hi = -INFINITY;
      for (const auto& s : d.series)
        for (const auto& p : s.points) lo = std::min(lo, p.x), hi = std::max(hi, p.x);
      // The tick format follows the span: times of day within hours,
      // dates and times within days, dates within years, months beyond.
      const double span = hi - lo;
      const char* format = span < 2 * 3600          ? "%H:%M:%S"
                           : span < 3 * 86400       ? "%m-%d %H:%M"
                           : span < 2 * 365 * 86400 ? "%Y-%m-%d"
                                                    : "%Y-%m";
      gp << "set format x " << quote(format) << " timedate\n";
      // Within a day, whole steps of seconds, minutes or hours (about 8
      // ticks): gnuplot's own choice can be half a second, which prints the
      // same %H:%M:%S twice.
      if (span < 86400) {
        double step = 3600;
        for (double s :
             {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0})
          if (s >= span / 8) {
            step = s;
            break;
          }
        gp << "set xtics " << number(step) << "\n";
      }
      gp << "set offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06\n";
      long_ticks = true;
      break;
    }
  }
  if (long_ticks) gp << "set xtics rotate by -35 left\n";
  gp << "set bmargin " << (long_ticks ? 6 : 4) + foot_lines << "\n";
  gp << "set xtics nomirror\n";
}

// Change points: a dashed line in the series' colour where the level steps.
void send_change_points(Gnuplot& gp, const PlotData& d) {
  int tag = 1;
  for (std::size_t i = 0; i < d.series.size(); ++i) {
    const PlotSeries& s = d.series[i];
    for (const auto& cp : s.change_points) {
      const double x = change_x(s, cp);
      gp << "set arrow " << tag << " from " << number(x) << ", graph 0 to " << number(x)
         << ", graph 1 nohead dashtype 2 linewidth 1.5 linecolor " << i + 1 << "\n";
      gp << "set label " << tag + 1 << " "
         << quote(fmt::format("{} {:+.1f}%", s.points[cp.index].label, cp.pct_change)) << " at "
         << number(x) << ", graph 0.97 offset 0.5, 0 left font ',8' textcolor lt " << i + 1 << "\n";
      tag += 2;
    }
  }
}

// The plot command and its inline data: per series, the samples (history)
// then the means; then, when some point was measured under qemu TCG, those
// points again as open black triangles titled kEmulationMark in the key.
void send_series(Gnuplot& gp, const PlotData& d) {
  const bool bars = d.error_bars != ErrorBars::none;
  std::string plot = "plot ";
  bool first = true;
  for (std::size_t i = 0; i < d.series.size(); ++i) {
    const PlotSeries& s = d.series[i];
    auto add = [&](const std::string& clause) {
      plot += (first ? "" : ", \\\n     ") + clause;
      first = false;
    };
    if (d.kind == PlotKind::history)
      add(fmt::format("'-' using 1:2 with points pointtype 6 pointsize 0.6 linecolor {} notitle",
                      i + 1));
    add(fmt::format(
        "'-' using 1:2{} with {} pointtype 7 pointsize 0.8 linewidth 1.5 linecolor {} "
        "title {}",
        bars ? ":3:4" : "", bars ? "yerrorlines" : "linespoints", i + 1, quote(s.label)));
  }
  std::vector<std::pair<double, double>> emulated;
  for (const PlotSeries& s : d.series)
    for (const auto& p : s.points)
      if (p.emulated) emulated.emplace_back(p.x_drawn, p.mean);
  if (!emulated.empty())
    plot +=
        ", \\\n     '-' using 1:2 with points pointtype 8 pointsize 2 linewidth 1.5 "
        "linecolor rgb 'black' title " +
        quote(kEmulationMark);
  gp << plot << "\n";
  for (const PlotSeries& s : d.series) {
    if (d.kind == PlotKind::history) {
      std::vector<std::pair<double, double>> dots;
      for (const auto& p : s.points)
        for (double v : p.samples) dots.emplace_back(p.x_drawn, v);
      gp.send1d(dots);
    }
    if (bars) {
      std::vector<std::tuple<double, double, double, double>> rows;
      for (const auto& p : s.points) rows.emplace_back(p.x_drawn, p.mean, p.lo, p.hi);
      gp.send1d(rows);
    } else {
      std::vector<std::pair<double, double>> rows;
      for (const auto& p : s.points) rows.emplace_back(p.x_drawn, p.mean);
      gp.send1d(rows);
    }
  }
  if (!emulated.empty()) gp.send1d(emulated);
}

void send_commands(Gnuplot& gp, const PlotData& d, const ImageSpec& img,
                   const std::string& output_path) {
  const std::size_t foot_lines = send_header(gp, d, img, output_path);
  send_x_axis(gp, d, foot_lines);
  send_change_points(gp, d);
  send_series(gp, d);
  gp << "unset output\n";
  gp << std::flush;
}

std::string read_fd(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

}  // namespace

std::string image_problem(std::string_view data, ImageFormat format) {
  if (data.empty()) return "the file is empty";
  if (format == ImageFormat::png) {
    static const char kSig[] = "\x89PNG\r\n\x1a\n";
    if (data.compare(0, 8, kSig, 8) != 0) return "it does not start with the PNG signature";
    if (data.size() < 20 || data.compare(data.size() - 8, 4, "IEND") != 0)
      return "it does not end with the PNG IEND chunk";
    return "";
  }
  if (data.find("<svg") == std::string::npos) return "it has no <svg> element";
  auto end = data.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos || end < 5 || data.compare(end - 5, 6, "</svg>") != 0)
    return "it does not end with </svg>";
  return "";
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ImageFormat image_format_for(const std::string& path) {
  const std::string ext = lower(fs::path(path).extension().string());
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".svg") return ImageFormat::svg;
  throw UsageError(fmt::format(
      "plot: -o {}: the format is chosen by the extension; write a file name ending in .png or "
      ".svg",
      path));
}

std::pair<int, int> parse_image_size(const std::string& text) {
  int w = 0, h = 0;
  char x = 0, extra = 0;
  std::istringstream in(text);
  if (!(in >> w >> x >> h) || (x != 'x' && x != 'X') || (in >> extra) || w < 100 || h < 100 ||
      w > 10000 || h > 10000)
    throw UsageError(fmt::format(
        "plot: --size {}: write WIDTHxHEIGHT in pixels, each 100 to 10000, e.g. --size 800x600",
        text));
  return {w, h};
}

void write_gnuplot_commands(std::FILE* out, const PlotData& data, const ImageSpec& image,
                            const std::string& output_path) {
  // gnuplot-iostream writes to the descriptor and closes the FILE it is given:
  // hand it a duplicate so that `out` stays open for the caller.
  int fd = ::dup(::fileno(out));
  if (fd < 0) throw EnvironmentError(std::string("plot: dup: ") + std::strerror(errno));
  std::FILE* f = ::fdopen(fd, "w");
  if (!f) {
    ::close(fd);
    throw EnvironmentError(std::string("plot: fdopen: ") + std::strerror(errno));
  }
  std::fflush(out);
  Gnuplot gp(f);
  send_commands(gp, data, image, output_path);
}

std::string gnuplot_script(const PlotData& data, const ImageSpec& image,
                           const std::string& output_path) {
  std::FILE* f = std::tmpfile();
  if (!f) throw EnvironmentError(std::string("plot: tmpfile: ") + std::strerror(errno));
  write_gnuplot_commands(f, data, image, output_path);
  std::string text = read_fd(::fileno(f));
  std::fclose(f);
  return text;
}

}  // namespace nightjar

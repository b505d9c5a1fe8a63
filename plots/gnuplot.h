// The gnuplot renderer of `nightjar plot`: draws a PlotData record
// (plots/plot.h) as PNG or SVG by driving gnuplot through gnuplot-iostream
// (libgnuplot-iostream-dev; the program is gnuplot-nox). It reads the record
// and computes nothing.
//
// Safety: gnuplot runs as a child process fed through a pipe (no shell), with
// `-d` (no ~/.gnuplot), its output captured for error messages, and is always
// waited for (killed after a timeout or on SIGINT/SIGTERM): it is never left
// running. It writes a temporary file beside the output, which is checked
// (PNG signature / SVG root element) and renamed over the output only when
// gnuplot succeeded, so a failed plot never leaves a half-written file.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include "plots/plot.h"

namespace nightjar {

/// The image format, chosen by the output file's extension.
enum class ImageFormat { png, svg };

/// What image to write.
struct ImageSpec {
  ImageFormat format = ImageFormat::png;
  int width = 800;   ///< pixels (PNG) or SVG user units
  int height = 600;  ///< pixels (PNG) or SVG user units
};

/// The format of `path` by its extension (.png or .svg, any case). Throws
/// UsageError naming the path and the two extensions otherwise.
ImageFormat image_format_for(const std::string& path);

/// Parses `--size WIDTHxHEIGHT` (e.g. "800x600"), each 100..10000. Throws
/// UsageError naming the flag and what to write.
std::pair<int, int> parse_image_size(const std::string& text);

/// The gnuplot program to run: `program` when it contains a '/', else the
/// first executable `program` on $PATH. Throws EnvironmentError (exit 4)
/// naming the program and the package to install (gnuplot-nox) when there is
/// none.
std::string find_gnuplot(const std::string& program = "gnuplot");

/// Writes the gnuplot commands and inline data that draw `data` into
/// `output_path` (terminal pngcairo, or png when gnuplot lacks cairo; svg) to
/// `out`, through gnuplot-iostream. `out` is flushed, not closed.
void write_gnuplot_commands(std::FILE* out, const PlotData& data, const ImageSpec& image,
                            const std::string& output_path);

/// The same commands as text (for tests and for reading what was drawn).
std::string gnuplot_script(const PlotData& data, const ImageSpec& image,
                           const std::string& output_path);

/// Draws `data` into `output_path` with the gnuplot at `gnuplot_path` (from
/// find_gnuplot). Throws EnvironmentError with gnuplot's own message when
/// gnuplot fails, produces no valid image, or runs longer than
/// `timeout_seconds` (it is then killed); Interrupted on SIGINT/SIGTERM. In
/// every failure the output file is left as it was.
void render_plot(const PlotData& data, const ImageSpec& image, const std::string& output_path,
                 const std::string& gnuplot_path, double timeout_seconds = 120);

}  // namespace nightjar

// The gnuplot program of `nightjar plot`: the commands and inline data that
// draw a PlotData record (plots/plot.h) as PNG or SVG, written through
// gnuplot-iostream (libgnuplot-iostream-dev), and the check of the image
// gnuplot wrote. It reads the record and computes nothing, and it starts no
// process: harness/cli/gnuplot_run.h runs gnuplot (the program is
// gnuplot-nox) with this script on its stdin.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
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

/// Writes the gnuplot commands and inline data that draw `data` into
/// `output_path` (terminal pngcairo, or png when gnuplot lacks cairo; svg) to
/// `out`, through gnuplot-iostream. `out` is flushed, not closed.
void write_gnuplot_commands(std::FILE* out, const PlotData& data, const ImageSpec& image,
                            const std::string& output_path);

/// The same commands as text (for tests and for reading what was drawn).
std::string gnuplot_script(const PlotData& data, const ImageSpec& image,
                           const std::string& output_path);

/// Why `data` (the bytes of an image file) is not a complete image of
/// `format`, or "" when it is: PNG must start with the PNG signature and end
/// with the IEND chunk (PNG spec §5.2, §11.2.5); SVG must hold an <svg>
/// element and end with </svg>.
std::string image_problem(std::string_view data, ImageFormat format);

}  // namespace nightjar

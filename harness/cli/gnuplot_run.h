// Running gnuplot for `nightjar plot`: finds the program and draws a
// PlotData record with the script plots/gnuplot.h writes.
//
// Safety: gnuplot runs through run_command of the process toolkit
// (workloads/sys/process.h): no shell, `-d` (no ~/.gnuplot), the script on
// its stdin, its output captured for error messages, and it is always
// waited for (killed after a timeout or on SIGINT/SIGTERM): it is never left
// running. It writes a temporary file beside the output, which is checked
// (image_problem: PNG signature / SVG root element) and renamed over the
// output only when gnuplot succeeded, so a failed plot never leaves a
// half-written file.
#pragma once

#include <string>

#include "plots/gnuplot.h"

namespace nightjar {

/// The gnuplot program to run: `program` when it contains a '/', else the
/// first executable `program` on $PATH. Throws EnvironmentError (exit 4)
/// naming the program and the package to install (gnuplot-nox) when there is
/// none.
std::string find_gnuplot(const std::string& program = "gnuplot");

/// Draws `data` into `output_path` with the gnuplot at `gnuplot_path` (from
/// find_gnuplot). Throws EnvironmentError with gnuplot's own message when
/// gnuplot fails, produces no valid image, or runs longer than
/// `timeout_seconds` (it is then killed); Interrupted on SIGINT/SIGTERM. In
/// every failure the output file is left as it was.
void render_plot(const PlotData& data, const ImageSpec& image, const std::string& output_path,
                 const std::string& gnuplot_path, double timeout_seconds = 120);

}  // namespace nightjar

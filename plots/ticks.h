// Readable ticks of a linear value axis, shared by the SVG figures of
// `nightjar publish` (plots/svg.h) and the gnuplot figures of `nightjar plot`
// (plots/gnuplot.h), so both label an axis the same way: ticks at multiples
// of 1, 2 or 5 times a power of ten, labelled in plain digits below 10 000
// ("485.5", "0.012") and with an SI prefix from 10 000 up ("485.5k", "12M")
// or below 0.001 ("250µ"), never in e-notation ("4.855e+05").
#pragma once

#include <string>
#include <vector>

namespace nightjar {

/// The ticks of one axis: values ascending, each with its label.
struct AxisTicks {
  double step = 0;  ///< distance between neighbouring ticks (0: a single tick)
  std::vector<double> values;
  std::vector<std::string> labels;  ///< labels[i] is the text of values[i]
};

/// About `target` ticks (target >= 1; between floor(target / sqrt(2.5)) and
/// floor(sqrt(2.5) * target) + 1 of them) inside [lo, hi]: the multiples of a
/// step of 1, 2 or 5 times a power of ten, the one nearest to (hi - lo) /
/// target, labelled by axis_tick_labels. lo > hi is swapped; lo == hi (to a
/// relative 1e-12) gives the one tick lo with step 0; a non-finite bound
/// gives the one tick lo when lo is finite, else none. Never throws.
AxisTicks nice_ticks(double lo, double hi, int target = 5);

/// The labels of ticks `values` that are `step` apart (step > 0): one SI
/// prefix for the whole axis, chosen by the largest |value| (none below
/// 10 000 and from 0.001 up; k, M, G, T, P, E from 10 000 up; m, µ, n, p below
/// 0.001), with as many decimals as the step needs to tell neighbours apart
/// (485 500 and 486 000 read "485.5k" and "486.0k"; 480 000 and 482 000 read
/// "480k" and "482k"). Zero reads "0", never "-0".
std::vector<std::string> axis_tick_labels(const std::vector<double>& values, double step);

}  // namespace nightjar

// Readable axis ticks (plots/ticks.h).
#include "plots/ticks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace nightjar {
namespace {

// 1, 2 or 5 times a power of ten, the nearest of them to raw (raw > 0) on a
// log scale, so that it is within a factor of sqrt(2.5) of raw (the
// smallest of them >= raw can be 2.5 times raw: a range of 4.03 raw steps
// would get one tick at step 5 instead of four at step 2).
double nice_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double f = norm < std::sqrt(2.0)    ? 1
                   : norm < std::sqrt(10.0) ? 2
                   : norm < std::sqrt(50.0) ? 5
                                            : 10;
  return f * mag;
}

// The SI prefix of an axis whose largest |value| is `top`: its scale and text.
std::pair<double, const char*> si_prefix(double top) {
  static constexpr std::pair<double, const char*> kLarge[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"},
                                                              {1e9, "G"},  {1e6, "M"},  {1e3, "k"}};
  static constexpr std::pair<double, const char*> kSmall[] = {
      {1e-3, "m"}, {1e-6, "\xc2\xb5"}, {1e-9, "n"}, {1e-12, "p"}};
  if (top >= 1e4) {
    for (const auto& [scale, text] : kLarge)
      if (top >= scale) return {scale, text};
  }
  if (top > 0 && top < 1e-3) {
    for (const auto& [scale, text] : kSmall)
      if (top >= scale) return {scale, text};
    return kSmall[std::size(kSmall) - 1];
  }
  return {1.0, ""};
}

}  // namespace

std::vector<std::string> axis_tick_labels(const std::vector<double>& values, double step) {
  double top = 0;
  for (double v : values)
    if (std::isfinite(v)) top = std::max(top, std::abs(v));
  auto [scale, prefix] = si_prefix(top);
  auto decimals_at = [&](double s) {
    if (!(step > 0) || !std::isfinite(step)) return 0;
    return std::clamp(static_cast<int>(std::ceil(-std::log10(step / s) - 1e-9)), 0, 12);
  };
  int decimals = decimals_at(scale);
  // Ticks close together on a large value (10 000.5, 10 001.0) read better in
  // plain digits than as "10.0005k".
  if (scale > 1 && decimals > 2) {
    scale = 1;
    prefix = "";
    decimals = decimals_at(scale);
  }
  std::vector<std::string> out;
  for (double v : values) {
    // A tick within a billionth of a step of zero is zero (no "-0").
    if (std::abs(v) <= std::abs(step) * 1e-9 || v == 0) {
      out.push_back("0");
      continue;
    }
    out.push_back(fmt::format("{:.{}f}{}", v / scale, decimals, prefix));
  }
  return out;
}

AxisTicks nice_ticks(double lo, double hi, int target) {
  AxisTicks t;
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    if (std::isfinite(lo)) t.values = {lo};
  } else {
    if (lo > hi) std::swap(lo, hi);
    if (hi - lo <= std::max(std::abs(hi), std::abs(lo)) * 1e-12) {
      t.values = {lo};
    } else {
      t.step = nice_step((hi - lo) / std::max(target, 1));
      const double first = std::ceil(lo / t.step - 1e-9) * t.step;
      for (int k = 0; first + k * t.step <= hi + t.step * 1e-9; ++k)
        t.values.push_back(first + k * t.step);
    }
  }
  t.labels = axis_tick_labels(t.values, t.step);
  return t;
}

}  // namespace nightjar

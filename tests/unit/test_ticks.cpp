// Unit under test: plots/ticks.h -- the ticks of a value axis shared by the
// SVG and gnuplot figures (issue 36): steps of 1, 2 or 5 times a power of
// ten, labels in plain digits or with one SI prefix per axis, as many
// decimals as the step needs, and never e-notation.
#include "plots/ticks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

namespace nightjar {
namespace {

using Labels = std::vector<std::string>;

TEST(AxisTicks, StepsOfOneTwoOrFiveCoverTheRange) {
  const AxisTicks t = nice_ticks(480000, 497000, 5);
  EXPECT_DOUBLE_EQ(t.step, 5000);
  EXPECT_EQ(t.values, (std::vector<double>{480000, 485000, 490000, 495000}));
  EXPECT_EQ(t.labels, (Labels{"480k", "485k", "490k", "495k"}));
  // The step nearest to the range / target, not the next above it: 4.03
  // steps of 20 000 got one tick ("500k") at 50 000 (issue 36's screenshot).
  const AxisTicks near = nice_ticks(456733, 537288, 4);
  EXPECT_DOUBLE_EQ(near.step, 20000);
  EXPECT_EQ(near.labels, (Labels{"460k", "480k", "500k", "520k"}));
  // Between floor(target / sqrt(2.5)) and floor(sqrt(2.5) * target) + 1 ticks.
  for (int target : {2, 4, 5, 8})
    for (double range = 1; range < 100; range *= 1.07) {
      const std::size_t n = nice_ticks(3, 3 + range, target).values.size();
      EXPECT_GE(n, static_cast<std::size_t>(target / std::sqrt(2.5))) << range << " " << target;
      EXPECT_LE(n, static_cast<std::size_t>(std::sqrt(2.5) * target) + 1) << range << " " << target;
    }
  const AxisTicks u = nice_ticks(0.93, 1.07, 4);
  EXPECT_DOUBLE_EQ(u.step, 0.05);
  EXPECT_EQ(u.labels, (Labels{"0.95", "1.00", "1.05"}));
  const AxisTicks swapped = nice_ticks(1.07, 0.93, 4);
  EXPECT_EQ(swapped.labels, u.labels);
  EXPECT_EQ(nice_ticks(7, 7).labels, (Labels{"7"}));
  EXPECT_TRUE(nice_ticks(NAN, 1).values.empty());
}

TEST(AxisTicks, LabelsAreReadableNumbersNotENotation) {
  // The figure of issue 36: a metric near 485 500 (fmt's {:.4g} gave
  // "4.855e+05").
  EXPECT_EQ(axis_tick_labels({485000, 485500, 486000}, 500),
            (Labels{"485.0k", "485.5k", "486.0k"}));
  EXPECT_EQ(axis_tick_labels({2.4e9, 2.5e9}, 1e8), (Labels{"2.4G", "2.5G"}));
  EXPECT_EQ(axis_tick_labels({0, 5000, 10000}, 5000), (Labels{"0", "5k", "10k"}));
  EXPECT_EQ(axis_tick_labels({1200, 1400}, 200), (Labels{"1200", "1400"}));
  EXPECT_EQ(axis_tick_labels({0.0001, 0.0002}, 0.0001), (Labels{"100\xc2\xb5", "200\xc2\xb5"}));
  EXPECT_EQ(axis_tick_labels({-0.5, 0, 0.5}, 0.5), (Labels{"-0.5", "0", "0.5"}));
  EXPECT_EQ(axis_tick_labels({-1e-17, 1}, 1), (Labels{"0", "1"}));  // never "-0"
  // Close ticks on a large value: plain digits rather than "10.0005k".
  EXPECT_EQ(axis_tick_labels({10000, 10000.5}, 0.5), (Labels{"10000.0", "10000.5"}));
  const std::regex e_notation("[0-9][eE][+-]?[0-9]");
  for (double top : {1e-9, 3e-5, 0.2, 7.0, 485500.0, 3.5e6, 2.5e9, 8e13}) {
    const AxisTicks t = nice_ticks(top * 0.97, top * 1.03, 4);
    ASSERT_GE(t.values.size(), 2u) << top;
    for (const auto& l : t.labels) EXPECT_FALSE(std::regex_search(l, e_notation)) << l;
    for (std::size_t i = 1; i < t.labels.size(); ++i)
      EXPECT_NE(t.labels[i], t.labels[i - 1]) << top;  // neighbours read apart
  }
}

}  // namespace
}  // namespace nightjar

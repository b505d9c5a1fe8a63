#include "harness/metric.h"

#include <stdexcept>

namespace nightjar {

std::string_view to_string(Direction d) {
  return d == Direction::higher_is_better ? "higher" : "lower";
}

std::string_view to_string(MeanKind m) {
  switch (m) {
    case MeanKind::harmonic:
      return "hmean";
    case MeanKind::arithmetic:
      return "amean";
    case MeanKind::geometric:
      return "gmean";
  }
  return "amean";
}

Direction direction_from_string(std::string_view s) {
  if (s == "higher") return Direction::higher_is_better;
  if (s == "lower") return Direction::lower_is_better;
  throw std::invalid_argument("direction must be 'higher' or 'lower', not '" + std::string(s) +
                              "'");
}

const char* mean_label(MeanKind m) {
  switch (m) {
    case MeanKind::harmonic:
      return "Hmean";
    case MeanKind::arithmetic:
      return "Amean";
    case MeanKind::geometric:
      return "Gmean";
  }
  return "Amean";
}

MeanKind mean_kind_from_string(std::string_view s) {
  if (s == "hmean") return MeanKind::harmonic;
  if (s == "amean") return MeanKind::arithmetic;
  if (s == "gmean") return MeanKind::geometric;
  throw std::invalid_argument("mean must be hmean, amean or gmean, not '" + std::string(s) + "'");
}

}  // namespace nightjar

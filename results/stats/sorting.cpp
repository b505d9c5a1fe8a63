// Radix sort of doubles: see sorting.h for the contract.
#include "results/stats/sorting.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace nightjar::stats {

namespace {

constexpr std::size_t kRadixMin = 256;  // below this, std::sort is faster (2048 counts per digit)
constexpr std::uint64_t kSign = std::uint64_t{1} << 63;

// Order-preserving map of a double's bits to an unsigned key, and back.
std::uint64_t to_key(double x) {
  const auto u = std::bit_cast<std::uint64_t>(x);
  return (u & kSign) ? ~u : (u | kSign);
}
double from_key(std::uint64_t k) {
  return std::bit_cast<double>((k & kSign) ? (k & ~kSign) : ~k);
}

}  // namespace

void sort_ascending(std::span<double> values) {
  const std::size_t n = values.size();
  if (n < kRadixMin || n > std::numeric_limits<std::uint32_t>::max()) {
    std::sort(values.begin(), values.end());
    return;
  }
  // Not zero-filled: every element is written before it is read.
  std::unique_ptr<std::uint64_t[]> key_buffer(new std::uint64_t[n]),
      other_buffer(new std::uint64_t[n]);
  std::uint64_t* keys = key_buffer.get();
  std::uint64_t* other = other_buffer.get();
  // 6 digits of 11 bits (the last one 9): per digit, how many keys have each value.
  std::array<std::array<std::uint32_t, 2048>, 6> count{};
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(values[i])) {
      std::sort(values.begin(), values.end());
      return;
    }
    const std::uint64_t k = to_key(values[i]);
    keys[i] = k;
    for (std::size_t d = 0; d < 6; ++d) ++count[d][(k >> (11 * d)) & 0x7ff];
  }
  for (std::size_t d = 0; d < 6; ++d) {
    auto& c = count[d];
    const unsigned shift = static_cast<unsigned>(11 * d);
    if (c[(keys[0] >> shift) & 0x7ff] == n) continue;  // every key has this digit
    std::uint32_t at = 0;
    for (auto& slot : c) {  // counts -> first position of each digit value
      const std::uint32_t here = slot;
      slot = at;
      at += here;
    }
    for (std::size_t i = 0; i < n; ++i) {  // stable
      const std::uint64_t k = keys[i];
      other[c[(k >> shift) & 0x7ff]++] = k;
    }
    std::swap(keys, other);
  }
  for (std::size_t i = 0; i < n; ++i) values[i] = from_key(keys[i]);
}

}  // namespace nightjar::stats

// Sorting of sample vectors for the order statistics (median, best-xx means,
// quantiles): compare sorts every side's samples of every row once, up to a
// million values (bench/compare_bench.cpp), and std::sort of doubles was a
// tenth of its time (issue 19). Part of the statistics module
// (results/stats/, docs/statistics.md "Conventions").
#pragma once

#include <span>

namespace nightjar::stats {

/// Sorts `values` ascending, into the sequence std::sort(begin, end) gives
/// (ascending order of doubles is unique up to equal values: only -0.0 and
/// +0.0, which compare equal, may come in another order; here -0.0 is first).
/// Every statistic computed from the result therefore equals the one computed
/// from std::sort's.
///
/// Method: least-significant-digit radix sort on the IEEE-754 bit pattern
/// mapped to an order-preserving unsigned key (sign bit flipped for positive
/// values, all bits flipped for negative ones), 6 passes of 11 bits (the last
/// one 9), a pass skipped when every key has the same digit there (samples of
/// one metric share sign and exponent, so the top pass is usually skipped).
/// O(n) time; O(n) extra memory (two key buffers of n 64-bit words). On 5 000
/// lognormal samples (CoeffVar 2%) it takes 0.3 of std::sort's time (23 vs
/// 75 ms per million values, this machine). Fewer than 256 values (std::sort
/// is faster there), or any NaN among them (std::sort's order is then
/// unspecified): std::sort itself.
void sort_ascending(std::span<double> values);

}  // namespace nightjar::stats

// Mann-Whitney U (Wilcoxon rank-sum) test: does one sample tend to be smaller
// than another? Distribution-free, so it suits timings, which are skewed and
// heavy-tailed; exact for the small repetition counts benchmarks use.
#pragma once

#include <cstddef>
#include <vector>

namespace nkbench {

// One-sided p-value of "x tends to be smaller than y": the probability, if both
// came from one distribution, of a U statistic (pairs with x_i < y_j, ties
// counting one half) at least as large as observed. The null distribution is
// exact up to 10000 pairs (ties round U down, erring towards a larger p), normal
// beyond.
// Returns 1 when either sample is empty.
double probabilityNotSmaller(const std::vector<double>& x, const std::vector<double>& y);

// The smallest p probabilityNotSmaller can return for samples of m and n values
// (every x below every y): 1 / C(m+n, m) while exact. 2 against 2 repetitions
// never go below 1/6, 3 against 3 below 0.05. 1 when either is empty.
double smallestPossibleP(std::size_t m, std::size_t n);

}  // namespace nkbench

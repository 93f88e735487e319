// Mann-Whitney U (Wilcoxon rank-sum) test: does one sample tend to be smaller
// than another? Distribution-free, so it suits timings, which are skewed and
// heavy-tailed; exact for the small repetition counts benchmarks use.
#pragma once

#include <vector>

namespace nkbench {

// One-sided p-value of "x tends to be smaller than y": the probability, if both
// came from one distribution, of a U statistic (pairs with x_i < y_j, ties
// counting one half) at least as large as observed. The null distribution is
// exact up to 10000 pairs (ties round U down, erring towards a larger p), normal
// beyond.
// Returns 1 when either sample is empty.
double probabilityNotSmaller(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace nkbench

// Summary statistics of repeated measurements, shared by the timing, the
// regression check and the reports so that every "median" means the same.
#pragma once

#include <vector>

namespace nkbench {

// The q-quantile (0 <= q <= 1) of `values`, interpolated linearly between ranks; 0 when empty.
double quantile(std::vector<double> values, double q);
double median(std::vector<double> values);  // quantile 0.5: the mean of the middle two for an even count
double mean(const std::vector<double>& values);  // 0 when empty
// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
double sampleStddev(const std::vector<double>& values);

}  // namespace nkbench

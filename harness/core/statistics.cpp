#include "harness/core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace nkbench {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = q * double(values.size() - 1);
  const auto below = static_cast<std::size_t>(rank);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - double(below)) * (values[above] - values[below]);
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
}

double sampleStddev(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double average = mean(values);
  double squares = 0.0;
  for (double value : values) squares += (value - average) * (value - average);
  return std::sqrt(squares / double(values.size() - 1));
}

}  // namespace nkbench

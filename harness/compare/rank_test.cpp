#include "harness/compare/rank_test.h"

#include <cmath>
#include <cstddef>

namespace nkbench {
namespace {

// Number of ways each U in [0, m*n] arises among the C(m+n, m) equally likely
// rankings: the coefficients of the Gaussian binomial [m+n choose m]_q =
// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one factor at a time.
std::vector<double> uCounts(std::size_t m, std::size_t n) {
  std::vector<double> poly(m * n + 1, 0.0);
  poly[0] = 1.0;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t u = poly.size(); u-- > n + i;) poly[u] -= poly[u - (n + i)];  // * (1 - q^(n+i))
    for (std::size_t u = i; u < poly.size(); ++u) poly[u] += poly[u - i];            // / (1 - q^i)
  }
  return poly;
}

// Beyond this many pairs the exact count costs m * m*n steps; the normal
// approximation is then accurate to well under a percent.
constexpr std::size_t kExactPairLimit = 10000;

double normalTail(double u, std::size_t m, std::size_t n) {
  const double mean = 0.5 * double(m) * double(n);
  const double sd = std::sqrt(double(m) * double(n) * double(m + n + 1) / 12.0);
  const double z = (u - 0.5 - mean) / sd;  // continuity correction
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

}  // namespace

double probabilityNotSmaller(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || y.empty()) return 1.0;
  double u = 0.0;
  for (double xi : x)
    for (double yj : y) u += xi < yj ? 1.0 : xi == yj ? 0.5 : 0.0;
  if (x.size() * y.size() > kExactPairLimit) return normalTail(u, x.size(), y.size());
  const std::vector<double> counts = uCounts(x.size(), y.size());
  double total = 0.0, at_least = 0.0;
  const auto observed = static_cast<std::size_t>(std::floor(u));
  for (std::size_t v = 0; v < counts.size(); ++v) {
    total += counts[v];
    if (v >= observed) at_least += counts[v];
  }
  return at_least / total;
}

double smallestPossibleP(std::size_t m, std::size_t n) {
  if (m == 0 || n == 0) return 1.0;
  if (m * n > kExactPairLimit) return normalTail(double(m * n), m, n);
  double ways = 1.0;  // C(m+n, m), built as a product that stays integral at each step
  for (std::size_t i = 1; i <= m; ++i) ways = ways * double(n + i) / double(i);
  return 1.0 / ways;
}

}  // namespace nkbench

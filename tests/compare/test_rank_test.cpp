#include <gtest/gtest.h>

#include "harness/compare/rank_test.h"

namespace nkbench {
namespace {

TEST(RankTest, CompleteSeparationHasTheSmallestExactP) {
  // Every x below every y: 1 ranking of C(10, 5) = 252.
  EXPECT_NEAR(probabilityNotSmaller({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 1.0 / 252.0, 1e-15);
  // The other way round nothing is smaller: certain.
  EXPECT_DOUBLE_EQ(probabilityNotSmaller({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}), 1.0);
}

TEST(RankTest, MatchesTheTabulatedDistribution) {
  // m = n = 3: P(U >= 8) = 2/20 (U = 9: one ranking, U = 8: one ranking).
  EXPECT_NEAR(probabilityNotSmaller({1, 2, 4}, {3, 5, 6}), 2.0 / 20.0, 1e-15);
  // Unequal sizes: m = 2, n = 4, U = 8 (all smaller): 1 / C(6, 2).
  EXPECT_NEAR(probabilityNotSmaller({1, 2}, {3, 4, 5, 6}), 1.0 / 15.0, 1e-15);
}

TEST(RankTest, InterleavedSamplesAreNotSignificant) {
  EXPECT_GT(probabilityNotSmaller({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}), 0.2);
  EXPECT_GT(probabilityNotSmaller({2, 2, 2}, {2, 2, 2}), 0.5);  // all ties
}

TEST(RankTest, LargeSamplesUseTheNormalTailConsistently) {
  std::vector<double> x, y;
  for (int i = 0; i < 120; ++i) {
    x.push_back(i);
    y.push_back(i + 30.0);
  }
  const double shifted = probabilityNotSmaller(x, y);
  EXPECT_LT(shifted, 1e-3);
  EXPECT_NEAR(probabilityNotSmaller(x, x), 0.5, 0.05);
}

TEST(RankTest, TheSmallestPossiblePIsThatOfCompleteSeparation) {
  EXPECT_NEAR(smallestPossibleP(2, 2), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(smallestPossibleP(3, 3), 1.0 / 20.0, 1e-15);
  EXPECT_NEAR(smallestPossibleP(2, 4), 1.0 / 15.0, 1e-15);
  EXPECT_NEAR(smallestPossibleP(5, 5), probabilityNotSmaller({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 1e-15);
  EXPECT_LT(smallestPossibleP(120, 120), 1e-30);  // normal tail
  EXPECT_DOUBLE_EQ(smallestPossibleP(0, 3), 1.0);
}

TEST(RankTest, EmptySamplesProveNothing) {
  EXPECT_DOUBLE_EQ(probabilityNotSmaller({}, {1.0}), 1.0);
  EXPECT_DOUBLE_EQ(probabilityNotSmaller({1.0}, {}), 1.0);
}

}  // namespace
}  // namespace nkbench

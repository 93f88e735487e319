#include <gtest/gtest.h>

#include "harness/run/timing.h"

namespace nkbench {
namespace {

TEST(TimingSummary, MedianBestAndSpreadOfAnOddCount) {
  const TimingResult result = summarizeTimes({5.0, 1.0, 4.0, 2.0, 3.0});
  EXPECT_DOUBLE_EQ(result.median_s, 3.0);
  EXPECT_DOUBLE_EQ(result.best_s, 1.0);
  EXPECT_DOUBLE_EQ(result.mean_s, 3.0);
  EXPECT_DOUBLE_EQ(result.iqr_s, 2.0);  // quartiles 2 and 4
  EXPECT_NEAR(result.stddev_s, 1.5811388300841898, 1e-12);
  EXPECT_EQ(result.seconds, (std::vector<double>{5.0, 1.0, 4.0, 2.0, 3.0}));  // run order kept
}

TEST(TimingSummary, QuartilesInterpolateBetweenRanks) {
  const TimingResult result = summarizeTimes({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(result.median_s, 2.5);
  EXPECT_DOUBLE_EQ(result.iqr_s, 3.25 - 1.75);
}

TEST(TimingSummary, OneOutlierBarelyMovesTheIqr) {
  const TimingResult steady = summarizeTimes({1.0, 1.0, 1.01, 1.0, 1.0, 1.01, 1.0});
  const TimingResult outlier = summarizeTimes({1.0, 1.0, 1.01, 9.0, 1.0, 1.01, 1.0});
  EXPECT_LE(outlier.iqr_s, 0.011);  // the 9.0 only shifts the upper quartile by one rank
  EXPECT_GT(steady.iqr_s, 0.0);
  EXPECT_GT(outlier.stddev_s, 100 * steady.stddev_s);
}

TEST(TimingSummary, OneSampleHasNoSpread) {
  const TimingResult result = summarizeTimes({2.0});
  EXPECT_DOUBLE_EQ(result.median_s, 2.0);
  EXPECT_DOUBLE_EQ(result.iqr_s, 0.0);
  EXPECT_DOUBLE_EQ(result.stddev_s, 0.0);
}

TEST(TimingSummary, NothingToSummarize) {
  const TimingResult result = summarizeTimes({});
  EXPECT_TRUE(result.seconds.empty());
  EXPECT_DOUBLE_EQ(result.median_s, 0.0);
}

}  // namespace
}  // namespace nkbench

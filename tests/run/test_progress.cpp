#include <gtest/gtest.h>

#include "harness/run/progress.h"

namespace nkbench {
namespace {

TEST(ProgressLine, ShowsBarCountActivityAndEstimate) {
  // 10 of 40 cases in 30 s: 30 more cases at 3 s each.
  const std::string line = formatProgressLine(10, 40, "gemm-1 mlir: verify", 30.0, 100);
  EXPECT_EQ(line, "[#####---------------] 10/40 gemm-1 mlir: verify  1m30s left");
}

TEST(ProgressLine, NoEstimateBeforeTheFirstCase) {
  EXPECT_EQ(formatProgressLine(0, 3, "a", 5.0, 100), "[--------------------] 0/3 a  ETA ?");
}

TEST(ProgressLine, LongRunsShowHours) {
  EXPECT_NE(formatProgressLine(1, 100, "", 120.0, 100).find("3h18m left"), std::string::npos);
}

TEST(ProgressLine, FitsTheTerminalByCuttingTheActivity) {
  const std::string line = formatProgressLine(2, 4, std::string(200, 'x'), 4.0, 60);
  EXPECT_EQ(line.size(), 60u);
  EXPECT_NE(line.find("4s left"), std::string::npos);
  EXPECT_EQ(formatProgressLine(4, 4, "done", 8.0, 100), "[####################] 4/4 done  0s left");
}

// A tuning budget bounds the estimate: 10 of 40 steps in 30 s would take 90 s more, the budget ends at 60.
TEST(ProgressLine, ATimeLimitBoundsTheEstimate) {
  EXPECT_NE(formatProgressLine(10, 40, "", 30.0, 100, 60.0).find("30s left"), std::string::npos);
  EXPECT_NE(formatProgressLine(10, 40, "", 30.0, 100, 600.0).find("1m30s left"), std::string::npos);
  EXPECT_NE(formatProgressLine(0, 40, "", 5.0, 100, 60.0).find("55s left"), std::string::npos);
}

}  // namespace
}  // namespace nkbench

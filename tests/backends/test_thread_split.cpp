// What threads share out: a GEMM's C blocks, narrowed where they are too few,
// and BRGEMMs, which are one block and are skipped on more than one thread.
#include <gtest/gtest.h>

#include "kernels/common/blocked_gemm.h"
#include "kernels/common/thread_split.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return test::makeProblem(m, n, k, 1, false, OpKind::Gemm); }

TEST(ThreadSplit, BlocksShareOutEvenlyWhenAtMostAnEighthOfTheTurnsIdle) {
  const GemmBlocking block{32, 32, 64};
  EXPECT_TRUE(sharesOutEvenly(gemm(32, 32, 64), block, 1));    // one block, one thread
  EXPECT_FALSE(sharesOutEvenly(gemm(32, 32, 64), block, 2));   // one thread idle
  EXPECT_FALSE(sharesOutEvenly(gemm(96, 32, 64), block, 2));   // 3 blocks in 4 turns
  EXPECT_TRUE(sharesOutEvenly(gemm(64, 64, 64), block, 2));    // 4 in 4
  EXPECT_TRUE(sharesOutEvenly(gemm(32, 7 * 32, 64), block, 2));  // 7 in 8: an eighth idle
  EXPECT_FALSE(sharesOutEvenly(gemm(32, 5 * 32, 64), block, 2));  // 5 in 6
  EXPECT_TRUE(sharesOutEvenly(gemm(65, 32, 64), block, 3));    // 3 blocks (the last one row) in 3
}

// The preferred block, narrowed by halves until the threads have blocks: the
// first-named dimension down to its least multiple, then the other.
TEST(ThreadSplit, TooFewBlocksAreNarrowedInTheNamedOrderDownToTheLeastBlock) {
  const auto choose_for = [](const Problem& problem) {
    return [problem](const GemmBlocking& block) { return chooseGemmBlocking(problem, block, 8, 16); };
  };
  const GemmBlocking preferred{64, 32, 128}, least{8, 16, 128};
  const Problem small = gemm(32, 32, 4096);
  // One thread: the blocks as chosen.
  EXPECT_EQ(blockingForThreads(small, preferred, least, 1, NarrowFirst::Rows, choose_for(small)).bm, 32);
  // Two: rows 32 -> 16 (halved from the 32 chosen, not the 64 preferred).
  GemmBlocking two = blockingForThreads(small, preferred, least, 2, NarrowFirst::Rows, choose_for(small));
  EXPECT_EQ(two.bm, 16);
  EXPECT_EQ(two.bn, 32);
  EXPECT_EQ(two.bk, 128);
  // Columns first where asked.
  two = blockingForThreads(small, preferred, least, 2, NarrowFirst::Columns, choose_for(small));
  EXPECT_EQ(two.bm, 32);
  EXPECT_EQ(two.bn, 16);
  // Sixteen threads: rows down to 8, then columns down to 16: 8 blocks, the least there are.
  const GemmBlocking many = blockingForThreads(small, preferred, least, 16, NarrowFirst::Rows, choose_for(small));
  EXPECT_EQ(many.bm, 8);
  EXPECT_EQ(many.bn, 16);
  // Enough blocks already: unchanged.
  const Problem large = gemm(1024, 1024, 1024);
  const GemmBlocking wide = blockingForThreads(large, preferred, least, 2, NarrowFirst::Rows, choose_for(large));
  EXPECT_EQ(wide.bm, 64);
  EXPECT_EQ(wide.bn, 32);
}

TEST(ThreadSplit, ABrgemmOnMoreThanOneThreadIsSkippedWithItsReason) {
  const Problem brgemm = test::makeProblem(32, 32, 32, 4, false);
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", brgemm, 1), std::nullopt);
  EXPECT_NE(brgemmThreadsUnsupported("mlir", brgemm, 2).value_or("").find("one C block"), std::string::npos);
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", gemm(32, 32, 32), 2), std::nullopt);
}

}  // namespace
}  // namespace nkbench

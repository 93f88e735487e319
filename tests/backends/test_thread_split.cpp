// What threads share out: a GEMM's C blocks, narrowed where they are too few,
// and a BRGEMM's C rows, in panels of whole register blocks of rows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/common/blocked_gemm.h"
#include "kernels/common/thread_split.h"
#include "tests/support/row_panel_layout.h"
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

// The panels in one line, checked to cover M in order.
std::string layout(const std::vector<RowPanel>& panels) {
  std::int64_t next_row = 0;
  for (const RowPanel& panel : panels) {
    EXPECT_EQ(panel.first_row, next_row);
    next_row += panel.rows;
  }
  return test::rowPanelLayout(panels);
}

// One panel per thread, whole multiples of 8 rows but the last, which takes
// the rest, each near an even share.
TEST(ThreadSplit, ABrgemmsRowsAreSharedOutOnePanelPerThread) {
  EXPECT_EQ(layout(brgemmThreadPanels(25, 1)), "25@0");
  EXPECT_EQ(layout(brgemmThreadPanels(64, 2)), "32@0+32@1");
  EXPECT_EQ(layout(brgemmThreadPanels(17, 2)), "8@0+9@1");    // not 16 + 1
  EXPECT_EQ(layout(brgemmThreadPanels(25, 2)), "16@0+9@1");   // not 8 + 17
  EXPECT_EQ(layout(brgemmThreadPanels(49, 2)), "24@0+25@1");  // not 32 + 17
  EXPECT_EQ(layout(brgemmThreadPanels(65, 2)), "32@0+33@1");
  EXPECT_EQ(layout(brgemmThreadPanels(9, 2)), "8@0+1@1");
  EXPECT_EQ(layout(brgemmThreadPanels(100, 3)), "32@0+32@1+36@2");
  EXPECT_EQ(layout(brgemmThreadPanels(20, 3)), "8@0+8@1+4@2");
  // Each panel the multiple nearest an even share of the rows left: no last
  // panel of 23 (8 + 8 + 8 + 23) on four threads.
  EXPECT_EQ(layout(brgemmThreadPanels(47, 4)), "8@0+16@1+8@2+15@3");
  EXPECT_EQ(layout(brgemmThreadPanels(100, 8)), "16@0+8@1+16@2+8@3+16@4+8@5+16@6+12@7");
  EXPECT_EQ(brgemmThreadPanels(8, 2).size(), 1u);   // too short for two
  EXPECT_EQ(brgemmThreadPanels(16, 4).size(), 2u);  // too short for four
}

// A BRGEMM whose rows make a panel for every thread runs; one that makes
// fewer is skipped, naming the rows and panels, never run on fewer threads.
TEST(ThreadSplit, ABrgemmWithFewerPanelsThanThreadsIsSkippedWithItsReason) {
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(8, 32, 32, 4, false), 1), std::nullopt);
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(9, 32, 32, 4, false), 2), std::nullopt);
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(64, 32, 32, 4, false), 2), std::nullopt);
  EXPECT_EQ(brgemmThreadsUnsupported("libxsmm", test::makeProblem(8, 32, 32, 4, false), 2),
            "libxsmm: 2 threads share out a BRGEMM's C rows in panels of whole multiples of 8 rows (the last the "
            "rest), and its 8 rows make one");
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(1, 32, 32, 4, false), 2),
            "mlir: 2 threads share out a BRGEMM's C rows in panels of whole multiples of 8 rows (the last the rest), "
            "and its 1 row makes one");
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(16, 32, 32, 4, false), 4),
            "mlir: 4 threads share out a BRGEMM's C rows in panels of whole multiples of 8 rows (the last the rest), "
            "and its 16 rows make only 2");
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", test::makeProblem(20, 32, 32, 4, false), 3), std::nullopt);
  EXPECT_EQ(brgemmThreadsUnsupported("mlir", gemm(8, 32, 32), 2), std::nullopt);
}

// A panel cut to fit: equal pieces of whole multiples where one fits, each
// on its panel's thread; the description names every height.
TEST(ThreadSplit, PanelsAreCutIntoEqualPiecesOnTheirThreads) {
  EXPECT_EQ(layout(cutRowPanels(brgemmThreadPanels(600, 2), 128, 8)), "104@0+104@0+88@0+104@1+104@1+96@1");
  EXPECT_EQ(layout(cutRowPanels(brgemmThreadPanels(17, 2), 2, 8)), "2@0+2@0+2@0+2@0+2@1+2@1+2@1+2@1+1@1");
  EXPECT_EQ(layout(cutRowPanels(brgemmThreadPanels(64, 2), 128, 8)), "32@0+32@1");
  EXPECT_EQ(describeRowPanels(brgemmThreadPanels(64, 2)), "2 row panels of 32 rows");
  EXPECT_EQ(describeRowPanels(brgemmThreadPanels(17, 2)), "2 row panels (1 of 8 rows, 1 of 9)");
  EXPECT_EQ(describeRowPanels(cutRowPanels(brgemmThreadPanels(600, 2), 128, 8)),
            "6 row panels (2 of 104 rows, 1 of 88, 2 of 104, 1 of 96)");
}

}  // namespace
}  // namespace nkbench

// GEMM as BRGEMM calls over blocked operands: block choice and the driver itself,
// with a plain loop standing in for the block kernel.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "harness/core/error.h"
#include "kernels/common/blocked_gemm.h"
#include "reference/compare.h"
#include "operands/fill.h"
#include "reference/reference_gemm.h"
#include "tests/support/test_problems.h"

namespace nkbench {
namespace {

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return test::makeProblem(m, n, k, 1, false, OpKind::Gemm); }

void expectBlocking(const GemmBlocking& got, std::int64_t bm, std::int64_t bn, std::int64_t bk) {
  EXPECT_EQ(got.bm, bm);
  EXPECT_EQ(got.bn, bn);
  EXPECT_EQ(got.bk, bk);
}

TEST(GemmBlocking, LargeDimensionsTakeThePreferredBlock) {
  expectBlocking(chooseGemmBlocking(gemm(1024, 2560, 1024), {64, 32, 128}, 8, 16), 64, 32, 128);
}

TEST(GemmBlocking, SmallDimensionsAreTakenWholeWithoutPadding) {
  expectBlocking(chooseGemmBlocking(gemm(7, 33, 5), {64, 32, 128}, 8, 16), 7, 33, 5);
}

TEST(GemmBlocking, SplitsAreBalancedAndPaddingStaysSmall) {
  // M: two blocks of 56 (rounded to the 8-row register block); K: two of 65.
  // N = 37 rounded to 16 would pad 27 columns: taken whole instead.
  expectBlocking(chooseGemmBlocking(gemm(100, 37, 129), {64, 32, 128}, 8, 16), 56, 37, 65);
}

// More blocks than the fewest where they pad much less (by a sixteenth of the
// extent and a register block at least).
TEST(GemmBlocking, MoreBlocksWhereTheyPadMuchLess) {
  // 200 rows: 4 x 56 = 224 (24 zero rows); 5 x 40 = 200.
  expectBlocking(chooseGemmBlocking(gemm(200, 64, 64), {64, 32, 128}, 8, 16), 40, 32, 64);
  // 203: 4 x 56 = 224, 5 x 48 = 240, 6 x 40 = 240: the fewest stay.
  expectBlocking(chooseGemmBlocking(gemm(203, 64, 64), {64, 32, 128}, 8, 16), 56, 32, 64);
  // 1000: 16 x 64 = 1024 pads 2.4%; 18 x 56 = 1008 saves less than a sixteenth.
  expectBlocking(chooseGemmBlocking(gemm(1000, 64, 64), {64, 32, 128}, 8, 16), 64, 32, 64);
  // K = 129 in 2 x 65 pads one column: not worth a third block of 43.
  expectBlocking(chooseGemmBlocking(gemm(64, 64, 129), {64, 32, 128}, 8, 16), 64, 32, 65);
}

// c = sum over the batch of A (m x k) * B (k x n): the BRGEMM `block` of dense operands.
void plainBlockKernel(const Problem& block, const float* a, const float* bb, float* c) {
  for (std::int64_t i = 0; i < block.m * block.n; ++i) c[i] = 0.0f;
  for (std::int64_t l = 0; l < block.batch; ++l)
    for (std::int64_t i = 0; i < block.m; ++i)
      for (std::int64_t p = 0; p < block.k; ++p)
        for (std::int64_t j = 0; j < block.n; ++j)
          c[i * block.n + j] += a[(l * block.m + i) * block.k + p] * bb[(l * block.k + p) * block.n + j];
}

// The plain kernel for each block shape, as the backends compile one each.
template <class Gemm>
auto plainKernels(const Gemm& blocked) {
  return [&blocked](BlockShape shape, const float* a, const float* bb, float* block) {
    plainBlockKernel(blocked.blockProblem(shape), a, bb, block);
  };
}

TEST(BlockedGemm, PackComputeUnpackEqualsTheReferenceOnRaggedShapes) {
  for (const BlockEdges edges : {BlockEdges::Padded, BlockEdges::Exact})
    for (const Problem& p : {gemm(100, 37, 129), gemm(70, 3, 1), gemm(1, 1, 1), gemm(65, 66, 67)}) {
      const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
      BlockedGemm blocked(p, chooseGemmBlocking(p, {32, 16, 32}, 8, 16), BLayout::Plain, BlockOrder::MBlocksOuter,
                          edges);
      FloatBuffer c(data.c_init.size(), -1.0f);
      blocked.pack(data.a.data(), data.b.data());
      blocked.compute(plainKernels(blocked));
      blocked.unpack(c.data());
      const Verification v = verifyResult(p, FillMode::ExactInteger, c.data(),
                                          referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data()));
      EXPECT_EQ(v.status, VerifyStatus::Passed) << p.describe() << ": " << v.detail;
    }
}

// Exact edges: the last block row and column are blocks of their own extent,
// each shape called with its own kernel, so no zero is computed; Padded edges
// run every block whole.
TEST(BlockedGemm, ExactEdgesRunTheEdgeBlocksAtTheirOwnExtent) {
  const Problem p = gemm(70, 37, 20);  // blocks of 32 x 16: 3 x 3, the last 6 rows and 5 columns
  BlockedGemm exact(p, {32, 16, 16}, BLayout::Plain, BlockOrder::MBlocksOuter, BlockEdges::Exact);
  EXPECT_EQ(exact.blockShapes(), (std::vector<BlockShape>{BlockShape::Whole, BlockShape::RowEdge,
                                                          BlockShape::ColumnEdge, BlockShape::Corner}));
  for (const auto& [shape, m, n] : {std::tuple{BlockShape::Whole, 32, 16}, {BlockShape::RowEdge, 6, 16},
                                    {BlockShape::ColumnEdge, 32, 5}, {BlockShape::Corner, 6, 5}}) {
    EXPECT_EQ(exact.blockProblem(shape).m, m);
    EXPECT_EQ(exact.blockProblem(shape).n, n);
    EXPECT_EQ(exact.blockProblem(shape).k, 16);
    EXPECT_EQ(exact.blockProblem(shape).batch, 2);  // K stays padded to whole blocks
  }
  EXPECT_EQ(exact.edgeBlocksText(), ", edge blocks 6x16, 32x5, 6x5");
  std::map<BlockShape, int> calls;
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  exact.pack(data.a.data(), data.b.data());
  exact.compute([&](BlockShape shape, const float*, const float*, float*) { ++calls[shape]; });
  EXPECT_EQ(calls, (std::map<BlockShape, int>{{BlockShape::Whole, 4}, {BlockShape::RowEdge, 2},
                                              {BlockShape::ColumnEdge, 2}, {BlockShape::Corner, 1}}));

  BlockedGemm padded(p, {32, 16, 16});
  EXPECT_EQ(padded.blockShapes(), std::vector<BlockShape>{BlockShape::Whole});
  EXPECT_EQ(padded.edgeBlocksText(), "");
  // Whole blocks only where the extents are multiples of the blocks; one edge where one is not.
  EXPECT_EQ(BlockedGemm(gemm(64, 32, 20), {32, 16, 16}, BLayout::Plain, BlockOrder::MBlocksOuter, BlockEdges::Exact)
                .blockShapes(),
            std::vector<BlockShape>{BlockShape::Whole});
  EXPECT_EQ(BlockedGemm(gemm(64, 37, 20), {32, 16, 16}, BLayout::Plain, BlockOrder::MBlocksOuter, BlockEdges::Exact)
                .blockShapes(),
            (std::vector<BlockShape>{BlockShape::Whole, BlockShape::ColumnEdge}));
}

// The same blocks either way; N blocks outer calls every M block of one B panel in turn.
TEST(BlockedGemm, BlockOrderDecidesWhichPanelStaysInCache) {
  const Problem p = gemm(64, 48, 16);
  for (BlockOrder order : {BlockOrder::MBlocksOuter, BlockOrder::NBlocksOuter}) {
    const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
    BlockedGemm blocked(p, {32, 16, 16}, BLayout::Plain, order);
    EXPECT_EQ(blocked.order(), order);
    blocked.pack(data.a.data(), data.b.data());
    std::vector<const float*> b_panels;
    FloatBuffer c(data.c_init.size(), -1.0f);
    blocked.compute([&](BlockShape shape, const float* a, const float* bb, float* block) {
      b_panels.push_back(bb);
      plainBlockKernel(blocked.blockProblem(shape), a, bb, block);
    });
    blocked.unpack(c.data());
    ASSERT_EQ(b_panels.size(), 6u);  // 2 M blocks x 3 N blocks
    const bool b_panel_held = b_panels[0] == b_panels[1] && b_panels[2] == b_panels[3];
    EXPECT_EQ(b_panel_held, order == BlockOrder::NBlocksOuter);
    const Verification v = verifyResult(p, FillMode::ExactInteger, c.data(),
                                        referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data()));
    EXPECT_EQ(v.status, VerifyStatus::Passed) << v.detail;
  }
}

// The blocked C starts as NaN, as the harness's C does for beta 0: a block
// kernel that adds to its block instead of writing it, or skips a block, fails.
TEST(BlockedGemm, ABlockKernelThatAddsToItsBlockOrSkipsOneFails) {
  const Problem p = gemm(64, 48, 16);
  const ProblemData data = makeProblemData(p, FillMode::ExactInteger);
  const ReferenceResult reference = referenceGemm(p, data.a.data(), data.b.data(), data.c_init.data());
  BlockedGemm blocked(p, {32, 16, 16});
  const GemmBlocking b = blocked.blocking();
  blocked.pack(data.a.data(), data.b.data());
  int calls = 0;
  blocked.compute([&](BlockShape shape, const float* a, const float* bb, float* block) {
    if (calls++ == 3) return;  // one block skipped
    plainBlockKernel(blocked.blockProblem(shape), a, bb, block);
  });
  FloatBuffer c(data.c_init.size());
  blocked.unpack(c.data());
  EXPECT_EQ(verifyResult(p, FillMode::ExactInteger, c.data(), reference).mismatches, 32 * 16);

  BlockedGemm adding(p, {32, 16, 16});
  adding.pack(data.a.data(), data.b.data());
  adding.compute([&](BlockShape, const float* a, const float* bb, float* block) {
    for (std::int64_t i = 0; i < b.bm; ++i)
      for (std::int64_t k = 0; k < b.bk; ++k)
        for (std::int64_t j = 0; j < b.bn; ++j) block[i * b.bn + j] += a[i * b.bk + k] * bb[k * b.bn + j];
  });
  adding.unpack(c.data());
  EXPECT_EQ(verifyResult(p, FillMode::ExactInteger, c.data(), reference).status, VerifyStatus::Failed);
}

TEST(BlockedGemm, RefusesProblemsItCannotRun) {
  EXPECT_THROW(BlockedGemm(test::makeProblem(8, 8, 8, 2, false), {8, 8, 8}), Error);
}

}  // namespace
}  // namespace nkbench

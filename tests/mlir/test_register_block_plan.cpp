#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "kernels/mlir/vector/register_block_plan.h"

namespace nkbench::mlir_backend {
namespace {

Problem brgemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

// Every element of C is covered exactly once, every block divides its region,
// and no block needs more accumulators than the schedule's register block.
void expectValidPlan(const Problem& p, const Schedule& s) {
  const RegisterBlockPlan plan = planRegisterBlocks(p, s);
  std::int64_t row = 0;
  for (const RowBand& band : plan.bands) {
    EXPECT_EQ(band.offset, row);
    ASSERT_GT(band.rows, 0);
    EXPECT_EQ(band.size % band.rows, 0);
    std::int64_t col = 0;
    for (const ColumnPanel& panel : band.panels) {
      EXPECT_EQ(panel.offset, col);
      ASSERT_GT(panel.cols, 0);
      ASSERT_GT(panel.lanes, 0);
      EXPECT_EQ(panel.size % panel.cols, 0);
      EXPECT_EQ(panel.cols % panel.lanes, 0);
      EXPECT_LE(panel.lanes, s.vector_lanes);
      EXPECT_LE(band.rows * (panel.cols / panel.lanes), s.accumulators())
          << p.describe() << " block " << band.rows << "x" << panel.cols;
      col += panel.size;
    }
    EXPECT_EQ(col, p.n);
    row += band.size;
  }
  EXPECT_EQ(row, p.m);
}

TEST(RegisterBlockPlan, DivisibleShapeIsOneRegionOfTheScheduleBlock) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(64, 64, 64, 8), s);
  ASSERT_EQ(plan.bands.size(), 1u);
  ASSERT_EQ(plan.bands[0].panels.size(), 1u);
  EXPECT_EQ(plan.bands[0].rows, 8);
  EXPECT_EQ(plan.bands[0].panels[0].cols, 32);
  EXPECT_EQ(plan.bands[0].panels[0].lanes, 16);
}

TEST(RegisterBlockPlan, RemaindersGetSmallerBlocksNotRefusals) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(7, 33, 5, 1), s);
  ASSERT_EQ(plan.bands.size(), 1u);
  EXPECT_EQ(plan.bands[0].rows, 7);
  ASSERT_EQ(plan.bands[0].panels.size(), 2u);
  EXPECT_EQ(plan.bands[0].panels[0].cols, 32);  // 7 rows x 2 vectors
  EXPECT_EQ(plan.bands[0].panels[1].cols, 1);   // 1-wide tail
  EXPECT_EQ(plan.bands[0].panels[1].lanes, 1);
}

TEST(RegisterBlockPlan, ShortBandsWidenTheirBlocks) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(2, 512, 8, 1), s);
  ASSERT_EQ(plan.bands.size(), 1u);
  EXPECT_EQ(plan.bands[0].panels[0].cols, 8 * 16);  // 2 rows x 8 vectors = 16 accumulators
}

TEST(RegisterBlockPlan, CoversAnyShapeOnEverySchedule) {
  for (const Schedule& s : scheduleTable())
    for (std::int64_t m : {1, 3, 4, 7, 8, 9, 17, 64, 100})
      for (std::int64_t n : {1, 5, 8, 15, 16, 17, 31, 32, 33, 65, 100}) expectValidPlan(brgemm(m, n, 3, 2), s);
}

TEST(RegisterBlockPlan, BatchesBeyondTheCacheBudgetRunInChunks) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const CacheSizes caches{48 * 1024, 1024 * 1024};
  // N wider than the 32-column block: strided B panels, chunks sized to half of L1.
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 16, 2), s, caches).batch_chunk, 0);   // 2 x 8 KiB fits
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 16, 7), s, caches).batch_chunk, 3);   // 8 KiB each
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 32), s, caches).batch_chunk, 1);  // 32 KiB each
  // N within one block: contiguous streams, chunks sized to half of L2.
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 64), s, caches).batch_chunk, 0);   // 512 KiB fits
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 100), s, caches).batch_chunk, 64);
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 1), s, caches).batch_chunk, 0);    // nothing to split
}

TEST(RegisterBlockPlan, SmallBlocksSplitTheReductionIntoPartialSums) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan batch_split = planRegisterBlocks(brgemm(4, 16, 32, 32), s);  // 4 accumulators
  EXPECT_EQ(batch_split.split.dim, ReductionSplit::Dim::Batch);
  EXPECT_EQ(batch_split.split.ways, 2);
  const RegisterBlockPlan k_split = planRegisterBlocks(brgemm(1, 16, 32, 1), s);  // 1 accumulator, batch 1
  EXPECT_EQ(k_split.split.dim, ReductionSplit::Dim::K);
  EXPECT_EQ(k_split.split.ways, 8);
  EXPECT_EQ(planRegisterBlocks(brgemm(1, 16, 7, 1), s).split.ways, 7);  // the largest divisor that helps
  EXPECT_EQ(planRegisterBlocks(brgemm(1, 16, 1, 1), s).split.ways, 1);  // nothing to split
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 32, 32, 32), s).split.ways, 1);  // 16 accumulators suffice
}

TEST(Schedule, SelectionFollowsTheIsaCap) {
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::F32).registerBlock(), "6x16");
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::F32, "avx2.f32.4x16").registerBlock(), "4x16");
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::F32, "avx2.f32.4x16").registerBlock(), "4x16");
  EXPECT_THROW(selectSchedule(Isa::Avx2, DType::F32, "avx512.f32.8x32"), Error);  // above the cap
  EXPECT_THROW(selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.9x99"), Error);
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::F32).vector_lanes, 8);
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::F32).registerBlock(), "8x32");
  EXPECT_EQ(selectSchedule(Isa::Avx512Bf16, DType::F32).name, "avx512.f32.8x32");
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::F32).accumulators(), 16);
}

// bf16: the dot product where the cap has avx512-bf16, widening to f32 FMAs below it.
TEST(Schedule, Bf16NanokernelFollowsTheIsaCap) {
  EXPECT_EQ(selectSchedule(Isa::Avx512Bf16, DType::BF16).nanokernel, NanokernelKind::Bf16Dot);
  EXPECT_EQ(selectSchedule(Isa::Avx512Bf16, DType::BF16).name, "avx512bf16.bf16.8x32");
  EXPECT_EQ(selectSchedule(Isa::Amx, DType::BF16).nanokernel, NanokernelKind::AmxTile);
  EXPECT_EQ(selectSchedule(Isa::Amx, DType::BF16).name, "amx.bf16.32x32");
  EXPECT_EQ(selectSchedule(Isa::Amx, DType::F32).name, "avx512.f32.8x32");  // AMX has no f32 tiles
  EXPECT_EQ(selectSchedule(Isa::Amx, DType::BF16, "avx512bf16.bf16.8x32").nanokernel, NanokernelKind::Bf16Dot);
  // Below avx512-bf16: f32 FMAs on A widened when packed; widening A in registers too on request.
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::BF16).nanokernel, NanokernelKind::Bf16F32AFma);
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::BF16).name, "avx512.bf16-f32a.8x32");
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::BF16).nanokernel, NanokernelKind::Bf16F32AFma);
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::BF16).name, "avx2.bf16-f32a.6x16");
  EXPECT_EQ(selectSchedule(Isa::Avx2, DType::BF16, "avx2.bf16-widen.6x16").nanokernel, NanokernelKind::Bf16WidenFma);
  // A widening schedule may be chosen under the avx512-bf16 cap, for ablations.
  EXPECT_EQ(selectSchedule(Isa::Avx512Bf16, DType::BF16, "avx512.bf16-widen.8x32").nanokernel,
            NanokernelKind::Bf16WidenFma);
}

}  // namespace
}  // namespace nkbench::mlir_backend

// The vector routes' GEMM blocks (vector/gemm_block_fit.h, kernel_problem.h):
// rows cut until one block call's A and B panels fit three quarters of L2.
#include <gtest/gtest.h>

#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/schedule/schedule.h"
#include "kernels/mlir/vector/gemm_block_fit.h"
#include "tests/support/test_problems.h"

namespace nkbench::mlir_backend {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

Problem f32Gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return test::makeProblem(m, n, k, 1, false, OpKind::Gemm); }

Problem bf16Gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p = f32Gemm(m, n, k);
  p.dtype = DType::BF16;
  return p;
}

CacheSizes withL2(std::int64_t bytes) {
  CacheSizes caches;
  caches.l2_bytes = bytes;
  return caches;
}

TEST(VectorGemmBlocks, RowsHalveUntilBothPanelsFitL2) {
  const Schedule& f32 = selectSchedule(Isa::Avx512, DType::F32);  // 8x32, block 64x32x128
  // (64 + 32) x 3072 x 4 bytes = 1.13 MiB > 0.75 MiB; (32 + 32) x 3072 x 4 = 0.75 MiB.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(128, 768, 3072), f32, withL2(kMiB)).bm, 32);
  // Within L2 the block stays: a larger L2, or a shorter K.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(128, 768, 3072), f32, withL2(2 * kMiB)).bm, 64);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(256, 1024, 1024), f32, withL2(kMiB)).bm, 64);
  // Never below two register blocks: a B panel read by one band only is not reused.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(256, 1024, 65536), f32, withL2(kMiB)).bm, 16);
  // Columns and K blocks are the schedule's.
  const GemmBlocking fitted = gemmBlockingFor(f32Gemm(128, 768, 3072), f32, withL2(kMiB));
  EXPECT_EQ(fitted.bn, 32);
  EXPECT_EQ(fitted.bk, 128);
}

// The panels are those of the block the GEMM gets: at most M rows and N columns.
TEST(VectorGemmBlocks, ARowsOrColumnsShortOfTheBlockAreCountedAsTheyAre) {
  const Schedule& f32 = selectSchedule(Isa::Avx512, DType::F32);
  // 40 rows whole: (40 + 32) x 2560 x 4 = 0.70 MiB fits; 64 would not, nor 24 + 24 padded rows be needed.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(40, 768, 2560), f32, withL2(kMiB)).bm, 40);
  // 8 columns: (64 + 8) x 2560 x 4 = 0.70 MiB fits; 32 columns do not.
  EXPECT_EQ(fittedGemmBlock(f32Gemm(256, 8, 2560), f32, withL2(kMiB)).bm, 64);
  EXPECT_EQ(fittedGemmBlock(f32Gemm(256, 32, 2560), f32, withL2(kMiB)).bm, 32);
}

// Register blocks whose rows do not divide the block are cut to whole ones.
TEST(VectorGemmBlocks, RowsThatDoNotDivideTheBlockAreCutToWholeRegisterBlocks) {
  const Schedule twelve = parseScheduleSpec("avx512.f32.12x32");
  // 64 -> 24 (32 rows in whole 12-row blocks): (24 + 32) x 3072 x 4 = 0.66 MiB.
  EXPECT_EQ(fittedGemmBlock(f32Gemm(128, 768, 3072), twelve, withL2(kMiB)).bm, 24);
  // Never below two register blocks.
  EXPECT_EQ(fittedGemmBlock(f32Gemm(128, 768, 65536), twelve, withL2(kMiB)).bm, 24);
  const Schedule fourteen = parseScheduleSpec("avx512.f32.14x32");
  EXPECT_EQ(fittedGemmBlock(f32Gemm(128, 768, 65536), fourteen, withL2(kMiB)).bm, 28);
}

TEST(VectorGemmBlocks, PanelsAreCountedInThePackedElements) {
  // The dot route packs A and B as bf16: (64 + 32) x 3072 x 2 = 0.56 MiB fits.
  const Schedule& dot = selectSchedule(Isa::Avx512Bf16, DType::BF16);
  EXPECT_EQ(gemmBlockingFor(bf16Gemm(128, 768, 3072), dot, withL2(kMiB)).bm, 64);
  // The widened-A route packs A as f32: (64 x 4 + 32 x 2) x 3072 = 0.94 MiB does not.
  const Schedule& widened = selectSchedule(Isa::Avx512, DType::BF16);
  ASSERT_EQ(widened.nanokernel, NanokernelKind::Bf16F32AFma);
  EXPECT_EQ(gemmBlockingFor(bf16Gemm(128, 768, 3072), widened, withL2(kMiB)).bm, 32);
}

TEST(VectorGemmBlocks, ANamedBlockIsUsedAsGiven) {
  const Schedule named = parseScheduleSpec("avx512.f32.8x32:gemm=64x32x128");
  EXPECT_TRUE(named.gemm_block_given);
  EXPECT_FALSE(selectSchedule(Isa::Avx512, DType::F32).gemm_block_given);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(128, 768, 3072), named, withL2(kMiB)).bm, 64);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(100, 100, 100), named, withL2(kMiB)).bn, 32);  // not widened
}

// Every block is padded to the block's width: the width that pads N least, up
// to four times the schedule's, in whole register blocks or all N in one block.
TEST(VectorGemmBlocks, ColumnBlocksWidenWhereTheyPadNLess) {
  const Schedule& f32 = selectSchedule(Isa::Avx512, DType::F32);  // 32 columns, 16 lanes
  const CacheSizes caches = withL2(kMiB);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(100, 100, 100), f32, caches).bn, 112);  // one block, not 4 x 32 = 128
  EXPECT_EQ(gemmBlockingFor(f32Gemm(121, 75, 66), f32, caches).bn, 80);     // not 3 x 32 = 96
  EXPECT_EQ(gemmBlockingFor(f32Gemm(512, 100, 512), f32, caches).bn, 112);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(256, 1024, 1024), f32, caches).bn, 32);  // no padding to save
  // 520: 17 x 32 = 544; 11 x 48 would pad less but adds a 16-column register panel to each block.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(256, 520, 256), f32, caches).bn, 32);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(256, 200, 256), f32, caches).bn, 32);  // 64, 96, 128 pad more than 224
  // A schedule of 48-column register blocks on the GEMM block of 32: 140 in blocks of 48 (144), not 32 (160).
  EXPECT_EQ(gemmBlockingFor(f32Gemm(128, 140, 128), parseScheduleSpec("avx512.f32.8x48"), caches).bn, 48);
  // Within the panels' budget only: 100 columns of K = 4096 stay blocks of 32 on a 1 MiB L2.
  EXPECT_EQ(gemmBlockingFor(f32Gemm(64, 100, 4096), f32, caches).bn, 32);
  // AVX2's 16 columns: 37 in one block of 40, 70 (beyond 4 x 16) not.
  const Schedule& avx2 = selectSchedule(Isa::Avx2, DType::F32);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(100, 37, 129), avx2, caches).bn, 40);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(300, 70, 200), avx2, caches).bn, 16);
  // The dot route's blocks too.
  EXPECT_EQ(gemmBlockingFor(bf16Gemm(121, 75, 66), selectSchedule(Isa::Avx512Bf16, DType::BF16), caches).bn, 80);
}

// Wider blocks are fewer: on threads their rows narrow for an even share, and
// they stay narrow where that pads no less or shares out unevenly.
TEST(VectorGemmBlocks, WiderColumnBlocksNarrowTheirRowsForTheThreads) {
  const Schedule& f32 = selectSchedule(Isa::Avx512, DType::F32);
  const CacheSizes caches = withL2(kMiB);
  // 300 rows: 5 x 1 blocks of 64 x 80 would leave one turn of 6 idle on 2 threads; 10 x 1 of 32 x 80 none,
  // and pad 320 x 80 against 64 x 32 blocks' 320 x 96.
  const GemmBlocking one = gemmBlockingFor(f32Gemm(300, 70, 200), f32, caches, 1);
  EXPECT_EQ(one.bm, 64);
  EXPECT_EQ(one.bn, 80);
  const GemmBlocking two = gemmBlockingFor(f32Gemm(300, 70, 200), f32, caches, 2);
  EXPECT_EQ(two.bm, 32);
  EXPECT_EQ(two.bn, 80);
  EXPECT_EQ(gemmBlockingFor(f32Gemm(512, 100, 512), f32, caches, 2).bn, 112);  // 8 blocks
  // 8 rows: one block of 112 columns cannot be shared, and blocks narrower than 32 are not taken.
  const GemmBlocking short_rows = gemmBlockingFor(f32Gemm(8, 100, 100), f32, caches, 2);
  EXPECT_EQ(short_rows.bm, 8);
  EXPECT_EQ(short_rows.bn, 32);
}

}  // namespace
}  // namespace nkbench::mlir_backend

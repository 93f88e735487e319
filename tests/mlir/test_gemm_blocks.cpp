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
}

}  // namespace
}  // namespace nkbench::mlir_backend

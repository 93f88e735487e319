// What the tuner measures: shape classes that generalise over shapes, and
// candidates that all fit the registers, led by the analytic schedule.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/mlir/tuning/shape_class.h"
#include "kernels/mlir/tuning/tuning_candidates.h"
#include "tests/support/test_problems.h"

namespace nkbench::mlir_backend {
namespace {

const CacheSizes kCaches{48 * 1024, 1024 * 1024, 32 * 1024 * 1024};

Problem brgemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dtype = DType::F32) {
  Problem p = test::makeProblem(m, n, k, batch, false);
  p.dtype = dtype;
  return p;
}

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) { return test::makeProblem(m, n, k, 1, false, OpKind::Gemm); }

TEST(ShapeClass, BinsRowsColumnsAndFootprint) {
  // A and B of the batch: (25 x 48 + 48 x 18) x 4 bytes, 8.1 KiB per entry.
  EXPECT_EQ(shapeClassOf(brgemm(25, 18, 48, 4), kCaches), "brgemm f32 m8-31 n16-63 l1");
  EXPECT_EQ(shapeClassOf(brgemm(25, 18, 48, 8), kCaches), "brgemm f32 m8-31 n16-63 l2");
  EXPECT_EQ(shapeClassOf(brgemm(7, 15, 8, 1), kCaches), "brgemm f32 m1-7 n1-15 l1");
  EXPECT_EQ(shapeClassOf(brgemm(64, 64, 64, 16), kCaches), "brgemm f32 m32+ n64+ l2");
  EXPECT_EQ(shapeClassOf(brgemm(64, 64, 64, 64, DType::BF16), kCaches), "brgemm bf16 m32+ n64+ l2");
  EXPECT_EQ(shapeClassOf(brgemm(64, 64, 256, 64), kCaches), "brgemm f32 m32+ n64+ mem");
  EXPECT_EQ(shapeClassOf(gemm(512, 512, 512), kCaches), "gemm f32 m32+ n64+ mem");  // 3 MiB of A, B and C
  EXPECT_EQ(shapeClassOf(gemm(256, 256, 256), kCaches), "gemm f32 m32+ n64+ l2");  // 768 KiB
}

TEST(TuningCandidates, TheAnalyticScheduleLeadsAndEveryCandidateFits) {
  for (Isa isa : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16})
    for (DType dtype : {DType::F32, DType::BF16}) {
      const std::vector<Problem> problems = {brgemm(25, 18, 48, 8, dtype), brgemm(31, 63, 34, 8, dtype)};
      const std::vector<std::string> names = registerBlockCandidates(isa, problems, kCaches, 5);
      ASSERT_EQ(names.size(), 6u) << toString(isa);
      EXPECT_EQ(names.front(), selectSchedule(isa, dtype).name);
      for (const std::string& name : names) {
        const Schedule s = selectSchedule(isa, dtype, name);  // within the cap, of the type
        EXPECT_FALSE(registerBlockProblem(s)) << name;
        EXPECT_EQ(std::count(names.begin(), names.end(), name), 1) << name;
      }
    }
}

TEST(TuningCandidates, Bf16WeighsTheDotProductAgainstWideningFma) {
  const std::vector<Problem> problems = {brgemm(64, 64, 64, 8, DType::BF16)};
  const std::vector<std::string> names = registerBlockCandidates(Isa::Avx512Bf16, problems, kCaches, 30);
  auto has_family = [&](const std::string& family) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.rfind(family, 0) == 0; });
  };
  EXPECT_TRUE(has_family("avx512bf16.bf16."));
  EXPECT_TRUE(has_family("avx512.bf16-widen."));
}

TEST(TuningCandidates, EmulatedTilesAreNoCandidateRealTilesAre) {
  const std::vector<Problem> problems = {brgemm(64, 64, 64, 8, DType::BF16)};
  auto tiles = [&](Isa isa) {
    const std::vector<std::string> names = registerBlockCandidates(isa, problems, kCaches, 3);
    return std::count_if(names.begin() + 1, names.end(),
                         [](const std::string& n) { return n.rfind("amx.", 0) == 0; });
  };
  EXPECT_EQ(tiles(Isa::AmxEmulated), 0);
  EXPECT_EQ(tiles(Isa::Amx), 3);  // 16x48, 48x16 and the 32x32 without prefetch, beside the default 32x32
}

TEST(TuningCandidates, TheCostModelPrefersFullBlocksToStarvedOnes) {
  const Problem p = brgemm(64, 64, 64, 8);
  const double full = estimatedCycles(p, selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.8x32"), kCaches);
  const double starved = estimatedCycles(p, selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.1x16"), kCaches);
  const double latency_bound = estimatedCycles(p, selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.2x16"), kCaches);
  EXPECT_LT(full, starved);
  EXPECT_LT(full, latency_bound);
  // 64x64 in 8x32 blocks: 16 blocks x 512 steps x 8 cycles (16 FMAs on 2 ports), plus C.
  EXPECT_NEAR(full, 16 * 512 * 8.0 + 16 * 32, 1.0);
}

// A GEMM's edge blocks run kernels of their own extent: one row past two
// blocks of 64 costs that row's kernel, not a third block of zeros (1.5x);
// on the tile route the edge is padded to a whole block.
TEST(TuningCandidates, TheCostModelCountsEdgeBlocksAtTheirOwnExtent) {
  const Schedule& f32 = selectSchedule(Isa::Avx512, DType::F32);
  const double whole = estimatedCycles(gemm(128, 64, 64), f32, kCaches);
  const double edge = estimatedCycles(gemm(129, 64, 64), f32, kCaches);
  EXPECT_GT(edge, whole);
  EXPECT_LT(edge, 1.3 * whole);
  Problem tiles = gemm(128, 64, 64), tiles_edge = gemm(129, 64, 64);
  tiles.dtype = tiles_edge.dtype = DType::BF16;
  const Schedule& amx = selectSchedule(Isa::Amx, DType::BF16);
  EXPECT_GE(estimatedCycles(tiles_edge, amx, kCaches), 1.5 * estimatedCycles(tiles, amx, kCaches));
}

TEST(TuningCandidates, GemmBlocksAroundTheLeaderInWholeRegisterBlocks) {
  const std::vector<std::string> names = gemmBlockCandidates("avx512.f32.12x32", gemm(256, 1024, 1024), kCaches);
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names.front(), "avx512.f32.12x32");
  for (std::size_t i = 1; i < names.size(); ++i) {
    const Schedule s = parseScheduleSpec(names[i]);
    EXPECT_EQ(s.gemm_block.bm % 12, 0) << names[i];
    EXPECT_EQ(s.gemm_block.bn % 32, 0) << names[i];
  }
  EXPECT_EQ(gemmBlockCandidates("amx.bf16.32x32", gemm(256, 1024, 1024), kCaches),
            std::vector<std::string>{"amx.bf16.32x32"});
}

// Around the block the leader runs (fitted to L2), never that block again under
// its own name: 8x32 on 128x768x3072 runs 32x32x128 on a 1 MiB L2.
TEST(TuningCandidates, GemmBlocksAreAroundTheBlockTheLeaderRuns) {
  CacheSizes caches = kCaches;
  caches.l2_bytes = 1 << 20;
  const std::vector<std::string> names = gemmBlockCandidates("avx512.f32.8x32", gemm(128, 768, 3072), caches);
  EXPECT_EQ(names.front(), "avx512.f32.8x32");
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx512.f32.8x32:gemm=32x32x128"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx512.f32.8x32:gemm=64x32x128"), 1);
  EXPECT_EQ(std::count(names.begin(), names.end(), "avx512.f32.8x32:gemm=16x32x128"), 1);
}

// Edge rows where a problem has rows left over, prefetch distances where its
// operands spill out of L2; only settings that change a kernel.
TEST(TuningCandidates, SettingsAreMeasuredWhereTheyChangeTheKernel) {
  const std::vector<std::string> ragged = settingCandidates("avx512.f32.8x32", {brgemm(25, 18, 48, 8)}, kCaches);
  EXPECT_NE(std::find(ragged.begin(), ragged.end(), "avx512.f32.8x32:rows=short"), ragged.end());
  EXPECT_EQ(std::find(ragged.begin(), ragged.end(), "avx512.f32.8x32:rows=balanced"), ragged.end());  // the default
  EXPECT_TRUE(std::none_of(ragged.begin(), ragged.end(), [](const std::string& n) {
    return n.find("prefetch") != std::string::npos;
  }));  // 8 KiB per entry: in cache
  const std::vector<std::string> streamed = settingCandidates("avx512.f32.8x32", {brgemm(64, 64, 256, 64)}, kCaches);
  EXPECT_TRUE(std::none_of(streamed.begin(), streamed.end(), [](const std::string& n) {
    return n.find("rows") != std::string::npos;
  }));  // 64 rows: whole blocks
  for (const char* name : {"avx512.f32.8x32:prefetch=0", "avx512.f32.8x32:prefetch=2", "avx512.f32.8x32:prefetch=4"})
    EXPECT_NE(std::find(streamed.begin(), streamed.end(), name), streamed.end()) << name;
  // Its analytic prefetch looks K steps ahead (an entry is 256 steps of 8
  // cycles): a whole entry ahead is another kernel, measured too.
  EXPECT_NE(std::find(streamed.begin(), streamed.end(), "avx512.f32.8x32:prefetch=1"), streamed.end());
  // An analytic distance of one entry (128 steps of 8 cycles) is not measured twice.
  const std::vector<std::string> shorter = settingCandidates("avx512.f32.8x32", {brgemm(64, 64, 128, 64)}, kCaches);
  EXPECT_NE(std::find(shorter.begin(), shorter.end(), "avx512.f32.8x32:prefetch=2"), shorter.end());
  EXPECT_EQ(std::find(shorter.begin(), shorter.end(), "avx512.f32.8x32:prefetch=1"), shorter.end());
  for (const std::string& name : streamed) EXPECT_NO_THROW(parseScheduleSpec(name)) << name;
  EXPECT_TRUE(settingCandidates("amx.bf16.32x32", {brgemm(64, 64, 256, 64, DType::BF16)}, kCaches).empty());
}

}  // namespace
}  // namespace nkbench::mlir_backend

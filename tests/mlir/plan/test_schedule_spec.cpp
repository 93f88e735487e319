// Schedules named by their blocks: any register block of a family that fits the
// register file, read back only in the one spelling the schedule gives itself.
#include <gtest/gtest.h>

#include "harness/core/error.h"
#include "kernels/mlir/schedule/schedule.h"

namespace nkbench::mlir_backend {
namespace {

std::string refusal(const std::string& spec) {
  try {
    parseScheduleSpec(spec);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(ScheduleSpec, TableEntriesReadAsThemselves) {
  for (const Schedule& entry : scheduleTable()) EXPECT_EQ(parseScheduleSpec(entry.name).name, entry.name);
}

TEST(ScheduleSpec, AFamilyTakesOtherRegisterBlocks) {
  const Schedule s = parseScheduleSpec("avx512.f32.12x32");
  EXPECT_EQ(s.block_m, 12);
  EXPECT_EQ(s.block_n, 32);
  EXPECT_EQ(s.isa, Isa::Avx512);
  EXPECT_EQ(s.vector_lanes, 16);
  EXPECT_EQ(s.nanokernel, NanokernelKind::Fma);
  EXPECT_EQ(s.accumulators(), 24);
  const Schedule dot = parseScheduleSpec("avx512bf16.bf16.4x64");
  EXPECT_EQ(dot.nanokernel, NanokernelKind::Bf16Dot);
  EXPECT_EQ(dot.accumulators(), 16);
  EXPECT_EQ(parseScheduleSpec("avx2.bf16-widen.3x16").nanokernel, NanokernelKind::Bf16WidenFma);
  EXPECT_EQ(parseScheduleSpec("amx.bf16.16x32").nanokernel, NanokernelKind::AmxTile);
}

TEST(ScheduleSpec, AGemmBlockIsPartOfTheName) {
  const Schedule s = parseScheduleSpec("avx512.f32.8x32:gemm=128x64x256");
  EXPECT_EQ(s.gemm_block.bm, 128);
  EXPECT_EQ(s.gemm_block.bn, 64);
  EXPECT_EQ(s.gemm_block.bk, 256);
  EXPECT_EQ(s.name, "avx512.f32.8x32:gemm=128x64x256");
  EXPECT_EQ(scheduleSpecName(*findSchedule("avx512.f32.8x32"), 8, 32, GemmBlocking{128, 64, 256}), s.name);
  EXPECT_NE(refusal("avx512.f32.8x32:gemm=100x64x256").find("whole 8x32 register blocks"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:gemm=128x64").find("BMxBNxBK"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:unroll=2").find("modifiers"), std::string::npos);
}

TEST(ScheduleSpec, RowsAndPrefetchAreSettingsOfTheName) {
  const Schedule s = parseScheduleSpec("avx512.f32.8x32:gemm=128x64x256:rows=balanced:prefetch=2");
  EXPECT_EQ(s.edge_rows, EdgeRows::Balanced);
  EXPECT_EQ(s.prefetch_distance, 2);
  EXPECT_EQ(s.gemm_block.bm, 128);
  EXPECT_EQ(parseScheduleSpec("avx512.f32.8x32:rows=short").edge_rows, EdgeRows::ShortBand);
  EXPECT_EQ(parseScheduleSpec("avx512.f32.8x32:prefetch=0").prefetch_distance, 0);
  EXPECT_EQ(parseScheduleSpec("avx512.f32.8x32").prefetch_distance, kAutoPrefetch);
  EXPECT_EQ(parseScheduleSpec("amx.bf16.32x32:prefetch=0").prefetch_distance, 0);
  EXPECT_EQ(scheduleSpecName(*findSchedule("avx512.f32.8x32"), 8, 32, {std::nullopt, EdgeRows::ShortBand, 4}),
            "avx512.f32.8x32:rows=short:prefetch=4");
  EXPECT_NE(refusal("avx512.f32.8x32:prefetch=2:rows=short").find("write it as"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:prefetch=-1").find("prefetch="), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:prefetch=65").find("prefetch="), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:rows=tall").find("modifiers"), std::string::npos);
  EXPECT_NE(refusal("amx.bf16.32x32:rows=short").find("tile route"), std::string::npos);
}

TEST(ScheduleSpec, AnEpilogueInASeparatePassIsASettingOfTheName) {
  EXPECT_TRUE(parseScheduleSpec("avx512.f32.8x32").fused_epilogue);
  const Schedule s = parseScheduleSpec("avx512.f32.8x32:prefetch=2:epilogue=separate");
  EXPECT_FALSE(s.fused_epilogue);
  EXPECT_EQ(s.prefetch_distance, 2);
  ScheduleSettings settings;
  settings.separate_epilogue = true;
  EXPECT_EQ(scheduleSpecName(*findSchedule("avx512bf16.bf16.8x32"), 8, 32, settings),
            "avx512bf16.bf16.8x32:epilogue=separate");
  EXPECT_NE(refusal("avx512.f32.8x32:epilogue=separate:prefetch=2").find("write it as"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32:epilogue=fused").find("modifiers"), std::string::npos);
  EXPECT_NE(refusal("amx.bf16.32x32:epilogue=separate").find("tile route"), std::string::npos);
}

TEST(ScheduleSpec, BlocksThatDoNotFitAreRefusedWithTheCount) {
  // 15 x 2 accumulators + 2 B vectors + 1 broadcast = 33 zmm.
  EXPECT_NE(refusal("avx512.f32.15x32").find("needs 33 vector registers"), std::string::npos);
  EXPECT_EQ(refusal("avx512.f32.14x32"), "");
  // AVX2 has 16 ymm: 6x16 (12 + 2 + 1) fits, 7x16 does not.
  EXPECT_EQ(refusal("avx2.f32.6x16"), "");
  EXPECT_NE(refusal("avx2.f32.7x16").find("needs 17 vector registers"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x24").find("not whole vectors of 16 lanes"), std::string::npos);
  // Tiles: 2x3 C tiles + 2 A + 3 B = 11 of 8 registers; 20 rows is no whole tile.
  EXPECT_NE(refusal("amx.bf16.32x48").find("needs 11 tile registers"), std::string::npos);
  EXPECT_NE(refusal("amx.bf16.20x16").find("not whole 16x16 tiles"), std::string::npos);
}

TEST(ScheduleSpec, OnlyTheCanonicalSpellingReads) {
  EXPECT_NE(refusal("avx512.f32.08x32").find("not MxN"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.8x32x1").find("not MxN"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.0x32").find("not MxN"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.-8x32").find("not MxN"), std::string::npos);
  EXPECT_NE(refusal("avx512.f32.99999999x16").find("not MxN"), std::string::npos);
  const std::string unknown = refusal("avx3.f32.8x32");
  EXPECT_NE(unknown.find("unknown"), std::string::npos);
  EXPECT_NE(unknown.find("avx512bf16.bf16"), std::string::npos) << "the families are listed";
}

TEST(ScheduleSpec, SelectionChecksTypeAndCap) {
  EXPECT_EQ(selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.12x32").block_m, 12);
  EXPECT_THROW(selectSchedule(Isa::Avx2, DType::F32, "avx512.f32.12x32"), Error);
  EXPECT_THROW(selectSchedule(Isa::Avx512Bf16, DType::F32, "avx512bf16.bf16.4x64"), Error);
  EXPECT_EQ(selectSchedule(Isa::AmxEmulated, DType::BF16, "amx.bf16.16x32").block_n, 32);
}

}  // namespace
}  // namespace nkbench::mlir_backend

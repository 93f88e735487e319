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

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Every element of C is covered exactly once, every block divides its region
// or is the band's one edge block, and every block fits: within the schedule's
// accumulators, or within the register file with its B vectors and broadcast.
// Where M has at least the block's rows, no band is starved: it has half of
// them, or blocks with the chains FMA latency needs.
void expectValidPlan(const Problem& p, const Schedule& s) {
  const RegisterBlockPlan plan = planRegisterBlocks(p, s);
  std::int64_t row = 0;
  for (const RowBand& band : plan.bands) {
    EXPECT_EQ(band.offset, row);
    ASSERT_GT(band.rows, 0);
    EXPECT_EQ(band.size % band.rows, 0);
    std::int64_t widest = 0;
    for (const ColumnPanel& panel : band.panels) widest = std::max(widest, plan.blockVectors(panel));
    if (plan.edges != EdgeForm::NarrowPanel && p.m >= s.block_m) {
      EXPECT_TRUE(2 * band.rows >= s.block_m || band.rows * widest >= s.min_accumulators)
          << p.describe() << " " << band.rows << " rows";
    }
    std::int64_t col = 0;
    for (const ColumnPanel& panel : band.panels) {
      EXPECT_EQ(panel.offset, col);
      ASSERT_GT(panel.cols, 0);
      ASSERT_GT(panel.lanes, 0);
      EXPECT_EQ(panel.cols % panel.lanes, 0);
      EXPECT_LE(panel.lanes, s.vector_lanes);
      if (panel.isEdgeBlock()) {
        EXPECT_EQ(plan.edges, EdgeForm::MaskedVector) << p.describe();
        EXPECT_EQ(panel.cols, ceilDiv(panel.size, panel.lanes) * panel.lanes);
        EXPECT_EQ(panel.offset + panel.size, p.n) << "an edge block ends the band";
      } else {
        EXPECT_EQ(panel.size % panel.cols, 0);
      }
      const std::int64_t vectors = plan.blockVectors(panel);
      const bool within_schedule = band.rows * vectors <= s.accumulators();
      const bool within_registers = band.rows * vectors + vectors + 1 <= vectorRegisters(s.isa);
      EXPECT_TRUE(within_schedule || within_registers) << p.describe() << " block " << band.rows << "x" << panel.cols;
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
  EXPECT_FALSE(plan.hasMaskedEdges());
}

// 33 columns of a 7-row band: the two whole vectors and one masked to a lane,
// in one block (7 x 3 accumulators + 3 B vectors + 1 broadcast fit 32 zmm).
TEST(RegisterBlockPlan, AnNEdgeIsAMaskedVectorOfTheLastBlock) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(7, 33, 5, 1), s);
  ASSERT_EQ(plan.bands.size(), 1u);
  EXPECT_EQ(plan.bands[0].rows, 7);
  ASSERT_EQ(plan.bands[0].panels.size(), 1u);
  const ColumnPanel& edge = plan.bands[0].panels[0];
  EXPECT_TRUE(edge.isEdgeBlock());
  EXPECT_EQ(edge.size, 33);
  EXPECT_EQ(edge.cols, 48);
  EXPECT_EQ(plan.blockVectors(edge), 3);
  const std::vector<BlockPiece> pieces = plan.pieces(edge);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_FALSE(pieces[0].masked);
  EXPECT_EQ(pieces[0].width, 32);
  EXPECT_TRUE(pieces[1].masked);
  EXPECT_EQ(pieces[1].offset, 32);
  EXPECT_EQ(pieces[1].width, 1);
  EXPECT_TRUE(plan.hasMaskedEdges());
}

// Where the wider block would not fit, the edge is a block of its own.
TEST(RegisterBlockPlan, AnEdgeTooWideToJoinTheLastBlockIsItsOwn) {
  const RegisterBlockPlan avx512 = planRegisterBlocks(brgemm(8, 49, 5, 1), selectSchedule(Isa::Avx512, DType::F32));
  ASSERT_EQ(avx512.bands[0].panels.size(), 2u);
  EXPECT_EQ(avx512.bands[0].panels[0].size, 32);
  EXPECT_EQ(avx512.bands[0].panels[1].offset, 32);
  EXPECT_EQ(avx512.bands[0].panels[1].size, 17);
  EXPECT_EQ(avx512.bands[0].panels[1].cols, 32);
  // AVX2, 6x16: 6 x 3 accumulators + 3 + 1 would need 22 of the 16 ymm.
  const RegisterBlockPlan avx2 = planRegisterBlocks(brgemm(6, 17, 5, 1), selectSchedule(Isa::Avx2, DType::F32));
  ASSERT_EQ(avx2.bands[0].panels.size(), 2u);
  EXPECT_EQ(avx2.bands[0].panels[1].size, 1);
  EXPECT_EQ(avx2.bands[0].panels[1].cols, 8);
}

// 25 rows of 2-vector blocks: 13 + 12 (14 rows fit the 32 zmm), not 8 + 8 + 8
// + 1, whose 1-row band would have 2 chains.
TEST(RegisterBlockPlan, MRemaindersAreBalancedBandsWhereAShortOneWouldStarve) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(25, 18, 48, 8), s);
  ASSERT_EQ(plan.bands.size(), 2u);
  EXPECT_EQ(plan.bands[0].size, 13);
  EXPECT_EQ(plan.bands[0].rows, 13);
  EXPECT_EQ(plan.bands[1].offset, 13);
  EXPECT_EQ(plan.bands[1].rows, 12);
  // 17 rows of 48 columns (3 vectors): 9 + 8.
  const RegisterBlockPlan two = planRegisterBlocks(brgemm(17, 48, 8, 1), s);
  ASSERT_EQ(two.bands.size(), 2u);
  EXPECT_EQ(two.bands[0].rows, 9);
  EXPECT_EQ(two.bands[1].rows, 8);
  // 41 columns, the third vector masked: two registers stay spare, so bands
  // of at most 8 rows: 6 + 6 + 5.
  const RegisterBlockPlan masked = planRegisterBlocks(brgemm(17, 41, 8, 1), s);
  ASSERT_EQ(masked.bands.size(), 2u);
  EXPECT_EQ(masked.bands[0].rows, 6);
  EXPECT_EQ(masked.bands[0].size, 12);
  EXPECT_EQ(masked.bands[1].rows, 5);
  // 28 rows of 20 (a whole vector and a masked one): 10 + 9 + 9, not 14 + 14.
  const RegisterBlockPlan spare = planRegisterBlocks(brgemm(28, 20, 64, 1), s);
  ASSERT_EQ(spare.bands.size(), 2u);
  EXPECT_EQ(spare.bands[0].rows, 10);
  EXPECT_EQ(spare.bands[1].rows, 9);
  // One vector, masked: no spare (30 rows of 10 stay one band).
  EXPECT_EQ(planRegisterBlocks(brgemm(30, 10, 32, 1), s).bands[0].rows, 30);
  // A multiple of the block's rows keeps them.
  EXPECT_EQ(planRegisterBlocks(brgemm(40, 20, 8, 1), s).bands[0].rows, 8);
  // Where the rest's wider blocks keep 8 chains and balanced bands would be as
  // many, a short band: 8 + 5 rows, the 5 in one 3-vector edge block.
  const RegisterBlockPlan short_band = planRegisterBlocks(brgemm(13, 47, 8, 1), s);
  ASSERT_EQ(short_band.bands.size(), 2u);
  EXPECT_EQ(short_band.bands[0].rows, 8);
  EXPECT_EQ(short_band.bands[1].rows, 5);
  EXPECT_EQ(short_band.bands[1].panels[0].cols, 48);
  // Fewer balanced bands, each a pass over B, win: 29 rows of 64 in 10 + 10 + 9, not 8 + 8 + 8 + 5.
  const RegisterBlockPlan fewer = planRegisterBlocks(brgemm(29, 64, 8, 1), s);
  ASSERT_EQ(fewer.bands.size(), 2u);
  EXPECT_EQ(fewer.bands[0].rows, 10);
  EXPECT_EQ(fewer.bands[1].rows, 9);
}

// N narrower than the schedule's block leaves registers for taller bands,
// multiple of its rows or not: 64 rows of one vector in 22 + 21 + 21, 1000
// of a half vector in bands of 30 and 29; bf16 alike. A full-width N keeps
// the block's 8 rows.
TEST(RegisterBlockPlan, NarrowBlocksTakeTallerBands) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    const Schedule& s = selectSchedule(Isa::Avx512Bf16, dtype);
    Problem one_vector = brgemm(64, 16, 64, 16), half_vector = brgemm(1000, 8, 2, 300);
    one_vector.dtype = half_vector.dtype = dtype;
    const RegisterBlockPlan plan = planRegisterBlocks(one_vector, s);
    ASSERT_EQ(plan.bands.size(), 2u);
    EXPECT_EQ(plan.bands[0].rows, 22);
    EXPECT_EQ(plan.bands[0].size, 22);
    EXPECT_EQ(plan.bands[1].rows, 21);
    const RegisterBlockPlan half = planRegisterBlocks(half_vector, s);
    ASSERT_EQ(half.bands.size(), 2u);
    EXPECT_EQ(half.bands[0].rows, 30);
    EXPECT_EQ(half.bands[1].rows, 29);
  }
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 32, 64, 16), selectSchedule(Isa::Avx512, DType::F32)).bands[0].rows, 8);
  // A schedule that asks for short bands keeps its block's rows.
  const Schedule short_rows = selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.8x32:rows=short");
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 16, 64, 16), short_rows).bands[0].rows, 8);
}

// The schedule can ask for either form (the tuner measures both).
TEST(RegisterBlockPlan, TheScheduleChoosesTheRowEdgeForm) {
  Schedule s = selectSchedule(Isa::Avx512, DType::F32);
  s.edge_rows = EdgeRows::Balanced;
  const RegisterBlockPlan balanced = planRegisterBlocks(brgemm(29, 64, 8, 1), s);
  ASSERT_EQ(balanced.bands.size(), 2u);
  EXPECT_EQ(balanced.bands[0].size, 20);
  EXPECT_EQ(balanced.bands[0].rows, 10);
  EXPECT_EQ(balanced.bands[1].rows, 9);
  s.edge_rows = EdgeRows::ShortBand;
  const RegisterBlockPlan short_band = planRegisterBlocks(brgemm(25, 18, 48, 8), s);
  ASSERT_EQ(short_band.bands.size(), 2u);
  EXPECT_EQ(short_band.bands[0].rows, 8);
  EXPECT_EQ(short_band.bands[1].rows, 1);
}

TEST(RegisterBlockPlan, ShortBandsWidenTheirBlocks) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan plan = planRegisterBlocks(brgemm(2, 512, 8, 1), s);
  ASSERT_EQ(plan.bands.size(), 1u);
  EXPECT_EQ(plan.bands[0].panels[0].cols, 8 * 16);  // 2 rows x 8 vectors = 16 accumulators
}

// The block widths of a one-band plan, in vectors, left to right, one per block.
std::vector<std::int64_t> blockWidths(const Problem& p, const Schedule& s) {
  const RegisterBlockPlan plan = planRegisterBlocks(p, s);
  EXPECT_EQ(plan.bands.size(), 1u);
  std::vector<std::int64_t> widths;
  for (const ColumnPanel& panel : plan.bands.front().panels)
    for (std::int64_t block = 0; block < ceilDiv(panel.size, panel.cols); ++block)
      widths.push_back(plan.blockVectors(panel));
  return widths;
}

// Where keeping the schedule's 16 accumulators leaves the narrowest block with
// fewer, a short band widens further, to the width whose narrowest block has
// the most chains (then the fewest blocks), within the 32 registers.
TEST(RegisterBlockPlan, ShortBandsWidenFurtherWhereTheirNarrowestBlockLacksChains) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  using Widths = std::vector<std::int64_t>;
  EXPECT_EQ(blockWidths(brgemm(6, 128, 8, 1), s), (Widths{4, 4}));     // not 2 x 4 (12 accumulators)
  EXPECT_EQ(blockWidths(brgemm(6, 122, 8, 1), s), (Widths{4, 4}));     // the second masked to 58 columns
  EXPECT_EQ(blockWidths(brgemm(7, 128, 8, 1), s),
            (Widths{3, 3, 2}));                                       // 14 chains at least either way: fewer blocks
  // Already enough chains, or no wider width gives the narrowest block more: as before.
  EXPECT_EQ(blockWidths(brgemm(4, 160, 8, 1), s), (Widths{4, 6}));     // the edge joins the last block
  EXPECT_EQ(blockWidths(brgemm(5, 96, 8, 1), s), (Widths{3, 3}));      // not 5 + 1 or 4 + 2
  EXPECT_EQ(blockWidths(brgemm(7, 100, 8, 1), s), (Widths{2, 2, 3}));  // not 3 + 3 + 1
  // AVX2's 16 registers hold no wider block than its 12 accumulators ask for.
  EXPECT_EQ(blockWidths(brgemm(4, 64, 8, 1), selectSchedule(Isa::Avx2, DType::F32)), (Widths{3, 3, 2}));
}

// bf16 dot products: a masked edge too (B's padded VNNI rows are read whole).
TEST(RegisterBlockPlan, Bf16DotEdgesAreMaskedVectors) {
  Problem p = brgemm(9, 28, 8, 2);
  p.dtype = DType::BF16;
  const RegisterBlockPlan plan = planRegisterBlocks(p, selectSchedule(Isa::Avx512Bf16, DType::BF16));
  ASSERT_EQ(plan.bands.size(), 1u);
  EXPECT_EQ(plan.bands[0].rows, 9);
  ASSERT_EQ(plan.bands[0].panels.size(), 1u);
  EXPECT_TRUE(plan.bands[0].panels[0].isEdgeBlock());
  EXPECT_EQ(plan.blockVectors(plan.bands[0].panels[0]), 2);
  EXPECT_TRUE(plan.hasMaskedEdges());
  EXPECT_EQ(plan.k_steps, 4);  // K pairs
}

// The widening routes fuse conversions per panel: narrow edge panels, full bands then the rest.
TEST(RegisterBlockPlan, WideningRoutesKeepNarrowPanels) {
  Problem p = brgemm(25, 18, 8, 2);
  p.dtype = DType::BF16;
  const RegisterBlockPlan plan = planRegisterBlocks(p, selectSchedule(Isa::Avx512, DType::BF16));
  EXPECT_EQ(plan.edges, EdgeForm::NarrowPanel);
  ASSERT_EQ(plan.bands.size(), 2u);
  EXPECT_EQ(plan.bands[0].rows, 8);
  EXPECT_EQ(plan.bands[1].rows, 1);
  ASSERT_EQ(plan.bands[0].panels.size(), 2u);
  EXPECT_EQ(plan.bands[0].panels[1].cols, 2);
  EXPECT_EQ(plan.bands[0].panels[1].lanes, 2);
}

TEST(RegisterBlockPlan, CoversAnyShapeOnEverySchedule) {
  for (const Schedule& s : scheduleTable()) {
    if (s.nanokernel == NanokernelKind::AmxTile) continue;
    for (std::int64_t m : {1, 3, 4, 7, 8, 9, 13, 17, 25, 64, 100})
      for (std::int64_t n : {1, 5, 8, 15, 16, 17, 31, 32, 33, 49, 65, 100}) {
        Problem p = brgemm(m, n, 3, 2);
        p.dtype = s.dtype;
        expectValidPlan(p, s);
      }
  }
}

// As many entries as take the block about 512 cycles, 1 to 4; none without a batch.
TEST(RegisterBlockPlan, PrefetchLooksAheadAboutFiveHundredCycles) {
  Schedule s = selectSchedule(Isa::Avx512, DType::F32);
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 32), s).prefetch_distance, 2);  // 32 steps x 8 cycles
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 16), s).prefetch_distance, 1);  // 64 x 8
  EXPECT_EQ(planRegisterBlocks(brgemm(4, 16, 32, 32), s).prefetch_distance, 4);   // 32 x 2 (split in 2: x 4)
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 1), s).prefetch_distance, 0);
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 16), s).prefetch_ahead_fmas, 0);  // an entry is 512 cycles
  s.prefetch_distance = 3;
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 16), s).prefetch_distance, 3);
  s.prefetch_distance = 0;
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 32), s).prefetch_distance, 0);
}

// Where one entry takes the widest block more than twice the lead, B's
// prefetch looks ahead as many K steps as take a block the lead (512 cycles,
// 1024 vector FMAs) rather than a whole entry; an explicit distance keeps
// whole entries.
TEST(RegisterBlockPlan, PrefetchOfLongEntriesLooksAheadInKSteps) {
  Schedule s = selectSchedule(Isa::Avx512, DType::F32);
  const RegisterBlockPlan long_entries = planRegisterBlocks(brgemm(120, 85, 215, 16), s);  // 215 steps x 8 cycles
  EXPECT_EQ(long_entries.prefetch_distance, 1);
  EXPECT_EQ(long_entries.prefetch_ahead_fmas, 1024);
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 128, 16), s).prefetch_ahead_fmas, 0);  // 1024 cycles: twice the lead
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 512, 1), s).prefetch_ahead_fmas, 0);   // no batch, no prefetch
  s.prefetch_distance = 2;
  EXPECT_EQ(planRegisterBlocks(brgemm(120, 85, 215, 16), s).prefetch_ahead_fmas, 0);
}

TEST(RegisterBlockPlan, BatchesBeyondTheCacheBudgetRunInChunks) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const CacheSizes caches{48 * 1024, 1024 * 1024};
  // N wider than the 32-column block: strided B panels, chunks sized to half of L1.
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 16, 2), s, caches).batch_chunk, 0);   // 2 x 8 KiB fits
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 16, 7), s, caches).batch_chunk, 3);   // 8 KiB each
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 32), s, caches).batch_chunk, 1);  // 32 KiB each
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 96, 64, 32), s, caches).batch_chunk, 1);  // B: 24 KiB, half of L1
  // An entry's B beyond half of L1 leaves L1 between row bands anyway: chunks of
  // the batch's A and B sized to half of L2, not single entries that send C
  // through L2 at every entry.
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 128, 64, 16), s, caches).batch_chunk, 10);  // 48 KiB each
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 256, 64, 8), s, caches).batch_chunk, 6);    // 80 KiB each
  EXPECT_EQ(planRegisterBlocks(brgemm(128, 128, 64, 8), s, caches).batch_chunk, 0);   // 512 KiB fits
  // N within one block: contiguous streams, chunks sized to half of L2.
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 64), s, caches).batch_chunk, 0);   // 512 KiB fits
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 32, 100), s, caches).batch_chunk, 64);
  EXPECT_EQ(planRegisterBlocks(brgemm(64, 64, 64, 1), s, caches).batch_chunk, 0);    // nothing to split
  // Masked edges never chunk: the next chunk's masked loads would wait on this one's masked stores.
  EXPECT_EQ(planRegisterBlocks(brgemm(16, 63, 64, 16), s, caches).batch_chunk, 0);
  // A block as wide as N reads B contiguously: the L2 budget.
  EXPECT_EQ(planRegisterBlocks(brgemm(32, 32, 64, 16), s, caches).batch_chunk, 0);  // 256 KiB
  // One row of blocks reads each entry's B once: nothing for a chunk to keep.
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 64, 64, 32), s, caches).batch_chunk, 0);
  EXPECT_EQ(planRegisterBlocks(brgemm(16, 64, 64, 32), s, caches).batch_chunk, 1);  // two bands
  // Unless the batch's A, read again for each of its column blocks, passes half of L2: 8 x 64 x 4 x 512 = 1 MiB.
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 64, 64, 512), s, caches).batch_chunk, 1);
}

// Whether row bands after the first find a chunk's A and B (the batch's,
// unchunked) in L2: what B's prefetch ahead on later passes depends on.
TEST(RegisterBlockPlan, SaysWhetherAChunkStaysInL2) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  const CacheSizes caches{48 * 1024, 1024 * 1024};
  EXPECT_TRUE(planRegisterBlocks(brgemm(64, 128, 64, 16), s, caches).chunk_fits_l2);   // chunks of 10 x 48 KiB
  EXPECT_TRUE(planRegisterBlocks(brgemm(128, 128, 64, 8), s, caches).chunk_fits_l2);   // 512 KiB, unchunked
  EXPECT_FALSE(planRegisterBlocks(brgemm(256, 256, 512, 4), s, caches).chunk_fits_l2);  // 1 MiB an entry
  // Masked edges never chunk: 16 entries of 63.5 KiB leave L2 between bands.
  const RegisterBlockPlan masked = planRegisterBlocks(brgemm(64, 63, 128, 16), s, caches);
  EXPECT_EQ(masked.batch_chunk, 0);
  EXPECT_FALSE(masked.chunk_fits_l2);
}

// A short K loop is unrolled whole, unless a band has more than one block
// along N with no batch entry loop between, where A's broadcasts of the whole
// K would be hoisted out of the blocks past the registers.
TEST(RegisterBlockPlan, ShortKLoopsUnrollWholeWhereTheBroadcastsFit) {
  const Schedule& s = selectSchedule(Isa::Avx512, DType::F32);
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 32, 8, 1), s).k_unroll, 8);  // one block
  const CacheSizes caches{48 * 1024, 1024 * 1024};
  const RegisterBlockPlan entries_inside = planRegisterBlocks(brgemm(8, 256, 8, 2), s, caches);
  ASSERT_EQ(entries_inside.batch_chunk, 0);  // the entries' loop inside the blocks'
  EXPECT_EQ(entries_inside.k_unroll, 8);
  // 8x32 blocks along 256: 16 accumulators, 2 B vectors, a broadcast, and 8 x 8 hoisted.
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 256, 8, 1), s, caches).k_unroll, 2);
  // The same in single-entry chunks outside two bands: half of a 32 KiB L1 holds one entry.
  const RegisterBlockPlan chunked = planRegisterBlocks(brgemm(16, 256, 8, 4), s, {32 * 1024, 1024 * 1024});
  ASSERT_EQ(chunked.batch_chunk, 1);
  EXPECT_EQ(chunked.k_unroll, 2);
  // 4x32 blocks along 128: 8 accumulators, 2 B vectors, a broadcast, and 4 x 4 hoisted.
  const RegisterBlockPlan fits =
      planRegisterBlocks(brgemm(8, 128, 4, 1), selectSchedule(Isa::Avx512, DType::F32, "avx512.f32.4x32"));
  ASSERT_EQ(fits.bands.front().rows, 4);
  ASSERT_EQ(fits.bands.front().panels.front().cols, 32);
  ASSERT_EQ(fits.bands.front().panels.front().size, 128);
  ASSERT_EQ(fits.split.ways, 1);
  EXPECT_EQ(fits.k_unroll, 4);
  const Schedule& bf16 = selectSchedule(Isa::Avx512Bf16, DType::BF16);
  Problem p = brgemm(13, 187, 16, 1);
  p.dtype = DType::BF16;
  EXPECT_EQ(planRegisterBlocks(p, bf16).k_unroll, 2);  // 13 x 8 pairs hoisted
  // A band's blocks in different panels share the broadcasts too: 19 x 49 in
  // bands of 10 and 9 rows, blocks of 32 and 17 columns, 10 x 8 hoisted.
  const RegisterBlockPlan panels = planRegisterBlocks(brgemm(19, 49, 8, 1), s, caches);
  ASSERT_EQ(panels.bands.front().panels.size(), 2u);
  ASSERT_EQ(panels.bands.front().panels[0].size, panels.bands.front().panels[0].cols);  // one block each
  EXPECT_EQ(panels.k_unroll, 2);
  EXPECT_EQ(planRegisterBlocks(brgemm(19, 32, 8, 1), s, caches).k_unroll, 8);  // one panel of one block
  // 2 or 3 steps stay a loop of one step: unrolled by 2, no loop would be left.
  EXPECT_EQ(planRegisterBlocks(brgemm(8, 256, 3, 1), s, caches).k_unroll, 1);
  p.k = 4;
  EXPECT_EQ(planRegisterBlocks(p, bf16).k_unroll, 1);
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

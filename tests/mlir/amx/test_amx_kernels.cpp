// AMX tile kernels, compiled for sapphirerapids and checked on their assembly.
// Nothing here executes an AMX instruction: the compiler for a named CPU has no JIT.
#include <gtest/gtest-spi.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/error.h"
#include "harness/core/isa.h"
#include "harness/host/cache_info.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/amx/tile_config.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_compiler.h"
#include "tests/backends/baseline_test_support.h"
#include "tests/support/test_problems.h"

namespace nkbench::mlir_backend {
namespace {

Problem bf16Brgemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, bool accumulate) {
  Problem p = test::makeProblem(m, n, k, batch, accumulate);
  p.dtype = DType::BF16;
  return p;
}

CompilationStages compileForSapphireRapids(const Problem& p, const std::string& schedule = "") {
  MlirCompiler compiler(Isa::Amx, CacheSizes{}, "sapphirerapids");
  return compiler.generate(p, selectSchedule(Isa::Amx, DType::BF16, schedule), Lowering::Nanokernel);
}

// The assembly as instructions (first word: the mnemonic) and labels.
struct AsmLine {
  std::string mnemonic;  // empty for labels and directives
  std::string operands;
  std::string label;     // ".LBB0_3" for a label line
};

std::vector<AsmLine> parseAsm(const std::string& text) {
  std::vector<AsmLine> lines;
  std::istringstream in(text);
  for (std::string raw; std::getline(in, raw);) {
    raw = raw.substr(0, raw.find('#'));
    std::istringstream words(raw);
    AsmLine line;
    std::string first;
    if (!(words >> first)) continue;
    if (first.back() == ':') {
      line.label = first.substr(0, first.size() - 1);
    } else if (first[0] != '.') {
      line.mnemonic = first;
      std::getline(words, line.operands);
    }
    lines.push_back(line);
  }
  return lines;
}

std::int64_t occurrences(const std::string& text, const std::string& word) {
  std::int64_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

// A loop as its lines [head, latch]: a jump back to a label above it closes it.
struct Loop {
  std::size_t head = 0, latch = 0;
  bool contains(const Loop& other) const { return head <= other.head && other.latch <= latch && !(*this == other); }
  bool operator==(const Loop&) const = default;
};

std::vector<Loop> loopsOf(const std::vector<AsmLine>& lines) {
  std::map<std::string, std::size_t> labels_above;
  std::vector<Loop> loops;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].label.empty()) labels_above[lines[i].label] = i;
    if (lines[i].mnemonic.starts_with("j")) {
      std::string target = lines[i].operands;
      target.erase(std::remove(target.begin(), target.end(), ' '), target.end());
      target.erase(std::remove(target.begin(), target.end(), '\t'), target.end());
      if (auto it = labels_above.find(target); it != labels_above.end()) loops.push_back({it->second, i});
    }
  }
  return loops;
}

std::int64_t countIn(const std::vector<AsmLine>& lines, const Loop& span, const std::string& mnemonic) {
  return std::count_if(lines.begin() + span.head, lines.begin() + span.latch + 1,
                       [&](const AsmLine& line) { return line.mnemonic == mnemonic; });
}

// The tile register an instruction writes (its last operand), e.g. "%tmm3".
std::string destination(const AsmLine& line) {
  const std::size_t comma = line.operands.rfind(',');
  std::string reg = comma == std::string::npos ? line.operands : line.operands.substr(comma + 1);
  reg.erase(std::remove_if(reg.begin(), reg.end(), [](char c) { return c == ' ' || c == '\t'; }), reg.end());
  return reg;
}

bool storesToC(const AsmLine& line) {  // not a spill through the stack pointer
  return line.mnemonic == "tilestored" && line.operands.find("%rsp") == std::string::npos;
}

// The lines of the first C block's reduction (over batch and K), in which C must
// stay in its tile registers. LLVM unrolls small kernels whole, so:
//  - looped: L is the innermost loop (a jump back to a label above it) holding
//    tdpbf16ps; the reduction is the outermost loop around L (or L itself) that
//    initialises no accumulator (tilezero, or tileloadd into one): a loop that
//    does is the loop over C blocks;
//  - unrolled (no loop holds tdpbf16ps, or the innermost one that does is a
//    loop over C blocks, with the reduction unrolled in it): from after the last accumulator
//    initialisation before the first tdpbf16ps to the last tdpbf16ps before the
//    first store to C.
struct Reduction {
  Loop span;
  bool looped = false;
};

Reduction findReduction(const std::vector<AsmLine>& lines, std::vector<Loop> loops,
                        const std::function<bool(const AsmLine&)>& initialisesAccumulator) {
  const auto initialisesIn = [&](const Loop& loop) {
    return std::any_of(lines.begin() + loop.head, lines.begin() + loop.latch + 1, initialisesAccumulator);
  };
  std::sort(loops.begin(), loops.end(), [](const Loop& a, const Loop& b) { return a.latch - a.head < b.latch - b.head; });
  const auto inner = std::find_if(loops.begin(), loops.end(),
                                  [&](const Loop& loop) { return countIn(lines, loop, "tdpbf16ps") > 0; });
  if (inner != loops.end() && !initialisesIn(*inner)) {
    Loop nest = *inner;
    for (const Loop& loop : loops)
      if (loop.contains(nest) && !initialisesIn(loop)) nest = loop;
    return {nest, true};
  }
  std::size_t first = 0;
  while (first < lines.size() && lines[first].mnemonic != "tdpbf16ps") ++first;
  Loop span{first, first};
  while (span.head > 0 && !initialisesAccumulator(lines[span.head - 1])) --span.head;
  for (std::size_t i = first; i < lines.size() && !storesToC(lines[i]); ++i)
    if (lines[i].mnemonic == "tdpbf16ps") span.latch = i;
  return {span, false};
}

std::string firstOperand(const AsmLine& line) {
  std::string reg = line.operands.substr(0, line.operands.find(','));
  reg.erase(std::remove_if(reg.begin(), reg.end(), [](char c) { return c == ' ' || c == '\t'; }), reg.end());
  return reg;
}

// What the AMX schedule promises, read off the assembly of a kernel whose
// first C block has tile_rows x tile_cols tiles (2 x 2 for the 32x32 blocks): it
// neither configures nor releases tiles (the caller does, once per run of
// calls); its tdpbf16ps accumulators (the C tiles) are neither loaded, zeroed
// nor stored during the reduction; each K step in it is tile_rows + tile_cols
// tile loads (A and B) then exactly one tdpbf16ps per C tile; the first stores
// after the reduction are one per accumulator. Returns whether the reduction
// was a loop.
bool expectTileKernelStructure(const std::string& assembly, std::int64_t tile_rows = 2, std::int64_t tile_cols = 2) {
  const std::int64_t c_tiles = tile_rows * tile_cols, loads_per_step = tile_rows + tile_cols;
  for (const char* mnemonic : {"tileloadd", "tdpbf16ps", "tilestored"})
    EXPECT_NE(assembly.find(mnemonic), std::string::npos) << mnemonic;
  for (const char* mnemonic : {"ldtilecfg", "tilerelease"})
    EXPECT_EQ(assembly.find(mnemonic), std::string::npos) << mnemonic << " in the kernel\n" << assembly;
  const std::vector<AsmLine> lines = parseAsm(assembly);
  std::vector<std::string> accumulators;
  for (const AsmLine& line : lines)
    if (line.mnemonic == "tdpbf16ps" &&
        std::find(accumulators.begin(), accumulators.end(), destination(line)) == accumulators.end())
      accumulators.push_back(destination(line));
  EXPECT_EQ(std::int64_t(accumulators.size()), c_tiles) << assembly;
  const auto initialisesAccumulator = [&](const AsmLine& line) {
    return (line.mnemonic == "tilezero" || line.mnemonic == "tileloadd") &&
           std::find(accumulators.begin(), accumulators.end(), destination(line)) != accumulators.end();
  };
  const Reduction reduction = findReduction(lines, loopsOf(lines), initialisesAccumulator);
  const Loop& r = reduction.span;

  std::int64_t loads = 0, products = 0, steps = 0;
  for (std::size_t i = r.head; i <= r.latch; ++i) {
    EXPECT_FALSE(initialisesAccumulator(lines[i])) << "C tile reloaded in the reduction, line " << i << "\n" << assembly;
    EXPECT_NE(lines[i].mnemonic, "tilestored") << "tile stored in the reduction, line " << i << "\n" << assembly;
    if (lines[i].mnemonic == "tileloadd") {
      if (products > 0) {  // a new K step begins: the last one must be complete
        EXPECT_EQ(loads, loads_per_step) << "K step " << steps << "\n" << assembly;
        EXPECT_EQ(products, c_tiles) << "K step " << steps << "\n" << assembly;
        loads = products = 0;
        ++steps;
      }
      ++loads;
    }
    if (lines[i].mnemonic == "tdpbf16ps") ++products;
  }
  EXPECT_EQ(loads, loads_per_step) << assembly;
  EXPECT_EQ(products, c_tiles) << assembly;

  std::vector<std::string> stored;
  for (std::size_t i = r.latch + 1; i < lines.size() && std::int64_t(stored.size()) < c_tiles; ++i)
    if (storesToC(lines[i])) stored.push_back(firstOperand(lines[i]));
  std::sort(stored.begin(), stored.end());
  std::sort(accumulators.begin(), accumulators.end());
  EXPECT_EQ(stored, accumulators) << assembly;
  return reduction.looped;
}

TEST(AmxKernels, Block32x32x64Batch4KeepsCInTilesAcrossTheReduction) {
  const CompilationStages stages = compileForSapphireRapids(bf16Brgemm(32, 32, 64, 4, false));
  expectTileKernelStructure(stages.assembly);
  EXPECT_NE(stages.payload.find("llvm.x86.tilezero"), std::string::npos);  // beta 0: C is never read
}

TEST(AmxKernels, Block64x64x64Batch2Beta1ReadsCOncePerBlock) {
  const CompilationStages stages = compileForSapphireRapids(bf16Brgemm(64, 64, 64, 2, true));
  expectTileKernelStructure(stages.assembly);
  // beta 1: each C tile is read once per block, outside the reduction.
  EXPECT_EQ(occurrences(stages.payload, "\"llvm.x86.tileloadd64\"(%tmm0, %r0_c00"), 1) << stages.payload;
}

// Too long to unroll: the reduction stays a loop, found by its backward branch.
TEST(AmxKernels, LongReductionStaysALoopWithCInTiles) {
  const CompilationStages stages = compileForSapphireRapids(bf16Brgemm(32, 32, 512, 32, true));
  EXPECT_TRUE(expectTileKernelStructure(stages.assembly));
}

// The check itself: a C tile stored inside the reduction is caught.
TEST(AmxKernels, StructureCheckCatchesACTileStoredInTheReduction) {
  static std::string mutated;  // EXPECT_NONFATAL_FAILURE's statement cannot see locals
  mutated = compileForSapphireRapids(bf16Brgemm(32, 32, 512, 32, true)).assembly;
  mutated.insert(mutated.find('\n', mutated.find("tdpbf16ps")) + 1, "\ttilestored\t%tmm0, (%rdx,%rax)\n");
  EXPECT_NONFATAL_FAILURE(expectTileKernelStructure(mutated), "tile stored in the reduction");
}

TEST(AmxKernels, TileRegionsCoverSixteenWideEdges) {
  const std::vector<TileRegion> regions = planTileRegions(bf16Brgemm(48, 80, 32, 1, false), 32, 32);
  ASSERT_EQ(regions.size(), 4u);
  EXPECT_EQ(describeTileBlocks(regions), "32x32+32x16+16x32+16x16");
}

TEST(AmxKernels, TileRegionsTakeRemaindersWithNarrowerTiles) {
  EXPECT_EQ(describeTileBlocks(planTileRegions(bf16Brgemm(100, 37, 32, 1, false), 32, 32)), "32x32+32x5+4x32+4x5");
  EXPECT_EQ(describeTileBlocks(planTileRegions(bf16Brgemm(7, 3, 32, 1, false), 32, 32)), "7x3");
  EXPECT_EQ(describeTileBlocks(planTileRegions(bf16Brgemm(50, 70, 32, 1, false), 32, 32)),
            "32x32+32x6+16x32+16x6+2x32+2x6");
}

// Every shape: the regions tile C exactly once, in whole blocks, each tile
// within AMX's 16 rows x 16 f32 columns and each block within the schedule's.
TEST(AmxKernels, TileRegionsCoverEveryShapeExactlyOnce) {
  for (std::int64_t m = 1; m <= 70; ++m)
    for (std::int64_t n = 1; n <= 70; ++n) {
      std::vector<int> covered(static_cast<std::size_t>(m * n), 0);
      for (const TileRegion& r : planTileRegions(bf16Brgemm(m, n, 32, 1, false), 32, 32)) {
        ASSERT_TRUE(r.tile_height >= 1 && r.tile_height <= kAmxTileRows && r.tile_width >= 1 &&
                    r.tile_width <= kAmxTileCols)
            << m << "x" << n;
        ASSERT_TRUE(r.blockRows() <= 32 && r.blockCols() <= 32) << m << "x" << n;
        ASSERT_TRUE(r.rows % r.blockRows() == 0 && r.cols % r.blockCols() == 0) << m << "x" << n;
        for (std::int64_t i = r.row_offset; i < r.row_offset + r.rows; ++i)
          for (std::int64_t j = r.col_offset; j < r.col_offset + r.cols; ++j) ++covered[i * n + j];
      }
      ASSERT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; })) << m << "x" << n;
    }
}

// Off the grid: the regions of one tile shape share one configuration. The
// caller loads the first shape's; the kernel switches to each other shape's
// through the tile state (kAmxUseTileConfig), never by ldtilecfg of its own.
// The first C block keeps its tiles in registers across the reduction.
TEST(AmxKernels, RemainderShapesSwitchTheConfigurationBetweenTileShapes) {
  const Problem p = bf16Brgemm(100, 37, 128, 3, true);
  const CompilationStages stages = compileForSapphireRapids(p);
  expectTileKernelStructure(stages.assembly);
  const std::vector<TileGroup> groups = groupTileRegions(planTileRegions(p, 32, 32));
  ASSERT_EQ(groups.size(), 4u);  // 16x16, 16x5, 4x16, 4x5 tiles
  EXPECT_EQ(occurrences(stages.payload, std::string("func.call @") + kAmxUseTileConfig), 3);
  EXPECT_EQ(occurrences(stages.llvm_dialect, std::string("llvm.call @") + kAmxUseTileConfig), 3);
  std::int64_t products = 0;
  for (const TileRegion& region : planTileRegions(p, 32, 32)) products += region.tiles();
  EXPECT_EQ(occurrences(stages.payload, "llvm.x86.tdpbf16ps"), products);
}

// Blocks whose A and B stream from L2 prefetch the next batch entry's tiles, one
// line per tile row; blocks that fit in L1 issue no prefetch.
TEST(AmxKernels, BlocksStreamingFromL2PrefetchTheNextBatchEntry) {
  const Problem streaming = bf16Brgemm(64, 64, 64, 16, false);  // 256 KiB of A and B
  ASSERT_TRUE(amxPrefetchesNextBatchEntry(streaming, CacheSizes{}.l1d_bytes));
  const CompilationStages stages = compileForSapphireRapids(streaming);
  expectTileKernelStructure(stages.assembly);
  // Per K step of a 2 x 2 block: 2 A tiles of 16 rows and 2 B tiles of 16 pair rows.
  EXPECT_EQ(occurrences(stages.payload, "llvm.intr.prefetch"), 4 * 16) << stages.payload;
  EXPECT_NE(stages.assembly.find("prefetcht0"), std::string::npos);

  const Problem resident = bf16Brgemm(32, 32, 32, 4, false);  // 16 KiB
  ASSERT_FALSE(amxPrefetchesNextBatchEntry(resident, CacheSizes{}.l1d_bytes));
  const CompilationStages resident_stages = compileForSapphireRapids(resident);
  EXPECT_EQ(resident_stages.assembly.find("prefetcht0"), std::string::npos) << resident_stages.assembly;
  EXPECT_FALSE(amxPrefetchesNextBatchEntry(bf16Brgemm(256, 256, 256, 1, false), CacheSizes{}.l1d_bytes));
  // The schedule without prefetch, to compare on AMX hosts.
  const CompilationStages without = compileForSapphireRapids(streaming, "amx.bf16.32x32-noprefetch");
  expectTileKernelStructure(without.assembly);
  EXPECT_EQ(without.assembly.find("prefetcht0"), std::string::npos);
}

// A bf16 C: each block's f32 tiles go through an f32 copy of the block, rounded
// into C once per block with vcvtneps2bf16, never inside the reduction.
TEST(AmxKernels, Bf16CIsRoundedOncePerBlockAfterTheReduction) {
  Problem p = bf16Brgemm(64, 64, 64, 4, true);
  p.c_dtype = DType::BF16;
  const CompilationStages stages = compileForSapphireRapids(p);
  expectTileKernelStructure(stages.assembly);
  EXPECT_NE(stages.assembly.find("vcvtneps2bf16"), std::string::npos);
  EXPECT_EQ(occurrences(stages.payload, "arith.truncf"), 1);
  EXPECT_EQ(occurrences(stages.payload, "arith.extf"), 1);  // beta 1: C widened into the block's sum
}

// The tile block is a schedule parameter: 1x3 and 3x1 blocks keep their 3 C
// tiles in registers, loading 4 tiles per K step.
TEST(AmxKernels, OtherTileBlocksKeepTheirShape) {
  const std::pair<const char*, std::pair<int, int>> schedules[] = {{"amx.bf16.16x48", {1, 3}},
                                                                   {"amx.bf16.48x16", {3, 1}}};
  for (const auto& [name, block] : schedules) {
    SCOPED_TRACE(name);
    const CompilationStages stages = compileForSapphireRapids(bf16Brgemm(48, 48, 256, 8, true), name);
    EXPECT_TRUE(expectTileKernelStructure(stages.assembly, block.first, block.second));
  }
}

// Every AMX schedule's block is whole tiles within the 8 tile registers; blocks
// that are not are refused by name.
TEST(AmxKernels, EveryTileBlockFitsTheTileRegisters) {
  int amx_schedules = 0;
  for (const Schedule& s : scheduleTable()) {
    if (s.nanokernel != NanokernelKind::AmxTile) continue;
    ++amx_schedules;
    EXPECT_EQ(s.block_m % kAmxTileRows, 0) << s.name;
    EXPECT_EQ(s.block_n % kAmxTileCols, 0) << s.name;
    EXPECT_LE(amxTileRegisters(s.block_m / kAmxTileRows, s.block_n / kAmxTileCols), kAmxTileRegisters) << s.name;
    EXPECT_NO_THROW(planTileRegions(bf16Brgemm(100, 37, 32, 1, false), s.block_m, s.block_n)) << s.name;
  }
  EXPECT_GE(amx_schedules, 3);
  EXPECT_EQ(amxTileRegisters(2, 2), 8);
  for (const auto& [m, n] : {std::pair{64, 32}, {32, 48}, {16, 24}, {0, 16}}) {
    try {
      planTileRegions(bf16Brgemm(64, 64, 32, 1, false), m, n);
      ADD_FAILURE() << m << "x" << n << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(fmt::format("{}x{} block", m, n)), std::string::npos) << error.what();
    }
  }
}

TEST(AmxKernels, KernelProblemPadsKToWholeTileSteps) {
  const Schedule& amx = selectSchedule(Isa::Amx, DType::BF16);
  EXPECT_EQ(kernelProblemFor(bf16Brgemm(7, 33, 5, 1, false), amx, CacheSizes{}).k, 32);
  EXPECT_EQ(kernelProblemFor(bf16Brgemm(7, 33, 64, 1, false), amx, CacheSizes{}).k, 64);
  EXPECT_EQ(kernelProblemFor(bf16Brgemm(7, 33, 65, 1, false), amx, CacheSizes{}).k, 96);
  // N is not padded: narrower tiles.
  EXPECT_EQ(kernelProblemFor(bf16Brgemm(7, 33, 65, 1, false), amx, CacheSizes{}).n, 33);
}

// The tile route's GEMM blocks (kernel_problem.h): the schedule's 64 rows, K
// blocks of 256 as batch entries of one block call (C stays in tiles for the
// whole reduction), and B panels of a quarter of L2, run N blocks outer.
TEST(AmxKernels, GemmBlocksKeepCInTilesAndBPanelsInL2) {
  const Schedule& amx = selectSchedule(Isa::Amx, DType::BF16);
  const Problem square = test::asBf16(test::gemm(1024, 1024, 1024));
  CacheSizes caches;
  caches.l2_bytes = 2 * 1024 * 1024;
  const GemmBlocking blocking = gemmBlockingFor(square, amx, caches);
  EXPECT_EQ(blocking.bm, 64);
  EXPECT_EQ(blocking.bk, 256);
  EXPECT_EQ(blocking.bn, 256);  // 1024 K x 256 columns x 2 bytes = 512 KiB
  const Problem block = kernelProblemFor(square, amx, caches);
  EXPECT_EQ(block.batch, 4);
  EXPECT_EQ(block.n, 256);
  caches.l2_bytes = 1024 * 1024;
  EXPECT_EQ(gemmBlockingFor(square, amx, caches).bn, 128);
  // Never below the schedule's block, and a narrow N is taken whole (in whole tiles).
  caches.l2_bytes = 64 * 1024;
  EXPECT_EQ(gemmBlockingFor(square, amx, caches).bn, 64);
  EXPECT_EQ(gemmBlockingFor(test::asBf16(test::gemm(100, 37, 129)), amx, CacheSizes{}).bn, 48);
  EXPECT_EQ(gemmBlockOrderFor(amx), BlockOrder::NBlocksOuter);
  EXPECT_EQ(gemmBlockOrderFor(selectSchedule(Isa::Avx512Bf16, DType::BF16)), BlockOrder::MBlocksOuter);
  EXPECT_EQ(gemmBlockOrderFor(selectSchedule(Isa::Avx512, DType::F32)), BlockOrder::MBlocksOuter);
}

// Panels a quarter of L2 wide can leave fewer C blocks than threads: they are
// halved until each thread's share of block calls is at most an eighth idle,
// never below the schedule's own width; then the rows.
TEST(AmxKernels, GemmPanelsNarrowUntilEveryThreadHasItsShareOfBlocks) {
  const Schedule& amx = selectSchedule(Isa::Amx, DType::BF16);
  CacheSizes caches;
  caches.l2_bytes = 2 * 1024 * 1024;  // panels of 256 columns at K = 1024
  const auto columns = [&](std::int64_t m, std::int64_t n, int threads) {
    return gemmBlockingFor(test::asBf16(test::gemm(m, n, 1024)), amx, caches, threads).bn;
  };
  // One 64-row block: one panel on one thread, one per thread after.
  EXPECT_EQ(columns(64, 256, 1), 256);
  EXPECT_EQ(columns(64, 256, 2), 128);
  EXPECT_EQ(columns(64, 256, 4), 64);
  // The schedule's width reached: then 32 rows instead of 64, 8 blocks.
  EXPECT_EQ(columns(64, 256, 8), 64);
  EXPECT_EQ(gemmBlockingFor(test::asBf16(test::gemm(64, 256, 1024)), amx, caches, 8).bm, 32);
  // Three panels on two threads leave a quarter idle; six share out evenly.
  EXPECT_EQ(columns(64, 768, 2), 128);
  // Enough blocks already: the panels stay a quarter of L2.
  EXPECT_EQ(columns(1024, 1024, 2), 256);
  EXPECT_EQ(columns(256, 1024, 16), 256);
  EXPECT_EQ(columns(256, 1024, 32), 128);
  EXPECT_EQ(columns(256, 1024, 7), 128);  // 16 blocks in 21 slots leave 5 idle, 32 in 35 leave 3
  EXPECT_EQ(kernelProblemFor(test::asBf16(test::gemm(64, 256, 1024)), amx, caches, 2).n, 128);
  // The vector routes narrow rows first, down to a register block.
  const Schedule& dot = selectSchedule(Isa::Avx512Bf16, DType::BF16);
  const Problem narrow = test::asBf16(test::gemm(64, 32, 1024));
  EXPECT_EQ(gemmBlockingFor(narrow, dot, caches, 1).bm, 64);
  EXPECT_EQ(gemmBlockingFor(narrow, dot, caches, 2).bm, 32);
  EXPECT_EQ(gemmBlockingFor(narrow, dot, caches, 2).bn, 32);
  EXPECT_EQ(gemmBlockingFor(narrow, dot, caches, 16).bm, 8);
}

TEST(AmxKernels, UnsupportedProblemsAreNamed) {
  EXPECT_EQ(amxTileUnsupported(bf16Brgemm(33, 17, 64, 1, false)), std::nullopt);
  EXPECT_NE(amxTileUnsupported(bf16Brgemm(32, 32, 48, 1, false)).value_or("").find("multiple of 32"),
            std::string::npos);
  EXPECT_NE(amxTileUnsupported(test::makeProblem(32, 32, 64, 1, false)).value_or("").find("bf16 only"),
            std::string::npos);
}

TEST(AmxKernels, CompilerForANamedCpuRunsNothing) {
  MlirCompiler compiler(Isa::Amx, CacheSizes{}, "sapphirerapids");
  EXPECT_THROW(compiler.compile(bf16Brgemm(32, 32, 64, 1, false), selectSchedule(Isa::Amx, DType::BF16),
                                Lowering::Nanokernel),
               Error);
}

}  // namespace
}  // namespace nkbench::mlir_backend

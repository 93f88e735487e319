// The AMX BRGEMM kernel, written directly as MLIR loops around LLVM's AMX
// intrinsics in their register-immediate form (the linalg schedule route reloads
// and stores the C tile on every K step). MLIR 22's amx dialect lowers to the
// intrinsics LLVM allocates tile registers for, and LLVM then loads the tile
// configuration at every call and releases the tiles at every return: a third
// of the speed of an L1-resident block (shared/notes/hosts.md). Here the kernel
// names its tile registers (tile_config.h), its C tiles stay in them across the
// batch and K loops, and the caller loads the configuration once for a run of
// calls (tile_state.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/problem.h"

namespace nkbench::mlir_backend {

// tdpbf16ps shapes: a 16x16 f32 C tile += a 16 x 32 bf16 A tile times a B tile of
// 16 VNNI pair rows x 16 columns (32 bf16), i.e. 32 K per step. Tiles may have
// fewer rows and columns (the tile configuration says how many): that is how the
// kernels cover M and N off the 16 grid. K is padded to whole steps by the caller.
inline constexpr std::int64_t kAmxTileRows = 16;
inline constexpr std::int64_t kAmxTileCols = 16;
inline constexpr std::int64_t kAmxTileK = 32;

// AMX has 8 tile registers. A block of tile_rows x tile_cols C tiles holds them
// all through the reduction and loads, per K step, tile_rows A tiles and
// tile_cols B tiles.
inline constexpr std::int64_t kAmxTileRegisters = 8;
constexpr std::int64_t amxTileRegisters(std::int64_t tile_rows, std::int64_t tile_cols) {
  return tile_rows * tile_cols + tile_rows + tile_cols;
}

// A rectangle of C covered by blocks of tile_rows x tile_cols C tiles, each
// tile_height x tile_width.
struct TileRegion {
  std::int64_t row_offset = 0, rows = 0;
  std::int64_t col_offset = 0, cols = 0;
  std::int64_t tile_rows = 1, tile_cols = 1;
  std::int64_t tile_height = kAmxTileRows, tile_width = kAmxTileCols;
  std::int64_t tiles() const { return tile_rows * tile_cols; }
  std::int64_t blockRows() const { return tile_rows * tile_height; }
  std::int64_t blockCols() const { return tile_cols * tile_width; }
};

// Full blocks of the schedule's block_m x block_n, then edges of whole 16-wide
// tiles, then one band of narrower tiles (M % 16 rows, N % 16 columns). Throws
// nkbench::Error when the block is not whole tiles within the tile registers.
std::vector<TileRegion> planTileRegions(const Problem& brgemm, std::int64_t block_m, std::int64_t block_n);

// Why the tile kernel cannot compute `problem` (its kernel problem: K padded), or nullopt.
std::optional<std::string> amxTileUnsupported(const Problem& problem);

// How the tile instructions are spelled: as the intrinsics (run on AMX), or as
// calls of the emulator's functions (tile_emulator.h), which keep the same
// registers and configuration in memory, so that the kernel's tile
// configuration protocol is exercised on hosts without AMX.
enum class AmxTileOps { Intrinsics, EmulatorCalls };

// The emulator's functions: PREFIX + tilezero, tileloadd64, tilestored64, tdpbf16ps.
inline constexpr const char* kAmxEmulatorPrefix = "nkbench_amx_emulated_";
// void(const TilePalette*): loads a configuration unless it is loaded already
// (tile_state.h); the kernel calls it to switch between tile shapes.
inline constexpr const char* kAmxUseTileConfig = "nkbench_amx_use_tile_config";

struct AmxPayloadOptions {
  AmxTileOps tile_ops = AmxTileOps::Intrinsics;
  // Prefetch, per K step, the lines of the tiles the next batch entry loads.
  bool prefetch_next_batch_entry = false;
};

// Whether the kernel prefetches the next batch entry: when A and B of the whole
// batch do not fit in L1 (`l1_bytes`), so that the blocks stream from L2. An
// L1-resident block gains nothing from it and would pay for the instructions.
bool amxPrefetchesNextBatchEntry(const Problem& brgemm, std::int64_t l1_bytes);

// @nk_brgemm over A [batch][M][K] (bf16 pairs), B in VNNI pairs [batch][K/2][N][2]
// and C [M][N] (f32, or bf16: then each C block is summed in f32 tiles and
// rounded as it is stored, an mlp layer's epilogue applied to each f32 row on
// its way, with the layer's bias [N] (f32) as a fourth argument). The regions
// of one tile shape share a configuration (groupTileRegions): the caller loads
// the first group's, and @nk_brgemm switches to each later group's through
// kAmxUseTileConfig.
std::string buildAmxPayload(const Problem& brgemm, const std::vector<TileRegion>& regions,
                            const AmxPayloadOptions& options = {});

// "32x32" or, with edges, "32x32+16x32+5x32".
std::string describeTileBlocks(const std::vector<TileRegion>& regions);

}  // namespace nkbench::mlir_backend

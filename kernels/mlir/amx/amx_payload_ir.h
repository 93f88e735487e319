// The AMX BRGEMM kernel, written directly in MLIR's amx dialect: the linalg
// schedule route reloads and stores the C tile on every K step (see
// /work/shared/notes), so the payload keeps the C tiles as loop-carried
// !amx.tile values, which LLVM keeps in tmm registers across the batch and K loops.
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

// @nk_brgemm over A [batch][M][K] (bf16 pairs), B in VNNI pairs [batch][K/2][N][2]
// and C [M][N] (f32, or bf16: then each C block is summed in f32 tiles and
// rounded as it is stored). One tile configuration holds one shape per tile
// register, so @nk_brgemm calls one function per tile shape (not inlined:
// each configures its own tiles).
std::string buildAmxPayload(const Problem& brgemm, const std::vector<TileRegion>& regions);

// "32x32" or, with edges, "32x32+16x32+5x32".
std::string describeTileBlocks(const std::vector<TileRegion>& regions);

}  // namespace nkbench::mlir_backend

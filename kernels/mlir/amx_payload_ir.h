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
// 16 VNNI pair rows x 16 columns (32 bf16), i.e. 32 K per step.
inline constexpr std::int64_t kAmxTileRows = 16;
inline constexpr std::int64_t kAmxTileCols = 16;
inline constexpr std::int64_t kAmxTileK = 32;

// A rectangle of C covered by blocks of tile_rows x tile_cols C tiles.
struct TileRegion {
  std::int64_t row_offset = 0, rows = 0;
  std::int64_t col_offset = 0, cols = 0;
  std::int64_t tile_rows = 1, tile_cols = 1;
  std::int64_t tiles() const { return tile_rows * tile_cols; }
};

// Full blocks of the schedule's block_m x block_n, then 16-wide edges.
std::vector<TileRegion> planTileRegions(const Problem& brgemm, std::int64_t block_m, std::int64_t block_n);

// Why the tile kernel cannot compute `problem`, or nullopt.
std::optional<std::string> amxTileUnsupported(const Problem& problem);

// @nk_brgemm over A [batch][M][K] (bf16 pairs), B in VNNI pairs [batch][K/2][N][2], f32 C [M][N].
std::string buildAmxPayload(const Problem& brgemm, const std::vector<TileRegion>& regions);

// "32x32" or, with edges, "32x32+16x32".
std::string describeTileBlocks(const std::vector<TileRegion>& regions);

}  // namespace nkbench::mlir_backend

// Which tile register holds what, and the tile configuration (palette) that
// shapes the registers, for the tile kernels of amx_payload_ir.h. The kernels
// name their registers themselves and never configure tiles on their own: the
// caller loads the configuration once for a run of calls (tile_state.h), as the
// libraries do, instead of at every call as LLVM's tile register allocator would.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/mlir/amx/amx_payload_ir.h"

namespace nkbench::mlir_backend {

// The 64 bytes ldtilecfg reads, palette 1 (Intel SDM, "TILECFG"): byte 0 the
// palette, 1 the start row (0), 16-47 bytes per row of tiles 0-15 (16 bits each,
// little endian), 48-63 rows of tiles 0-15; unused tiles are 0 x 0.
struct TilePalette {
  static constexpr std::size_t kBytes = 64;
  std::array<std::uint8_t, kBytes> bytes{};

  int rows(int tile) const { return bytes[48 + tile]; }
  int bytesPerRow(int tile) const { return bytes[16 + 2 * tile] | bytes[17 + 2 * tile] << 8; }
  void setTile(int tile, int rows, int bytes_per_row);
  bool operator==(const TilePalette&) const = default;
  std::string describe() const;  // "tmm0 16x64 tmm1 16x64 ..." (rows x bytes per row)
};

// The tile registers of blocks of up to tile_rows x tile_cols C tiles: C tile
// (i, j), then the A tile of each block row, then the B tile of each block column.
struct TileRegisters {
  std::int64_t tile_rows = 1, tile_cols = 1;
  int c(std::int64_t i, std::int64_t j) const { return static_cast<int>(i * tile_cols + j); }
  int a(std::int64_t i) const { return static_cast<int>(tile_rows * tile_cols + i); }
  int b(std::int64_t j) const { return static_cast<int>(tile_rows * tile_cols + tile_rows + j); }
};

// The regions of one tile shape: they share one configuration.
struct TileGroup {
  std::int64_t tile_height = kAmxTileRows, tile_width = kAmxTileCols;
  std::vector<std::size_t> regions;  // indices into the plan's regions, in plan order
  TileRegisters registers;           // large enough for the largest block among them
  TilePalette palette;
};

// The plan's regions grouped by tile shape, in order of first appearance, each
// group with its registers and palette: C tiles tile_height rows of tile_width
// f32; A tiles tile_height rows of 32 bf16; B tiles 16 VNNI pair rows of
// tile_width pairs.
std::vector<TileGroup> groupTileRegions(const std::vector<TileRegion>& regions);

}  // namespace nkbench::mlir_backend

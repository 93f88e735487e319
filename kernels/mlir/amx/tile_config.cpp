#include "kernels/mlir/amx/tile_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace nkbench::mlir_backend {

void TilePalette::setTile(int tile, int tile_rows, int bytes_per_row) {
  bytes[0] = 1;  // palette 1: 8 tiles of up to 16 rows x 64 bytes
  bytes[16 + 2 * tile] = static_cast<std::uint8_t>(bytes_per_row & 0xff);
  bytes[17 + 2 * tile] = static_cast<std::uint8_t>(bytes_per_row >> 8);
  bytes[48 + tile] = static_cast<std::uint8_t>(tile_rows);
}

std::string TilePalette::describe() const {
  std::string text = fmt::format("palette {}", bytes[0]);
  for (int tile = 0; tile < kAmxTileRegisters; ++tile)
    if (rows(tile) > 0) text += fmt::format(" tmm{} {}x{}", tile, rows(tile), bytesPerRow(tile));
  return text;
}

std::vector<TileGroup> groupTileRegions(const std::vector<TileRegion>& regions) {
  std::vector<TileGroup> groups;
  for (std::size_t index = 0; index < regions.size(); ++index) {
    const TileRegion& r = regions[index];
    auto group = std::find_if(groups.begin(), groups.end(), [&](const TileGroup& g) {
      return g.tile_height == r.tile_height && g.tile_width == r.tile_width;
    });
    if (group == groups.end()) {
      TileGroup first;
      first.tile_height = r.tile_height;
      first.tile_width = r.tile_width;
      first.registers = {.tile_rows = 0, .tile_cols = 0};
      group = groups.insert(groups.end(), first);
    }
    group->regions.push_back(index);
    group->registers.tile_rows = std::max(group->registers.tile_rows, r.tile_rows);
    group->registers.tile_cols = std::max(group->registers.tile_cols, r.tile_cols);
  }
  constexpr int kBf16Bytes = 2, kF32Bytes = 4;
  for (TileGroup& g : groups) {
    const TileRegisters& regs = g.registers;
    const int height = static_cast<int>(g.tile_height), width = static_cast<int>(g.tile_width);
    for (std::int64_t i = 0; i < regs.tile_rows; ++i) {
      for (std::int64_t j = 0; j < regs.tile_cols; ++j) g.palette.setTile(regs.c(i, j), height, width * kF32Bytes);
      g.palette.setTile(regs.a(i), height, static_cast<int>(kAmxTileK) * kBf16Bytes);
    }
    for (std::int64_t j = 0; j < regs.tile_cols; ++j)
      g.palette.setTile(regs.b(j), static_cast<int>(kAmxTileK / 2), width * 2 * kBf16Bytes);
  }
  return groups;
}

}  // namespace nkbench::mlir_backend

#include "kernels/mlir/amx_payload_ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace nkbench::mlir_backend {
namespace {

constexpr const char* kCTile = "!amx.tile<16x16xf32>";
constexpr const char* kInTile = "!amx.tile<16x32xbf16>";

std::string repeatJoined(std::int64_t count, const std::string& text) {
  std::vector<std::string> items(static_cast<std::size_t>(count), text);
  return fmt::format("{}", fmt::join(items, ", "));
}

// One region: loops over its C blocks; per block the C tiles are initialised once,
// carried through the batch and K loops, and stored once after them.
std::string regionLoops(const Problem& p, const TileRegion& r, int index, const std::string& types) {
  const std::string id = fmt::format("r{}", index);
  const std::string a_type = fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.m, p.k);
  const std::string b_type = fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.k / 2, 2 * p.n);
  const std::string c_type = fmt::format("memref<{}x{}xf32>", p.m, p.n);
  const std::int64_t tiles = r.tiles();
  auto tile = [&](const char* prefix, std::int64_t i, std::int64_t j) {
    return fmt::format("%{}_{}{}{}", id, prefix, i, j);
  };
  auto tileList = [&](const char* prefix) {
    std::vector<std::string> names;
    for (std::int64_t i = 0; i < r.tile_rows; ++i)
      for (std::int64_t j = 0; j < r.tile_cols; ++j) names.push_back(tile(prefix, i, j));
    return fmt::format("{}", fmt::join(names, ", "));
  };
  auto iterArgs = [&](const char* inner, const char* outer) {
    std::vector<std::string> pairs;
    for (std::int64_t i = 0; i < r.tile_rows; ++i)
      for (std::int64_t j = 0; j < r.tile_cols; ++j) pairs.push_back(tile(inner, i, j) + " = " + tile(outer, i, j));
    return fmt::format("{}", fmt::join(pairs, ", "));
  };

  std::string s;
  s += fmt::format("    %{0}_m_begin = arith.constant {1} : index\n    %{0}_m_end = arith.constant {2} : index\n"
                   "    %{0}_m_step = arith.constant {3} : index\n",
                   id, r.row_offset, r.row_offset + r.rows, r.tile_rows * kAmxTileRows);
  s += fmt::format("    %{0}_n_begin = arith.constant {1} : index\n    %{0}_n_end = arith.constant {2} : index\n"
                   "    %{0}_n_step = arith.constant {3} : index\n",
                   id, r.col_offset, r.col_offset + r.cols, r.tile_cols * kAmxTileCols);
  s += fmt::format("    scf.for %{0}_m = %{0}_m_begin to %{0}_m_end step %{0}_m_step {{\n", id);
  s += fmt::format("      scf.for %{0}_n = %{0}_n_begin to %{0}_n_end step %{0}_n_step {{\n", id);
  // Row and column offsets of each tile in the block.
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("        %{0}_m{1} = arith.addi %{0}_m, %c{2} : index\n", id, i, i * kAmxTileRows);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("        %{0}_n{1} = arith.addi %{0}_n, %c{2} : index\n"
                     "        %{0}_bn{1} = arith.muli %{0}_n{1}, %c2 : index\n",
                     id, j, j * kAmxTileCols);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      s += p.accumulate ? fmt::format("        {} = amx.tile_load %c[%{}_m{}, %{}_n{}] : {} into {}\n", tile("init", i, j),
                                      id, i, id, j, c_type, kCTile)
                        : fmt::format("        {} = amx.tile_zero : {}\n", tile("init", i, j), kCTile);
  s += fmt::format("        %{}_sum:{} = scf.for %{}_b = %c0 to %batch step %c1 iter_args({}) -> ({}) {{\n", id, tiles,
                   id, iterArgs("bacc", "init"), types);
  s += fmt::format("          %{}_ksum:{} = scf.for %{}_k = %c0 to %k_end step %c32 iter_args({}) -> ({}) {{\n", id,
                   tiles, id, iterArgs("kacc", "bacc"), types);
  s += fmt::format("            %{0}_kpair = arith.divui %{0}_k, %c2 : index\n", id);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("            %{0}_a{1} = amx.tile_load %a[%{0}_b, %{0}_m{1}, %{0}_k] : {2} into {3}\n", id, i,
                     a_type, kInTile);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("            %{0}_b{1} = amx.tile_load %b[%{0}_b, %{0}_kpair, %{0}_bn{1}] : {2} into {3}\n", id,
                     j, b_type, kInTile);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      s += fmt::format("            {} = amx.tile_mulf %{}_a{}, %{}_b{}, {} : {}, {}, {}\n", tile("prod", i, j), id, i,
                       id, j, tile("kacc", i, j), kInTile, kInTile, kCTile);
  s += fmt::format("            scf.yield {} : {}\n          }}\n", tileList("prod"), types);
  std::vector<std::string> k_results;
  for (std::int64_t t = 0; t < tiles; ++t) k_results.push_back(fmt::format("%{}_ksum#{}", id, t));
  s += fmt::format("          scf.yield {} : {}\n        }}\n", fmt::join(k_results, ", "), types);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      s += fmt::format("        amx.tile_store %c[%{0}_m{1}, %{0}_n{2}], %{0}_sum#{3} : {4}, {5}\n", id, i, j,
                       i * r.tile_cols + j, c_type, kCTile);
  s += "      }\n    }\n";
  return s;
}

}  // namespace

std::vector<TileRegion> planTileRegions(const Problem& p, std::int64_t block_m, std::int64_t block_n) {
  const std::int64_t full_m = p.m / block_m * block_m, full_n = p.n / block_n * block_n;
  const std::int64_t rows[] = {full_m, p.m - full_m}, cols[] = {full_n, p.n - full_n};
  const std::int64_t tile_rows[] = {block_m / kAmxTileRows, 1}, tile_cols[] = {block_n / kAmxTileCols, 1};
  std::vector<TileRegion> regions;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      if (rows[i] > 0 && cols[j] > 0)
        regions.push_back({.row_offset = i ? full_m : 0, .rows = rows[i], .col_offset = j ? full_n : 0,
                           .cols = cols[j], .tile_rows = i ? rows[i] / kAmxTileRows : tile_rows[0],
                           .tile_cols = j ? cols[j] / kAmxTileCols : tile_cols[0]});
  return regions;
}

std::optional<std::string> amxTileUnsupported(const Problem& p) {
  if (p.dtype != DType::BF16) return fmt::format("amx: the tile kernels are bf16 only, not {}", toString(p.dtype));
  if (p.c_dtype != DType::F32) return "amx: the tile kernels write an f32 C (a bf16 C is not supported yet)";
  if (p.m % kAmxTileRows != 0 || p.n % kAmxTileCols != 0 || p.k % kAmxTileK != 0)
    return fmt::format("amx: the tile kernels need M and N multiples of {} and K a multiple of {} ({}x{}x{})",
                       kAmxTileRows, kAmxTileK, p.m, p.n, p.k);
  return std::nullopt;
}

std::string buildAmxPayload(const Problem& p, const std::vector<TileRegion>& regions) {
  std::string s = fmt::format(
      "  func.func @nk_brgemm(%a: memref<{0}x{1}x{2}xbf16>, %b: memref<{0}x{3}x{4}xbf16>, %c: memref<{1}x{5}xf32>) {{\n"
      "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
      "    %c2 = arith.constant 2 : index\n    %c16 = arith.constant 16 : index\n"
      "    %c32 = arith.constant 32 : index\n    %batch = arith.constant {0} : index\n"
      "    %k_end = arith.constant {2} : index\n",
      p.batch, p.m, p.k, p.k / 2, 2 * p.n, p.n);
  for (std::size_t i = 0; i < regions.size(); ++i)
    s += regionLoops(p, regions[i], static_cast<int>(i), repeatJoined(regions[i].tiles(), kCTile));
  s += "    return\n  }\n";
  return s;
}

std::string describeTileBlocks(const std::vector<TileRegion>& regions) {
  std::vector<std::string> blocks;
  for (const TileRegion& r : regions) {
    std::string block = fmt::format("{}x{}", r.tile_rows * kAmxTileRows, r.tile_cols * kAmxTileCols);
    if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
  }
  return fmt::format("{}", fmt::join(blocks, "+"));
}

}  // namespace nkbench::mlir_backend

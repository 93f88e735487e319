#include "kernels/mlir/amx/amx_payload_ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "harness/core/error.h"

namespace nkbench::mlir_backend {
namespace {

// One dimension of C cut for tiles: an offset, an extent, tiles per block and tile extent.
struct Band {
  std::int64_t offset, extent, tiles, tile_extent;
};

// Full blocks, then the whole tiles left (one block), then the part-tile left.
std::vector<Band> bandsOf(std::int64_t extent, std::int64_t block, std::int64_t tile) {
  const std::int64_t full = extent / block * block;
  const std::int64_t whole_tiles = (extent - full) / tile * tile;
  const std::int64_t part = extent - full - whole_tiles;
  std::vector<Band> bands;
  if (full > 0) bands.push_back({0, full, block / tile, tile});
  if (whole_tiles > 0) bands.push_back({full, whole_tiles, whole_tiles / tile, tile});
  if (part > 0) bands.push_back({full + whole_tiles, part, 1, part});
  return bands;
}

struct PayloadTypes {
  std::string a, b, c;  // the memrefs
  std::string signature() const { return fmt::format("{}, {}, {}", a, b, c); }
};

PayloadTypes payloadTypes(const Problem& p) {
  return {fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.m, p.k),
          fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.k / 2, 2 * p.n),
          fmt::format("memref<{}x{}x{}>", p.m, p.n, toString(p.c_dtype))};
}

std::string sumType(const TileRegion& r) { return fmt::format("memref<{}x{}xf32>", r.blockRows(), r.blockCols()); }

// A bf16 C block and its f32 sum, one row vector at a time: widened into the
// sum (beta 1, before the reduction) or rounded out of it into C (after it).
std::string copyRowsOfBlock(const std::string& id, const char* name, const std::string& c_type, const TileRegion& r,
                            bool widen) {
  const std::string row_f32 = fmt::format("vector<{}xf32>", r.blockCols());
  const std::string row_bf16 = fmt::format("vector<{}xbf16>", r.blockCols());
  const std::string c_row = fmt::format("%c[%{0}_{1}_row, %{0}_n]", id, name);
  const std::string sum_row = fmt::format("%{0}_sum[%{0}_{1}, %c0]", id, name);
  std::string s = fmt::format(
      "        scf.for %{0}_{1} = %c0 to %{0}_sum_rows step %c1 {{\n"
      "          %{0}_{1}_row = arith.addi %{0}_m, %{0}_{1} : index\n",
      id, name);
  if (widen)
    s += fmt::format(
        "          %{0}_{1}_c = vector.load {2} : {3}, {4}\n"
        "          %{0}_{1}_f32 = arith.extf %{0}_{1}_c : {4} to {5}\n"
        "          vector.store %{0}_{1}_f32, {6} : {7}, {5}\n",
        id, name, c_row, c_type, row_bf16, row_f32, sum_row, sumType(r));
  else
    s += fmt::format(
        "          %{0}_{1}_f32 = vector.load {6} : {7}, {5}\n"
        "          %{0}_{1}_c = arith.truncf %{0}_{1}_f32 : {5} to {4}\n"
        "          vector.store %{0}_{1}_c, {2} : {3}, {4}\n",
        id, name, c_row, c_type, row_bf16, row_f32, sum_row, sumType(r));
  return s + "        }\n";
}

// The loops of one region: per C block the tiles are initialised once, carried
// through the batch and K loops, and stored once after them. A bf16 C goes
// through an f32 copy of the block (`sum`): widened into it under beta 1,
// rounded out of it at the end.
std::string regionLoops(const Problem& p, const TileRegion& r, int index) {
  const std::string id = fmt::format("r{}", index);
  const PayloadTypes memrefs = payloadTypes(p);
  const std::string c_tile = fmt::format("!amx.tile<{}x{}xf32>", r.tile_height, r.tile_width);
  const std::string a_tile = fmt::format("!amx.tile<{}x{}xbf16>", r.tile_height, kAmxTileK);
  const std::string b_tile = fmt::format("!amx.tile<{}x{}xbf16>", kAmxTileK / 2, 2 * r.tile_width);
  const bool bf16_c = p.c_dtype == DType::BF16;
  const std::string sum_type = sumType(r);
  const std::int64_t tiles = r.tiles();
  const std::string carried = fmt::format("{}", fmt::join(std::vector<std::string>(tiles, c_tile), ", "));
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
  // Where tile (i, j) sits: in C, or in the block's f32 sum.
  auto cTileAt = [&](std::int64_t i, std::int64_t j) { return fmt::format("%c[%{0}_m{1}, %{0}_n{2}]", id, i, j); };
  auto sumTileAt = [&](std::int64_t i, std::int64_t j) {
    return fmt::format("%{0}_sum[%{0}_ti{1}_off, %{0}_tj{2}_off]", id, i, j);
  };

  std::string s;
  // Tile offsets inside a block.
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("    %{}_ti{}_off = arith.constant {} : index\n", id, i, i * r.tile_height);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("    %{}_tj{}_off = arith.constant {} : index\n", id, j, j * r.tile_width);
  s += fmt::format("    %{0}_m_begin = arith.constant {1} : index\n    %{0}_m_end = arith.constant {2} : index\n"
                   "    %{0}_m_step = arith.constant {3} : index\n",
                   id, r.row_offset, r.row_offset + r.rows, r.blockRows());
  s += fmt::format("    %{0}_n_begin = arith.constant {1} : index\n    %{0}_n_end = arith.constant {2} : index\n"
                   "    %{0}_n_step = arith.constant {3} : index\n",
                   id, r.col_offset, r.col_offset + r.cols, r.blockCols());
  if (bf16_c) {
    s += fmt::format("    %{0}_sum = memref.alloca() : {1}\n    %{0}_sum_rows = arith.constant {2} : index\n", id,
                     sum_type, r.blockRows());
  }
  s += fmt::format("    scf.for %{0}_m = %{0}_m_begin to %{0}_m_end step %{0}_m_step {{\n", id);
  s += fmt::format("      scf.for %{0}_n = %{0}_n_begin to %{0}_n_end step %{0}_n_step {{\n", id);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("        %{0}_m{1} = arith.addi %{0}_m, %{0}_ti{1}_off : index\n", id, i);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("        %{0}_n{1} = arith.addi %{0}_n, %{0}_tj{1}_off : index\n"
                     "        %{0}_bn{1} = arith.muli %{0}_n{1}, %c2 : index\n",
                     id, j);
  if (bf16_c && p.accumulate) s += copyRowsOfBlock(id, "in", memrefs.c, r, /*widen=*/true);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j) {
      if (!p.accumulate)
        s += fmt::format("        {} = amx.tile_zero : {}\n", tile("init", i, j), c_tile);
      else
        s += fmt::format("        {} = amx.tile_load {} : {} into {}\n", tile("init", i, j),
                         bf16_c ? sumTileAt(i, j) : cTileAt(i, j), bf16_c ? sum_type : memrefs.c, c_tile);
    }
  s += fmt::format("        %{}_sum_b:{} = scf.for %{}_b = %c0 to %batch step %c1 iter_args({}) -> ({}) {{\n", id, tiles,
                   id, iterArgs("bacc", "init"), carried);
  s += fmt::format("          %{}_ksum:{} = scf.for %{}_k = %c0 to %k_end step %c32 iter_args({}) -> ({}) {{\n", id,
                   tiles, id, iterArgs("kacc", "bacc"), carried);
  s += fmt::format("            %{0}_kpair = arith.divui %{0}_k, %c2 : index\n", id);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("            %{0}_a{1} = amx.tile_load %a[%{0}_b, %{0}_m{1}, %{0}_k] : {2} into {3}\n", id, i,
                     memrefs.a, a_tile);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("            %{0}_b{1} = amx.tile_load %b[%{0}_b, %{0}_kpair, %{0}_bn{1}] : {2} into {3}\n", id,
                     j, memrefs.b, b_tile);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      s += fmt::format("            {} = amx.tile_mulf %{}_a{}, %{}_b{}, {} : {}, {}, {}\n", tile("prod", i, j), id, i,
                       id, j, tile("kacc", i, j), a_tile, b_tile, c_tile);
  s += fmt::format("            scf.yield {} : {}\n          }}\n", tileList("prod"), carried);
  std::vector<std::string> k_results;
  for (std::int64_t t = 0; t < tiles; ++t) k_results.push_back(fmt::format("%{}_ksum#{}", id, t));
  s += fmt::format("          scf.yield {} : {}\n        }}\n", fmt::join(k_results, ", "), carried);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      s += fmt::format("        amx.tile_store {}, %{}_sum_b#{} : {}, {}\n", bf16_c ? sumTileAt(i, j) : cTileAt(i, j),
                       id, i * r.tile_cols + j, bf16_c ? sum_type : memrefs.c, c_tile);
  if (bf16_c) s += copyRowsOfBlock(id, "out", memrefs.c, r, /*widen=*/false);
  s += "      }\n    }\n";
  return s;
}

std::string functionHeader(const std::string& name, const PayloadTypes& memrefs, const std::string& attributes) {
  return fmt::format("  func.func @{}(%a: {}, %b: {}, %c: {}){} {{\n", name, memrefs.a, memrefs.b, memrefs.c, attributes);
}

std::string tileFunctionName(const TileRegion& r) {
  return fmt::format("nk_tiles_{}x{}", r.tile_height, r.tile_width);
}

}  // namespace

std::vector<TileRegion> planTileRegions(const Problem& p, std::int64_t block_m, std::int64_t block_n) {
  const bool whole_tiles = block_m > 0 && block_n > 0 && block_m % kAmxTileRows == 0 && block_n % kAmxTileCols == 0;
  if (!whole_tiles || amxTileRegisters(block_m / kAmxTileRows, block_n / kAmxTileCols) > kAmxTileRegisters)
    throw Error(fmt::format("amx: a {}x{} block is not whole 16x16 tiles within the {} tile registers", block_m,
                            block_n, kAmxTileRegisters));
  std::vector<TileRegion> regions;
  for (const Band& rows : bandsOf(p.m, block_m, kAmxTileRows))
    for (const Band& cols : bandsOf(p.n, block_n, kAmxTileCols))
      regions.push_back({.row_offset = rows.offset, .rows = rows.extent, .col_offset = cols.offset,
                         .cols = cols.extent, .tile_rows = rows.tiles, .tile_cols = cols.tiles,
                         .tile_height = rows.tile_extent, .tile_width = cols.tile_extent});
  return regions;
}

std::optional<std::string> amxTileUnsupported(const Problem& p) {
  if (p.dtype != DType::BF16) return fmt::format("amx: the tile kernels are bf16 only, not {}", toString(p.dtype));
  if (p.k % kAmxTileK != 0)
    return fmt::format("amx: the tile kernel's K must be a multiple of {} (operands are padded to it), not {}",
                       kAmxTileK, p.k);
  return std::nullopt;
}

std::string buildAmxPayload(const Problem& p, const std::vector<TileRegion>& regions) {
  const PayloadTypes memrefs = payloadTypes(p);
  // Regions grouped by tile shape, in order of first appearance: one function each.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const std::string name = tileFunctionName(regions[i]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& group) { return group.first == name; });
    if (it == groups.end()) it = groups.insert(groups.end(), {name, {}});
    it->second.push_back(i);
  }
  std::string s;
  for (const auto& [name, members] : groups) {
    s += functionHeader(name, memrefs, " attributes {passthrough = [\"noinline\"]}");
    s += fmt::format(
        "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
        "    %c2 = arith.constant 2 : index\n    %c32 = arith.constant 32 : index\n"
        "    %batch = arith.constant {} : index\n    %k_end = arith.constant {} : index\n",
        p.batch, p.k);
    for (std::size_t i : members) s += regionLoops(p, regions[i], static_cast<int>(i));
    s += "    return\n  }\n";
  }
  s += functionHeader("nk_brgemm", memrefs, "");
  for (const auto& group : groups)
    s += fmt::format("    func.call @{}(%a, %b, %c) : ({}) -> ()\n", group.first, memrefs.signature());
  s += "    return\n  }\n";
  return s;
}

std::string describeTileBlocks(const std::vector<TileRegion>& regions) {
  std::vector<std::string> blocks;
  for (const TileRegion& r : regions) {
    std::string block = fmt::format("{}x{}", r.blockRows(), r.blockCols());
    if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
  }
  return fmt::format("{}", fmt::join(blocks, "+"));
}

}  // namespace nkbench::mlir_backend

#include "kernels/mlir/amx/amx_payload_ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "harness/core/error.h"
#include "kernels/mlir/amx/tile_config.h"

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
};

PayloadTypes payloadTypes(const Problem& p) {
  return {fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.m, p.k),
          fmt::format("memref<{}x{}x{}xbf16>", p.batch, p.k / 2, 2 * p.n),
          fmt::format("memref<{}x{}x{}>", p.m, p.n, toString(p.c_dtype))};
}

constexpr std::int64_t kBf16Bytes = 2, kF32Bytes = 4;

std::string sumType(const TileRegion& r) { return fmt::format("memref<{}x{}xf32>", r.blockRows(), r.blockCols()); }

// A memref's base address as an !llvm.ptr named %NAME_p: the tile instructions take addresses.
std::string pointerOf(const std::string& name, const std::string& type, const std::string& indent) {
  return fmt::format(
      "{0}%{1}_addr = memref.extract_aligned_pointer_as_index %{1} : {2} -> index\n"
      "{0}%{1}_i64 = arith.index_cast %{1}_addr : index to i64\n"
      "{0}%{1}_p = llvm.inttoptr %{1}_i64 : i64 to !llvm.ptr\n",
      indent, name, type);
}

// The tile instructions, spelled as LLVM's AMX intrinsics with the tile register
// as an immediate (the form in which LLVM allocates no tiles and configures
// nothing), or as calls of the emulator (tile_emulator.h).
class TileOps {
 public:
  explicit TileOps(AmxTileOps ops) : emulated_(ops == AmxTileOps::EmulatorCalls) {}

  std::string registers(const std::string& indent) const {
    std::string s;
    for (int t = 0; t < kAmxTileRegisters; ++t)
      s += emulated_ ? fmt::format("{}%tmm{} = arith.constant {} : i64\n", indent, t, t)
                     : fmt::format("{}%tmm{} = llvm.mlir.constant({} : i8) : i8\n", indent, t, t);
    return s;
  }
  std::string zero(int tile, const std::string& indent) const {
    return op(indent, "tilezero", fmt::format("%tmm{}", tile), {regType()});
  }
  std::string load(int tile, const std::string& address, const std::string& stride, const std::string& indent) const {
    return op(indent, "tileloadd64", fmt::format("%tmm{}, {}, {}", tile, address, stride),
              {regType(), "!llvm.ptr", "i64"});
  }
  std::string store(int tile, const std::string& address, const std::string& stride, const std::string& indent) const {
    return op(indent, "tilestored64", fmt::format("%tmm{}, {}, {}", tile, address, stride),
              {regType(), "!llvm.ptr", "i64"});
  }
  std::string product(int c, int a, int b, const std::string& indent) const {
    return op(indent, "tdpbf16ps", fmt::format("%tmm{}, %tmm{}, %tmm{}", c, a, b), {regType(), regType(), regType()});
  }
  // The emulator's functions, declared in the module.
  std::string declarations() const {
    if (!emulated_) return "";
    return fmt::format(
        "  func.func private @{0}tilezero(i64)\n  func.func private @{0}tileloadd64(i64, !llvm.ptr, i64)\n"
        "  func.func private @{0}tilestored64(i64, !llvm.ptr, i64)\n  func.func private @{0}tdpbf16ps(i64, i64, i64)\n",
        kAmxEmulatorPrefix);
  }

 private:
  // Intrinsics take the register as an i8 immediate; the emulator as a plain i64 argument.
  std::string regType() const { return emulated_ ? "i64" : "i8"; }
  std::string op(const std::string& indent, const char* name, const std::string& args,
                 const std::vector<std::string>& types) const {
    if (emulated_)
      return fmt::format("{}func.call @{}{}({}) : ({}) -> ()\n", indent, kAmxEmulatorPrefix, name, args,
                         fmt::join(types, ", "));
    return fmt::format("{}llvm.call_intrinsic \"llvm.x86.{}\"({}) : ({}) -> ()\n", indent, name, args,
                       fmt::join(types, ", "));
  }
  bool emulated_;
};

// An mlp layer's epilogue on one f32 row vector of a block, `value`, at
// columns [%ID_n, + cols): the bias of those columns added, then the
// activation. Returns the ops and the name of the result (`value` without an epilogue).
std::pair<std::string, std::string> epilogueOnRow(const Problem& p, const std::string& value, const std::string& prefix,
                                                  std::int64_t cols, const std::string& id, const std::string& indent) {
  const std::string row_f32 = fmt::format("vector<{}xf32>", cols);
  std::string s, result = value;
  if (p.mlp.bias) {
    s += fmt::format("{0}{1}_bias = vector.load %bias[%{2}_n] : memref<{3}xf32>, {4}\n"
                     "{0}{1}_biased = arith.addf {5}, {1}_bias : {4}\n",
                     indent, prefix, id, p.n, row_f32, result);
    result = prefix + "_biased";
  }
  if (p.mlp.activation == Activation::Relu) {
    s += fmt::format("{0}{1}_zeros = arith.constant dense<0.000000e+00> : {2}\n"
                     "{0}{1}_relu = arith.maximumf {3}, {1}_zeros : {2}\n",
                     indent, prefix, row_f32, result);
    result = prefix + "_relu";
  }
  return {s, result};
}

// A bf16 C block and its f32 sum, one row vector at a time: widened into the
// sum (beta 1, before the reduction) or rounded out of it into C (after it).
std::string copyRowsOfBlock(const Problem& p, const std::string& id, const char* name, const std::string& c_type,
                            const TileRegion& r, bool widen) {
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
  else {
    // An mlp's epilogue goes on the f32 sum, before it is rounded into C.
    const auto [epilogue, result] =
        epilogueOnRow(p, fmt::format("%{}_{}_f32", id, name), fmt::format("%{}_{}", id, name), r.blockCols(), id,
                      "          ");
    s += fmt::format("          %{0}_{1}_f32 = vector.load {2} : {3}, {4}\n", id, name, sum_row, sumType(r), row_f32);
    s += epilogue;
    s += fmt::format(
        "          %{0}_{1}_c = arith.truncf {2} : {3} to {4}\n"
        "          vector.store %{0}_{1}_c, {5} : {6}, {4}\n",
        id, name, result, row_f32, row_bf16, c_row, c_type);
  }
  return s + "        }\n";
}

// NAME = BASE + a byte offset that is an affine map of index values.
std::string addressAt(const std::string& name, const std::string& base, const std::string& map,
                      const std::string& operands, const std::string& indent) {
  return fmt::format(
      "{0}{1}_off = affine.apply affine_map<{2}>({3})\n"
      "{0}{1}_off64 = arith.index_cast {1}_off : index to i64\n"
      "{0}{1} = llvm.getelementptr {4}[{1}_off64] : (!llvm.ptr, i64) -> !llvm.ptr, i8\n",
      indent, name, map, operands, base);
}

// A read prefetch into L1 of the line at ADDRESS + byte_offset.
std::string prefetch(const std::string& address, std::int64_t byte_offset, const std::string& indent) {
  const std::string line = fmt::format("{}_pf{}", address, byte_offset);
  return fmt::format(
      "{0}{1} = llvm.getelementptr {2}[{3}] : (!llvm.ptr) -> !llvm.ptr, i8\n"
      "{0}\"llvm.intr.prefetch\"({1}) <{{cache = 1 : i32, hint = 3 : i32, rw = 0 : i32}}> : (!llvm.ptr) -> ()\n",
      indent, line, address, byte_offset);
}

// The loops of one region. Per C block the C tiles are initialised once in
// their registers, stay there through the batch and K loops, and are stored
// once after them. A bf16 C goes through an f32 copy of the block (`sum`):
// widened into it under beta 1, rounded out of it at the end, an mlp layer's
// epilogue (bias, ReLU) applied to each f32 row on its way out, while the
// block is in L1: no pass over C after the kernel.
std::string regionLoops(const Problem& p, const TileRegion& r, int index, const TileRegisters& regs,
                        const TileOps& ops, bool prefetch_next_entry) {
  const std::string id = fmt::format("r{}", index);
  const PayloadTypes memrefs = payloadTypes(p);
  const bool bf16_c = p.c_dtype == DType::BF16;
  const std::string in_block = "        ", in_k = "            ";

  std::string s;
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
    const std::string sum_type = sumType(r);
    s += fmt::format("    %{0}_sum = memref.alloca() : {1}\n    %{0}_sum_rows = arith.constant {2} : index\n", id,
                     sum_type, r.blockRows());
    s += pointerOf(id + "_sum", sum_type, "    ");
    s += fmt::format("    %{}_sum_stride = arith.constant {} : i64\n", id, r.blockCols() * kF32Bytes);
  }
  const std::string c_stride = bf16_c ? fmt::format("%{}_sum_stride", id) : "%c_stride";
  s += fmt::format("    scf.for %{0}_m = %{0}_m_begin to %{0}_m_end step %{0}_m_step {{\n", id);
  s += fmt::format("      scf.for %{0}_n = %{0}_n_begin to %{0}_n_end step %{0}_n_step {{\n", id);
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    s += fmt::format("        %{0}_m{1} = arith.addi %{0}_m, %{0}_ti{1}_off : index\n", id, i);
  for (std::int64_t j = 0; j < r.tile_cols; ++j)
    s += fmt::format("        %{0}_n{1} = arith.addi %{0}_n, %{0}_tj{1}_off : index\n", id, j);
  if (bf16_c && p.accumulate) s += copyRowsOfBlock(p, id, "in", memrefs.c, r, /*widen=*/true);
  // C tile (i, j): in C at (m_i, n_j), or at its place in the block's sum.
  auto cTile = [&](std::int64_t i, std::int64_t j) { return fmt::format("%{}_c{}{}", id, i, j); };
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j) {
      if (bf16_c)
        s += fmt::format("{}{} = llvm.getelementptr %{}_sum_p[{}] : (!llvm.ptr) -> !llvm.ptr, i8\n", in_block,
                         cTile(i, j), id, (i * r.tile_height * r.blockCols() + j * r.tile_width) * kF32Bytes);
      else
        s += addressAt(cTile(i, j), "%c_p", fmt::format("(m, n) -> ((m * {} + n) * {})", p.n, kF32Bytes),
                       fmt::format("%{0}_m{1}, %{0}_n{2}", id, i, j), in_block);
      s += p.accumulate ? ops.load(regs.c(i, j), cTile(i, j), c_stride, in_block) : ops.zero(regs.c(i, j), in_block);
    }
  s += fmt::format("        scf.for %{0}_b = %c0 to %batch step %c1 {{\n", id);
  s += fmt::format("          scf.for %{0}_k = %c0 to %k_end step %c32 {{\n", id);
  // A [b][m][k] and B [b][k/2][2n] (VNNI pairs), as byte offsets.
  const std::string a_map = fmt::format("(b, m, k) -> (((b * {} + m) * {} + k) * {})", p.m, p.k, kBf16Bytes);
  const std::string b_map = fmt::format("(b, k, n) -> (((b * {} + k floordiv 2) * {} + n * 2) * {})", p.k / 2,
                                        2 * p.n, kBf16Bytes);
  for (std::int64_t i = 0; i < r.tile_rows; ++i) {
    const std::string a_tile = fmt::format("%{}_a{}", id, i);
    s += addressAt(a_tile, "%a_p", a_map, fmt::format("%{0}_b, %{0}_m{1}, %{0}_k", id, i), in_k);
    s += ops.load(regs.a(i), a_tile, "%a_stride", in_k);
  }
  for (std::int64_t j = 0; j < r.tile_cols; ++j) {
    const std::string b_tile = fmt::format("%{}_b{}", id, j);
    s += addressAt(b_tile, "%b_p", b_map, fmt::format("%{0}_b, %{0}_k, %{0}_n{1}", id, j), in_k);
    s += ops.load(regs.b(j), b_tile, "%b_stride", in_k);
  }
  // The same tiles of the next batch entry, one cache line per tile row. A
  // prefetch never faults, so the last entry's reach past the operands is harmless.
  if (prefetch_next_entry) {
    const std::int64_t a_entry = p.m * p.k * kBf16Bytes, b_entry = p.k * p.n * kBf16Bytes;
    for (std::int64_t i = 0; i < r.tile_rows; ++i)
      for (std::int64_t row = 0; row < r.tile_height; ++row)
        s += prefetch(fmt::format("%{}_a{}", id, i), a_entry + row * p.k * kBf16Bytes, in_k);
    for (std::int64_t j = 0; j < r.tile_cols; ++j)
      for (std::int64_t row = 0; row < kAmxTileK / 2; ++row)
        s += prefetch(fmt::format("%{}_b{}", id, j), b_entry + row * 2 * p.n * kBf16Bytes, in_k);
  }
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j) s += ops.product(regs.c(i, j), regs.a(i), regs.b(j), in_k);
  s += "          }\n        }\n";
  for (std::int64_t i = 0; i < r.tile_rows; ++i)
    for (std::int64_t j = 0; j < r.tile_cols; ++j) s += ops.store(regs.c(i, j), cTile(i, j), c_stride, in_block);
  if (bf16_c) s += copyRowsOfBlock(p, id, "out", memrefs.c, r, /*widen=*/false);
  s += "      }\n    }\n";
  return s;
}

std::string paletteGlobal(std::size_t group, const TilePalette& palette) {
  return fmt::format(
      "  llvm.mlir.global private constant @nk_tile_config_{}(dense<[{}]> : tensor<{}xi8>) {{addr_space = 0 : i32}} "
      ": !llvm.array<{} x i8>\n",
      group, fmt::join(palette.bytes, ", "), TilePalette::kBytes, TilePalette::kBytes);
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
  // An mlp layer's epilogue goes on the f32 sum a bf16 C is rounded from
  // (its activations are bf16): an f32 C has no such pass.
  if (p.hasEpilogue() && p.c_dtype != DType::BF16)
    return fmt::format("amx: the tile kernels fuse an epilogue into a bf16 C only, not {}", toString(p.c_dtype));
  if (p.k % kAmxTileK != 0)
    return fmt::format("amx: the tile kernel's K must be a multiple of {} (operands are padded to it), not {}",
                       kAmxTileK, p.k);
  return std::nullopt;
}

bool amxPrefetchesNextBatchEntry(const Problem& p, std::int64_t l1_bytes) {
  return p.batch > 1 && (p.m + p.n) * p.k * kBf16Bytes * p.batch > l1_bytes;
}

std::string buildAmxPayload(const Problem& p, const std::vector<TileRegion>& regions, const AmxPayloadOptions& options) {
  const PayloadTypes memrefs = payloadTypes(p);
  const std::vector<TileGroup> groups = groupTileRegions(regions);
  const TileOps ops(options.tile_ops);
  std::string s = ops.declarations();
  if (groups.size() > 1) {
    s += fmt::format("  func.func private @{}(!llvm.ptr)\n", kAmxUseTileConfig);
    for (std::size_t g = 1; g < groups.size(); ++g) s += paletteGlobal(g, groups[g].palette);
  }
  const std::string bias = p.mlp.bias ? fmt::format(", %bias: memref<{}xf32>", p.n) : "";
  s += fmt::format("  func.func @nk_brgemm(%a: {}, %b: {}, %c: {}{}) {{\n", memrefs.a, memrefs.b, memrefs.c, bias);
  s += fmt::format(
      "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n"
      "    %c32 = arith.constant 32 : index\n"
      "    %batch = arith.constant {} : index\n    %k_end = arith.constant {} : index\n"
      "    %a_stride = arith.constant {} : i64\n    %b_stride = arith.constant {} : i64\n"
      "    %c_stride = arith.constant {} : i64\n",
      p.batch, p.k, p.k * kBf16Bytes, 2 * p.n * kBf16Bytes, p.n * kF32Bytes);
  s += pointerOf("a", memrefs.a, "    ") + pointerOf("b", memrefs.b, "    ") + pointerOf("c", memrefs.c, "    ");
  s += ops.registers("    ");
  const bool prefetch_next_entry = options.prefetch_next_batch_entry && p.batch > 1;
  // The first group's configuration is the caller's to load; the kernel loads the others.
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (g > 0)
      s += fmt::format("    %tile_config_{0} = llvm.mlir.addressof @nk_tile_config_{0} : !llvm.ptr\n"
                       "    func.call @{1}(%tile_config_{0}) : (!llvm.ptr) -> ()\n",
                       g, kAmxUseTileConfig);
    for (std::size_t region : groups[g].regions)
      s += regionLoops(p, regions[region], static_cast<int>(region), groups[g].registers, ops, prefetch_next_entry);
  }
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

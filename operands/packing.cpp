#include "operands/packing.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "operands/bf16.h"

namespace nkbench {
namespace {

void checkBlocking(const GemmBlocking& blocking) {
  if (blocking.bm <= 0 || blocking.bn <= 0 || blocking.bk <= 0)
    throw Error(fmt::format("blocking {}x{}x{}: block sizes must be positive", blocking.bm,
                            blocking.bn, blocking.bk));
}

// Copies the (rows x cols) window of a row-major matrix starting at
// (row0, col0) into a full block_rows x block_cols tile, zero-filling whatever
// lies past the matrix edge. Every tile element is written, so `tile` needs no
// clearing beforehand and a repeated pack costs no extra pass.
template <class T>
void copyTileZeroPadded(const T* matrix, std::int64_t rows, std::int64_t cols, std::int64_t row0,
                        std::int64_t col0, std::int64_t block_rows, std::int64_t block_cols, T* tile) {
  const std::int64_t valid_rows = std::clamp<std::int64_t>(rows - row0, 0, block_rows);
  const std::int64_t valid_cols = std::clamp<std::int64_t>(cols - col0, 0, block_cols);
  for (std::int64_t r = 0; r < valid_rows; ++r) {
    const T* source = matrix + (row0 + r) * cols + col0;
    T* target = tile + r * block_cols;
    std::copy(source, source + valid_cols, target);
    std::fill(target + valid_cols, target + block_cols, T{});
  }
  std::fill(tile + valid_rows * block_cols, tile + block_rows * block_cols, T{});
}

// Tiles of a row-major `rows` x `cols` matrix; tile (t, u) covers rows from
// t*tile_rows and columns from u*tile_cols, and is a dense stored_rows(t) x
// stored_cols(u) tile. Panels (a row of tiles, or a column of tiles where
// column tiles are outer) take tile_rows x tile_cols a tile, and the tiles of
// a panel follow one another at their stored size: a panel of edge tiles is
// the dense operand of the edge kernel's batch.
template <class T, class RowsOf, class ColsOf>
void packTiles(const T* matrix, std::int64_t rows, std::int64_t cols, std::int64_t tile_rows,
               std::int64_t tile_cols, bool column_tiles_outer, RowsOf stored_rows, ColsOf stored_cols,
               AlignedBuffer<T>& packed) {
  const std::int64_t row_tiles = blockCount(rows, tile_rows);
  const std::int64_t col_tiles = blockCount(cols, tile_cols);
  const std::int64_t tile = tile_rows * tile_cols;
  packed.resize(static_cast<std::size_t>(row_tiles * col_tiles * tile));
  for (std::int64_t t = 0; t < row_tiles; ++t)
    for (std::int64_t u = 0; u < col_tiles; ++u) {
      const std::int64_t stored = stored_rows(t) * stored_cols(u);
      const std::int64_t offset =
          column_tiles_outer ? u * row_tiles * tile + t * stored : t * col_tiles * tile + u * stored;
      copyTileZeroPadded(matrix, rows, cols, t * tile_rows, u * tile_cols, stored_rows(t), stored_cols(u),
                         packed.data() + offset);
    }
}

}  // namespace

template <class T>
void packABlocked(const T* a, std::int64_t m, std::int64_t k, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed, BlockEdges edges) {
  checkBlocking(blocking);
  packTiles(  // [Mb][Kb]
      a, m, k, blocking.bm, blocking.bk, false, [&](std::int64_t t) { return blockExtent(m, blocking.bm, t, edges); },
      [&](std::int64_t) { return blocking.bk; }, packed);
}

template <class T>
void packBBlocked(const T* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed, BlockEdges edges) {
  checkBlocking(blocking);
  packTiles(  // [Nb][Kb]
      b, k, n, blocking.bk, blocking.bn, true, [&](std::int64_t) { return blocking.bk; },
      [&](std::int64_t u) { return blockExtent(n, blocking.bn, u, edges); }, packed);
}

template void packABlocked(const float*, std::int64_t, std::int64_t, const GemmBlocking&, FloatBuffer&, BlockEdges);
template void packABlocked(const BFloat16*, std::int64_t, std::int64_t, const GemmBlocking&, BFloat16Buffer&,
                           BlockEdges);
template void packBBlocked(const float*, std::int64_t, std::int64_t, const GemmBlocking&, FloatBuffer&, BlockEdges);
template void packBBlocked(const BFloat16*, std::int64_t, std::int64_t, const GemmBlocking&, BFloat16Buffer&,
                           BlockEdges);

template <class T>
void unpackCBlocked(const AlignedBuffer<T>& blocked, std::int64_t m, std::int64_t n,
                    const GemmBlocking& blocking, T* c, BlockEdges edges) {
  checkBlocking(blocking);
  const std::int64_t mb = blockCount(m, blocking.bm);
  const std::int64_t nb = blockCount(n, blocking.bn);
  const std::int64_t tile = blocking.bm * blocking.bn;
  if (std::int64_t(blocked.size()) != mb * nb * tile)
    throw Error(fmt::format("unpack C {}x{}: blocked buffer holds {} values, expected {}", m, n,
                            blocked.size(), mb * nb * tile));
  for (std::int64_t i = 0; i < mb; ++i) {
    const std::int64_t rows = std::min(blocking.bm, m - i * blocking.bm);
    for (std::int64_t j = 0; j < nb; ++j) {
      const std::int64_t cols = std::min(blocking.bn, n - j * blocking.bn);
      const std::int64_t stored_cols = blockExtent(n, blocking.bn, j, edges);
      const T* source = blocked.data() + (i * nb + j) * tile;
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* row = source + r * stored_cols;
        std::copy(row, row + cols, c + (i * blocking.bm + r) * n + j * blocking.bn);
      }
    }
  }
}

template void unpackCBlocked(const FloatBuffer&, std::int64_t, std::int64_t, const GemmBlocking&, float*,
                             BlockEdges);
template void unpackCBlocked(const BFloat16Buffer&, std::int64_t, std::int64_t, const GemmBlocking&, BFloat16*,
                             BlockEdges);

}  // namespace nkbench

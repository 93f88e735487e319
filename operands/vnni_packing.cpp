#include "operands/vnni_packing.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/error.h"

namespace nkbench {
namespace {

void checkExtents(std::string_view what, std::initializer_list<std::int64_t> extents) {
  for (const std::int64_t extent : extents)
    if (extent < 0) throw Error(fmt::format("{}: negative extent {}", what, extent));
}

void checkVnniBlocking(const GemmBlocking& blocking) {
  if (blocking.bn <= 0 || blocking.bk <= 0 || blocking.bk % kVnniPairBf16 != 0)
    throw Error(fmt::format("VNNI blocking bk {} x bn {}: both must be positive and bk even",
                            blocking.bk, blocking.bn));
}

template <class T>
void checkPackedSize(std::string_view what, const VnniBuffer<T>& packed, std::int64_t expected) {
  if (std::int64_t(packed.size()) != expected)
    throw Error(fmt::format("{}: packed buffer holds {} values, expected {}", what, packed.size(),
                            expected));
}

// The columns block column `j` of B's VNNI blocks is stored with.
std::int64_t vnniBlockColumns(std::int64_t n, const GemmBlocking& blocking, std::int64_t j, BlockEdges edges,
                              std::int64_t edge_column_multiple) {
  checkVnniEdgeColumnMultiple(blocking, edge_column_multiple);
  const std::int64_t columns = blockExtent(n, blocking.bn, j, edges);
  return blockCount(columns, edge_column_multiple) * edge_column_multiple;
}

// A padded K holds K and whole pairs.
void checkPaddedK(std::string_view what, std::int64_t k, std::int64_t padded_k) {
  if (padded_k < k || padded_k % kVnniPairBf16 != 0)
    throw Error(fmt::format("{}: padded K {} must be even and at least K {}", what, padded_k, k));
}

// Position of tile element (row, col) in a [rows/2][cols][2] VNNI tile.
std::int64_t vnniIndex(std::int64_t row, std::int64_t col, std::int64_t tile_cols) {
  return ((row / kVnniPairBf16) * tile_cols + col) * kVnniPairBf16 + row % kVnniPairBf16;
}

// Writes the tile_rows x tile_cols window at (row0, col0) of a row-major
// rows x cols matrix in VNNI layout, zero wherever the window passes the edge
// (tile_rows is even). Every tile element is written: stale contents never survive.
template <class T>
void packVnniTile(const T* matrix, std::int64_t rows, std::int64_t cols, std::int64_t row0,
                  std::int64_t col0, std::int64_t tile_rows, std::int64_t tile_cols, T* tile) {
  for (std::int64_t r = 0; r < tile_rows; ++r)
    for (std::int64_t c = 0; c < tile_cols; ++c) {
      const bool inside = row0 + r < rows && col0 + c < cols;
      tile[vnniIndex(r, c, tile_cols)] = inside ? matrix[(row0 + r) * cols + col0 + c] : T{};
    }
}

// The inverse of packVnniTile for the part of the window inside the matrix.
template <class T>
void unpackVnniTile(const T* tile, std::int64_t tile_rows, std::int64_t tile_cols, std::int64_t rows,
                    std::int64_t cols, std::int64_t row0, std::int64_t col0, T* matrix) {
  const std::int64_t valid_rows = std::min(tile_rows, rows - row0);
  const std::int64_t valid_cols = std::min(tile_cols, cols - col0);
  for (std::int64_t r = 0; r < valid_rows; ++r)
    for (std::int64_t c = 0; c < valid_cols; ++c)
      matrix[(row0 + r) * cols + col0 + c] = tile[vnniIndex(r, c, tile_cols)];
}

}  // namespace

void checkVnniEdgeColumnMultiple(const GemmBlocking& blocking, std::int64_t edge_column_multiple) {
  if (edge_column_multiple < 1 || blocking.bn % edge_column_multiple != 0)
    throw Error(fmt::format("VNNI blocks: column block {} is not a multiple of the edge column multiple {}",
                            blocking.bn, edge_column_multiple));
}

template <VnniElement T>
void packBVnni(const T* b, std::int64_t k, std::int64_t n, VnniBuffer<T>& packed) {
  packBVnniBatched(b, 1, k, n, packed);
}

template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      VnniBuffer<T>& packed) {
  packBVnniBatched(b, batch, k, n, vnniPaddedK(k), packed);
}

template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      std::int64_t padded_k, VnniBuffer<T>& packed) {
  packBVnniBatched(b, batch, k, n, padded_k, n, packed);
}

template <VnniElement T>
void packBVnniBatched(const T* b, std::int64_t batch, std::int64_t k, std::int64_t n,
                      std::int64_t padded_k, std::int64_t padded_n, VnniBuffer<T>& packed) {
  checkExtents("pack B VNNI", {batch, k, n});
  checkPaddedK("pack B VNNI", k, padded_k);
  if (padded_n < n) throw Error(fmt::format("pack B VNNI: padded N {} must be at least N {}", padded_n, n));
  const std::int64_t packed_matrix = padded_k * padded_n;
  packed.resize(static_cast<std::size_t>(batch * packed_matrix));
  for (std::int64_t i = 0; i < batch; ++i)
    packVnniTile(b + i * k * n, k, n, 0, 0, padded_k, padded_n, packed.data() + i * packed_matrix);
}

template <VnniElement T>
void packBBlockedVnni(const T* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                      VnniBuffer<T>& packed, BlockEdges edges, std::int64_t edge_column_multiple) {
  checkExtents("pack B blocked VNNI", {k, n});
  checkVnniBlocking(blocking);
  const std::int64_t bn = blocking.bn, bk = blocking.bk;
  const std::int64_t nb = blockCount(n, bn), kb = blockCount(k, bk), tile = bk * bn;
  packed.resize(static_cast<std::size_t>(nb * kb * tile));
  for (std::int64_t j = 0; j < nb; ++j) {
    const std::int64_t columns = vnniBlockColumns(n, blocking, j, edges, edge_column_multiple);
    for (std::int64_t l = 0; l < kb; ++l)
      packVnniTile(b, k, n, l * bk, j * bn, bk, columns, packed.data() + j * kb * tile + l * bk * columns);
  }
}

template <VnniElement T>
void unpackBVnni(const VnniBuffer<T>& packed, std::int64_t k, std::int64_t n, T* b) {
  unpackBVnniBatched(packed, 1, k, n, b);
}

template <VnniElement T>
void unpackBVnniBatched(const VnniBuffer<T>& packed, std::int64_t batch, std::int64_t k,
                        std::int64_t n, T* b) {
  checkExtents("unpack B VNNI", {batch, k, n});
  const std::int64_t packed_matrix = vnniPaddedK(k) * n;
  checkPackedSize("unpack B VNNI", packed, batch * packed_matrix);
  for (std::int64_t i = 0; i < batch; ++i)
    unpackVnniTile(packed.data() + i * packed_matrix, vnniPaddedK(k), n, k, n, 0, 0, b + i * k * n);
}

template <VnniElement T>
void unpackBBlockedVnni(const VnniBuffer<T>& packed, std::int64_t k, std::int64_t n,
                        const GemmBlocking& blocking, T* b, BlockEdges edges, std::int64_t edge_column_multiple) {
  checkExtents("unpack B blocked VNNI", {k, n});
  checkVnniBlocking(blocking);
  const std::int64_t bn = blocking.bn, bk = blocking.bk;
  const std::int64_t nb = blockCount(n, bn), kb = blockCount(k, bk), tile = bk * bn;
  checkPackedSize("unpack B blocked VNNI", packed, nb * kb * tile);
  for (std::int64_t j = 0; j < nb; ++j) {
    const std::int64_t columns = vnniBlockColumns(n, blocking, j, edges, edge_column_multiple);
    for (std::int64_t l = 0; l < kb; ++l)
      unpackVnniTile(packed.data() + j * kb * tile + l * bk * columns, bk, columns, k, n, l * bk, j * bn, b);
  }
}

template <VnniElement T>
void padAToVnniK(const T* a, std::int64_t m, std::int64_t k, VnniBuffer<T>& padded) {
  padAToK(a, m, k, vnniPaddedK(k), padded);
}

template <VnniElement T>
void padAToK(const T* a, std::int64_t m, std::int64_t k, std::int64_t padded_k, VnniBuffer<T>& padded) {
  checkExtents("pad A's K", {m, k});
  checkPaddedK("pad A's K", k, padded_k);
  padded.resize(static_cast<std::size_t>(m * padded_k));
  for (std::int64_t r = 0; r < m; ++r) {
    T* row = padded.data() + r * padded_k;
    std::copy(a + r * k, a + (r + 1) * k, row);
    std::fill(row + k, row + padded_k, T{});
  }
}

template <VnniElement T>
void padAToVnniKBatched(const T* a, std::int64_t batch, std::int64_t m, std::int64_t k,
                        VnniBuffer<T>& padded) {
  padAToKBatched(a, batch, m, k, vnniPaddedK(k), padded);
}

template <VnniElement T>
void padAToKBatched(const T* a, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t padded_k,
                    VnniBuffer<T>& padded) {
  checkExtents("pad A's K", {batch});
  // The padding is per row, and a batch of M x K matrices is batch * M rows.
  padAToK(a, batch * m, k, padded_k, padded);
}

#define NKBENCH_INSTANTIATE_VNNI(T)                                                               \
  template void packBVnni<T>(const T*, std::int64_t, std::int64_t, VnniBuffer<T>&);               \
  template void packBVnniBatched<T>(const T*, std::int64_t, std::int64_t, std::int64_t,           \
                                    std::int64_t, std::int64_t, VnniBuffer<T>&);                  \
  template void packBVnniBatched<T>(const T*, std::int64_t, std::int64_t, std::int64_t,           \
                                    VnniBuffer<T>&);                                              \
  template void packBBlockedVnni<T>(const T*, std::int64_t, std::int64_t, const GemmBlocking&,    \
                                    VnniBuffer<T>&, BlockEdges, std::int64_t);                    \
  template void unpackBVnni<T>(const VnniBuffer<T>&, std::int64_t, std::int64_t, T*);             \
  template void unpackBVnniBatched<T>(const VnniBuffer<T>&, std::int64_t, std::int64_t,           \
                                      std::int64_t, T*);                                          \
  template void unpackBBlockedVnni<T>(const VnniBuffer<T>&, std::int64_t, std::int64_t,           \
                                      const GemmBlocking&, T*, BlockEdges, std::int64_t);         \
  template void padAToVnniK<T>(const T*, std::int64_t, std::int64_t, VnniBuffer<T>&);             \
  template void padAToVnniKBatched<T>(const T*, std::int64_t, std::int64_t, std::int64_t,         \
                                      VnniBuffer<T>&);                                            \
  template void packBVnniBatched<T>(const T*, std::int64_t, std::int64_t, std::int64_t,           \
                                    std::int64_t, VnniBuffer<T>&);                                \
  template void padAToK<T>(const T*, std::int64_t, std::int64_t, std::int64_t, VnniBuffer<T>&);   \
  template void padAToKBatched<T>(const T*, std::int64_t, std::int64_t, std::int64_t,             \
                                  std::int64_t, VnniBuffer<T>&);

NKBENCH_INSTANTIATE_VNNI(BFloat16)
NKBENCH_INSTANTIATE_VNNI(float)

#undef NKBENCH_INSTANTIATE_VNNI

}  // namespace nkbench

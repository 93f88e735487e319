#include "kernels/common/blocked_gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "harness/core/error.h"
#include "reference/vnni_packing.h"

namespace nkbench {
namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Splits `extent` into as few blocks as `preferred` allows, of balanced size
// rounded up to `multiple`; a dimension that fits one block is taken whole, so
// small and odd shapes are not padded at all (the block kernel takes any size).
// When rounding to `multiple` would pad more than a quarter of a dimension of at
// most two blocks, it is taken whole instead: the block kernel handles the edge.
std::int64_t balancedBlock(std::int64_t extent, std::int64_t preferred, std::int64_t multiple) {
  const std::int64_t blocks = ceilDiv(extent, preferred);
  if (blocks == 1) return extent;
  const std::int64_t block = std::min(preferred, ceilDiv(ceilDiv(extent, blocks), multiple) * multiple);
  const std::int64_t padding = ceilDiv(extent, block) * block - extent;
  if (4 * padding > extent && extent <= 2 * preferred) return extent;
  return block;
}

// Tiles of a row-major `rows` x `cols` matrix, zero-padded; every element is written.
// Tile (t, u) covers rows [t*tile_rows, ...) and columns [u*tile_cols, ...); it is
// stored at index t*U + u (row tiles outer) or u*T + t (column tiles outer).
void packTiles(const BFloat16* source, std::int64_t rows, std::int64_t cols, std::int64_t tile_rows,
               std::int64_t tile_cols, bool column_tiles_outer, BFloat16Buffer& packed) {
  const std::int64_t row_tiles = blockCount(rows, tile_rows), col_tiles = blockCount(cols, tile_cols);
  const std::int64_t tile = tile_rows * tile_cols;
  packed.resize(static_cast<std::size_t>(row_tiles * col_tiles * tile));
  for (std::int64_t t = 0; t < row_tiles; ++t)
    for (std::int64_t u = 0; u < col_tiles; ++u) {
      BFloat16* block = packed.data() + (column_tiles_outer ? u * row_tiles + t : t * col_tiles + u) * tile;
      const std::int64_t valid_rows = std::clamp<std::int64_t>(rows - t * tile_rows, 0, tile_rows);
      const std::int64_t valid_cols = std::clamp<std::int64_t>(cols - u * tile_cols, 0, tile_cols);
      for (std::int64_t r = 0; r < valid_rows; ++r) {
        const BFloat16* row = source + (t * tile_rows + r) * cols + u * tile_cols;
        std::copy(row, row + valid_cols, block + r * tile_cols);
        std::fill(block + r * tile_cols + valid_cols, block + (r + 1) * tile_cols, BFloat16{});
      }
      std::fill(block + valid_rows * tile_cols, block + tile, BFloat16{});
    }
}

// A (M x K) -> [Mb][Kb][bm][bk].
void packABlocked(const BFloat16* a, std::int64_t m, std::int64_t k, const GemmBlocking& blocking,
                  BFloat16Buffer& packed) {
  packTiles(a, m, k, blocking.bm, blocking.bk, false, packed);
}

void packBBlockedAny(const float* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                     BLayout, FloatBuffer& packed) {
  packBBlocked(b, k, n, blocking, packed);
}
// B (K x N) -> [Nb][Kb][bk/2][bn][2] (VNNI) or [Nb][Kb][bk][bn] (plain).
void packBBlockedAny(const BFloat16* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                     BLayout layout, BFloat16Buffer& packed) {
  if (layout == BLayout::VnniPairs)
    packBBlockedVnni(b, k, n, blocking, packed);
  else
    packTiles(b, k, n, blocking.bk, blocking.bn, true, packed);
}

template <class Element>
constexpr DType dtypeOf() {
  return std::is_same_v<Element, BFloat16> ? DType::BF16 : DType::F32;
}

}  // namespace

GemmBlocking chooseGemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                std::int64_t m_multiple, std::int64_t n_multiple) {
  return {balancedBlock(problem.m, preferred.bm, m_multiple), balancedBlock(problem.n, preferred.bn, n_multiple),
          balancedBlock(problem.k, preferred.bk, 1)};
}

GemmBlocking chooseBf16GemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                    std::int64_t m_multiple, std::int64_t n_multiple) {
  GemmBlocking blocking = chooseGemmBlocking(problem, preferred, m_multiple, n_multiple);
  blocking.bk = vnniPaddedK(blocking.bk);
  return blocking;
}

Problem blockProblemOf(const Problem& gemm, const GemmBlocking& blocking) {
  Problem block;
  block.kind = OpKind::Brgemm;
  block.dtype = gemm.dtype;
  block.m = blocking.bm;
  block.n = blocking.bn;
  block.k = blocking.bk;
  block.batch = blockCount(gemm.k, blocking.bk);
  block.accumulate = false;
  return block;
}

template <class Element>
BlockedGemmOf<Element>::BlockedGemmOf(const Problem& problem, const GemmBlocking& blocking, BLayout b_layout)
    : problem_(problem),
      blocking_(blocking),
      b_layout_(b_layout),
      mb_(blockCount(problem.m, blocking.bm)),
      nb_(blockCount(problem.n, blocking.bn)),
      kb_(blockCount(problem.k, blocking.bk)) {
  constexpr DType dtype = dtypeOf<Element>();
  if (problem.dtype != dtype || problem.kind != OpKind::Gemm || problem.batch != 1 || problem.accumulate)
    throw Error(std::string("blocked GEMM needs a ") + std::string(toString(dtype)) +
                " gemm problem with batch 1 and beta 0: " + problem.describe());
  if (b_layout == BLayout::VnniPairs && blocking.bk % kVnniPairBf16 != 0)
    throw Error("bf16 blocked GEMM needs an even K block, not " + std::to_string(blocking.bk));
  blocked_c_.assign(static_cast<std::size_t>(mb_ * nb_ * blocking.bm * blocking.bn), 0.0f);
}

template <class Element>
void BlockedGemmOf<Element>::pack(const Element* a, const Element* b) {
  packABlocked(a, problem_.m, problem_.k, blocking_, packed_a_);
  packBBlockedAny(b, problem_.k, problem_.n, blocking_, b_layout_, packed_b_);
}

template <class Element>
void BlockedGemmOf<Element>::unpack(float* c) const {
  unpackCBlocked(blocked_c_, problem_.m, problem_.n, blocking_, c);
}

template class BlockedGemmOf<float>;
template class BlockedGemmOf<BFloat16>;

}  // namespace nkbench

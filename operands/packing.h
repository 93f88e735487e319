// Blocked layouts used to run GEMM as a sequence of BRGEMM calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"

namespace nkbench {

struct GemmBlocking {
  std::int64_t bm = 64;
  std::int64_t bn = 64;
  std::int64_t bk = 64;
};

// Number of blocks along a dimension (the last one zero-padded).
inline std::int64_t blockCount(std::int64_t extent, std::int64_t block) {
  return (extent + block - 1) / block;
}

// Where M or N is not a whole number of blocks, the last block row (column)
// is either zero-padded to whole blocks (Padded: one block kernel runs every
// block) or stored at its own extent, densely, in the same slot (Exact: edge
// kernels of that extent run those blocks and compute no zeros). K is padded
// either way: each block call's batch is of whole K blocks.
enum class BlockEdges { Padded, Exact };

// The extent block `index` of a dimension of `extent` is stored at.
inline std::int64_t blockExtent(std::int64_t extent, std::int64_t block, std::int64_t index, BlockEdges edges) {
  return edges == BlockEdges::Exact ? std::min(block, extent - index * block) : block;
}

// A (M x K row-major) -> [Mb][Kb][bm][bk], zero-padded (the last block row's
// tiles [rows][bk], Exact edges). T: float or BFloat16.
template <class T>
void packABlocked(const T* a, std::int64_t m, std::int64_t k, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed, BlockEdges edges = BlockEdges::Padded);
// B (K x N row-major) -> [Nb][Kb][bk][bn], zero-padded (the last block
// column's tiles [bk][columns], Exact edges). T: float or BFloat16.
template <class T>
void packBBlocked(const T* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                  AlignedBuffer<T>& packed, BlockEdges edges = BlockEdges::Padded);
// C blocked [Mb][Nb][bm][bn] (edge blocks [rows][columns], Exact edges) ->
// C (M x N row-major), dropping the padding. T: float or BFloat16.
template <class T>
void unpackCBlocked(const AlignedBuffer<T>& blocked, std::int64_t m, std::int64_t n,
                    const GemmBlocking& blocking, T* c, BlockEdges edges = BlockEdges::Padded);

}  // namespace nkbench

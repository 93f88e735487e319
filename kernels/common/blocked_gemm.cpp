#include "kernels/common/blocked_gemm.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/error.h"
#include "operands/vnni_packing.h"

namespace nkbench {
namespace {

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Splits `extent` into as few blocks as `preferred` allows, of balanced size
// rounded up to `multiple`; a dimension that fits one block is taken whole, so
// small and odd shapes are not padded at all (the block kernel takes any size).
// When rounding to `multiple` would pad more than a quarter of a dimension of at
// most two blocks, it is taken whole instead: the block kernel handles the edge.
// The fewest blocks of at most `preferred`, evened out; or up to half as many
// again where they pad less by a sixteenth of the extent and a whole `multiple`
// (a register block's rows) at least: M = 200 in blocks of at most 64 rows,
// multiples of 8, is 5 x 40 rather than 4 x 56, which would compute 12% zeros
// where edges are padded (the tile route), and elsewhere leaves an edge block
// of 32 rows beside whole ones of 56 instead of five even blocks.
std::int64_t balancedBlock(std::int64_t extent, std::int64_t preferred, std::int64_t multiple) {
  const std::int64_t fewest = ceilDiv(extent, preferred);
  if (fewest == 1) return extent;
  const auto block_of = [&](std::int64_t blocks) {
    return std::min(preferred, ceilDiv(ceilDiv(extent, blocks), multiple) * multiple);
  };
  const auto padding_of = [&](std::int64_t block) { return ceilDiv(extent, block) * block - extent; };
  std::int64_t block = block_of(fewest);
  for (std::int64_t blocks = fewest + 1; blocks <= fewest + fewest / 2; ++blocks)
    if (const std::int64_t candidate = block_of(blocks);
        padding_of(candidate) + std::max(multiple, extent / 16) <= padding_of(block))
      block = candidate;
  if (4 * padding_of(block) > extent && extent <= 2 * preferred) return extent;
  return block;
}

void packBBlockedAny(const float* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                     BLayout, BlockEdges edges, std::int64_t, FloatBuffer& packed) {
  packBBlocked(b, k, n, blocking, packed, edges);
}
// B (K x N) -> [Nb][Kb][bk/2][bn][2] (VNNI) or [Nb][Kb][bk][bn] (plain).
void packBBlockedAny(const BFloat16* b, std::int64_t k, std::int64_t n, const GemmBlocking& blocking,
                     BLayout layout, BlockEdges edges, std::int64_t edge_column_multiple, BFloat16Buffer& packed) {
  if (layout == BLayout::VnniPairs)
    packBBlockedVnni(b, k, n, blocking, packed, edges, edge_column_multiple);
  else
    packBBlocked(b, k, n, blocking, packed, edges);
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
  block.c_dtype = gemm.c_dtype;
  block.m = blocking.bm;
  block.n = blocking.bn;
  block.k = blocking.bk;
  block.batch = blockCount(gemm.k, blocking.bk);
  block.accumulate = false;
  return block;
}

std::vector<BlockShape> blockShapesOf(const Problem& gemm, const GemmBlocking& blocking, BlockEdges edges) {
  if (edges == BlockEdges::Padded) return {BlockShape::Whole};
  const bool row_edge = gemm.m % blocking.bm != 0, column_edge = gemm.n % blocking.bn != 0;
  const bool whole_rows = gemm.m >= blocking.bm, whole_columns = gemm.n >= blocking.bn;
  std::vector<BlockShape> shapes;
  if (whole_rows && whole_columns) shapes.push_back(BlockShape::Whole);
  if (row_edge && whole_columns) shapes.push_back(BlockShape::RowEdge);
  if (column_edge && whole_rows) shapes.push_back(BlockShape::ColumnEdge);
  if (row_edge && column_edge) shapes.push_back(BlockShape::Corner);
  return shapes;
}

Problem blockProblemOf(const Problem& gemm, const GemmBlocking& blocking, BlockShape shape, BlockEdges edges) {
  Problem block = blockProblemOf(gemm, blocking);
  const std::int64_t last_row = blockCount(gemm.m, blocking.bm) - 1, last_column = blockCount(gemm.n, blocking.bn) - 1;
  if (shape == BlockShape::RowEdge || shape == BlockShape::Corner)
    block.m = blockExtent(gemm.m, blocking.bm, last_row, edges);
  if (shape == BlockShape::ColumnEdge || shape == BlockShape::Corner)
    block.n = blockExtent(gemm.n, blocking.bn, last_column, edges);
  return block;
}

std::string edgeBlocksText(const Problem& gemm, const GemmBlocking& blocking, BlockEdges edges) {
  std::vector<std::string> edge_blocks;
  for (const BlockShape shape : blockShapesOf(gemm, blocking, edges)) {
    if (shape == BlockShape::Whole) continue;
    const Problem block = blockProblemOf(gemm, blocking, shape, edges);
    edge_blocks.push_back(fmt::format("{}x{}", block.m, block.n));
  }
  return edge_blocks.empty() ? "" : fmt::format(", edge blocks {}", fmt::join(edge_blocks, ", "));
}

template <class Element, class CElement, class AElement>
BlockedGemmOf<Element, CElement, AElement>::BlockedGemmOf(const Problem& problem, const GemmBlocking& blocking,
                                                BLayout b_layout, BlockOrder order, BlockEdges edges,
                                                std::int64_t b_edge_column_multiple)
    : problem_(problem),
      blocking_(blocking),
      b_layout_(b_layout),
      order_(order),
      edges_(edges),
      b_edge_column_multiple_(b_edge_column_multiple),
      mb_(blockCount(problem.m, blocking.bm)),
      nb_(blockCount(problem.n, blocking.bn)),
      kb_(blockCount(problem.k, blocking.bk)),
      row_edge_(edges == BlockEdges::Exact && problem.m % blocking.bm != 0),
      column_edge_(edges == BlockEdges::Exact && problem.n % blocking.bn != 0) {
  constexpr DType dtype = dtypeOf<Element>();
  constexpr DType c_dtype = dtypeOf<CElement>();
  if (problem.dtype != dtype || problem.c_dtype != c_dtype || problem.kind != OpKind::Gemm || problem.batch != 1 ||
      problem.accumulate)
    throw Error(fmt::format("blocked GEMM needs a {} gemm problem with a {} C, batch 1 and beta 0: {}",
                            toString(dtype), toString(c_dtype), problem.describe()));
  if (b_layout == BLayout::VnniPairs && blocking.bk % kVnniPairBf16 != 0)
    throw Error("bf16 blocked GEMM needs an even K block, not " + std::to_string(blocking.bk));
  // At construction, not first at packing: the row's error comes with prepare().
  if (b_layout == BLayout::VnniPairs) checkVnniEdgeColumnMultiple(blocking, b_edge_column_multiple);
}

template <class Element, class CElement, class AElement>
void BlockedGemmOf<Element, CElement, AElement>::pack(const Element* a, const Element* b) {
  // Allocated with the packing, not with the kernel: its pages are the packing's cost.
  if (blocked_c_.empty()) blocked_c_.assign(static_cast<std::size_t>(mb_ * nb_ * blocking_.bm * blocking_.bn),
                                               unwrittenValue<CElement>());
  if constexpr (std::is_same_v<AElement, Element>) {
    packABlocked(a, problem_.m, problem_.k, blocking_, packed_a_, edges_);
  } else {
    // Widened once here, so that the block kernel broadcasts f32 straight from memory.
    FloatBuffer wide(static_cast<std::size_t>(problem_.m * problem_.k));
    toFloat(a, wide.size(), wide.data());
    packABlocked(wide.data(), problem_.m, problem_.k, blocking_, packed_a_, edges_);
  }
  packBBlockedAny(b, problem_.k, problem_.n, blocking_, b_layout_, edges_, b_edge_column_multiple_, packed_b_);
}

template <class Element, class CElement, class AElement>
void BlockedGemmOf<Element, CElement, AElement>::unpack(CElement* c) const {
  unpackCBlocked(blocked_c_, problem_.m, problem_.n, blocking_, c, edges_);
}

template class BlockedGemmOf<float>;
template class BlockedGemmOf<BFloat16>;
template class BlockedGemmOf<BFloat16, BFloat16>;
template class BlockedGemmOf<BFloat16, float, float>;
template class BlockedGemmOf<BFloat16, BFloat16, float>;

}  // namespace nkbench

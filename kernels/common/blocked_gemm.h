// GEMM as a sequence of BRGEMM calls over blocked operands, as tpp-mlir runs it:
// A -> [Mb][Kb][bm][bk], B -> [Nb][Kb][bk][bn], and each C block [bm][bn] is one
// BRGEMM with batch Kb. Where M or N is not a whole number of blocks, the edge
// blocks are padded to full ones (BlockEdges::Padded: one block kernel, which
// computes zeros there), or packed at their own extent (BlockEdges::Exact:
// edge kernels run them, up to three more); K is padded to whole blocks
// either way. The padding is dropped when C is unpacked. For bf16, each B
// block is in VNNI pairs ([bk/2][bn][2], as the dot-product instructions read it)
// and bk is even, so K blocks never split a pair (or, for the widening kernels,
// plain). C blocks are f32, or bf16 for a bf16 C (CElement): each block call
// writes its final C block.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/problem.h"
#include "operands/bf16.h"
#include "operands/packing.h"

namespace nkbench {

// Cache blocks at most `preferred`, balanced so that the zero padding of the last
// block stays small; a dimension within one block is not padded at all. Block
// sizes are multiples of m_multiple / n_multiple (the register block) where split.
GemmBlocking chooseGemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                std::int64_t m_multiple, std::int64_t n_multiple);

// The same with bk rounded up to even (an odd K pads one zero), for bf16.
GemmBlocking chooseBf16GemmBlocking(const Problem& problem, const GemmBlocking& preferred,
                                    std::int64_t m_multiple = 1, std::int64_t n_multiple = 1);

// The shapes of C blocks: whole, and with Exact edges those of the last block
// row (RowEdge), of the last block column (ColumnEdge) and the block in both.
enum class BlockShape { Whole, RowEdge, ColumnEdge, Corner };
inline constexpr std::size_t kBlockShapes = std::size_t(BlockShape::Corner) + 1;

// The shapes among `gemm`'s blocks, Whole first where it has whole blocks.
std::vector<BlockShape> blockShapesOf(const Problem& gemm, const GemmBlocking& blocking, BlockEdges edges);

// The BRGEMM each block call of `gemm` solves (K = bk, batch = K blocks): a
// whole block's, or with Exact edges that of the blocks of `shape`.
Problem blockProblemOf(const Problem& gemm, const GemmBlocking& blocking);
Problem blockProblemOf(const Problem& gemm, const GemmBlocking& blocking, BlockShape shape, BlockEdges edges);

// The edge blocks for a row's text, ", edge blocks 60x32, 64x13, 60x13";
// empty where every block is whole.
std::string edgeBlocksText(const Problem& gemm, const GemmBlocking& blocking, BlockEdges edges);

// How B blocks are laid out: as the matrix ([bk][bn]), or in VNNI pairs
// ([bk/2][bn][2]) for the bf16 dot-product instructions.
enum class BLayout { Plain, VnniPairs };

// The order of the block calls: M blocks outer, so that each A panel stays in
// cache across the N blocks, or N blocks outer, so that each B panel does
// across the M blocks.
enum class BlockOrder { MBlocksOuter, NBlocksOuter };

// The element type's name among the problem's types.
template <class Element>
constexpr DType dtypeOf() {
  return std::is_same_v<Element, BFloat16> ? DType::BF16 : DType::F32;
}

// What a blocked output holds until a block kernel writes it: NaN, as the
// harness's C of a beta 0 problem, so that an element a kernel skips, or a
// kernel that adds to its output instead of writing it, fails verification.
template <class Element>
Element unwrittenValue() {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  if constexpr (std::is_same_v<Element, BFloat16>) return toBFloat16(kNaN);
  else return kNaN;
}

// Element: float for f32 problems, BFloat16 for bf16 ones; CElement: C's type;
// AElement: the packed A's, float for bf16 kernels that read A widened to f32.
template <class Element, class CElement = float, class AElement = Element>
class BlockedGemmOf {
 public:
  using Input = Element;
  using Output = CElement;

  // Throws Error unless `problem` is a gemm of Element's dtype and CElement's c_dtype,
  // with batch 1 and beta 0 (and, for VNNI pairs, an even bk). f32 B is always plain.
  // With Exact edges, the edge blocks of VNNI B hold their columns rounded up to
  // `b_edge_column_multiple` (packBBlockedVnni).
  BlockedGemmOf(const Problem& problem, const GemmBlocking& blocking, BLayout b_layout = BLayout::Plain,
                BlockOrder order = BlockOrder::MBlocksOuter, BlockEdges edges = BlockEdges::Padded,
                std::int64_t b_edge_column_multiple = 1);

  void pack(const Element* a, const Element* b);
  void unpack(CElement* c) const;

  // Calls block_kernel(shape, a_blocks, b_blocks, c_block) once per C block,
  // in the block order; the kernel for that BlockShape (blockProblem(shape))
  // computes c_block = sum over kBlocks() of A block * B block (beta 0), in
  // CElement. With `threads` > 1 the C blocks, which are
  // independent, are shared out among that many OpenMP threads, each a
  // contiguous run of the block order (thread 0 the first), so that each
  // thread keeps its A (or B) panels as the serial order would. An edge
  // block counts as a whole one's turn (thread_split.h shares out blocks).
  template <class BlockKernel>
  void compute(BlockKernel&& block_kernel, int threads = 1) {
    const std::int64_t a_panel = kb_ * blocking_.bm * blocking_.bk;
    const std::int64_t b_panel = kb_ * blocking_.bk * blocking_.bn;
    const std::int64_t c_block = blocking_.bm * blocking_.bn;
    const bool n_outer = order_ == BlockOrder::NBlocksOuter;
    auto call = [&](std::int64_t index) {
      const std::int64_t i = n_outer ? index % mb_ : index / nb_;
      const std::int64_t j = n_outer ? index / mb_ : index % nb_;
      block_kernel(shapeOf(i, j), packed_a_.data() + i * a_panel, packed_b_.data() + j * b_panel,
                   blocked_c_.data() + (i * nb_ + j) * c_block);
    };
    const std::int64_t blocks = mb_ * nb_;
    if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::int64_t index = 0; index < blocks; ++index) call(index);
      return;
    }
    for (std::int64_t index = 0; index < blocks; ++index) call(index);
  }

  const GemmBlocking& blocking() const { return blocking_; }
  BlockOrder order() const { return order_; }
  BlockEdges edges() const { return edges_; }
  std::int64_t kBlocks() const { return kb_; }
  std::vector<BlockShape> blockShapes() const { return blockShapesOf(problem_, blocking_, edges_); }
  // The BRGEMM the block calls of `shape` solve.
  Problem blockProblem(BlockShape shape) const { return blockProblemOf(problem_, blocking_, shape, edges_); }
  std::string edgeBlocksText() const { return nkbench::edgeBlocksText(problem_, blocking_, edges_); }

 private:
  BlockShape shapeOf(std::int64_t i, std::int64_t j) const {
    const bool row_edge = i == mb_ - 1 && row_edge_, column_edge = j == nb_ - 1 && column_edge_;
    return row_edge ? (column_edge ? BlockShape::Corner : BlockShape::RowEdge)
                    : (column_edge ? BlockShape::ColumnEdge : BlockShape::Whole);
  }

  Problem problem_;
  GemmBlocking blocking_;
  BLayout b_layout_;
  BlockOrder order_;
  BlockEdges edges_;
  std::int64_t b_edge_column_multiple_;
  std::int64_t mb_, nb_, kb_;
  bool row_edge_, column_edge_;  // the last block row (column) is stored at its own extent
  AlignedBuffer<AElement> packed_a_;
  AlignedBuffer<Element> packed_b_;
  AlignedBuffer<CElement> blocked_c_;
};

extern template class BlockedGemmOf<float>;
extern template class BlockedGemmOf<BFloat16>;
extern template class BlockedGemmOf<BFloat16, BFloat16>;
extern template class BlockedGemmOf<BFloat16, float, float>;
extern template class BlockedGemmOf<BFloat16, BFloat16, float>;
using BlockedGemm = BlockedGemmOf<float>;
using Bf16BlockedGemm = BlockedGemmOf<BFloat16>;
using Bf16BlockedGemmBf16C = BlockedGemmOf<BFloat16, BFloat16>;
// bf16 B with A widened to f32 when packed, f32 or bf16 C.
using Bf16BlockedGemmF32A = BlockedGemmOf<BFloat16, float, float>;
using Bf16BlockedGemmF32ABf16C = BlockedGemmOf<BFloat16, BFloat16, float>;

}  // namespace nkbench

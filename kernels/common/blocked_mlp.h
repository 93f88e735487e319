// An mlp as BRGEMM block calls over blocked activations, as libxsmm-dnn's MLP
// and tpp-mlir run it: every width is cut into blocks of the same `bc`
// columns, so that a layer's blocked output [Mb][Nb][bm][bc] is, as it stands,
// the next layer's blocked input [Mb][Kb][bm][bc]: activations stay blocked
// from the first layer to the last. Weights are packed once into
// [Nb][Kb][bc][bc] blocks (bf16: VNNI pairs, for the dot-product kernels).
// Each output block is one block call: the BRGEMM over the layer's K blocks,
// with the bias of its columns and the activation (fused into the kernel, or
// applied by the caller's block kernel while the block is in cache). Padding
// is zero: padded columns get bias 0 and stay 0 through ReLU, and padded rows
// never mix with real ones; unpack drops both.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/core/memory/aligned_buffer.h"
#include "harness/core/problem.h"
#include "kernels/common/blocked_gemm.h"
#include "operands/bf16.h"

namespace nkbench {

struct MlpBlocking {
  std::int64_t bm = 64;  // rows of a block
  std::int64_t bc = 64;  // columns of a block, of every layer's input and output
};

// Blocks at most `preferred` (bm balanced over the rows as GEMM blocks are;
// bc a multiple of `c_multiple`, the register block's width, that pads the
// widths least), with bc even for bf16 (a K block never splits a VNNI pair).
MlpBlocking chooseMlpBlocking(const Problem& mlp, const MlpBlocking& preferred, std::int64_t m_multiple,
                              std::int64_t c_multiple);

// The BRGEMM (with the mlp's epilogue) that layer `layer`'s block calls solve:
// bm x bc x bc blocks, batch = the layer's input blocks, beta 0.
Problem mlpBlockProblem(const Problem& mlp, const MlpBlocking& blocking, std::int64_t layer);

// Element: float for f32 mlps, BFloat16 for bf16 ones (activations and weights; biases are f32).
template <class Element>
class BlockedMlpOf {
 public:
  using Input = Element;

  // Throws Error unless `mlp` is an mlp of Element's dtype (and, for VNNI pairs, bc is even).
  BlockedMlpOf(const Problem& mlp, const MlpBlocking& blocking, BLayout w_layout = BLayout::Plain);

  void pack(const Element* x, const Element* weights, const float* bias);
  // Every layer's output, row-major, one after the other (Problem::mlpOutputOffset).
  void unpack(Element* y) const;

  // Layer by layer, calls block_kernel(layer, a_panel, w_panel, y_block, bias_block)
  // once per output block; the kernel computes y_block = act(sum over
  // kBlocks(layer) of A block * W block + bias_block) (bias_block null without
  // biases), in the layer's order (layerOrder). Then each of `passes`, in
  // turn, sweeps the layer's whole output: pass(y_block, bias_block) on every
  // block, as unfused element-wise ops would (none: the kernel's epilogue is
  // all). With `threads` > 1 each layer's blocks, which are independent, are
  // shared out among that many OpenMP threads in contiguous runs of that
  // order, and a layer (or pass) starts when the one before it has ended.
  template <class BlockKernel, class... Passes>
  void compute(BlockKernel&& block_kernel, int threads, Passes&&... passes) {
    const std::int64_t block = blocking_.bm * blocking_.bc;
    auto layer_blocks = [&](std::int64_t layer, std::int64_t index) {
      const std::int64_t kb = blocks_[std::size_t(layer)];
      const std::int64_t nb = blocks_[std::size_t(layer) + 1];
      const bool n_outer = layerOrder(layer) == BlockOrder::NBlocksOuter;
      const std::int64_t i = n_outer ? index % mb_ : index / nb;
      const std::int64_t j = n_outer ? index / mb_ : index % nb;
      const std::int64_t square = blocking_.bc * blocking_.bc;
      block_kernel(layer, activations_[std::size_t(layer)].data() + i * kb * block,
                   weights_.data() + weight_offsets_[std::size_t(layer)] + j * kb * square,
                   activations_[std::size_t(layer) + 1].data() + (i * nb + j) * block, biasOf(layer, j));
    };
    // A pass visits the blocks as they lie in memory, [Mb][Nb].
    [[maybe_unused]] auto pass_block = [&](auto& pass, std::int64_t layer, std::int64_t index) {
      pass(activations_[std::size_t(layer) + 1].data() + index * block,
           biasOf(layer, index % blocks_[std::size_t(layer) + 1]));
    };
    const std::int64_t layers = problem_.mlp.count();
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
      for (std::int64_t layer = 0; layer < layers; ++layer) {
        const std::int64_t count = mb_ * blocks_[std::size_t(layer) + 1];
#pragma omp for schedule(static)
        for (std::int64_t index = 0; index < count; ++index) layer_blocks(layer, index);
        (
            [&](auto& pass) {
#pragma omp for schedule(static)
              for (std::int64_t index = 0; index < count; ++index) pass_block(pass, layer, index);
            }(passes),
            ...);
      }
      return;
    }
    for (std::int64_t layer = 0; layer < layers; ++layer) {
      const std::int64_t count = mb_ * blocks_[std::size_t(layer) + 1];
      for (std::int64_t index = 0; index < count; ++index) layer_blocks(layer, index);
      (
          [&](auto& pass) {
            for (std::int64_t index = 0; index < count; ++index) pass_block(pass, layer, index);
          }(passes),
          ...);
    }
  }

  const MlpBlocking& blocking() const { return blocking_; }
  // N blocks outer where the layer's weights outweigh its input (C_l x C_(l+1)
  // against M x C_l: more columns than rows), so that each weight panel is read
  // once, and by one thread, while the input's row panels, the smaller, stream
  // past it; M blocks outer otherwise. (FFN 128x[768-3072-768] bf16 on two
  // threads of the Zen 5 VM: 601 -> 765 GFLOPS, as mlir; oneDNN 750-800.)
  BlockOrder layerOrder(std::int64_t layer) const {
    return problem_.mlp.widths[std::size_t(layer) + 1] > problem_.m ? BlockOrder::NBlocksOuter
                                                                    : BlockOrder::MBlocksOuter;
  }
  std::int64_t layerCount() const { return problem_.mlp.count(); }
  std::int64_t kBlocks(std::int64_t layer) const { return blocks_[std::size_t(layer)]; }
  Problem blockProblem(std::int64_t layer) const { return mlpBlockProblem(problem_, blocking_, layer); }

 private:
  // The biases of output block column j of `layer`, or null without biases.
  const float* biasOf(std::int64_t layer, std::int64_t j) const {
    return bias_.empty() ? nullptr : bias_.data() + bias_offsets_[std::size_t(layer)] + j * blocking_.bc;
  }

  Problem problem_;
  MlpBlocking blocking_;
  BLayout w_layout_;
  std::int64_t mb_;
  std::vector<std::int64_t> blocks_;  // per width C_0 .. C_L: its blocks of bc columns
  std::vector<std::int64_t> weight_offsets_, bias_offsets_;
  AlignedBuffer<Element> weights_;
  FloatBuffer bias_;
  std::vector<AlignedBuffer<Element>> activations_;  // X blocked, then every layer's output blocked
};

extern template class BlockedMlpOf<float>;
extern template class BlockedMlpOf<BFloat16>;
using BlockedMlp = BlockedMlpOf<float>;
using Bf16BlockedMlp = BlockedMlpOf<BFloat16>;

}  // namespace nkbench

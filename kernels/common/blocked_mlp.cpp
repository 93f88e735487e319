#include "kernels/common/blocked_mlp.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "harness/core/error.h"
#include "operands/packing.h"
#include "operands/vnni_packing.h"

namespace nkbench {
namespace {

GemmBlocking squareBlocks(const MlpBlocking& blocking) { return {blocking.bm, blocking.bc, blocking.bc}; }

}  // namespace

MlpBlocking chooseMlpBlocking(const Problem& mlp, const MlpBlocking& preferred, std::int64_t m_multiple,
                              std::int64_t c_multiple) {
  Problem rows;
  rows.m = mlp.m;
  MlpBlocking blocking;
  blocking.bm = chooseGemmBlocking(rows, {preferred.bm, 1, 1}, m_multiple, 1).bm;
  const std::int64_t step = mlp.dtype == DType::BF16 && c_multiple % 2 != 0 ? 2 * c_multiple : c_multiple;
  std::int64_t least_padding = -1;
  for (std::int64_t bc = std::max(step, preferred.bc / step * step); bc >= step; bc -= step) {
    std::int64_t padding = 0;
    for (std::int64_t width : mlp.mlp.widths) padding += blockCount(width, bc) * bc - width;
    if (least_padding < 0 || padding < least_padding) {
      least_padding = padding;
      blocking.bc = bc;
    }
  }
  return blocking;
}

Problem mlpBlockProblem(const Problem& mlp, const MlpBlocking& blocking, std::int64_t layer) {
  Problem block;
  block.kind = OpKind::Brgemm;
  block.dtype = block.c_dtype = mlp.dtype;
  block.m = blocking.bm;
  block.n = block.k = blocking.bc;
  block.batch = blockCount(mlp.mlp.widths[std::size_t(layer)], blocking.bc);
  block.mlp.bias = mlp.mlp.bias;
  block.mlp.activation = mlp.mlp.activation;
  return block;
}

template <class Element>
BlockedMlpOf<Element>::BlockedMlpOf(const Problem& mlp, const MlpBlocking& blocking, BLayout w_layout)
    : problem_(mlp), blocking_(blocking), w_layout_(w_layout), mb_(blockCount(mlp.m, blocking.bm)) {
  constexpr DType dtype = dtypeOf<Element>();
  if (mlp.kind != OpKind::Mlp || mlp.dtype != dtype || mlp.c_dtype != dtype || mlp.mlp.count() < 1)
    throw Error(fmt::format("blocked mlp needs a {} mlp: {}", toString(dtype), mlp.describe()));
  if (w_layout == BLayout::VnniPairs && blocking.bc % 2 != 0)
    throw Error("bf16 blocked mlp needs an even column block, not " + std::to_string(blocking.bc));
  std::int64_t weights = 0, biases = 0;
  for (std::int64_t width : mlp.mlp.widths) blocks_.push_back(blockCount(width, blocking.bc));
  for (std::int64_t layer = 0; layer < mlp.mlp.count(); ++layer) {
    weight_offsets_.push_back(weights);
    bias_offsets_.push_back(biases);
    weights += blocks_[std::size_t(layer)] * blocks_[std::size_t(layer) + 1] * blocking.bc * blocking.bc;
    biases += blocks_[std::size_t(layer) + 1] * blocking.bc;
  }
}

template <class Element>
void BlockedMlpOf<Element>::pack(const Element* x, const Element* weights, const float* bias) {
  const MlpLayers& layers = problem_.mlp;
  const GemmBlocking blocks = squareBlocks(blocking_);
  // Allocated with the packing, not with the kernel: their pages are the packing's cost.
  activations_.resize(layers.widths.size());
  // X's padding must be zero (packABlocked writes it); the layers' outputs start unwritten.
  for (std::size_t width = 1; width < layers.widths.size(); ++width)
    if (activations_[width].empty())
      activations_[width].assign(std::size_t(mb_ * blocking_.bm * blocks_[width] * blocking_.bc),
                                 unwrittenValue<Element>());
  packABlocked(x, problem_.m, layers.widths[0], blocks, activations_[0]);

  AlignedBuffer<Element> layer_weights;
  weights_.assign(std::size_t(weight_offsets_.back() + blocks_[blocks_.size() - 2] * blocks_.back() *
                                                           blocking_.bc * blocking_.bc),
                  Element{});
  for (std::int64_t layer = 0; layer < layers.count(); ++layer) {
    const std::int64_t k = layers.widths[std::size_t(layer)], n = layers.widths[std::size_t(layer) + 1];
    const Element* w = weights + layers.weightOffset(layer);
    if constexpr (std::is_same_v<Element, BFloat16>) {
      if (w_layout_ == BLayout::VnniPairs)
        packBBlockedVnni(w, k, n, blocks, layer_weights);
      else
        packBBlocked(w, k, n, blocks, layer_weights);
    } else {
      packBBlocked(w, k, n, blocks, layer_weights);
    }
    std::copy(layer_weights.begin(), layer_weights.end(), weights_.begin() + weight_offsets_[std::size_t(layer)]);
  }

  bias_.clear();
  if (!layers.bias) return;
  bias_.assign(std::size_t(bias_offsets_.back() + blocks_.back() * blocking_.bc), 0.0f);
  for (std::int64_t layer = 0; layer < layers.count(); ++layer)
    std::copy_n(bias + layers.biasOffset(layer), layers.widths[std::size_t(layer) + 1],
                bias_.begin() + bias_offsets_[std::size_t(layer)]);
}

template <class Element>
void BlockedMlpOf<Element>::unpack(Element* y) const {
  const GemmBlocking blocks = squareBlocks(blocking_);
  for (std::int64_t layer = 0; layer < problem_.mlp.count(); ++layer)
    unpackCBlocked(activations_[std::size_t(layer) + 1], problem_.m, problem_.mlp.widths[std::size_t(layer) + 1],
                   blocks, y + problem_.mlpOutputOffset(layer));
}

template class BlockedMlpOf<float>;
template class BlockedMlpOf<BFloat16>;

}  // namespace nkbench

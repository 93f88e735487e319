#include "kernels/eigen/eigen_mlp.h"

#include <fmt/format.h>

#include <algorithm>

#include "harness/core/memory/aligned_buffer.h"
#include "kernels/eigen/eigen_products.h"
#include "operands/bf16.h"

namespace nkbench::eigen {
namespace {

class EigenMlpKernel final : public Kernel {
 public:
  EigenMlpKernel(const Problem& problem, const Operands& operands, int threads)
      : problem_(problem), operands_(operands), threads_(threads) {
    info_.implementation = fmt::format("Eigen products per layer, {} as passes over each output (compiled ISA: {})",
                                       epilogueWords(problem.mlp), compiledIsa());
    info_.isa_used = compiledLevel();
    if (bf16()) {
      // Eigen's bfloat16 product rounds every step: run in f32 and round each layer's output to bf16,
      // which the next layer reads widened.
      info_.implementation += "; bf16 widened to f32, each layer's output rounded to bf16";
      info_.packing = "X,W bf16 -> f32";
      std::int64_t widest = 0;
      for (std::int64_t width : problem.mlp.widths) widest = std::max(widest, width);
      layer_sum_.resize(static_cast<std::size_t>(problem.m * widest));
      layer_input_.resize(layer_sum_.size());
    }
  }

  void pack() override {
    if (!bf16()) return;
    x_wide_.resize(static_cast<std::size_t>(problem_.aElements()));
    w_wide_.resize(static_cast<std::size_t>(problem_.bElements()));
    toFloat(operands_.aAs<BFloat16>(), x_wide_.size(), x_wide_.data());
    toFloat(operands_.bAs<BFloat16>(), w_wide_.size(), w_wide_.data());
  }

  void compute() override {
    const MlpLayers& layers = problem_.mlp;
    const bool relu = layers.activation == Activation::Relu;
    const float* input = bf16() ? x_wide_.data() : operands_.aAs<float>();
    const float* weights = bf16() ? w_wide_.data() : operands_.bAs<float>();
    for (std::int64_t layer = 0; layer < layers.count(); ++layer) {
      const std::int64_t k = layers.widths[std::size_t(layer)];
      const std::int64_t n = layers.widths[std::size_t(layer) + 1];
      const float* bias = layers.bias ? operands_.bias + layers.biasOffset(layer) : nullptr;
      const float* w = weights + layers.weightOffset(layer);
      const std::int64_t offset = problem_.mlpOutputOffset(layer);
      if (!bf16()) {
        float* output = operands_.cAs<float>() + offset;
        denseLayer(input, w, bias, output, problem_.m, n, k, relu, threads_);
        input = output;
        continue;
      }
      const auto count = static_cast<std::size_t>(problem_.m * n);
      denseLayer(input, w, bias, layer_sum_.data(), problem_.m, n, k, relu, threads_);
      BFloat16* output = operands_.cAs<BFloat16>() + offset;
      toBFloat16(layer_sum_.data(), count, output);
      toFloat(output, count, layer_input_.data());
      input = layer_input_.data();
    }
  }

  const KernelInfo& info() const override { return info_; }

 private:
  static std::string epilogueWords(const MlpLayers& layers) {
    const std::string text = layers.epilogueText();
    return text.empty() ? std::string("no epilogue") : text;
  }
  bool bf16() const { return problem_.dtype == DType::BF16; }

  Problem problem_;
  Operands operands_;
  int threads_;
  FloatBuffer x_wide_, w_wide_;          // bf16: X and the weights as f32
  FloatBuffer layer_sum_, layer_input_;  // bf16: one layer's f32 output, and it rounded and widened
  KernelInfo info_;
};

}  // namespace

std::unique_ptr<Kernel> makeMlpKernel(const Problem& problem, const Operands& operands, int threads) {
  return std::make_unique<EigenMlpKernel>(problem, operands, threads);
}

}  // namespace nkbench::eigen

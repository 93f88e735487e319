#include "kernels/onednn/onednn_mlp.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "harness/core/error.h"
#include "kernels/onednn/onednn_common.h"
#include "kernels/onednn/onednn_isa_level.h"
#include "kernels/onednn/onednn_layout.h"

namespace nkbench::onednn {
namespace {

void addDistinct(std::vector<std::string>& list, std::string item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

class OnednnMlpKernel final : public Kernel {
 public:
  OnednnMlpKernel(const Problem& problem, const Operands& operands, bool blocked_weights, Isa cap)
      : case_(problem.describe()), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    const MlpLayers& mlp = problem.mlp;
    void* input = const_cast<void*>(operands.a);
    for (std::int64_t index = 0; index < mlp.count(); ++index) {
      const Problem gemm = problem.mlpLayer(index);
      Layer& layer = layers_.emplace_back(makeMlpLayer(problem, index, blocked_weights, engine_));
      const dnnl::memory::desc user_w = plainMatrix(gemm.k, gemm.n, gemm.dtype);
      dnnl::memory weights(user_w, engine_, elementAt(operands.b, mlp.weightOffset(index), gemm.dtype));
      if (layer.pd.weights_desc() != user_w) {
        const dnnl::memory packed(layer.pd.weights_desc(), engine_);
        reorders_.push_back({dnnl::reorder(weights, packed), weights, packed});
        weights = packed;
      }
      void* output = elementAt(operands.c, problem.mlpOutputOffset(index), gemm.c_dtype);
      layer.args = {{DNNL_ARG_SRC, dnnl::memory(layer.pd.src_desc(), engine_, input)},
                    {DNNL_ARG_WEIGHTS, weights},
                    {DNNL_ARG_DST, dnnl::memory(layer.pd.dst_desc(), engine_, output)}};
      if (mlp.bias)
        layer.args.emplace(DNNL_ARG_BIAS, dnnl::memory(layer.pd.bias_desc(), engine_,
                                                       const_cast<float*>(operands.bias + mlp.biasOffset(index))));
      input = output;
    }
    describe(problem, cap);
  }

  void pack() override { runWeightReorders(reorders_, stream_, case_); }

  void compute() override {
    try {
      // An in-order stream: each layer sees the previous one's output.
      for (Layer& layer : layers_) layer.primitive.execute(stream_, layer.args);
      stream_.wait();
    } catch (const dnnl::error& error) {
      throw Error(fmt::format("oneDNN mlp failed for {}: {}", case_, error.what()));
    }
  }

  const KernelInfo& info() const override { return info_; }

 private:
  struct Layer {
    explicit Layer(dnnl::matmul::primitive_desc desc) : pd(std::move(desc)), primitive(pd) {}
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul primitive;
    std::unordered_map<int, dnnl::memory> args;
  };

  // "brg:avx512_core per layer, bias + relu post-op"; distinct names where layers differ.
  void describe(const Problem& problem, Isa cap) {
    std::vector<std::string> names, layouts, epilogue;
    for (const Layer& layer : layers_) addDistinct(names, implementationName(layer.pd));
    for (const Reorder& reorder : reorders_) addDistinct(layouts, describeLayout(reorder.to.get_desc()));
    if (problem.mlp.bias) epilogue.emplace_back("bias");
    if (problem.mlp.activation == Activation::Relu) epilogue.emplace_back("relu post-op");
    info_.implementation = fmt::format("{} per layer{}{}", fmt::join(names, " / "), epilogue.empty() ? "" : ", ",
                                       fmt::join(epilogue, " + "));
    info_.isa_used = isaUsed(info_.implementation, cap);
    if (!layouts.empty()) info_.packing = fmt::format("W -> {} (a=K, b=N)", fmt::join(layouts, " / "));
  }

  std::string case_;  // for error messages
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Layer> layers_;
  std::vector<Reorder> reorders_;  // onednn-packed: user W -> oneDNN's layout, per layer that needs it
  KernelInfo info_;
};

}  // namespace

dnnl::matmul::primitive_desc makeMlpLayer(const Problem& problem, std::int64_t layer, bool blocked_weights,
                                          const dnnl::engine& engine) {
  using Tag = dnnl::memory::format_tag;
  const Problem gemm = problem.mlpLayer(layer);
  const dnnl::memory::desc src = plainMatrix(gemm.m, gemm.k, gemm.dtype);
  const dnnl::memory::desc weights({gemm.k, gemm.n}, operandType(gemm.dtype), blocked_weights ? Tag::any : Tag::ab);
  const dnnl::memory::desc dst = plainMatrix(gemm.m, gemm.n, gemm.c_dtype);
  dnnl::primitive_attr attr;
  if (problem.mlp.activation == Activation::Relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  // The bias is added in f32 before the post-op, and a bf16 output rounded once after it.
  const dnnl::matmul::desc desc = problem.mlp.bias
                                      ? dnnl::matmul::desc(src, weights, plainMatrix(1, gemm.n, DType::F32), dst)
                                      : dnnl::matmul::desc(src, weights, dst);
  return dnnl::matmul::primitive_desc(desc, attr, engine);
}

std::unique_ptr<Kernel> makeMlpKernel(const Problem& problem, const Operands& operands, bool blocked_weights,
                                      Isa cap) {
  return std::make_unique<OnednnMlpKernel>(problem, operands, blocked_weights, cap);
}

}  // namespace nkbench::onednn

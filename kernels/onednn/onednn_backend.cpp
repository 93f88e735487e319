#include "kernels/onednn/onednn_backend.h"

#include <fmt/format.h>

#include "harness/core/error.h"

#if defined(NKBENCH_HAVE_ONEDNN)
#include <dnnl.hpp>

#include <unordered_map>
#include <vector>

#include "kernels/onednn/onednn_common.h"
#include "kernels/onednn/onednn_isa_cap.h"
#include "kernels/onednn/onednn_isa_level.h"
#include "kernels/onednn/onednn_layout.h"
#include "kernels/onednn/onednn_mlp.h"
#endif

namespace nkbench {
namespace {

std::string backendName(bool blocked_weights) {
  return blocked_weights ? "onednn-packed" : "onednn";
}

#if defined(NKBENCH_HAVE_ONEDNN)

using onednn::implementationName;
using onednn::operandType;
using onednn::plainMatrix;
using onednn::Reorder;

// A batch of more than one matmul into a bf16 C would round C at every step: it
// sums into an f32 C instead, which is rounded to the bf16 C once at the end.
bool sumsThroughF32(const Problem& problem) { return problem.c_dtype == DType::BF16 && problem.batch > 1; }

// The C the matmuls write: the problem's, or the f32 one a rounded-once bf16 C sums in.
DType matmulCType(const Problem& problem) { return sumsThroughF32(problem) ? DType::F32 : problem.c_dtype; }

// One matmul C = A_b * B_b (M x K times K x N; A and B of the problem's type),
// optionally summed into C's old value (in f32, rounded once to a bf16 C).
dnnl::matmul::primitive_desc makeMatmul(const Problem& problem, bool blocked_weights,
                                        bool sum_into_c, const dnnl::engine& engine) {
  using Tag = dnnl::memory::format_tag;
  const dnnl::memory::data_type type = operandType(problem.dtype);
  const dnnl::memory::desc a({problem.m, problem.k}, type, Tag::ab);
  const dnnl::memory::desc b({problem.k, problem.n}, type, blocked_weights ? Tag::any : Tag::ab);
  const dnnl::memory::desc c = plainMatrix(problem.m, problem.n, matmulCType(problem));
  dnnl::primitive_attr attr;
  if (sum_into_c) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, engine);
}

// bf16 matmul needs AVX-512 in oneDNN; under a lower cap it has no implementation.
// Creating the primitive descriptor is how to ask (a few hundred microseconds):
// the case's matmul, or an mlp's first layer (its others differ only in sizes).
std::optional<std::string> matmulUnavailable(const Problem& problem, bool blocked_weights) {
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    if (problem.kind == OpKind::Mlp)
      onednn::makeMlpLayer(problem, 0, blocked_weights, engine);
    else
      makeMatmul(problem, blocked_weights, problem.accumulate, engine);
    return std::nullopt;
  } catch (const dnnl::error& error) {
    if (error.status == dnnl_unimplemented)
      return fmt::format("oneDNN has no {} matmul under its {} ISA", toString(problem.dtype),
                         onednn::effectiveIsa());
    return fmt::format("oneDNN cannot create a {} matmul: {}", toString(problem.dtype),
                       error.what());
  }
}

// oneDNN 2.6 has no public BRGEMM: a batch runs as `batch` matmuls, all but the
// first beta-0 one adding into C through a sum post-op. A bf16 C with a batch is
// summed in an f32 C between two reorders (bf16 -> f32 for beta 1, f32 -> bf16).
class OnednnKernel final : public Kernel {
 public:
  OnednnKernel(const Problem& problem, const Operands& operands, bool blocked_weights, Isa cap)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    const bool needs_sum = problem.accumulate || problem.batch > 1;
    const bool needs_plain = !problem.accumulate;
    if (needs_plain) plain_ = Matmul{makeMatmul(problem, blocked_weights, false, engine_)};
    if (needs_sum) summing_ = Matmul{makeMatmul(problem, blocked_weights, true, engine_)};

    const dnnl::memory::desc plain_b = plainMatrix(problem.k, problem.n, problem.dtype);
    dnnl::memory c(pdFor(0).dst_desc(), engine_, operands.c);
    if (sumsThroughF32(problem)) {
      const dnnl::memory user_c(plainMatrix(problem.m, problem.n, problem.c_dtype), engine_, operands.c);
      c = dnnl::memory(pdFor(0).dst_desc(), engine_);  // oneDNN-owned f32 C
      if (problem.accumulate) widen_c_ = Reorder{dnnl::reorder(user_c, c), user_c, c};
      round_c_ = Reorder{dnnl::reorder(c, user_c), c, user_c};
    }
    for (std::int64_t index = 0; index < problem.batch; ++index) {
      const dnnl::matmul::primitive_desc& pd = pdFor(index);
      dnnl::memory a(pd.src_desc(), engine_,
                     onednn::elementAt(operands.a, index * problem.m * problem.k, problem.dtype));
      dnnl::memory user_b(plain_b, engine_,
                          onednn::elementAt(operands.b, index * problem.k * problem.n, problem.dtype));
      dnnl::memory b = user_b;
      if (pd.weights_desc() != plain_b) {
        b = dnnl::memory(pd.weights_desc(), engine_);
        reorders_.push_back({dnnl::reorder(user_b, b), user_b, b});
      }
      args_.push_back({{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    }
    describe(problem, cap);
  }

  void pack() override { onednn::runWeightReorders(reorders_, stream_, ""); }

  void compute() override {
    try {
      if (widen_c_) widen_c_->execute(stream_);
      for (std::size_t index = 0; index < args_.size(); ++index)
        primitiveFor(static_cast<std::int64_t>(index)).execute(stream_, args_[index]);
      if (round_c_) round_c_->execute(stream_);
      stream_.wait();
    } catch (const dnnl::error& error) {
      throw Error(fmt::format("oneDNN matmul failed: {}", error.what()));
    }
  }

  const KernelInfo& info() const override { return info_; }

 private:
  struct Matmul {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul primitive{pd};
  };

  bool usesPlain(std::int64_t index) const { return index == 0 && plain_.has_value(); }
  const dnnl::matmul::primitive_desc& pdFor(std::int64_t index) const {
    return usesPlain(index) ? plain_->pd : summing_->pd;
  }
  const dnnl::matmul& primitiveFor(std::int64_t index) const {
    return usesPlain(index) ? plain_->primitive : summing_->primitive;
  }

  void describe(const Problem& problem, Isa cap) {
    const std::string first = implementationName(pdFor(0));
    if (problem.batch == 1)
      info_.implementation = first + (problem.accumulate ? " (sum post-op)" : "");
    else if (!plain_ || first == implementationName(summing_->pd))
      info_.implementation = fmt::format("{} x batch (sum post-op)", first);
    else
      info_.implementation = fmt::format("{} then {} x (batch-1) (sum post-op)", first,
                                         implementationName(summing_->pd));
    if (round_c_) info_.implementation += ", summed in f32 C, reordered to bf16";
    info_.isa_used = onednn::isaUsed(info_.implementation, cap);
    if (!reorders_.empty())
      info_.packing =
          fmt::format("B -> {} (a=K, b=N)", onednn::describeLayout(pdFor(0).weights_desc()));
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::optional<Matmul> plain_;    // beta 0: C = A_0 * B_0
  std::optional<Matmul> summing_;  // C += A_b * B_b
  std::vector<Reorder> reorders_;
  std::optional<Reorder> widen_c_;  // bf16 C summed through f32: C -> f32 C (beta 1)
  std::optional<Reorder> round_c_;  // and f32 C -> C, rounded once
  std::vector<std::unordered_map<int, dnnl::memory>> args_;
  KernelInfo info_;
};

class OnednnBackend final : public Backend {
 public:
  OnednnBackend(const BackendConfig& config, bool blocked_weights)
      : config_(config),
        blocked_weights_(blocked_weights),
        isa_problem_(onednn::applyIsaCap(config.isa)) {}

  std::string name() const override { return backendName(blocked_weights_); }

  std::string version() const override {
    const dnnl::version_t* v = dnnl::version();
    return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
  }

  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    if (problem.m < 1 || problem.n < 1 || problem.k < 1 || problem.batch < 1)
      return "oneDNN needs M, N, K and batch of at least 1";
    if (problem.dtype != DType::F32 && problem.dtype != DType::BF16)
      return fmt::format("oneDNN: {} is not supported yet", toString(problem.dtype));
    if (problem.c_dtype == DType::BF16 && problem.dtype != DType::BF16) return "oneDNN: a bf16 C needs bf16 A and B";
    if (problem.kind == OpKind::Gemm && problem.batch != 1) return "oneDNN gemm needs batch 1";
    if (config_.threads < 1) return "oneDNN needs at least 1 thread";
    if (!onednn::kThreadsSettable && config_.threads != 1)
      return "this oneDNN build does not use OpenMP, so its thread count cannot be set";
    if (isa_problem_) return isa_problem_;
    if (problem.dtype == DType::BF16) return matmulUnavailable(problem, blocked_weights_);
    return std::nullopt;
  }

  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    if (auto reason = unsupportedReason(problem)) throw Error(*reason);
    // oneDNN sizes its work split by the thread count when the primitive is made.
    onednn::setThreadCount(config_.threads);
    try {
      if (problem.kind == OpKind::Mlp)
        return onednn::makeMlpKernel(problem, operands, blocked_weights_, config_.isa);
      return std::make_unique<OnednnKernel>(problem, operands, blocked_weights_, config_.isa);
    } catch (const dnnl::error& error) {
      throw Error(fmt::format("oneDNN failed for {}: {}", problem.describe(), error.what()));
    }
  }

 private:
  BackendConfig config_;
  bool blocked_weights_;
  std::optional<std::string> isa_problem_;
};

#else  // !NKBENCH_HAVE_ONEDNN

constexpr const char* kNotBuilt = "oneDNN was not found when nkbench was built";

class OnednnBackend final : public Backend {
 public:
  OnednnBackend(const BackendConfig&, bool blocked_weights) : blocked_weights_(blocked_weights) {}

  std::string name() const override { return backendName(blocked_weights_); }
  std::string version() const override { return "not built"; }
  std::optional<std::string> unsupportedReason(const Problem&) const override { return kNotBuilt; }
  std::unique_ptr<Kernel> prepare(const Problem&, const Operands&) override {
    throw Error(kNotBuilt);
  }

 private:
  bool blocked_weights_;
};

#endif

}  // namespace

std::unique_ptr<Backend> makeOnednnBackend(const BackendConfig& config, bool blocked_weights) {
  return std::make_unique<OnednnBackend>(config, blocked_weights);
}

}  // namespace nkbench

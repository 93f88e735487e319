#include "kernels/eigen/eigen_backend.h"

#include <fmt/format.h>

#include <Eigen/Core>  // version macros only; the products live in eigen_products.cpp

#include "harness/core/error.h"
#include "harness/core/memory/aligned_buffer.h"
#include "kernels/eigen/eigen_mlp.h"
#include "kernels/eigen/eigen_products.h"
#include "operands/bf16.h"

namespace nkbench {
namespace {

std::string eigenVersion() {
  return fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
}

class EigenKernel final : public Kernel {
 public:
  EigenKernel(const Problem& problem, const Operands& operands, int threads)
      : problem_(problem), operands_(operands), threads_(threads) {
    const char* shape = problem.kind == OpKind::Gemm ? "GEMM" : "GEMM x batch";
    info_.implementation =
        fmt::format("Eigen {} {} (compiled ISA: {})", eigenVersion(), shape, eigen::compiledIsa());
    info_.isa_used = eigen::compiledLevel();
    if (problem.dtype == DType::BF16) {
      // Eigen's own bfloat16 GEMM rounds every step to bf16: widen once and run in f32.
      info_.implementation += " on bf16 widened to f32";
      info_.packing = "A,B bf16 -> f32";
    }
    if (problem.c_dtype == DType::BF16) {
      info_.implementation += ", C in f32 rounded to bf16";
      c_wide_.resize(static_cast<std::size_t>(problem.cElements()));
    }
  }

  void pack() override {
    if (problem_.dtype != DType::BF16) return;
    widen(operands_.aAs<BFloat16>(), problem_.aElements(), a_wide_);
    widen(operands_.bAs<BFloat16>(), problem_.bElements(), b_wide_);
  }

  void compute() override {
    const bool wide = problem_.dtype == DType::BF16;
    const float* a = wide ? a_wide_.data() : operands_.aAs<float>();
    const float* b = wide ? b_wide_.data() : operands_.bAs<float>();
    if (problem_.c_dtype != DType::BF16) {
      eigen::batchedProduct(a, b, operands_.cAs<float>(), problem_.m, problem_.n, problem_.k, problem_.batch,
                            problem_.accumulate, threads_);
      return;
    }
    // A bf16 C is widened (beta 1), accumulated in f32 and rounded once.
    BFloat16* c = operands_.cAs<BFloat16>();
    if (problem_.accumulate) toFloat(c, c_wide_.size(), c_wide_.data());
    eigen::batchedProduct(a, b, c_wide_.data(), problem_.m, problem_.n, problem_.k, problem_.batch,
                          problem_.accumulate, threads_);
    toBFloat16(c_wide_.data(), c_wide_.size(), c);
  }

  const KernelInfo& info() const override { return info_; }

 private:
  static void widen(const BFloat16* in, std::int64_t n, FloatBuffer& out) {
    out.resize(static_cast<std::size_t>(n));
    toFloat(in, out.size(), out.data());
  }

  Problem problem_;
  Operands operands_;
  int threads_;
  FloatBuffer a_wide_, b_wide_;  // bf16 problems: A and B as f32
  FloatBuffer c_wide_;           // bf16 C: the f32 sum
  KernelInfo info_;
};

class EigenBackend final : public Backend {
 public:
  explicit EigenBackend(const BackendConfig& config) : config_(config) {}

  std::string name() const override { return "eigen"; }
  std::string version() const override { return eigenVersion(); }

  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    if (problem.m < 1 || problem.n < 1 || problem.k < 1 || problem.batch < 1)
      return "eigen needs M, N, K and batch of at least 1";
    if (problem.dtype != DType::F32 && problem.dtype != DType::BF16)
      return fmt::format("eigen: {} is not supported yet", toString(problem.dtype));
    if (problem.kind == OpKind::Gemm && problem.batch != 1) return "eigen gemm needs batch 1";
    if (problem.kind == OpKind::Mlp) return std::nullopt;  // its products split among the threads
    // Eigen splits a product among threads only where it is large: a BRGEMM's
    // small products would run on one thread, unsaid.
    if (problem.kind == OpKind::Brgemm && config_.threads > 1)
      return fmt::format("eigen: a BRGEMM is a loop of small products, which Eigen runs on one thread, not {}",
                         config_.threads);
    return std::nullopt;
  }

  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    if (auto reason = unsupportedReason(problem)) throw Error(*reason);
    if (problem.kind == OpKind::Mlp) return eigen::makeMlpKernel(problem, operands, config_.threads);
    return std::make_unique<EigenKernel>(problem, operands, config_.threads);
  }

 private:
  BackendConfig config_;
};

}  // namespace

std::unique_ptr<Backend> makeEigenBackend(const BackendConfig& config) {
  return std::make_unique<EigenBackend>(config);
}

}  // namespace nkbench

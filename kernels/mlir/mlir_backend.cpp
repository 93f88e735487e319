#include "kernels/mlir/mlir_backend.h"

#include <fmt/format.h>

#include <map>
#include <memory>

#include "harness/core/error.h"
#include "harness/host/cache_info.h"
#include "kernels/common/blocked_gemm.h"
#include "kernels/mlir/mlir_compiler.h"
#include "llvm/Config/llvm-config.h"

namespace nkbench {
namespace {

using mlir_backend::CompiledKernel;
using mlir_backend::Lowering;
using mlir_backend::Schedule;

KernelInfo describe(const CompiledKernel& kernel, const Schedule& schedule, const std::string& target) {
  KernelInfo info;
  info.implementation = fmt::format("mlir jit {} ({})", target, schedule.name);
  info.register_block = kernel.registerBlocks();
  info.nanokernel = kernel.evidence().summary;
  return info;
}

class BrgemmKernel final : public Kernel {
 public:
  BrgemmKernel(std::shared_ptr<CompiledKernel> compiled, Operands operands, KernelInfo info)
      : compiled_(std::move(compiled)), operands_(operands), info_(std::move(info)) {}
  void compute() override { compiled_->function()(operands_.a, operands_.b, operands_.c); }
  const KernelInfo& info() const override { return info_; }

 private:
  std::shared_ptr<CompiledKernel> compiled_;
  Operands operands_;
  KernelInfo info_;
};

class GemmKernel final : public Kernel {
 public:
  GemmKernel(std::shared_ptr<CompiledKernel> compiled, BlockedGemm gemm, Operands operands, KernelInfo info)
      : compiled_(std::move(compiled)), gemm_(std::move(gemm)), operands_(operands), info_(std::move(info)) {}
  void pack() override { gemm_.pack(operands_.aAs<float>(), operands_.bAs<float>()); }
  void compute() override { gemm_.compute(compiled_->function()); }
  void unpack() override { gemm_.unpack(operands_.c); }
  const KernelInfo& info() const override { return info_; }

 private:
  std::shared_ptr<CompiledKernel> compiled_;
  BlockedGemm gemm_;
  Operands operands_;
  KernelInfo info_;
};

class MlirBackend final : public Backend {
 public:
  MlirBackend(const BackendConfig& config, Lowering lowering)
      : config_(config), lowering_(lowering), compiler_(config.isa, hostCacheSizes()) {
    if (!config.mlir_schedule.empty() && !mlir_backend::findSchedule(config.mlir_schedule))
      throw Error(fmt::format("--schedule {}: unknown (known: {})", config.mlir_schedule, mlir_backend::scheduleNames()));
  }

  std::string name() const override { return lowering_ == Lowering::Nanokernel ? "mlir" : "mlir-default"; }
  std::string version() const override { return "MLIR " LLVM_VERSION_STRING; }

  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    // bf16 kernels compile (MlirCompiler) but operand packing is not wired in yet.
    if (problem.dtype != DType::F32) return fmt::format("mlir: {} operands are not wired in yet", toString(problem.dtype));
    try {
      mlir_backend::selectSchedule(config_.isa, problem.dtype, config_.mlir_schedule);
    } catch (const Error& error) {
      return error.what();
    }
    return std::nullopt;
  }

  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    if (auto reason = unsupportedReason(problem)) throw Error(*reason);
    const Schedule& schedule = mlir_backend::selectSchedule(config_.isa, problem.dtype, config_.mlir_schedule);
    if (problem.kind == OpKind::Brgemm) {
      auto compiled = compileCached(problem, schedule);
      return std::make_unique<BrgemmKernel>(compiled, operands, describe(*compiled, schedule, target()));
    }
    BlockedGemm gemm(problem, chooseGemmBlocking(problem, schedule.gemm_block, schedule.block_m, schedule.vector_lanes));
    auto compiled = compileCached(gemm.blockProblem(), schedule);
    KernelInfo info = describe(*compiled, schedule, target());
    const GemmBlocking& b = gemm.blocking();
    info.packing = fmt::format("A,B -> {}x{}x{} blocks, brgemm batch {}", b.bm, b.bn, b.bk, gemm.kBlocks());
    return std::make_unique<GemmKernel>(compiled, std::move(gemm), operands, std::move(info));
  }

 private:
  std::string target() const { return compiler_.targetDescription(); }

  // Kernels are cached per run: GEMM cases share their block kernels.
  std::shared_ptr<CompiledKernel> compileCached(const Problem& brgemm, const Schedule& schedule) {
    const std::string key = fmt::format("{}/{}", schedule.name, brgemm.describe());
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    std::shared_ptr<CompiledKernel> compiled = compiler_.compile(brgemm, schedule, lowering_);
    if (lowering_ == Lowering::Nanokernel && !compiled->evidence().composed)
      throw Error("mlir: the kernel was not composed of nanokernels: " + compiled->evidence().summary);
    cache_.emplace(key, compiled);
    return compiled;
  }

  BackendConfig config_;
  Lowering lowering_;
  mlir_backend::MlirCompiler compiler_;
  std::map<std::string, std::shared_ptr<CompiledKernel>> cache_;
};

}  // namespace

std::unique_ptr<Backend> makeMlirBackend(const BackendConfig& config) {
  return std::make_unique<MlirBackend>(config, Lowering::Nanokernel);
}
std::unique_ptr<Backend> makeMlirDefaultBackend(const BackendConfig& config) {
  return std::make_unique<MlirBackend>(config, Lowering::GenericVector);
}

}  // namespace nkbench

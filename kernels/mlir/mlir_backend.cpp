#include "kernels/mlir/mlir_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>

#include "harness/core/error.h"
#include "harness/host/cache_info.h"
#include "kernels/common/blocked_gemm.h"
#include "kernels/common/block_epilogue.h"
#include "kernels/common/blocked_mlp.h"
#include "kernels/common/row_panels.h"
#include "kernels/common/thread_split.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/amx/tile_emulator.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/kernel_problem.h"
#include "kernels/mlir/mlir_compiler.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "kernels/mlir/route_choice.h"
#include "operands/bf16.h"
#include "operands/vnni_packing.h"
#include "llvm/Config/llvm-config.h"

namespace nkbench {
namespace {

using mlir_backend::CompiledKernel;
using mlir_backend::Lowering;
using mlir_backend::RouteChoice;
using mlir_backend::NanokernelKind;
using mlir_backend::Schedule;

KernelInfo describe(const CompiledKernel& kernel, const Schedule& schedule, Isa isa, const std::string& target,
                    DType c_dtype) {
  KernelInfo info;
  const bool emulated = schedule.nanokernel == NanokernelKind::AmxTile && isa == Isa::AmxEmulated;
  info.implementation = fmt::format("mlir jit {} ({}{}){}", target, schedule.name, emulated ? ", emulated tiles" : "",
                                    c_dtype == DType::BF16 ? ", bf16 C rounded in the kernel" : "");
  if (emulated) info.caveat = "emulated AMX: the timing is not AMX performance";
  info.isa_used = std::string(toString(emulated ? Isa::AmxEmulated : schedule.isa));
  info.register_block = kernel.registerBlocks();
  info.schedule = schedule.name;
  info.kernel_cache = mlir_backend::toString(kernel.cacheUse());
  info.nanokernel = kernel.evidence().summary;
  return info;
}

// The kernel cache's part in a row of several kernels: a hit only where every
// kernel was one; otherwise the first kernel that was compiled says how.
std::string kernelCacheUseOf(const std::vector<const CompiledKernel*>& kernels) {
  for (const CompiledKernel* kernel : kernels)
    if (kernel->cacheUse() != mlir_backend::KernelCacheUse::Hit) return mlir_backend::toString(kernel->cacheUse());
  return mlir_backend::toString(mlir_backend::KernelCacheUse::Hit);
}

// A tile kernel's configuration, loaded on this thread unless it is loaded already.
void loadTiles(const CompiledKernel& kernel) {
  if (const auto& tiles = kernel.tileCalls()) mlir_backend::useTileConfig(tiles->machine, tiles->entry_palette);
}

// The calls of one compiled kernel. Before a tile kernel's calls its first tile
// shape's configuration is loaded on this thread, unless it is loaded already
// (callers that share calls out among OpenMP threads load it on each, before
// each call: loadTiles); the tiles are released when the run of calls ends
// (finish), on every thread of the run. Emulated tiles are checked for faults
// after every call, on any thread: a fault is an error of the row.
// The function and the tile calls are read once, when constructed: a kernel of
// a few nanoseconds (a ragged BRGEMM of batch 1) is timed with what run() adds,
// where a library's call adds one indirect call.
class KernelCalls {
 public:
  explicit KernelCalls(std::shared_ptr<CompiledKernel> compiled)
      : compiled_(std::move(compiled)), function_(compiled_->function()), tiles_(compiled_->tileCalls()) {}
  template <class Body>
  void run(Body&& body) const {
    if (!tiles_) return body(function_);
    mlir_backend::useTileConfig(tiles_->machine, tiles_->entry_palette);
    body(function_);
    if (tiles_->machine == mlir_backend::TileMachine::Emulated)
      if (std::optional<std::string> fault = mlir_backend::takeEmulatedTileFault())
        throw Error("mlir: emulated tiles faulted: " + *fault);
  }
  void finish(int threads = 1) const {
    if (!tiles_) return;
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
      mlir_backend::releaseTiles(tiles_->machine);
    }
    mlir_backend::releaseTiles(tiles_->machine);
  }
  const CompiledKernel& compiled() const { return *compiled_; }

 private:
  std::shared_ptr<CompiledKernel> compiled_;
  mlir_backend::KernelFunction function_;
  std::optional<mlir_backend::TileCalls> tiles_;
};

class BrgemmKernel final : public Kernel {
 public:
  BrgemmKernel(std::shared_ptr<CompiledKernel> compiled, Operands operands, KernelInfo info)
      : calls_(std::move(compiled)), operands_(operands), info_(std::move(info)) {}
  void compute() override {
    calls_.run([&](mlir_backend::KernelFunction kernel) { kernel(operands_.a, operands_.b, operands_.c); });
  }
  void finishCalls() override { calls_.finish(); }
  const KernelInfo& info() const override { return info_; }

 private:
  KernelCalls calls_;
  Operands operands_;
  KernelInfo info_;
};

// bf16: B is packed into VNNI pairs and A given the kernel's K (even, or whole
// tile steps on the AMX route; the extra columns and pairs are zero) before the
// kernel runs; the packing is timed apart, as the libraries' is. On the
// dot-product route B's rows are padded with zero columns to whole vectors
// (vnniBColumns), which the kernel's masked N edge reads; C (CElement: f32 or
// bf16) is the caller's.
template <class CElement>
class Bf16BrgemmKernel final : public Kernel {
 public:
  Bf16BrgemmKernel(std::shared_ptr<CompiledKernel> compiled, const Problem& problem, const Problem& kernel_problem,
                   std::int64_t b_columns, Operands operands, KernelInfo info, const SharedVnniB& shared_b)
      : calls_(std::move(compiled)), problem_(problem), k_(kernel_problem.k), b_columns_(b_columns),
        operands_(operands), info_(std::move(info)),
        b_vnni_(shared_b.pairs ? shared_b.pairs : std::make_shared<BFloat16Buffer>()),
        packs_b_(!shared_b.pairs || shared_b.packs) {}
  void pack() override {
    if (k_ != problem_.k)
      padAToKBatched(operands_.aAs<BFloat16>(), problem_.batch, problem_.m, problem_.k, k_, a_pairs_);
    if (packs_b_)
      packBVnniBatched(operands_.bAs<BFloat16>(), problem_.batch, problem_.k, problem_.n, k_, b_columns_, *b_vnni_);
  }
  void compute() override {
    const void* a = k_ != problem_.k ? static_cast<const void*>(a_pairs_.data()) : operands_.a;
    calls_.run([&](mlir_backend::KernelFunction kernel) { kernel(a, b_vnni_->data(), operands_.c); });
  }
  void finishCalls() override { calls_.finish(); }
  const KernelInfo& info() const override { return info_; }

 private:
  KernelCalls calls_;
  Problem problem_;
  std::int64_t k_;          // K as the kernel sees it
  std::int64_t b_columns_;  // columns of B's packed VNNI rows
  Operands operands_;
  KernelInfo info_;
  BFloat16Buffer a_pairs_;
  std::shared_ptr<BFloat16Buffer> b_vnni_;
  bool packs_b_;
};

// bf16 BRGEMM whose kernel reads A widened to f32 (Bf16F32AFma): A is widened
// once when packed, timed apart as the libraries' packing is; B and C are used in place.
class F32ABrgemmKernel final : public Kernel {
 public:
  F32ABrgemmKernel(std::shared_ptr<CompiledKernel> compiled, const Problem& problem, Operands operands,
                   KernelInfo info)
      : calls_(std::move(compiled)), problem_(problem), operands_(operands), info_(std::move(info)) {}
  void pack() override {
    a_wide_.resize(static_cast<std::size_t>(problem_.batch * problem_.m * problem_.k));
    toFloat(operands_.aAs<BFloat16>(), a_wide_.size(), a_wide_.data());
  }
  void compute() override {
    calls_.run([&](mlir_backend::KernelFunction kernel) { kernel(a_wide_.data(), operands_.b, operands_.c); });
  }
  void finishCalls() override { calls_.finish(); }
  const KernelInfo& info() const override { return info_; }

 private:
  KernelCalls calls_;
  Problem problem_;
  Operands operands_;
  KernelInfo info_;
  FloatBuffer a_wide_;
};

// GEMM as block kernel calls over packed operands (f32, or bf16 with VNNI-packed
// B, or bf16 B with A widened to f32), writing C blocks of the Gemm's Output:
// one kernel per block shape (BlockShape), the edge blocks' kernels vector ones.
template <class Gemm>
class GemmKernel final : public Kernel {
 public:
  using ShapeKernels = std::array<std::shared_ptr<CompiledKernel>, kBlockShapes>;
  // `first`: the shape whose kernel the row describes (and a tile kernel's calls load).
  GemmKernel(ShapeKernels compiled, BlockShape first, Gemm gemm, Operands operands, KernelInfo info, int threads)
      : compiled_(std::move(compiled)), calls_(compiled_[std::size_t(first)]), gemm_(std::move(gemm)),
        operands_(operands), info_(std::move(info)), threads_(threads) {
    for (std::size_t shape = 0; shape < kBlockShapes; ++shape)
      if (compiled_[shape]) functions_[shape] = compiled_[shape]->function();
    // One tile configuration serves all the block calls: a tile route's GEMM pads its edges.
    if (calls_.compiled().tileCalls() && gemm_.blockShapes().size() != 1)
      throw Error("mlir: a tile kernel's GEMM must run whole blocks only");
  }
  void pack() override {
    gemm_.pack(operands_.aAs<typename Gemm::Input>(), operands_.bAs<typename Gemm::Input>());
  }
  // One configuration for all the block calls (a tile route's GEMM has whole
  // blocks only); on more threads, each loads it before its blocks (a compare
  // once loaded).
  void compute() override {
    calls_.run([&](mlir_backend::KernelFunction) {
      const auto call = [&](BlockShape shape, const void* a, const void* b, void* c) {
        functions_[std::size_t(shape)](a, b, c);
      };
      if (threads_ == 1 || !calls_.compiled().tileCalls()) return gemm_.compute(call, threads_);
      gemm_.compute(
          [&](BlockShape shape, const void* a, const void* b, void* c) {
            loadTiles(calls_.compiled());
            call(shape, a, b, c);
          },
          threads_);
    });
  }
  void unpack() override { gemm_.unpack(operands_.cAs<typename Gemm::Output>()); }
  void finishCalls() override { calls_.finish(threads_); }
  const KernelInfo& info() const override { return info_; }

 private:
  ShapeKernels compiled_;
  std::array<mlir_backend::KernelFunction, kBlockShapes> functions_{};
  KernelCalls calls_;
  Gemm gemm_;
  Operands operands_;
  KernelInfo info_;
  int threads_;
};

// An mlp as block kernel calls over activations that stay blocked between
// layers (BlockedMlpOf), one kernel per layer shape, each with the layer's
// bias and activation fused into its stores of C; or, given
// `separate_epilogue`, kernels without them, then the bias add and the
// activation as two passes over each layer's whole output, as unfused
// element-wise ops run (the comparison for the fused epilogue).
template <class Mlp>
class MlpKernel final : public Kernel {
 public:
  MlpKernel(std::vector<std::shared_ptr<CompiledKernel>> layers, Mlp mlp, Operands operands, KernelInfo info,
            int threads, std::optional<MlpLayers> separate_epilogue)
      : layers_(std::move(layers)), calls_(layers_.front()), mlp_(std::move(mlp)), operands_(operands),
        info_(std::move(info)), threads_(threads), separate_epilogue_(std::move(separate_epilogue)) {}
  void pack() override { mlp_.pack(operands_.aAs<Input>(), operands_.bAs<Input>(), operands_.bias); }
  void compute() override {
    calls_.run([&](mlir_backend::KernelFunction) { computeLayers(); });
  }
  void unpack() override { mlp_.unpack(operands_.cAs<Input>()); }
  void finishCalls() override { calls_.finish(threads_); }
  const KernelInfo& info() const override { return info_; }

 private:
  using Input = typename Mlp::Input;

  void computeLayers() {
    // Loaded per call, on the thread that makes it: a kernel whose regions
    // switch tile shapes leaves the last one loaded.
    auto call = [&](std::int64_t layer, const Input* a, const Input* w, Input* y, const float* bias) {
      const CompiledKernel& kernel = *layers_[std::size_t(layer)];
      loadTiles(kernel);
      if (bias && !separate_epilogue_)
        kernel.biasFunction()(a, w, y, bias);
      else
        kernel.function()(a, w, y);
    };
    if (!separate_epilogue_) return mlp_.compute(call, threads_);
    const MlpBlocking& blocking = mlp_.blocking();
    auto add_bias = [&](Input* y, const float* bias) {
      if (bias) applyBlockEpilogue(y, blocking.bm, blocking.bc, bias, Activation::None);
    };
    auto activate = [&](Input* y, const float*) {
      if (separate_epilogue_->activation != Activation::None)
        applyBlockEpilogue(y, blocking.bm, blocking.bc, nullptr, separate_epilogue_->activation);
    };
    mlp_.compute(call, threads_, add_bias, activate);
  }

  std::vector<std::shared_ptr<CompiledKernel>> layers_;
  KernelCalls calls_;  // the first layer's: every layer runs one route, on one tile machine
  Mlp mlp_;
  Operands operands_;
  KernelInfo info_;
  int threads_;
  std::optional<MlpLayers> separate_epilogue_;
};

class MlirBackend final : public Backend {
 public:
  MlirBackend(const BackendConfig& config, Lowering lowering)
      : config_(config), lowering_(lowering), caches_(hostCacheSizes()),
        compiler_(config.isa, caches_, "", config.kernel_cache_dir) {
    if (!config.mlir_schedule.empty()) named_schedule_ = mlir_backend::parseScheduleSpec(config.mlir_schedule);
    tuned_.file = config.mlir_tuning_file;
    tuned_.by_class = config.mlir_tuned_schedules;
  }

  std::string name() const override { return lowering_ == Lowering::Nanokernel ? "mlir" : "mlir-default"; }
  std::string version() const override { return "MLIR " LLVM_VERSION_STRING; }

  std::optional<std::string> unsupportedReason(const Problem& problem) const override {
    if (problem.kind == OpKind::Mlp) return mlpUnsupported(problem);
    if (auto reason = separateEpilogueOfTheNamedSchedule(problem)) return reason;
    if (auto reason = brgemmThreadsUnsupported(name(), problem, config_.threads)) return reason;
    if (auto reason = kernelUnsupported(problem)) return reason;
    return std::nullopt;
  }

  // Whether a kernel for `problem` can be made at all; on more threads, a
  // BRGEMM's panels' kernels, which take the case's route.
  std::optional<std::string> kernelUnsupported(const Problem& problem) const {
    std::optional<RouteChoice> route;
    try {
      route = routeFor(problem);
    } catch (const Error& error) {
      return error.what();
    }
    if (auto reason = kernelUnsupportedOn(problem, route->schedule)) return reason;
    if (problem.kind != OpKind::Brgemm || config_.threads <= 1 || problem.m < 1) return std::nullopt;
    return panelRefusal(problem, mlir_backend::brgemmPanels(problem, route->schedule, config_.threads),
                        config_.threads,
                        [&](const Problem& panel) { return kernelUnsupportedOn(panel, route->schedule); });
  }

  std::optional<std::string> kernelUnsupportedOn(const Problem& problem, const Schedule& schedule) const {
    if (auto reason = mlir_backend::bf16CSumUnsupported(problem, schedule)) return reason;
    switch (schedule.nanokernel) {
      case NanokernelKind::Fma:
        break;
      case NanokernelKind::Bf16Dot:
        // Measured: upstream's generic lowering leaves the mixed bf16 x bf16 -> f32
        // contraction in a form that MLIR 22 cannot translate to LLVM IR.
        if (lowering_ == Lowering::GenericVector)
          return "mlir-default: upstream's generic lowering of the bf16 contraction does not translate to LLVM IR "
                 "in MLIR 22";
        break;
      case NanokernelKind::Bf16WidenFma:
      case NanokernelKind::Bf16F32AFma:
        break;
      case NanokernelKind::AmxTile:
        if (lowering_ == Lowering::GenericVector) return "mlir-default: the AMX tile kernel has no generic lowering";
        return mlir_backend::amxTileUnsupported(mlir_backend::kernelProblemFor(problem, schedule, caches_));
    }
    return std::nullopt;
  }

  // The schedule chooseRoute picks and, where it left the tile route, why.
  std::optional<std::string> plan(const Problem& problem) const override {
    const RouteChoice route = routeFor(problem);
    // Where a tuning file is in use, its untuned classes say that they are.
    const bool untagged = route.source == "analytic" && tuned_.file.empty();
    const std::string source = untagged ? "" : " (" + route.source + ")";
    return route.schedule.name + source + (route.reason.empty() ? "" : "; " + route.reason);
  }

  // One small kernel through every stage, the kernel cache and the JIT: the
  // first compilation in a process resolves MLIR's and LLVM's symbols and
  // builds their pass pipelines, about half again a kernel's cost, and the
  // first link sets the JIT up; the workers forked after take them warm.
  void warmUp() override {
    Problem tiny;
    tiny.kind = OpKind::Brgemm;
    tiny.m = 2;
    tiny.n = 16;
    tiny.k = 2;
    tiny.batch = 2;
    for (DType dtype : {DType::F32, DType::BF16}) {
      tiny.dtype = dtype;
      const RouteChoice route = routeFor(tiny);
      if (route.schedule.nanokernel == NanokernelKind::AmxTile || kernelUnsupported(tiny)) continue;
      compiler_.compile(mlir_backend::kernelProblemFor(tiny, route.schedule, caches_), route.schedule, lowering_);
    }
  }

  std::unique_ptr<Kernel> prepare(const Problem& problem, const Operands& operands) override {
    if (auto reason = unsupportedReason(problem)) throw Error(*reason);
    if (problem.kind == OpKind::Mlp) return prepareMlp(problem, operands);
    const RouteChoice route = routeFor(problem);
    const Schedule& schedule = route.schedule;
    const bool bf16_c = problem.c_dtype == DType::BF16;
    if (problem.kind == OpKind::Brgemm) {
      // Row panels, each its own BRGEMM on the case's schedule: one per thread,
      // and no taller than the f32 sum of a bf16 C on the stack allows. The
      // panels share B (and its packing): one copy, as one BRGEMM reads it.
      std::vector<RowPanel> panels = mlir_backend::brgemmPanels(problem, schedule, config_.threads);
      if (panels.size() > 1) {
        return std::make_unique<RowPanelBrgemm>(
            problem, operands, std::move(panels),
            [this, route, shared_b = PanelsSharedVnniB()](const Problem& panel, const Operands& panel_operands) mutable {
              return prepareBrgemm(panel, route, panel_operands, shared_b.next());
            },
            config_.threads);
      }
      return prepareBrgemm(problem, route, operands);
    }
    const GemmBlocking blocking = mlir_backend::gemmBlockingFor(problem, schedule, caches_, config_.threads);
    const BlockOrder order = mlir_backend::gemmBlockOrderFor(schedule);
    const BlockEdges edges = mlir_backend::gemmBlockEdgesFor(schedule);
    const std::int64_t b_edge_column_multiple = mlir_backend::vnniBColumnMultiple(schedule);
    const BLayout b_layout = schedule.bInVnniPairs() ? BLayout::VnniPairs : BLayout::Plain;
    const auto blocked = [&]<class Gemm>(std::type_identity<Gemm>) {
      return makeGemmKernel(Gemm(problem, blocking, b_layout, order, edges, b_edge_column_multiple), route, operands);
    };
    if (problem.dtype == DType::F32) return blocked(std::type_identity<BlockedGemm>{});
    if (schedule.nanokernel == NanokernelKind::Bf16F32AFma) {
      if (bf16_c) return blocked(std::type_identity<Bf16BlockedGemmF32ABf16C>{});
      return blocked(std::type_identity<Bf16BlockedGemmF32A>{});
    }
    if (bf16_c) return blocked(std::type_identity<Bf16BlockedGemmBf16C>{});
    return blocked(std::type_identity<Bf16BlockedGemm>{});
  }

 private:
  std::string target() const { return compiler_.targetDescription(); }

  RouteChoice routeFor(const Problem& problem) const {
    mlir_backend::RouteRequest request;
    request.named_schedule = config_.mlir_schedule;
    request.tuned = tuned_.file.empty() ? nullptr : &tuned_;
    request.caches = caches_;
    request.peaks = {config_.fp32_fma_peak_gflops, config_.bf16_dot_peak_gflops};
    return mlir_backend::chooseRoute(config_.isa, problem, request);
  }

  // Only a named schedule separates the epilogue (tuning files refuse it).
  std::optional<std::string> separateEpilogueOfTheNamedSchedule(const Problem& problem) const {
    if (!named_schedule_) return std::nullopt;
    return mlir_backend::separateEpilogueUnsupported(name(), problem, *named_schedule_);
  }

  std::optional<std::string> mlpUnsupported(const Problem& mlp) const {
    if (lowering_ == Lowering::GenericVector)
      return "mlir-default: mlp cases run on mlir (the generic lowering has no fused epilogue)";
    if (auto reason = separateEpilogueOfTheNamedSchedule(mlp)) return reason;
    std::optional<RouteChoice> route;
    try {
      route = routeFor(mlp);
    } catch (const Error& error) {
      return error.what();
    }
    if (!route->schedule.fused_epilogue && mlp.dtype == DType::BF16 && mlp.hasEpilogue())
      return "mlir: :epilogue=separate takes f32 mlps only: its kernels round a bf16 C before the epilogue, which "
             "would round it again";
    const MlpBlocking blocking = mlir_backend::mlpBlockingFor(mlp, route->schedule);
    for (std::int64_t layer = 0; layer < mlp.mlp.count(); ++layer) {
      const Problem block = mlpBlockProblem(mlp, blocking, layer);
      const Problem kernel = mlir_backend::kernelProblemFor(block, route->schedule, caches_);
      if (kernel.describe() != block.describe() ||
          (route->schedule.bInVnniPairs() && mlir_backend::vnniBColumns(kernel, route->schedule) != block.n))
        return fmt::format("mlir: the mlp's {} blocks would need padding inside the kernel", block.describe());
      if (auto reason = kernelUnsupported(block)) return reason;
    }
    return std::nullopt;
  }

  std::unique_ptr<Kernel> prepareMlp(const Problem& mlp, const Operands& operands) {
    const RouteChoice route = routeFor(mlp);
    const Schedule& schedule = route.schedule;
    const MlpBlocking blocking = mlir_backend::mlpBlockingFor(mlp, schedule);
    const BLayout w_layout = schedule.bInVnniPairs() ? BLayout::VnniPairs : BLayout::Plain;
    if (mlp.dtype == DType::F32)
      return makeMlpKernel(BlockedMlp(mlp, blocking, w_layout), route,
                           operands);
    return makeMlpKernel(Bf16BlockedMlp(mlp, blocking, w_layout), route,
                         operands);
  }

  template <class Mlp>
  std::unique_ptr<Kernel> makeMlpKernel(Mlp mlp, const RouteChoice& route, const Operands& operands) {
    const Problem first = mlp.blockProblem(0);
    std::optional<MlpLayers> separate;
    if (!route.schedule.fused_epilogue && first.hasEpilogue()) separate = first.mlp;
    std::vector<std::shared_ptr<CompiledKernel>> layers;
    for (std::int64_t layer = 0; layer < mlp.layerCount(); ++layer) {
      Problem block = mlp.blockProblem(layer);
      if (separate) block.mlp = MlpLayers{};
      layers.push_back(compileCached(block, route.schedule));
    }
    KernelInfo info = describeKernel(*layers.front(), route, first.c_dtype);
    std::vector<const CompiledKernel*> compiled;
    for (const auto& layer : layers) compiled.push_back(layer.get());
    info.kernel_cache = kernelCacheUseOf(compiled);
    const MlpBlocking& b = mlp.blocking();
    const std::string epilogue = !first.hasEpilogue() ? ""
                                 : separate ? ", " + first.mlp.epilogueText() + " as passes over each layer's output"
                                            : ", " + first.mlp.epilogueText() + " fused";
    info.implementation += fmt::format(", {}x{} blocks per layer{}", b.bm, b.bc, epilogue);
    info.packing = fmt::format("X -> {0}x{1} blocks, W -> {1}x{1} {2}blocks, activations blocked between layers",
                               b.bm, b.bc, route.schedule.bInVnniPairs() ? "VNNI " : "");
    return std::make_unique<MlpKernel<Mlp>>(std::move(layers), std::move(mlp), operands, std::move(info),
                                            config_.threads, std::move(separate));
  }

  // The row names why a case left the tile route, if it did.
  KernelInfo describeKernel(const CompiledKernel& kernel, const RouteChoice& route, DType c_dtype) const {
    KernelInfo info = describe(kernel, route.schedule, config_.isa, target(), c_dtype);
    info.schedule_source = route.source;
    if (!route.reason.empty()) info.implementation += "; " + route.reason;
    return info;
  }

  std::unique_ptr<Kernel> prepareBrgemm(const Problem& problem, const RouteChoice& route, const Operands& operands,
                                        const SharedVnniB& shared_b = {}) {
    if (route.schedule.bInVnniPairs()) {
      if (problem.c_dtype == DType::BF16) return makeBf16BrgemmKernel<BFloat16>(problem, route, operands, shared_b);
      return makeBf16BrgemmKernel<float>(problem, route, operands, shared_b);
    }
    auto compiled = compileCached(problem, route.schedule);
    KernelInfo info = describeKernel(*compiled, route, problem.c_dtype);
    if (route.schedule.nanokernel == NanokernelKind::Bf16F32AFma) {
      info.packing = "A -> f32";
      return std::make_unique<F32ABrgemmKernel>(compiled, problem, operands, std::move(info));
    }
    return std::make_unique<BrgemmKernel>(compiled, operands, std::move(info));
  }

  // bf16 BRGEMM on B in VNNI pairs (dot-product and tile routes): the kernel sees
  // the problem kernelProblemFor gives.
  template <class CElement>
  std::unique_ptr<Kernel> makeBf16BrgemmKernel(const Problem& problem, const RouteChoice& route,
                                               const Operands& operands, const SharedVnniB& shared_b) {
    const Problem pairs = mlir_backend::kernelProblemFor(problem, route.schedule, caches_);
    auto compiled = compileCached(pairs, route.schedule);
    KernelInfo info = describeKernel(*compiled, route, problem.c_dtype);
    const std::string a_padding = pairs.k == problem.k       ? ""
                                  : pairs.k == problem.k + 1 ? ", A -> even K"
                                                             : fmt::format(", A and B -> K padded to {}", pairs.k);
    const std::int64_t b_columns = mlir_backend::vnniBColumns(pairs, route.schedule);
    info.packing = fmt::format("B -> VNNI pairs{}{}", a_padding,
                               b_columns != problem.n ? fmt::format(", rows padded to {} columns", b_columns) : "");
    return std::make_unique<Bf16BrgemmKernel<CElement>>(compiled, problem, pairs, b_columns, operands,
                                                        std::move(info), shared_b);
  }

  // GEMM over blocks: plain (f32, or bf16 for the widening kernels) or with B in
  // VNNI pairs; a kernel for each block shape, each composed of nanokernels.
  template <class Gemm>
  std::unique_ptr<Kernel> makeGemmKernel(Gemm gemm, const RouteChoice& route, const Operands& operands) {
    const std::vector<BlockShape> shapes = gemm.blockShapes();
    typename GemmKernel<Gemm>::ShapeKernels kernels;
    for (const BlockShape shape : shapes)
      kernels[std::size_t(shape)] = compileCached(gemm.blockProblem(shape), route.schedule);
    const Problem first = gemm.blockProblem(shapes.front());
    KernelInfo info = describeKernel(*kernels[std::size_t(shapes.front())], route, first.c_dtype);
    std::vector<const CompiledKernel*> compiled;
    for (const BlockShape shape : shapes) compiled.push_back(kernels[std::size_t(shape)].get());
    info.kernel_cache = kernelCacheUseOf(compiled);
    const GemmBlocking& b = gemm.blocking();
    info.packing = route.schedule.bInVnniPairs()
                       ? fmt::format("A -> {0}x{2} blocks, B -> {2}x{1} VNNI blocks, brgemm batch {3}", b.bm, b.bn,
                                     b.bk, gemm.kBlocks())
                       : fmt::format("A,B -> {}x{}x{} blocks, brgemm batch {}", b.bm, b.bn, b.bk, gemm.kBlocks());
    if (route.schedule.nanokernel == NanokernelKind::Bf16F32AFma) info.packing.insert(0, "A -> f32, ");
    info.packing += gemm.edgeBlocksText();
    return std::make_unique<GemmKernel<Gemm>>(std::move(kernels), shapes.front(), std::move(gemm), operands,
                                              std::move(info), config_.threads);
  }

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
  CacheSizes caches_;  // the host's: they size the GEMM blocks and the kernels' batch chunks
  mlir_backend::MlirCompiler compiler_;
  std::map<std::string, std::shared_ptr<CompiledKernel>> cache_;
  mlir_backend::TunedSchedules tuned_;
  std::optional<mlir_backend::Schedule> named_schedule_;  // --schedule, where one is given
};

}  // namespace

std::unique_ptr<Backend> makeMlirBackend(const BackendConfig& config) {
  return std::make_unique<MlirBackend>(config, Lowering::Nanokernel);
}
std::unique_ptr<Backend> makeMlirDefaultBackend(const BackendConfig& config) {
  return std::make_unique<MlirBackend>(config, Lowering::GenericVector);
}

}  // namespace nkbench

#include "kernels/mlir/mlir_compiler.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "harness/core/error.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/amx/tile_emulator.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/dialect_registry.h"
#include "kernels/mlir/jit/build_id.h"
#include "kernels/mlir/jit/kernel_cache.h"
#include "kernels/mlir/jit/kernel_jit.h"
#include "kernels/mlir/jit/llvm_middle_end.h"
#include "kernels/mlir/jit/object_emitter.h"
#include "kernels/mlir/lowering/bf16_rounding.h"
#include "kernels/mlir/lowering/to_llvm.h"
#include "kernels/mlir/vector/buffer_rewrites/batch_prefetch.h"
#include "kernels/mlir/vector/buffer_rewrites/fused_epilogue.h"
#include "kernels/mlir/vector/buffer_rewrites/rounded_c_stores.h"
#include "kernels/mlir/vector/buffer_rewrites/reads_ahead.h"
#include "kernels/mlir/vector/buffer_rewrites/row_fills.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "kernels/mlir/vector/register_block_plan.h"
#include "kernels/mlir/vector/rewrites/edge_masks.h"
#include "kernels/mlir/vector/rewrites/merged_writes.h"
#include "kernels/mlir/vector/rewrites/zero_fills.h"
#include "kernels/mlir/vector/schedule_cleanups.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

// After the schedule: bufferize. The partial sums of a reduction split (a few KiB)
// live on the stack, not the heap. The canonicalize after CSE removes a self-copy
// (memref.copy %x, %x) that bufferization leaves; one before CSE changed no
// kernel's machine code and cost a sixth of the pipeline. Region simplification
// finds nothing in a kernel of structured loops; it cost a tenth.
constexpr const char* kBufferizePipeline =
    "one-shot-bufferize,func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=65536}),"
    "cse,canonicalize{region-simplify=disabled}";

// Then to the LLVM dialect: lowering/to_llvm.h (kToLlvmPipeline).

void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
    registerEdgeMaskPass();
    registerToLlvmPasses();
    registerZeroFillsPass();
  });
}

// ISA levels above the cap, as LLVM target features to switch off.
std::vector<std::string> featuresAboveCap(Isa isa) {
  switch (isa) {
    case Isa::Avx2: return {"-avx512f"};
    case Isa::Avx512: return {"-avx512bf16", "-amx-tile"};
    case Isa::Avx512Bf16:
    case Isa::AmxEmulated: return {"-amx-tile"};
    case Isa::Amx: return {};
  }
  return {};
}

// What each ISA level needs of a target CPU, as LLVM features.
std::vector<std::string> featuresOfLevel(Isa isa) {
  switch (isa) {
    case Isa::Avx2: return {"avx2", "fma"};
    case Isa::Avx512: return {"avx512f", "avx512bw", "avx512dq", "avx512vl"};
    case Isa::Avx512Bf16: return {"avx512bf16"};
    case Isa::AmxEmulated: return {};
    case Isa::Amx: return {"amx-tile", "amx-bf16"};
  }
  return {};
}

// The host's triple with a CPU named by the user, which LLVM must know.
llvm::orc::JITTargetMachineBuilder namedCpuTarget(const std::string& cpu) {
  const llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) throw Error("mlir: no LLVM target for " + triple.str() + ": " + error);
  // Asked of a generic subtarget: one made for an unknown CPU complains on stderr.
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  if (!info || !info->isCPUStringValid(cpu))
    throw Error(fmt::format("--target-cpu {}: not a CPU LLVM knows (e.g. sapphirerapids, znver4, haswell)", cpu));
  llvm::orc::JITTargetMachineBuilder builder(triple);
  builder.setCPU(cpu);
  return builder;
}

std::string printOp(mlir::Operation* op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

// Intrinsic calls count as "llvm.call_intrinsic:NAME"; calls count as themselves
// and again as "OP:@CALLEE".
OpCounts countOps(mlir::Operation* root) {
  OpCounts counts;
  root->walk([&](mlir::Operation* op) {
    std::string name = op->getName().getStringRef().str();
    if (auto intrinsic = op->getAttrOfType<mlir::StringAttr>("intrin")) {
      name += ':';
      name += intrinsic.getValue().str();
    }
    if (auto callee = op->getAttrOfType<mlir::FlatSymbolRefAttr>("callee"))
      ++counts[name + ":@" + callee.getValue().str()];
    ++counts[name];
  });
  return counts;
}

// The functions a tile kernel calls: the configuration switch, and the emulator's instructions.
HostSymbols tileSymbols(TileMachine machine) {
  HostSymbols symbols;
  if (machine == TileMachine::Emulated) symbols = emulatedTileFunctions();
  symbols.emplace_back(kAmxUseTileConfig, reinterpret_cast<void*>(useTileConfigEntry(machine)));
  return symbols;
}

// Wall time of stages, lap by lap.
class StageClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The pipelines do not verify after each pass (runPipeline): a pass that broke
// the IR is caught here, once, before LLVM translates it.
template <typename FailureReporter>
void verifyLowered(mlir::ModuleOp module, const FailureReporter& fail) {
  if (mlir::failed(mlir::verify(module))) throw fail("verifying the lowered kernel");
}

constexpr std::uint64_t kKernelAlignmentBytes = 64;

// The LLVM dialect as an optimized LLVM module for `machine`.
std::unique_ptr<llvm::Module> optimizedModule(mlir::ModuleOp module, llvm::LLVMContext& context,
                                              llvm::TargetMachine& machine, LlvmMiddleEnd middle_end,
                                              CompileTimes& times) {
  StageClock clock;
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(module, context);
  if (!llvm_module) throw Error("mlir: cannot translate the kernel to LLVM IR");
  llvm_module->setDataLayout(machine.createDataLayout());
  llvm_module->setTargetTriple(machine.getTargetTriple());
  times.translate += clock.lap();
  optimizeKernelModule(*llvm_module, machine, middle_end);
  // Kernels start on a cache line: the JIT packs each object's code after what
  // it linked before, so that at the default 16 bytes the hot loops' place in
  // their cache lines changed with the kernels a process had compiled before
  // (64x64x64 b16 on the Zen 5 VM: 0.78x or 0.96x libxsmm from run to run).
  for (llvm::Function& function : *llvm_module)
    if (!function.isDeclaration()) function.setAlignment(llvm::Align(kKernelAlignmentBytes));
  times.optimize += clock.lap();
  return llvm_module;
}

// Whether every transfer's leading unit dimensions, those the cast-away rewrite
// drops (all but the last dimension), are in bounds.
bool leadingUnitDimsInBounds(mlir::ModuleOp module) {
  const mlir::WalkResult walk = module.walk([](mlir::VectorTransferOpInterface transfer) {
    const mlir::VectorType type = transfer.getVectorType();
    for (std::int64_t d = 0; d + 1 < type.getRank() && type.getDimSize(d) == 1; ++d)
      if (!transfer.isDimInBounds(static_cast<unsigned>(d))) return mlir::WalkResult::interrupt();
    return mlir::WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

// Machine code of `module` as assembly text (`show`; kernels run ObjectEmitter's objects).
std::string emitAssembly(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallString<0> code;
  llvm::raw_svector_ostream os(code);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("mlir: the target cannot emit assembly");
  passes.run(module);
  return std::string(code);
}

// What a cached kernel needs beside its code, as the entry's metadata.
std::string metadataOf(const NanokernelEvidence& evidence, const std::string& blocks,
                       const std::optional<TileCalls>& tiles) {
  nlohmann::json json = {{"composed", evidence.composed}, {"summary", evidence.summary}, {"register_blocks", blocks}};
  if (tiles)
    json["tiles"] = {{"machine", tiles->machine == TileMachine::Emulated ? "emulated" : "real"},
                     {"palette", llvm::toHex(tiles->entry_palette.bytes, true)}};
  return json.dump();
}

struct CachedMetadata {
  NanokernelEvidence evidence;
  std::string blocks;
  std::optional<TileCalls> tiles;
};

// nullopt when the metadata does not read back (an entry of a format this build does not know).
std::optional<CachedMetadata> readMetadata(const std::string& text) {
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    CachedMetadata metadata;
    metadata.evidence = {json.at("composed").get<bool>(), json.at("summary").get<std::string>()};
    metadata.blocks = json.at("register_blocks").get<std::string>();
    if (const auto tiles = json.find("tiles"); tiles != json.end()) {
      TileCalls calls;
      calls.machine = tiles->at("machine").get<std::string>() == "emulated" ? TileMachine::Emulated : TileMachine::Real;
      const std::string palette = llvm::fromHex(tiles->at("palette").get<std::string>());
      if (palette.size() != TilePalette::kBytes) return std::nullopt;
      std::copy(palette.begin(), palette.end(), calls.entry_palette.bytes.begin());
      metadata.tiles = calls;
    }
    return metadata;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

class JitKernel final : public CompiledKernel {
 public:
  JitKernel(std::unique_ptr<LoadedKernel> code, NanokernelEvidence evidence, std::string blocks,
            std::optional<TileCalls> tiles, CompileTimes times, KernelCacheUse cache_use)
      : code_(std::move(code)), evidence_(std::move(evidence)), blocks_(std::move(blocks)), tiles_(std::move(tiles)),
        times_(times), cache_use_(cache_use) {}
  KernelFunction function() const override { return reinterpret_cast<KernelFunction>(code_->entry()); }
  BiasKernelFunction biasFunction() const override { return reinterpret_cast<BiasKernelFunction>(code_->entry()); }
  const std::optional<TileCalls>& tileCalls() const override { return tiles_; }
  const NanokernelEvidence& evidence() const override { return evidence_; }
  const std::string& registerBlocks() const override { return blocks_; }
  const CompileTimes& times() const override { return times_; }
  KernelCacheUse cacheUse() const override { return cache_use_; }

 private:
  std::unique_ptr<LoadedKernel> code_;
  NanokernelEvidence evidence_;
  std::string blocks_;
  std::optional<TileCalls> tiles_;
  CompileTimes times_;
  KernelCacheUse cache_use_;
};

}  // namespace

namespace {
// The first feature of `level` that `machine`'s CPU lacks, or nullopt.
std::optional<std::string> missingFeature(const llvm::TargetMachine& machine, Isa level) {
  for (const std::string& feature : featuresOfLevel(level))
    if (!machine.getMCSubtargetInfo()->checkFeatures("+" + feature)) return feature;
  return std::nullopt;
}

constexpr Isa kHardwareLevels[] = {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::Amx};
}  // namespace

Isa bestIsaOfCpu(const std::string& cpu) {
  initializeOnce();
  auto machine = namedCpuTarget(cpu).createTargetMachine();
  if (!machine) throw Error("mlir: cannot create the target machine: " + llvm::toString(machine.takeError()));
  std::optional<Isa> best;
  for (Isa level : kHardwareLevels) {
    if (missingFeature(**machine, level)) break;  // each level builds on the one below
    best = level;
  }
  if (!best) throw Error(fmt::format("target CPU {} lacks AVX2 and FMA, which every ISA level needs", cpu));
  return *best;
}

struct MlirCompiler::Impl {
  Impl(Isa cap, const CacheSizes& host_caches, const std::string& target_cpu, const std::string& kernel_cache)
      : isa(cap), caches(host_caches), host_target(target_cpu.empty()), cache(kernel_cache) {
    initializeOnce();
    mlir::DialectRegistry registry;
    registerKernelDialects(registry);
    context.appendDialectRegistry(registry);
    // Dialects load as the payload and the passes need them: canonicalization
    // gathers the patterns of every loaded dialect, each time it runs.
    context.disableMultithreading();
    if (host_target) {
      auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
      if (!host) throw Error("mlir: cannot detect the host target: " + llvm::toString(host.takeError()));
      target = std::move(*host);
    } else {
      target = namedCpuTarget(target_cpu);
      requireLevels(target_cpu);
    }
    target.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    for (const std::string& feature : featuresAboveCap(isa)) target.getFeatures().AddFeature(feature);
    code_generator = targetMachine();
    // Features the cap disables take the ones that build on them along (avx512bf16 with avx512f).
    native_bf16_rounding = code_generator->getMCSubtargetInfo()->checkFeatures("+avx512bf16");
    object_emitter = std::make_unique<ObjectEmitter>(*code_generator);
    // Code is only run for the host: a compiler for a named CPU makes no JIT.
    if (host_target) jit = std::make_unique<KernelJit>(target);
  }

  std::unique_ptr<llvm::TargetMachine> targetMachine() {
    auto machine = target.createTargetMachine();
    if (!machine) throw Error("mlir: cannot create the target machine: " + llvm::toString(machine.takeError()));
    return std::move(*machine);
  }

  // A named CPU must have every level up to the cap (the host was checked by resolveIsa).
  void requireLevels(const std::string& cpu) {
    const std::unique_ptr<llvm::TargetMachine> machine = targetMachine();
    for (Isa level : kHardwareLevels) {
      if (level > isa) break;
      if (auto feature = missingFeature(*machine, level))
        throw Error(fmt::format("target CPU {} lacks {}, which --isa {} needs", cpu, *feature, toString(isa)));
    }
  }

  Isa isa;
  CacheSizes caches;
  bool host_target;
  KernelCache cache;
  mlir::MLIRContext context;
  llvm::orc::JITTargetMachineBuilder target{llvm::Triple()};
  std::unique_ptr<llvm::TargetMachine> code_generator;  // one kernel at a time
  std::unique_ptr<ObjectEmitter> object_emitter;        // its object code
  std::unique_ptr<KernelJit> jit;
  std::map<std::string, std::unique_ptr<mlir::PassManager>> pipelines;  // by pipeline text
  ScheduleCleanupRunner cleanups{context};

  // Built once per compiler: freezing a pattern set cost a third of applying it.
  const mlir::FrozenRewritePatternSet& frozenOnce(std::optional<mlir::FrozenRewritePatternSet>& set,
                                                  llvm::function_ref<void(mlir::RewritePatternSet&)> populate) {
    if (!set) {
      mlir::RewritePatternSet patterns(&context);
      populate(patterns);
      set.emplace(std::move(patterns));
    }
    return *set;
  }
  const mlir::FrozenRewritePatternSet& flattenTransfers() {
    return frozenOnce(flatten_transfers, [](mlir::RewritePatternSet& patterns) {
      constexpr unsigned kZmmBits = 512;
      mlir::vector::populateFlattenVectorTransferPatterns(patterns, kZmmBits);
    });
  }
  const mlir::FrozenRewritePatternSet& castAwayLeadingUnitDims() {
    return frozenOnce(cast_away, [this](mlir::RewritePatternSet& patterns) {
      mlir::vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      mlir::vector::ShapeCastOp::getCanonicalizationPatterns(patterns, &context);
      mlir::vector::BroadcastOp::getCanonicalizationPatterns(patterns, &context);
    });
  }
  std::optional<mlir::FrozenRewritePatternSet> flatten_transfers;
  std::optional<mlir::FrozenRewritePatternSet> cast_away;
  // LLVM rounds f32 to bf16 with vcvtneps2bf16: to nearest even as toBFloat16
  // does, except that denormal inputs and results become zero (as in vdpbf16ps).
  bool native_bf16_rounding = false;
};

// A kernel as text, before MLIR parses it: the payload and its transform
// script (vector routes), or the tile payload, with what they were made from.
struct MlirCompiler::Source {
  bool amx = false;
  RegisterBlockPlan plan;            // vector routes
  std::vector<TileRegion> regions;   // the tile route
  bool emulated_tiles = false;
  std::string payload;
  TransformSchedule schedule;  // empty on the tile route
  Lowering lowering = Lowering::Nanokernel;

  // The clean-up for the vector nanokernels, -O3 for the rest (llvm_middle_end.h).
  LlvmMiddleEnd middleEnd() const {
    return lowering == Lowering::Nanokernel && !amx ? LlvmMiddleEnd::Cleanup : LlvmMiddleEnd::O3;
  }
};

// A kernel lowered to the LLVM dialect, with the op counts that prove its nanokernels.
struct MlirCompiler::Lowered {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  NanokernelEvidence evidence;
  std::string register_blocks;
  std::optional<TileCalls> tiles;
};

const char* toString(KernelCacheUse use) {
  switch (use) {
    case KernelCacheUse::Off: return "off";
    case KernelCacheUse::Miss: return "miss";
    case KernelCacheUse::Hit: return "hit";
    case KernelCacheUse::Unstored: return "unstored";
  }
  return "off";
}

MlirCompiler::MlirCompiler(Isa isa, const CacheSizes& caches, const std::string& target_cpu,
                           const std::string& kernel_cache)
    : impl_(std::make_unique<Impl>(isa, caches, target_cpu, kernel_cache)) {}
MlirCompiler::~MlirCompiler() = default;

std::string MlirCompiler::targetDescription() const {
  std::string features;
  for (const std::string& feature : featuresAboveCap(impl_->isa)) features += " " + feature;
  return impl_->target.getCPU() + features;
}

MlirCompiler::Source MlirCompiler::generateSource(const Problem& p, const Schedule& schedule, Lowering lowering) {
  Source source;
  source.lowering = lowering;
  if (schedule.nanokernel == NanokernelKind::AmxTile) {
    if (auto reason = amxTileUnsupported(p)) throw Error(*reason);
    source.amx = true;
    source.regions = planTileRegions(p, schedule.block_m, schedule.block_n);
    source.emulated_tiles = impl_->isa == Isa::AmxEmulated;
    const AmxPayloadOptions options{
        .tile_ops = source.emulated_tiles ? AmxTileOps::EmulatorCalls : AmxTileOps::Intrinsics,
        .prefetch_next_batch_entry =
            schedule.prefetch_distance != 0 && amxPrefetchesNextBatchEntry(p, impl_->caches.l1d_bytes)};
    source.payload = buildAmxPayload(p, source.regions, options);
    return source;
  }
  source.plan = planRegisterBlocks(p, schedule, impl_->caches);
  source.payload = buildPayload(p, source.plan);
  source.schedule = buildTransformSchedule(p, source.plan, lowering);
  return source;
}

// Everything that decides the machine code: the texts MLIR compiles, and what
// the compiler does to them beyond the texts. An option that changes the code
// and is not in the texts must be added here.
std::string MlirCompiler::cacheKey(const Source& source, const Problem& p, const Schedule& schedule) const {
  const llvm::orc::JITTargetMachineBuilder& target = impl_->target;
  return kernelCacheKey({
      {"entry format", "1"},
      {"nkbench", NKBENCH_VERSION},
      {"executable and compiler libraries", compilerBuildId()},
      {"llvm", LLVM_VERSION_STRING},
      {"triple", target.getTargetTriple().str()},
      {"cpu", target.getCPU()},
      {"features", target.getFeatures().getString()},
      {"isa cap", std::string(nkbench::toString(impl_->isa))},
      {"lowering", source.lowering == Lowering::Nanokernel ? "nanokernel" : "generic"},
      {"schedule", schedule.name},
      {"problem", p.describe()},
      {"payload", source.payload},
      {"transform script", source.schedule.script},
      {"batch prefetch distance", std::to_string(source.amx ? 0 : source.plan.prefetch_distance)},
      {"batch prefetch of B, K steps ahead of vector FMAs", std::to_string(source.amx ? 0 : source.plan.prefetch_ahead_fmas)},
      {"batch prefetch of B, first band only", source.plan.chunk_fits_l2 ? "where bands repeat" : "no"},
      {"bufferize", kBufferizePipeline},
      {"to llvm", kToLlvmPipeline},
      {"flatten bf16 transfers", "512 bits"},
      {"leading unit dims", "cast away before lowering"},
      {"native bf16 rounding", impl_->native_bf16_rounding ? "yes" : "no"},
      {"llvm optimization", std::string(describe(source.middleEnd())) + ", code generation aggressive"},
      {"function alignment", std::to_string(kKernelAlignmentBytes)},
      {"function", kKernelFunction},
  });
}

MlirCompiler::Lowered MlirCompiler::lower(const Source& source, const Problem& p, CompilationStages* stages,
                                          CompileTimes& times) {
  mlir::MLIRContext& context = impl_->context;

  // First error wins: it names the real culprit, later ones are consequences.
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& diag) {
    if (diagnostic.empty() && diag.getSeverity() == mlir::DiagnosticSeverity::Error) diagnostic = diag.str();
    return mlir::success();
  });
  const FailureReporter fail = [&](const std::string& stage) {
    return Error(fmt::format("mlir: {} failed for {}: {}", stage, p.describe(),
                             diagnostic.empty() ? "no diagnostic" : diagnostic));
  };

  if (source.amx) return lowerAmx(source, p, stages, fail, times);
  const RegisterBlockPlan& plan = source.plan;
  if (stages) {
    stages->payload = source.payload;
    stages->transform_script = source.schedule.script;
  }
  StageClock clock;
  Lowered result;
  result.module =
      mlir::parseSourceString<mlir::ModuleOp>("module {\n" + source.payload + source.schedule.script + "}\n", &context);
  mlir::OwningOpRef<mlir::ModuleOp>& module = result.module;
  if (!module) throw fail("parsing the payload");
  times.parse += clock.lap();

  for (const TransformSchedule::Step& step : source.schedule.steps) {
    runPipeline(*module, "transform-interpreter{entry-point=" + step.sequence + "}",
                "the transform schedule (@" + step.sequence + ")", fail);
    if (mlir::failed(impl_->cleanups.apply(*module, step.cleanup)))
      throw fail("the clean-up after @" + step.sequence + " (" + step.cleanup.describe() + ")");
  }
  // The schedule has been applied: drop it before lowering the payload.
  for (auto nested : llvm::make_early_inc_range(module->getBody()->getOps<mlir::ModuleOp>()))
    if (nested->hasAttr("transform.with_named_sequence")) nested->erase();
  const OpCounts scheduled = countOps(*module);
  if (stages) stages->scheduled = printOp(*module);
  times.schedule += clock.lap();

  mergeCoveringWriteChains(*module);
  runPipeline(*module, kBufferizePipeline, "bufferization", fail);
  splitMergedWrites(*module);
  insertBatchPrefetches(*module, {.distance = plan.prefetch_distance,
                                  .later_passes_hit_cache = plan.chunk_fits_l2,
                                  .ahead_fmas = plan.prefetch_ahead_fmas});
  const FusedEpilogue epilogue = fuseEpilogue(*module, p.mlp);
  const RoundedCStores rounding =
      roundCAtItsStores(*module, {.one_pass = plan.batch_chunk == 0 && plan.split.ways == 1,
                                  .native_rounding = impl_->native_bf16_rounding});
  rollWholeBufferFills(*module);
  moveReadsAheadOfMissedWrites(*module);
  times.bufferize += clock.lap();
  // bf16: the VNNI load of B is an n-D transfer that would otherwise be scalarised
  // into one load per pair; flattened, it is one vector load. Only transfers whose
  // rows are at most one zmm are flattened: an n-D fill that covers less than a
  // whole buffer (row_fills.h rolls the others) stays a transfer per row, where
  // one flat vector of its elements could be beyond what LLVM's code generator splits.
  // One walk, no fixpoint: the flattened transfers are what the kernels need; the
  // unit-dim patterns that come with them may leave shape_casts, which the lowering folds.
  if (plan.nanokernel == NanokernelKind::Bf16Dot) mlir::walkAndApplyPatterns(*module, impl_->flattenTransfers());
  expandBf16RoundingIfNeeded(*module, p, fail);
  // A register block's rows (vector<1x16>) and its operands' broadcast elements
  // (vector<1x1x1>) are n-D transfers, which the lowering's vector-to-scf step
  // unrolls and its conversion carries as LLVM arrays. As 1-D transfers (a broadcast
  // or extract beside each, which the shape casts around the nanokernels fold
  // away) the lowering cost a tenth less, for the same machine code. One walk:
  // the ops it creates are what the lowering handles anyway.
  // Upstream's rewrite keeps only the remaining dimensions' in_bounds: a transfer
  // out of bounds in a dimension it drops would lose its bounds check, so such a
  // kernel keeps its n-D transfers.
  if (leadingUnitDimsInBounds(*module)) mlir::walkAndApplyPatterns(*module, impl_->castAwayLeadingUnitDims());
  runPipeline(*module, kToLlvmPipeline, "lowering to LLVM", fail);
  verifyLowered(*module, fail);
  const OpCounts lowered = countOps(*module);
  // A kernel calls nothing: a call would be a heap allocation on every invocation.
  if (lowered.count("llvm.call")) throw Error("mlir: the kernel for " + p.describe() + " allocates memory per call");
  if (stages) stages->llvm_dialect = printOp(*module);
  result.evidence = checkNanokernels(source.lowering, plan, scheduled, lowered);
  if (p.hasEpilogue()) {
    // A read of C after its fused stores would be a second pass over it.
    result.evidence.composed = result.evidence.composed && epilogue.reads_after == 0;
    result.evidence.summary += "; " + epilogue.summary();
  }
  if (rounding.bf16_c) result.evidence.summary += "; " + rounding.summary();
  result.register_blocks = describeRegisterBlocks(plan);
  times.lower += clock.lap();
  return result;
}

// No schedule to apply: the payload holds the tile loops as they run.
MlirCompiler::Lowered MlirCompiler::lowerAmx(const Source& source, const Problem& p, CompilationStages* stages,
                                             const FailureReporter& fail, CompileTimes& times) {
  if (stages) {
    stages->payload = source.payload;
    stages->transform_script = "// none: the payload holds the tile loops as they run\n";
  }
  StageClock clock;
  Lowered result;
  result.module = mlir::parseSourceString<mlir::ModuleOp>("module {\n" + source.payload + "}\n", &impl_->context);
  if (!result.module) throw fail("parsing the amx payload");
  times.parse += clock.lap();
  const OpCounts payload_ops = countOps(*result.module);
  if (stages) stages->scheduled = printOp(*result.module);
  expandBf16RoundingIfNeeded(*result.module, p, fail);
  runPipeline(*result.module, kToLlvmPipeline, "lowering the amx payload to LLVM", fail);
  verifyLowered(*result.module, fail);
  const OpCounts lowered = countOps(*result.module);
  if (stages) stages->llvm_dialect = printOp(*result.module);
  std::int64_t tile_products = 0;
  for (const TileRegion& region : source.regions) tile_products += region.tiles();
  result.evidence = source.emulated_tiles ? checkEmulatedAmxTiles(tile_products, payload_ops, lowered)
                                          : checkAmxTiles(tile_products, payload_ops, lowered);
  if (p.hasEpilogue()) {
    const NanokernelEvidence epilogue =
        checkAmxEpilogue(p.mlp, static_cast<std::int64_t>(source.regions.size()), payload_ops);
    result.evidence.composed = result.evidence.composed && epilogue.composed;
    result.evidence.summary += "; " + epilogue.summary;
  }
  result.register_blocks = describeTileBlocks(source.regions);
  result.tiles = TileCalls{.machine = source.emulated_tiles ? TileMachine::Emulated : TileMachine::Real,
                           .entry_palette = groupTileRegions(source.regions).front().palette};
  times.lower += clock.lap();
  return result;
}

// Rounding to bf16 without avx512-bf16: integer arithmetic (lowering/bf16_rounding.h).
void MlirCompiler::expandBf16RoundingIfNeeded(mlir::ModuleOp module, const Problem& p, const FailureReporter& fail) {
  if (p.c_dtype != DType::BF16 || impl_->native_bf16_rounding) return;
  mlir::RewritePatternSet patterns(&impl_->context);
  populateBf16RoundingPatterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns)))) throw fail("expanding the bf16 rounding");
}

void MlirCompiler::runPipeline(mlir::ModuleOp module, const std::string& pipeline, const std::string& stage,
                               const FailureReporter& fail) {
  // Parsed and initialized once per compiler: a pass's initialization (the
  // canonicalizer gathers every loaded dialect's patterns) then serves every kernel.
  std::unique_ptr<mlir::PassManager>& pm = impl_->pipelines[pipeline];
  if (!pm) {
    pm = std::make_unique<mlir::PassManager>(&impl_->context);
    // Verifying the module after every pass cost a tenth of a kernel's compile
    // time: the lowered module is verified once instead (verifyLowered).
    pm->enableVerifier(false);
    if (mlir::failed(mlir::parsePassPipeline(pipeline, *pm))) {
      pm.reset();
      throw fail(stage);
    }
  }
  if (mlir::failed(pm->run(module))) throw fail(stage);
}

std::unique_ptr<CompiledKernel> MlirCompiler::compile(const Problem& p, const Schedule& schedule, Lowering lowering,
                                                      CompilationStages* stages) {
  if (!impl_->host_target) throw Error("mlir: a compiler for a named target CPU does not run kernels");
  CompileTimes times;
  StageClock clock;
  const Source source = generateSource(p, schedule, lowering);
  times.generate = clock.lap();

  const KernelCache& cache = impl_->cache;
  const std::string key = cache.enabled() ? cacheKey(source, p, schedule) : "";
  if (cache.enabled() && !stages)
    if (std::optional<KernelCacheEntry> entry = cache.find(key))
      if (std::optional<CachedMetadata> metadata = readMetadata(entry->metadata)) {
        times.cache = clock.lap();
        auto code = impl_->jit->load(entry->object, metadata->tiles ? tileSymbols(metadata->tiles->machine) : HostSymbols{},
                                     kKernelFunction);
        times.link = clock.lap();
        return std::make_unique<JitKernel>(std::move(code), std::move(metadata->evidence), std::move(metadata->blocks),
                                           std::move(metadata->tiles), times, KernelCacheUse::Hit);
      }
  times.cache = clock.lap();

  Lowered lowered = lower(source, p, stages, times);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> module =
      optimizedModule(*lowered.module, llvm_context, *impl_->code_generator, source.middleEnd(), times);
  clock.lap();
  if (stages) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*module);
    stages->assembly = emitAssembly(*copy, *impl_->code_generator);
  }
  const std::string object = impl_->object_emitter->emit(*module);
  times.codegen = clock.lap();
  KernelCacheUse use = KernelCacheUse::Off;
  if (cache.enabled())
    use = cache.store(key, {metadataOf(lowered.evidence, lowered.register_blocks, lowered.tiles), object})
              ? KernelCacheUse::Miss
              : KernelCacheUse::Unstored;
  times.cache += clock.lap();
  auto code = impl_->jit->load(object, lowered.tiles ? tileSymbols(lowered.tiles->machine) : HostSymbols{},
                               kKernelFunction);
  times.link = clock.lap();
  if (stages) stages->times = times;
  return std::make_unique<JitKernel>(std::move(code), std::move(lowered.evidence), std::move(lowered.register_blocks),
                                     std::move(lowered.tiles), times, use);
}

CompilationStages MlirCompiler::generate(const Problem& p, const Schedule& schedule, Lowering lowering) {
  CompilationStages stages;
  StageClock clock;
  const Source source = generateSource(p, schedule, lowering);
  stages.times.generate = clock.lap();
  Lowered lowered = lower(source, p, &stages, stages.times);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> module =
      optimizedModule(*lowered.module, llvm_context, *impl_->code_generator, source.middleEnd(), stages.times);
  clock.lap();
  stages.assembly = emitAssembly(*module, *impl_->code_generator);
  stages.times.codegen = clock.lap();
  return stages;
}

}  // namespace nkbench::mlir_backend

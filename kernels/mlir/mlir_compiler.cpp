#include "kernels/mlir/mlir_compiler.h"

#include <fmt/format.h>

#include <chrono>
#include <mutex>

#include "harness/core/error.h"
#include "kernels/mlir/amx/amx_payload_ir.h"
#include "kernels/mlir/amx/tile_emulator.h"
#include "kernels/mlir/amx/tile_state.h"
#include "kernels/mlir/vector/payload_ir.h"
#include "kernels/mlir/vector/register_block_plan.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nkbench::mlir_backend {
namespace {

// After the schedule: bufferize. The partial sums of a reduction split (a few KiB)
// live on the stack, not the heap. The trailing canonicalize removes a self-copy
// (memref.copy %x, %x) that bufferization leaves.
constexpr const char* kBufferizePipeline =
    "one-shot-bufferize,func.func(promote-buffers-to-stack{max-alloc-size-in-bytes=65536}),"
    "canonicalize,cse,canonicalize";

// Then lower everything to the LLVM dialect: full-unroll keeps n-D transfers out
// of stack buffers; enable-x86vector lowers x86vector ops instead of leaving them
// behind; the bare-pointer convention makes the kernel a C function of three pointers.
constexpr const char* kToLlvmPipeline =
    "convert-vector-to-scf{full-unroll=true},convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "convert-vector-to-llvm{enable-x86vector=true},finalize-memref-to-llvm,convert-math-to-llvm,"
    "convert-arith-to-llvm,convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},convert-cf-to-llvm,"
    "convert-ub-to-llvm,reconcile-unrealized-casts";

void initializeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
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
void registerTileFunctions(mlir::ExecutionEngine& engine, TileMachine machine) {
  std::vector<std::pair<std::string, void*>> functions;
  if (machine == TileMachine::Emulated) functions = emulatedTileFunctions();
  functions.emplace_back(kAmxUseTileConfig, reinterpret_cast<void*>(useTileConfigEntry(machine)));
  engine.registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const auto& [name, address] : functions)
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    return symbols;
  });
}

// The kernel's host code after LLVM's optimizations, as assembly.
std::string emitAssembly(mlir::ModuleOp module, llvm::TargetMachine& machine,
                         const std::function<llvm::Error(llvm::Module*)>& optimize) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(module, context);
  if (!llvm_module) throw Error("mlir: cannot translate the kernel to LLVM IR");
  llvm_module->setDataLayout(machine.createDataLayout());
  llvm_module->setTargetTriple(machine.getTargetTriple());
  if (llvm::Error error = optimize(llvm_module.get()))
    throw Error("mlir: LLVM optimization failed: " + llvm::toString(std::move(error)));
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw Error("mlir: the target cannot emit assembly");
  passes.run(*llvm_module);
  return std::string(text);
}

class JitKernel final : public CompiledKernel {
 public:
  JitKernel(std::unique_ptr<mlir::ExecutionEngine> engine, KernelFunction fn, NanokernelEvidence evidence,
            std::string blocks, std::optional<TileCalls> tiles, double compile_ms)
      : engine_(std::move(engine)), fn_(fn), evidence_(std::move(evidence)), blocks_(std::move(blocks)),
        tiles_(std::move(tiles)), compile_ms_(compile_ms) {}
  KernelFunction function() const override { return fn_; }
  const std::optional<TileCalls>& tileCalls() const override { return tiles_; }
  const NanokernelEvidence& evidence() const override { return evidence_; }
  const std::string& registerBlocks() const override { return blocks_; }
  double compileMs() const override { return compile_ms_; }

 private:
  std::unique_ptr<mlir::ExecutionEngine> engine_;
  KernelFunction fn_;
  NanokernelEvidence evidence_;
  std::string blocks_;
  std::optional<TileCalls> tiles_;
  double compile_ms_;
};

}  // namespace

struct MlirCompiler::Impl {
  Impl(Isa cap, const CacheSizes& host_caches, const std::string& target_cpu)
      : isa(cap), caches(host_caches), host_target(target_cpu.empty()) {
    initializeOnce();
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::registerAllExtensions(registry);
    mlir::registerAllToLLVMIRTranslations(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
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
    // Features the cap disables take the ones that build on them along (avx512bf16 with avx512f).
    native_bf16_rounding = targetMachine()->getMCSubtargetInfo()->checkFeatures("+avx512bf16");
  }

  std::unique_ptr<llvm::TargetMachine> targetMachine() {
    auto machine = target.createTargetMachine();
    if (!machine) throw Error("mlir: cannot create the target machine: " + llvm::toString(machine.takeError()));
    return std::move(*machine);
  }

  // A named CPU must have every level up to the cap (the host was checked by resolveIsa).
  void requireLevels(const std::string& cpu) {
    const std::unique_ptr<llvm::TargetMachine> machine = targetMachine();
    for (Isa level : {Isa::Avx2, Isa::Avx512, Isa::Avx512Bf16, Isa::Amx}) {
      if (level > isa) break;
      for (const std::string& feature : featuresOfLevel(level))
        if (!machine->getMCSubtargetInfo()->checkFeatures("+" + feature))
          throw Error(fmt::format("target CPU {} lacks {}, which --isa {} needs", cpu, feature, toString(isa)));
    }
  }

  Isa isa;
  CacheSizes caches;
  bool host_target;
  mlir::MLIRContext context;
  llvm::orc::JITTargetMachineBuilder target{llvm::Triple()};
  // LLVM rounds f32 to bf16 with vcvtneps2bf16: to nearest even as toBFloat16
  // does, except that denormal inputs and results become zero (as in vdpbf16ps).
  bool native_bf16_rounding = false;
};

// A kernel lowered to the LLVM dialect, with the op counts that prove its nanokernels.
struct MlirCompiler::Lowered {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  NanokernelEvidence evidence;
  std::string register_blocks;
  std::optional<TileCalls> tiles;
};

MlirCompiler::MlirCompiler(Isa isa, const CacheSizes& caches, const std::string& target_cpu)
    : impl_(std::make_unique<Impl>(isa, caches, target_cpu)) {}
MlirCompiler::~MlirCompiler() = default;

std::string MlirCompiler::targetDescription() const {
  std::string features;
  for (const std::string& feature : featuresAboveCap(impl_->isa)) features += " " + feature;
  return impl_->target.getCPU() + features;
}

MlirCompiler::Lowered MlirCompiler::lower(const Problem& p, const Schedule& schedule, Lowering lowering,
                                          CompilationStages* stages) {
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

  if (schedule.nanokernel == NanokernelKind::AmxTile) return lowerAmx(p, schedule, stages, fail);
  const RegisterBlockPlan plan = planRegisterBlocks(p, schedule, impl_->caches);
  const std::string payload = buildPayload(p, plan);
  const std::string script = buildTransformScript(p, plan, lowering);
  if (stages) {
    stages->payload = payload;
    stages->transform_script = script;
  }
  Lowered result;
  result.module = mlir::parseSourceString<mlir::ModuleOp>("module {\n" + payload + script + "}\n", &context);
  mlir::OwningOpRef<mlir::ModuleOp>& module = result.module;
  if (!module) throw fail("parsing the payload");

  mlir::PassManager schedule_pm(&context);
  if (mlir::failed(mlir::parsePassPipeline("transform-interpreter", schedule_pm)) ||
      mlir::failed(schedule_pm.run(*module)))
    throw fail("the transform schedule");
  // The schedule has been applied: drop it before lowering the payload.
  for (auto nested : llvm::make_early_inc_range(module->getBody()->getOps<mlir::ModuleOp>()))
    if (nested->hasAttr("transform.with_named_sequence")) nested->erase();
  const OpCounts scheduled = countOps(*module);
  if (stages) stages->scheduled = printOp(*module);

  runPipeline(*module, kBufferizePipeline, "bufferization", fail);
  // bf16: the VNNI load of B is an n-D transfer that would otherwise be scalarised
  // into one load per pair; flattened, it is one vector load. Only transfers whose
  // rows are at most one zmm are flattened: a whole-C fill (unfused when the batch
  // runs in chunks) stays a transfer per row, where one flat vector of M x N
  // elements would be beyond what LLVM's code generator can split.
  if (plan.nanokernel == NanokernelKind::Bf16Dot) {
    constexpr unsigned kZmmBits = 512;
    mlir::RewritePatternSet patterns(&context);
    mlir::vector::populateFlattenVectorTransferPatterns(patterns, kZmmBits);
    if (mlir::failed(mlir::applyPatternsGreedily(*module, std::move(patterns))))
      throw fail("flattening vector transfers");
  }
  expandBf16RoundingIfNeeded(*module, p, fail);
  runPipeline(*module, kToLlvmPipeline, "lowering to LLVM", fail);
  const OpCounts lowered = countOps(*module);
  // A kernel calls nothing: a call would be a heap allocation on every invocation.
  if (lowered.count("llvm.call")) throw Error("mlir: the kernel for " + p.describe() + " allocates memory per call");
  if (stages) stages->llvm_dialect = printOp(*module);
  result.evidence = checkNanokernels(lowering, plan, scheduled, lowered);
  result.register_blocks = describeRegisterBlocks(plan);
  return result;
}

// No schedule to apply: the payload holds the tile loops as they run.
MlirCompiler::Lowered MlirCompiler::lowerAmx(const Problem& p, const Schedule& schedule, CompilationStages* stages,
                                             const FailureReporter& fail) {
  if (auto reason = amxTileUnsupported(p)) throw Error(*reason);
  const std::vector<TileRegion> regions = planTileRegions(p, schedule.block_m, schedule.block_n);
  const bool emulated = impl_->isa == Isa::AmxEmulated;
  const AmxPayloadOptions options{
      .tile_ops = emulated ? AmxTileOps::EmulatorCalls : AmxTileOps::Intrinsics,
      .prefetch_next_batch_entry = schedule.prefetch && amxPrefetchesNextBatchEntry(p, impl_->caches.l1d_bytes)};
  const std::string payload = buildAmxPayload(p, regions, options);
  if (stages) {
    stages->payload = payload;
    stages->transform_script = "// none: the payload holds the tile loops as they run\n";
  }
  Lowered result;
  result.module = mlir::parseSourceString<mlir::ModuleOp>("module {\n" + payload + "}\n", &impl_->context);
  if (!result.module) throw fail("parsing the amx payload");
  const OpCounts payload_ops = countOps(*result.module);
  if (stages) stages->scheduled = printOp(*result.module);
  expandBf16RoundingIfNeeded(*result.module, p, fail);
  runPipeline(*result.module, kToLlvmPipeline, "lowering the amx payload to LLVM", fail);
  const OpCounts lowered = countOps(*result.module);
  if (stages) stages->llvm_dialect = printOp(*result.module);
  std::int64_t tile_products = 0;
  for (const TileRegion& region : regions) tile_products += region.tiles();
  result.evidence = emulated ? checkEmulatedAmxTiles(tile_products, payload_ops, lowered)
                             : checkAmxTiles(tile_products, payload_ops, lowered);
  result.register_blocks = describeTileBlocks(regions);
  result.tiles = TileCalls{.machine = emulated ? TileMachine::Emulated : TileMachine::Real,
                           .entry_palette = groupTileRegions(regions).front().palette};
  return result;
}

// Rounding to bf16 without avx512-bf16: LLVM would call a library function per
// element, so it becomes integer arithmetic here: round to nearest even, equal
// to toBFloat16 on every non-NaN value, denormals included (a NaN becomes +qNaN).
// Under AVX2, LLVM scalarises the expansion's NaN select on bf16 vectors.
void MlirCompiler::expandBf16RoundingIfNeeded(mlir::ModuleOp module, const Problem& p, const FailureReporter& fail) {
  if (p.c_dtype != DType::BF16 || impl_->native_bf16_rounding) return;
  mlir::RewritePatternSet patterns(&impl_->context);
  mlir::arith::populateExpandBFloat16Patterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns)))) throw fail("expanding the bf16 rounding");
}

void MlirCompiler::runPipeline(mlir::ModuleOp module, const char* pipeline, const std::string& stage,
                               const FailureReporter& fail) {
  mlir::PassManager pm(&impl_->context);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)) || mlir::failed(pm.run(module))) throw fail(stage);
}

std::unique_ptr<CompiledKernel> MlirCompiler::compile(const Problem& p, const Schedule& schedule, Lowering lowering,
                                                      CompilationStages* stages) {
  if (!impl_->host_target) throw Error("mlir: a compiler for a named target CPU does not run kernels");
  const auto start = std::chrono::steady_clock::now();
  Lowered lowered = lower(p, schedule, lowering, stages);
  std::unique_ptr<llvm::TargetMachine> machine = impl_->targetMachine();
  auto optimize = mlir::makeOptimizingTransformer(3, 0, machine.get());
  if (stages) stages->assembly = emitAssembly(*lowered.module, *impl_->targetMachine(), optimize);
  mlir::ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = mlir::ExecutionEngine::create(*lowered.module, options, std::move(machine));
  if (!engine) throw Error(fmt::format("mlir: JIT failed for {}: {}", p.describe(), llvm::toString(engine.takeError())));
  if (lowered.tiles) registerTileFunctions(**engine, lowered.tiles->machine);
  auto symbol = (*engine)->lookup(kKernelFunction);
  if (!symbol) throw Error(fmt::format("mlir: kernel symbol missing: {}", llvm::toString(symbol.takeError())));

  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return std::make_unique<JitKernel>(std::move(*engine), reinterpret_cast<KernelFunction>(*symbol),
                                     std::move(lowered.evidence), std::move(lowered.register_blocks),
                                     std::move(lowered.tiles), compile_ms);
}

CompilationStages MlirCompiler::generate(const Problem& p, const Schedule& schedule, Lowering lowering) {
  CompilationStages stages;
  Lowered lowered = lower(p, schedule, lowering, &stages);
  std::unique_ptr<llvm::TargetMachine> machine = impl_->targetMachine();
  stages.assembly = emitAssembly(*lowered.module, *machine, mlir::makeOptimizingTransformer(3, 0, machine.get()));
  return stages;
}

}  // namespace nkbench::mlir_backend

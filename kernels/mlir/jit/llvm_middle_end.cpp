#include "kernels/mlir/jit/llvm_middle_end.h"

#include "harness/core/error.h"
#include "llvm/Passes/PassBuilder.h"
#include "mlir/ExecutionEngine/OptUtils.h"

namespace nkbench::mlir_backend {
namespace {

// The second instcombine and vector-combine, after simplifycfg, fold what the
// first leaves of n-D vectors' aggregates and shuffles. They came for the
// gather of a bf16 B edge, which the code generator otherwise built through
// the stack (bf16 5x35x6: 0.85x libxsmm, with them as with -O3 0.93-0.97x).
// The dot product now reads such an edge whole (transform_script.cpp), but
// without them the machine code of 39 of the 440 committed kernels (suites x
// ISA levels) still changes: AVX2 blocks, bf16 C conversions, a GEMM's block.
// instcombine checks by default that one run reaches a fixed point and aborts
// the process where it does not; -O3's pipelines turn that check off too.
constexpr const char* kCleanupPipeline =
    "function(early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(loop-rotate,licm),"
    "instcombine<no-verify-fixpoint>,vector-combine)";

}  // namespace

void runLlvmPipeline(llvm::Module& module, const char* pipeline, llvm::TargetMachine* machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager call_graph;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graph);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graph, modules);
  llvm::ModulePassManager passes;
  if (llvm::Error error = builder.parsePassPipeline(passes, pipeline))
    throw Error("mlir: LLVM's pipeline does not parse: " + llvm::toString(std::move(error)));
  passes.run(module, modules);
}

const char* describe(LlvmMiddleEnd middle_end) { return middle_end == LlvmMiddleEnd::Cleanup ? kCleanupPipeline : "O3"; }

void optimizeKernelModule(llvm::Module& module, llvm::TargetMachine& machine, LlvmMiddleEnd middle_end) {
  if (middle_end == LlvmMiddleEnd::Cleanup) return runLlvmPipeline(module, kCleanupPipeline, &machine);
  if (llvm::Error error = mlir::makeOptimizingTransformer(3, 0, &machine)(&module))
    throw Error("mlir: LLVM optimization failed: " + llvm::toString(std::move(error)));
}

}  // namespace nkbench::mlir_backend

#include "kernels/mlir/jit/llvm_cleanup.h"

#include "harness/core/error.h"
#include "llvm/Passes/PassBuilder.h"

namespace nkbench::mlir_backend {

// The second instcombine and vector-combine, after simplifycfg, fold what the
// first leaves of the gather of a bf16 B edge (the pairs of a ragged N in an
// n-D vector's aggregate, then shuffled into one zero-padded vector); without
// them the code generator built it through the stack (bf16 5x35x6: 0.85x
// libxsmm, with them as with -O3 0.93-0.97x).
// instcombine checks by default that one run reaches a fixed point and aborts
// the process where it does not; -O3's pipelines turn that check off too.
const char* const kLlvmCleanupPipeline =
    "function(early-cse,instcombine<no-verify-fixpoint>,simplifycfg,loop-mssa(loop-rotate,licm),"
    "instcombine<no-verify-fixpoint>,vector-combine)";

void cleanUpKernelModule(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager call_graph;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graph);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graph, modules);
  llvm::ModulePassManager passes;
  if (llvm::Error error = builder.parsePassPipeline(passes, kLlvmCleanupPipeline))
    throw Error("mlir: LLVM's pipeline does not parse: " + llvm::toString(std::move(error)));
  passes.run(module, modules);
}

}  // namespace nkbench::mlir_backend

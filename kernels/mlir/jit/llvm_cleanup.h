// LLVM's middle end for a kernel: a clean-up, not -O3. The kernel reaches LLVM
// vectorized, register-blocked and unrolled by its MLIR schedule, so that -O3's
// loop, vectorizer and inliner passes find nothing to do and cost about 8 ms per
// kernel (a quarter of a compile); with this pipeline the kernels ran as fast
// on the paper, ragged and mlp suites. What it keeps:
//  - early-cse and instcombine: the index arithmetic of the MLIR lowering
//    folded, masked transfers with constant masks made plain loads and stores;
//  - simplifycfg: the blocks the lowering leaves merged;
//  - loop-rotate: loops tested at their end (one branch per iteration);
//  - licm: address arithmetic that does not change inside a loop hoisted;
//  - a second instcombine and vector-combine: the aggregates and shuffle
//    chains of n-D vectors folded (llvm_cleanup.cpp).
// Code generation (CodeGenOptLevel::Aggressive) still does loop strength
// reduction, instruction selection, scheduling and register allocation.
#pragma once

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace nkbench::mlir_backend {

// The pipeline in opt's syntax, part of every kernel cache key.
extern const char* const kLlvmCleanupPipeline;

// Runs kLlvmCleanupPipeline on `module` for `machine`; throws Error if LLVM rejects it.
void cleanUpKernelModule(llvm::Module& module, llvm::TargetMachine& machine);

}  // namespace nkbench::mlir_backend

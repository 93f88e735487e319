// LLVM's middle end for a kernel. The vector nanokernels get a clean-up, not
// -O3: they reach LLVM vectorized, register-blocked and unrolled by their MLIR
// schedule, so that -O3's loop, vectorizer and inliner passes found nothing to
// do and cost about 8 ms per kernel (a quarter of a compile; -O1 as much). With
// the clean-up the paper BRGEMMs, the ragged suite, the paper GEMMs and the mlp
// suite ran as fast (Zen 5-class VM). What it keeps:
//  - early-cse and instcombine: the index arithmetic of the MLIR lowering
//    folded, masked transfers with constant masks made plain loads and stores;
//  - simplifycfg: the blocks the lowering leaves merged;
//  - loop-rotate: loops tested at their end (one branch per iteration);
//  - licm: address arithmetic that does not change inside a loop hoisted;
//  - a second instcombine and vector-combine: the aggregates and shuffles of
//    n-D vectors folded (llvm_middle_end.cpp).
// Not sroa: the kernels' stack buffers (split partial sums, a bf16 C's f32
// sums) are indexed by loop counters, which it cannot split.
// The generic lowering (mlir-default, the ablation) keeps -O3, which it was
// measured with, and so does the AMX route, whose tile loops no AMX host has
// measured under the clean-up yet. Code generation is at its highest level for
// all (CodeGenOptLevel::Aggressive).
#pragma once

#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace nkbench::mlir_backend {

enum class LlvmMiddleEnd { Cleanup, O3 };

// The pipeline in opt's syntax, or "O3": part of every kernel cache key.
const char* describe(LlvmMiddleEnd middle_end);

// Runs `middle_end` on `module` for `machine`; throws Error if LLVM fails.
void optimizeKernelModule(llvm::Module& module, llvm::TargetMachine& machine, LlvmMiddleEnd middle_end);

// Runs `pipeline`, in opt's syntax, on `module` (for `machine`, where given);
// throws Error where the pipeline does not parse.
void runLlvmPipeline(llvm::Module& module, const char* pipeline, llvm::TargetMachine* machine = nullptr);

}  // namespace nkbench::mlir_backend

// A pass of nkbench's lowering made of rewrite pattern sets applied one after
// another, each greedily to a fixed point. The sets are frozen once, when the
// pass initializes (the compiler keeps its pipelines), where upstream's
// lowering passes built and froze theirs on every run. Region simplification
// is off: the kernels' blocks are structured loops or the plain branches
// convert-scf-to-cf makes of them, and LLVM's simplifycfg cleans up the rest.
// Upstream's passes ran it after each greedy round: a twentieth of a kernel's
// compile time, for the same machine code.
#pragma once

#include <vector>

namespace mlir {
class DialectRegistry;
class RewritePatternSet;
}  // namespace mlir

namespace nkbench::mlir_backend {

// The texts are string literals: the registry keeps them for the process.
struct PatternStages {
  const char* argument;     // the pass's name in a pipeline
  const char* description;
  void (*dependent_dialects)(mlir::DialectRegistry& registry);  // those the patterns create ops of
  std::vector<void (*)(mlir::RewritePatternSet& patterns)> stages;  // each applied to a fixed point, in order
};

// Registers `stages` as a pass named by its argument. Registering an argument
// again changes nothing: the first registration stays.
void registerPatternStagesPass(const PatternStages& stages);

}  // namespace nkbench::mlir_backend

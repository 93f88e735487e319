// The dialects, interfaces and transform extensions that nkbench's kernels go
// through, and no others.
#pragma once

namespace mlir {
class DialectRegistry;
}

namespace nkbench::mlir_backend {

// Registering every dialect (mlir::registerAllDialects/Extensions) loads about
// thirty of them once the transform dialect loads (the GPU, SPIR-V and Arm
// extensions pull in their dependencies), and every canonicalization then
// gathers and matches the patterns of all their ops: a third of a kernel's
// compile time went there.
void registerKernelDialects(mlir::DialectRegistry& registry);

}  // namespace nkbench::mlir_backend

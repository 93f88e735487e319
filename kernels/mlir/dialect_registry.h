// The dialects, interfaces and transform extensions that nkbench's kernels go
// through, and no others.
#pragma once

#include "mlir/Pass/PassRegistry.h"

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

// Registers one of nkbench's own passes, once per process, so that pipelines
// and transform.apply_registered_pass find it by its argument.
template <typename PassType>
void registerPassOnce() {
  static const bool registered = [] {
    mlir::PassRegistration<PassType>();
    return true;
  }();
  (void)registered;
}

}  // namespace nkbench::mlir_backend

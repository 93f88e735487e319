// IR text of a test parsed in a context that knows the kernels' dialects.
#pragma once

#include "kernels/mlir/dialect_registry.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace nkbench::test {

// Null where `source` does not parse (the parser reports why).
inline mlir::OwningOpRef<mlir::ModuleOp> parseKernelIr(mlir::MLIRContext& context, const char* source) {
  mlir::DialectRegistry registry;
  mlir_backend::registerKernelDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  return mlir::parseSourceString<mlir::ModuleOp>(source, &context);
}

}  // namespace nkbench::test

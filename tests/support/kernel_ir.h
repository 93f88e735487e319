// IR text of a test parsed in a context that knows the kernels' dialects.
#pragma once

#include "kernels/mlir/dialect_registry.h"
#include <string>

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

// The op whose `name` attribute is `name` (test IR tags the ops it checks), or null.
inline mlir::Operation* opNamed(mlir::ModuleOp module, const std::string& name) {
  mlir::Operation* found = nullptr;
  module->walk([&](mlir::Operation* op) {
    if (auto attr = op->getAttrOfType<mlir::StringAttr>("name"); attr && attr.getValue() == name) found = op;
  });
  return found;
}

}  // namespace nkbench::test

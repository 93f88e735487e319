#include "kernels/mlir/jit/object_emitter.h"

#include "harness/core/error.h"

namespace nkbench::mlir_backend {

ObjectEmitter::ObjectEmitter(llvm::TargetMachine& machine) {
  if (machine.addPassesToEmitFile(passes_, stream_, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("mlir: the target cannot emit object code");
}

std::string ObjectEmitter::emit(llvm::Module& module) {
  code_.clear();
  passes_.run(module);
  return std::string(code_);
}

}  // namespace nkbench::mlir_backend

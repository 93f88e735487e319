// Object code of one kernel module after another from one code generator
// pipeline. Building LLVM's code generation passes (addPassesToEmitFile) for
// every kernel cost about a tenth of its code generation; the pipeline runs
// each module from its own initialization to its own finalization, so that a
// module's object is what a fresh pipeline emits (tested byte for byte).
#pragma once

#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace nkbench::mlir_backend {

class ObjectEmitter {
 public:
  // `machine` must outlive the emitter and keep its options.
  explicit ObjectEmitter(llvm::TargetMachine& machine);
  ObjectEmitter(const ObjectEmitter&) = delete;
  ObjectEmitter& operator=(const ObjectEmitter&) = delete;

  // An ELF object of `module`, whose data layout and triple are the machine's.
  std::string emit(llvm::Module& module);

 private:
  llvm::SmallString<0> code_;
  llvm::raw_svector_ostream stream_{code_};
  llvm::legacy::PassManager passes_;
};

}  // namespace nkbench::mlir_backend

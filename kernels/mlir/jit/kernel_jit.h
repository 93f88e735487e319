// One ORC JIT per compiler, a JITDylib per kernel: loading a kernel's object
// code costs a link, not a new JIT, whether the code was just generated or
// read from the kernel cache.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"

namespace llvm::orc {
class JITDylib;
class LLJIT;
}  // namespace llvm::orc

namespace nkbench::mlir_backend {

// Symbols a kernel's code may call (the tile configuration switch, the tile emulator).
using HostSymbols = std::vector<std::pair<std::string, void*>>;

class KernelJit;

// A kernel's code in the JIT; unloaded when destroyed.
class LoadedKernel {
 public:
  LoadedKernel(std::shared_ptr<llvm::orc::LLJIT> jit, llvm::orc::JITDylib* library, void* entry);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  void* entry() const { return entry_; }

 private:
  std::shared_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib* library_;
  void* entry_;
};

class KernelJit {
 public:
  // Throws nkbench::Error when LLVM cannot make a JIT for `target`.
  explicit KernelJit(const llvm::orc::JITTargetMachineBuilder& target);
  // Links `object` (an ELF object of the JIT's target) with `symbols` and the
  // process's own (libc, for what LLVM may emit calls to) and returns the
  // address of `function`. Throws nkbench::Error naming what failed.
  std::unique_ptr<LoadedKernel> load(const std::string& object, const HostSymbols& symbols,
                                     const std::string& function);

 private:
  std::shared_ptr<llvm::orc::LLJIT> jit_;
  int next_library_ = 0;
};

}  // namespace nkbench::mlir_backend

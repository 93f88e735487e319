#include "kernels/mlir/jit/kernel_jit.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

namespace nkbench::mlir_backend {

LoadedKernel::LoadedKernel(std::shared_ptr<llvm::orc::LLJIT> jit, llvm::orc::JITDylib* library, void* entry)
    : jit_(std::move(jit)), library_(library), entry_(entry) {}

LoadedKernel::~LoadedKernel() {
  // Frees the kernel's code; nothing else refers to its library.
  if (llvm::Error error = jit_->getExecutionSession().removeJITDylib(*library_)) llvm::consumeError(std::move(error));
}

KernelJit::KernelJit(const llvm::orc::JITTargetMachineBuilder& target) {
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(target).create();
  if (!jit) throw Error("mlir: cannot create the JIT: " + llvm::toString(jit.takeError()));
  jit_ = std::move(*jit);
}

std::unique_ptr<LoadedKernel> KernelJit::load(const std::string& object, const HostSymbols& symbols,
                                              const std::string& function) {
  auto failure = [](const char* what, llvm::Error error) {
    return Error(fmt::format("mlir: {}: {}", what, llvm::toString(std::move(error))));
  };
  auto library = jit_->createJITDylib(fmt::format("nkbench-kernel-{}", next_library_++));
  if (!library) throw failure("cannot create a JIT library", library.takeError());
  llvm::orc::JITDylib& jd = *library;
  if (!symbols.empty()) {
    llvm::orc::SymbolMap map;
    for (const auto& [name, address] : symbols)
      map[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address), llvm::JITSymbolFlags::Exported};
    if (llvm::Error error = jd.define(llvm::orc::absoluteSymbols(std::move(map))))
      throw failure("cannot define the kernel's host symbols", std::move(error));
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
  if (!process) throw failure("cannot search the process's symbols", process.takeError());
  jd.addGenerator(std::move(*process));
  if (llvm::Error error =
          jit_->addObjectFile(jd, llvm::MemoryBuffer::getMemBufferCopy(object, "nkbench-kernel.o")))
    throw failure("cannot add the kernel's object code", std::move(error));
  auto address = jit_->lookup(jd, function);
  if (!address) {
    llvm::Error error = address.takeError();
    llvm::consumeError(jit_->getExecutionSession().removeJITDylib(jd));
    throw failure("cannot link the kernel", std::move(error));
  }
  return std::make_unique<LoadedKernel>(jit_, &jd, address->toPtr<void*>());
}

}  // namespace nkbench::mlir_backend

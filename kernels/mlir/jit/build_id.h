// The identity of the code that compiles kernels, so that any rebuild of
// nkbench, and any update of the LLVM and MLIR libraries it loads (a package
// update keeps their soname), makes new kernel cache keys.
#pragma once

#include <string>
#include <string_view>

namespace nkbench::mlir_backend {

// "exe:ID" and " NAME:ID" for each loaded shared library whose file name
// starts with libLLVM or libMLIR, in load order; an ID is the object's GNU
// build id, or where the linker left none, a hash of its file. Computed once
// per process.
const std::string& compilerBuildId();

// Whether a shared library of this file name is part of the kernel compiler.
bool isCompilerLibrary(std::string_view file_name);

}  // namespace nkbench::mlir_backend

// The running executable's identity, so that any rebuild of nkbench makes new
// kernel cache keys: its GNU build id, or where the linker left none, a hash of
// the executable file.
#pragma once

#include <string>

namespace nkbench::mlir_backend {

// Hex text; computed once per process.
const std::string& executableBuildId();

}  // namespace nkbench::mlir_backend
